"""A CEL selector written over several lines (YAML `|-`) reads as one line in explain's tree, and
as its own lines where a remedy gives it to paste; never with literal `\\n` escapes. JSON keeps it
exactly."""

import json

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: multi
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        selectors:
        - cel:
            expression: |-
              device.attributes["gpu.nvidia.com"].productName != "nope" &&
                device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("400Gi")) >= 0
"""
ONE_LINE = ('device.attributes["gpu.nvidia.com"].productName != "nope" && '
            'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("400Gi")) >= 0')


def test_multi_line_cel_is_one_line_in_the_tree_and_its_lines_in_the_remedy(run_cli, tmp_path):
    manifest = tmp_path / "claim.yaml"
    manifest.write_text(CLAIM)
    result = run_cli("--demo", "explain", "-f", str(manifest))
    assert result.status == 1, result
    assert "\\n" not in result.stdout
    assert f"claim default/multi: selector #0 is false: {ONE_LINE}" in result.stdout
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("     selector #0: "))
    assert lines[start:start + 2] == [
        '     selector #0: device.attributes["gpu.nvidia.com"].productName != "nope" &&',
        "         device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity('80Gi')) >= 0"]
    as_json = json.loads(run_cli("--demo", "explain", "-f", str(manifest), "-o", "json").stdout)
    messages = {r["message"] for n in as_json["nodes"] for c in n.get("claims") or []
                for q in c.get("requests") or [] for r in q.get("rejected") or []}
    assert any("&&\n  device.capacity" in m for m in messages)


def test_control_characters_beside_a_line_break_stay_escaped(run_cli):
    from kubectl_dra.terminal_text import joined_lines, safe_line

    assert safe_line(joined_lines('a == "x" &&\n  b\x1b[2J')) == 'a == "x" && b\\x1b[2J'
