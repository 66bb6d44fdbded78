"""Shell completion: scripts for the standalone command, and `kubectl_complete-dra` for kubectl.

kubectl (1.26+) completes `kubectl dra <TAB>` by running `kubectl_complete-dra ARGS... PARTIAL` and
reading Cobra's protocol: one candidate per line (`value<TAB>description`), then `:<directive>`.
Both paths use click's own completion engine over the same command tree, so flags, choices and
the dynamic name completers (completers.py) behave identically.
"""

from __future__ import annotations

import sys

PROG = "kubectl-dra"
COMPLETE_VAR = "_KUBECTL_DRA_COMPLETE"

# Cobra ShellCompDirective bits (spf13/cobra completions.go).
DIRECTIVE_DEFAULT = 0  # no candidates: let the shell complete file names
DIRECTIVE_NO_SPACE = 2
DIRECTIVE_NO_FILE_COMP = 4
DIRECTIVE_FILTER_DIRS = 16


def script(cli, shell: str) -> str:
    """The click completion script for `kubectl-dra` in bash, zsh or fish."""
    from click.shell_completion import get_completion_class

    completion_class = get_completion_class(shell)
    if completion_class is None:  # the shells are a click.Choice of those click knows
        raise ValueError(f"no completion script for {shell}")
    return completion_class(cli, {}, PROG, COMPLETE_VAR).source()


def cobra_lines(cli, args: list[str]) -> list[str]:
    """Candidates for `kubectl dra ARGS...`, where the last arg is the word being completed."""
    from click.shell_completion import ShellComplete

    words, incomplete = (args[:-1], args[-1]) if args else ([], "")
    items = ShellComplete(cli, {}, PROG, COMPLETE_VAR).get_completions(words, incomplete)
    lines, directive = [], DIRECTIVE_NO_FILE_COMP
    for item in items:
        if item.type == "file":
            directive = DIRECTIVE_DEFAULT
        elif item.type == "dir":
            directive = DIRECTIVE_FILTER_DIRS
        else:
            lines.append(f"{item.value}\t{_one_line(item.help)}" if item.help else item.value)
            if item.value.endswith("/"):
                directive |= DIRECTIVE_NO_SPACE  # pod/ is a prefix: keep typing the name
    if lines and all(line.split("\t")[0].endswith("=") for line in lines):
        directive |= DIRECTIVE_NO_SPACE  # -o jsonpath=: the template follows the `=`
    return lines + [f":{directive}"]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main() -> None:
    """Entry point of the `kubectl_complete-dra` executable."""
    from kubectl_dra.cli import cli

    try:
        output = "\n".join(cobra_lines(cli, sys.argv[1:])) + "\n"
    except Exception:  # a broken completion must not spill a traceback into the shell
        output = f":{DIRECTIVE_NO_FILE_COMP}\n"
    sys.stdout.write(output)
