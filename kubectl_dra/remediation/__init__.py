"""Automatic remediation (`kubectl dra remediate`): a policy file, and the planner that turns device
health and the rules a policy owns into steps (core: plain API dicts, no I/O, no CLI)."""
