"""--sort-by as kubectl's: a path that no item of a non-empty list has is an error, and every list
command's help gives an example path its own items have."""

import json
import re

import pytest

from kubectl_dra.render.templates import sort_key_path, values_at

LIST_COMMANDS = ("pools", "slices", "devices", "claims", "nodes", "taints")


def test_a_path_no_item_has_is_an_error(run_cli):
    result = run_cli("--demo", "claims", "-A", "--sort-by=.nope")
    assert (result.status, result.stdout) == (2, ""), result
    assert result.stderr == ('error: --sort-by=.nope: couldn\'t find any field with path "{.nope}" in the list of '
                             "objects\n")


def test_a_path_some_items_lack_sorts_them_first(run_cli):
    # devices' allocatedBy is [] on free devices and null nowhere: some items have a first entry
    result = run_cli("--demo", "devices", "--sort-by=.allocatedBy[0].claim.name", "-o", "name")
    assert result.status == 0 and result.stderr == "", result


def test_an_empty_list_is_not_an_error(run_cli):
    result = run_cli("--demo", "claims", "-n", "nowhere", "--sort-by=.nope")
    assert result.status == 0 and result.stdout == "", result


@pytest.mark.parametrize("command", LIST_COMMANDS)
def test_each_commands_help_example_sorts_its_own_items(run_cli, command):
    help_text = " ".join(run_cli(command, "--help").stdout.split())
    example = re.search(r"--sort-by=(\S+)", help_text).group(1)
    items = json.loads(run_cli("--demo", command, "-A", "-o", "json").stdout)["items"]
    path = sort_key_path(example)
    assert all(values_at(path, item) for item in items), f"{command}: {example} is not in every item"
    result = run_cli("--demo", command, "-A", f"--sort-by={example}", "-o", "name")
    assert result.status == 0 and result.stderr == "" and result.stdout, (example, result)
