"""API-valid objects whose free-text fields hold what a terminal would obey (ESC sequences that
clear the screen and retitle the window, BEL, NUL, CR, DEL, C1 CSI, bidi overrides) and Rich
markup, and the independent check every output must pass: no such character left raw."""

from __future__ import annotations

import unicodedata

CLEAR_SCREEN = "\x1b[2J\x1b[31mPWNED\x1b[0m"
RETITLE = "\x1b]0;owned\x07"
MIXED = "a\x00b\rc\x7fd\x9be\u202eevil\u2066[red]x[/red]"
MARKUP = "[link=http://evil.example]click[/link][bold red]"
DRIVER = "gpu.example.com"


FORGED = ("\x1b[2J", "\x1b[31mPWNED", "\x1b]0;owned", "\x07", "\x00", "\x9b", "\u202e", "\u2066")
"""The hostile strings' pieces that must never reach a terminal raw (the dashboard's own output is
full of escape sequences, so it is searched for these, not for every ESC)."""


def terminal_output(app) -> str:
    """What a Textual app would write to a real terminal for the screen now shown: the full update
    its driver gets (the headless driver of tests discards it)."""
    return app.screen._compositor.render_update(full=True).render_segments(app.console)


def raw_controls(text: str) -> list[str]:
    """Characters a terminal would act on, or that reorder or hide text (unicodedata's
    categories, not kubectl_dra.terminal_text's list); newline and tab are layout."""
    return [repr(ch) for ch in text
            if ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs")]


def hostile_objects(node: str = "hostile-node", pool: str = "hostile-pool", namespace: str = "default") -> list[dict]:
    """A Node, two DeviceClasses (one whose CEL fails at run time naming a hostile key), a
    ResourceSlice whose attribute strings and condition messages are hostile, and a pod with a
    claim of the failing class. Every string field that the API validates is a valid name."""
    return [
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}},
         "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                    "message": "ready " + RETITLE}],
                    "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "hostile-gpu"},
         "spec": {"selectors": [{"cel": {"expression":
             f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].model != '{CLEAR_SCREEN}'"}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "hostile-broken"},
         "spec": {"selectors": [{"cel": {"expression":
             f"device.attributes['{DRIVER}']['missing{RETITLE}{MARKUP}'] == 'x'"}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": f"{node}-{DRIVER}", "creationTimestamp": "2026-09-14T10:22:09Z"},
         "spec": {"driver": DRIVER, "nodeName": node,
                  "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                  "devices": [
                      {"name": "gpu-0", "attributes": {"model": {"string": CLEAR_SCREEN},
                                                       "title": {"string": RETITLE},
                                                       "markup": {"string": MARKUP}},
                       "capacity": {"memory": {"value": "80Gi"}},
                       "taints": [{"key": "example.com/broken", "value": "x", "effect": "NoSchedule"}]},
                      {"name": "gpu-1", "attributes": {"model": {"string": MIXED}}},
                  ]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "hostile-claim", "namespace": namespace, "creationTimestamp": "2026-09-14T10:23:00Z"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "hostile-broken"}}]}}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "hostile-pod", "namespace": namespace, "creationTimestamp": "2026-09-14T10:23:00Z"},
         "spec": {"containers": [{"name": "main", "image": "busybox",
                                  "resources": {"claims": [{"name": "gpu"}]}}],
                  "resourceClaims": [{"name": "gpu", "resourceClaimName": "hostile-claim"}]},
         "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                       "reason": "Unschedulable", "message": MIXED}]}},
    ]


def create_through_api(kube, namespace: str, suffix: str) -> list[dict]:
    """hostile_objects() created in the real API server (status is not writable on create), with
    names unique to `suffix`; returns what the server stored."""
    objects = hostile_objects(node=f"hostile-{suffix}", pool=f"hostile-{suffix}", namespace=namespace)
    for obj in objects:
        if obj["kind"] == "DeviceClass":
            obj["metadata"]["name"] += f"-{suffix}"
    objects[4]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = objects[2]["metadata"]["name"]
    return [kube.create({key: value for key, value in obj.items() if key != "status"}) for obj in objects]


def delete_cluster_scoped(kube, created: list[dict]) -> None:
    """The namespace fixture removes the claim and the pod; the rest goes here."""
    for obj in created:
        if obj["kind"] in ("Node", "DeviceClass", "ResourceSlice"):
            kube.delete(obj["apiVersion"], obj["kind"], obj["metadata"]["name"])
