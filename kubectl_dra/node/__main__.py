"""`python -m kubectl_dra.node ...`: node mode without the rest of the plugin (debug pods, GPU checks)."""

from kubectl_dra.node.cli import node

node(prog_name="kubectl dra node")
