"""deploy/: the manifests agree with the exporter (port, probes, read-only RBAC over every kind the
store reads), and the Grafana dashboard asks only for metrics the exporter publishes. The manifests
are also created (server-side dry run) and the RBAC used in test_realcluster_exporter.py."""

from __future__ import annotations

import json
import re

import yaml

from kubectl_dra.commands.exporter import DEFAULT_LISTEN
from kubectl_dra.metrics import catalogue
from kubectl_dra.sources.discovery import RESOURCE_KINDS
from kubectl_dra.store import KINDS

from .conftest import HERE

DEPLOY = HERE.parent.parent / "deploy"
PORT = int(DEFAULT_LISTEN.rsplit(":", 1)[1])


def documents(name: str) -> dict[str, dict]:
    return {doc["kind"]: doc for doc in yaml.safe_load_all((DEPLOY / name).read_text()) if doc}


def test_the_cluster_role_reads_every_kind_and_writes_nothing():
    rbac = documents("rbac.yaml")
    granted = {(group, resource) for rule in rbac["ClusterRole"]["rules"] for group in rule["apiGroups"]
               for resource in rule["resources"]}
    assert all(set(rule["verbs"]) <= {"get", "list", "watch"} for rule in rbac["ClusterRole"]["rules"])
    for kind in KINDS:
        resource = RESOURCE_KINDS[kind]
        assert (resource.group, resource.plural) in granted, kind
    binding = rbac["ClusterRoleBinding"]
    assert binding["roleRef"]["name"] == rbac["ClusterRole"]["metadata"]["name"]
    assert binding["subjects"][0]["name"] == rbac["ServiceAccount"]["metadata"]["name"]


def test_the_deployment_runs_the_exporter_with_its_probes_and_port():
    manifests = documents("exporter.yaml")
    pod = manifests["Deployment"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == documents("rbac.yaml")["ServiceAccount"]["metadata"]["name"]
    [container] = pod["containers"]
    assert container["args"][0] == "exporter"
    assert container["ports"][0]["containerPort"] == PORT
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    service = manifests["Service"]
    assert service["spec"]["ports"][0]["port"] == PORT
    monitor = documents("servicemonitor.yaml")["ServiceMonitor"]
    assert monitor["spec"]["endpoints"][0]["port"] == service["spec"]["ports"][0]["name"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    containerfile = (DEPLOY / "Containerfile").read_text()
    assert 'ENTRYPOINT ["kubectl-dra"]' in containerfile and f"EXPOSE {PORT}" in containerfile


def test_the_dashboard_uses_only_published_metrics():
    dashboard = json.loads((DEPLOY / "grafana" / "dra-dashboard.json").read_text())
    published = {d.name + ("_total" if d.type == catalogue.COUNTER else "") for d in catalogue.ALL}
    expressions = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    assert len(expressions) >= 15
    used = {name for expr in expressions for name in re.findall(r"\bdra_[a-z_]+", expr)}
    assert used <= published, used - published
    assert {"dra_devices_by_class", "dra_pools", "dra_pool_incomplete_seconds", "dra_pending_pods",
            "dra_tainted_devices", "dra_device_health"} <= used
    titles = [p["title"] for p in dashboard["panels"]]
    assert len(titles) == len(set(titles))
    assert all(p["datasource"]["uid"] == "${DS_PROMETHEUS}" for p in dashboard["panels"] if p["type"] != "row")
    assert dashboard["__inputs"][0]["name"] == "DS_PROMETHEUS"


def test_the_dashboard_has_a_cluster_variable_every_query_honours():
    """A fleet's Prometheus holds every cluster's series, each with its `cluster` label
    (docs/FLEET.md): every selector of a dra_ series is scoped by the variable, which matches
    series without the label too (`.*`), so one cluster's Prometheus works unchanged."""
    dashboard = json.loads((DEPLOY / "grafana" / "dra-dashboard.json").read_text())
    variable = dashboard["templating"]["list"][0]
    assert (variable["name"], variable["allValue"]) == ("cluster", ".*")
    expressions = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    for expr in expressions:
        selectors = re.findall(r"\bdra_[a-z_]+(\{[^}]*\})?|(\{__name__=~[^}]*\})", expr)
        assert selectors, expr
        for braced, by_name in selectors:
            assert 'cluster=~"$cluster"' in (braced or by_name), expr
    fleet = [p for p in dashboard["panels"] if "by cluster" in p["title"]]
    assert len(fleet) == 3 and all("by (cluster)" in p["targets"][0]["expr"] for p in fleet)


def test_remediate_reads_as_the_exporter_and_writes_only_rules_events_and_its_lease():
    rbac = list(yaml.safe_load_all((DEPLOY / "remediate-rbac.yaml").read_text()))
    account = next(d for d in rbac if d["kind"] == "ServiceAccount")["metadata"]
    bindings = [d for d in rbac if d["kind"] in ("ClusterRoleBinding", "RoleBinding")]
    assert all(b["subjects"] == [{"kind": "ServiceAccount", "name": account["name"], "namespace": account["namespace"]}]
               for b in bindings)
    roles = {b["roleRef"]["name"] for b in bindings}
    assert documents("rbac.yaml")["ClusterRole"]["metadata"]["name"] in roles  # the exporter's reads
    writes = {(group, resource, verb) for d in rbac if d["kind"] in ("ClusterRole", "Role") for rule in d["rules"]
              for group in rule["apiGroups"] for resource in rule["resources"] for verb in rule["verbs"]}
    assert writes == {("resource.k8s.io", "devicetaintrules", verb) for verb in ("create", "patch", "delete")} | {
        ("", "events", "create")} | {("coordination.k8s.io", "leases", verb) for verb in ("get", "create", "update")}
    [lease_role] = [d for d in rbac if d["kind"] == "Role"]
    manifests = {d["kind"]: d for d in yaml.safe_load_all((DEPLOY / "remediate.yaml").read_text())}
    pod = manifests["Deployment"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == account["name"]
    [container] = pod["containers"]
    args = container["args"]
    assert args[:1] == ["remediate"] and {"--watch", "--apply", "--leader-elect"} <= set(args)
    assert args[args.index("--lease-namespace") + 1] == lease_role["metadata"]["namespace"]
    assert manifests["Deployment"]["spec"]["replicas"] == 2
    port = int(args[args.index("--listen") + 1].rsplit(":", 1)[1])
    assert container["ports"][0]["containerPort"] == port
    from kubectl_dra.remediation.policy import parse_policy

    assert parse_policy(manifests["ConfigMap"]["data"]["policy.yaml"]).name == "device-health"
