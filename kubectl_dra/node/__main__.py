"""`python -m kubectl_dra.node ...`: node mode without kubectl (debug pods, GPU checks), with the
plugin's error policy and exit statuses."""

import sys

from kubectl_dra.cli import main

sys.argv[1:1] = ["node"]
main()
