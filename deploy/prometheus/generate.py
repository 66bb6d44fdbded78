"""Writes prometheusrule.yaml (a PrometheusRule for the Prometheus Operator) from rules.yaml, the one
place the alerting rules are written. Run it after changing rules.yaml:

    python3 deploy/prometheus/generate.py            # rewrite prometheusrule.yaml
    python3 deploy/prometheus/generate.py --check    # exit 1 if prometheusrule.yaml is out of date

tests/cli/test_alerts.py checks the two agree.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
RULES = HERE / "rules.yaml"
PROMETHEUS_RULE = HERE / "prometheusrule.yaml"
HEADER = """\
# Generated from rules.yaml by deploy/prometheus/generate.py: edit rules.yaml, then run it.
# Only with the Prometheus Operator (monitoring.coreos.com CRDs). Your Prometheus may select
# PrometheusRules by label (e.g. release: kube-prometheus-stack): add it under metadata.labels.
"""


def prometheus_rule(rules_text: str) -> str:
    groups = yaml.safe_load(rules_text)["groups"]
    manifest = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "kubectl-dra", "namespace": "kubectl-dra",
                     "labels": {"app.kubernetes.io/name": "kubectl-dra-exporter"}},
        "spec": {"groups": groups},
    }
    return HEADER + yaml.safe_dump(manifest, sort_keys=False, width=120, allow_unicode=True)


def main(argv: list[str]) -> int:
    text = prometheus_rule(RULES.read_text())
    if argv[1:] == ["--check"]:
        if PROMETHEUS_RULE.read_text() != text:
            print(f"{PROMETHEUS_RULE} is out of date: run python3 {__file__}", file=sys.stderr)
            return 1
        return 0
    PROMETHEUS_RULE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
