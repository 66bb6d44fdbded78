"""A small synchronous Kubernetes API client for the end-to-end tests (standard library only).

Objects are plain dicts as the API server returns them. Kinds are mapped to resource paths through
API discovery, so any served kind works, including the resource.k8s.io beta versions.
"""

from __future__ import annotations

import json
import re
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Iterator

PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}


class KubeError(Exception):
    """An API request failed; `status` is the HTTP status, `reason` the Status reason."""

    def __init__(self, method: str, path: str, status: int, reason: str, message: str):
        super().__init__(f"{method} {path}: {status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


class KubeClient:
    def __init__(self, server: str, token: str, timeout: float = 30.0):
        self.server = server.rstrip("/")
        self.token = token
        self.timeout = timeout
        # The test API server serves a self-signed certificate; the kubeconfig says the same
        # (insecure-skip-tls-verify).
        self._ssl = ssl.create_default_context()
        self._ssl.check_hostname = False
        self._ssl.verify_mode = ssl.CERT_NONE
        self._resources: dict[tuple[str, str], tuple[str, bool]] = {}

    # -- raw requests -------------------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, params: dict | None = None,
                content_type: str = "application/json") -> Any:
        url = self.server + path
        if params:
            url += "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        data = None
        if body is not None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ssl) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as err:
            raw = err.read()
            reason, message = err.reason, raw.decode(errors="replace")
            try:
                status = json.loads(raw)
                reason, message = status.get("reason", reason), status.get("message", message)
            except ValueError:
                pass
            raise KubeError(method, path, err.code, str(reason), str(message)) from None
        if not payload:
            return None
        try:
            return json.loads(payload)
        except ValueError:
            return payload.decode(errors="replace")

    # -- discovery ----------------------------------------------------------------------------

    def resource_for(self, api_version: str, kind: str) -> tuple[str, bool]:
        """(plural resource name, namespaced) of a kind, from API discovery."""
        key = (api_version, kind)
        if key not in self._resources:
            base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            for resource in self.request("GET", base)["resources"]:
                if "/" not in resource["name"]:
                    self._resources[(api_version, resource["kind"])] = (resource["name"], resource["namespaced"])
            if key not in self._resources:
                raise KubeError("GET", base, 404, "NotFound", f"kind {kind} is not served in {api_version}")
        return self._resources[key]

    def path(self, api_version: str, kind: str, name: str | None = None, namespace: str | None = None,
             subresource: str | None = None) -> str:
        plural, namespaced = self.resource_for(api_version, kind)
        base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        if namespaced and namespace:
            base += f"/namespaces/{namespace}"
        path = f"{base}/{plural}"
        if name:
            path += f"/{name}"
        if subresource:
            path += f"/{subresource}"
        return path

    # -- object operations --------------------------------------------------------------------

    def create(self, obj: dict, namespace: str | None = None) -> dict:
        meta = obj.get("metadata", {})
        namespace = namespace or meta.get("namespace")
        if namespace is None and self.resource_for(obj["apiVersion"], obj["kind"])[1]:
            namespace = "default"
        return self.request("POST", self.path(obj["apiVersion"], obj["kind"], namespace=namespace), obj)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict:
        return self.request("GET", self.path(api_version, kind, name, self._ns(api_version, kind, namespace)))

    def list(self, api_version: str, kind: str, namespace: str | None = None, **params) -> dict:
        return self.request("GET", self.path(api_version, kind, namespace=namespace), params=params)

    def patch(self, api_version: str, kind: str, name: str, patch: Any, namespace: str | None = None,
              patch_type: str = "merge", subresource: str | None = None) -> dict:
        path = self.path(api_version, kind, name, self._ns(api_version, kind, namespace), subresource)
        return self.request("PATCH", path, patch, content_type=PATCH_TYPES[patch_type])

    def replace(self, obj: dict, subresource: str | None = None) -> dict:
        meta = obj["metadata"]
        path = self.path(obj["apiVersion"], obj["kind"], meta["name"],
                         self._ns(obj["apiVersion"], obj["kind"], meta.get("namespace")), subresource)
        return self.request("PUT", path, obj)

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None,
               missing_ok: bool = True, grace_period: int | None = None) -> Any:
        """Deletes an object. Without a kubelet, a bound pod only goes away with grace_period=0."""
        params = None if grace_period is None else {"gracePeriodSeconds": grace_period}
        try:
            return self.request("DELETE", self.path(api_version, kind, name, self._ns(api_version, kind, namespace)),
                                params=params)
        except KubeError as err:
            if missing_ok and err.status == 404:
                return None
            raise

    def delete_collection(self, api_version: str, kind: str, namespace: str | None = None, **params) -> Any:
        return self.request("DELETE", self.path(api_version, kind, namespace=namespace), params=params)

    def watch(self, api_version: str, kind: str, resource_version: str, namespace: str | None = None,
              timeout_seconds: int = 300, **params) -> Iterator[tuple[str, dict]]:
        """(event type, object) of a watch from `resource_version` until the server ends it after
        `timeout_seconds` (or the connection closes). BOOKMARK events carry only the resourceVersion;
        an ERROR event (410 Gone for a compacted version) is raised as KubeError."""
        path = self.path(api_version, kind, namespace=namespace)
        query = {"watch": "1", "resourceVersion": resource_version, "allowWatchBookmarks": "true",
                 "timeoutSeconds": str(timeout_seconds), **params}
        req = urllib.request.Request(self.server + path + "?" + urllib.parse.urlencode(query))
        req.add_header("Authorization", f"Bearer {self.token}")
        req.add_header("Accept", "application/json")
        try:
            resp = urllib.request.urlopen(req, timeout=timeout_seconds + 30, context=self._ssl)
        except urllib.error.HTTPError as err:
            raise KubeError("WATCH", path, err.code, str(err.reason), err.read().decode(errors="replace")) from None
        with resp:
            for line in resp:
                event = json.loads(line)
                if event["type"] == "ERROR":
                    status = event["object"]
                    raise KubeError("WATCH", path, int(status.get("code") or 0), str(status.get("reason")),
                                    str(status.get("message")))
                yield event["type"], event["object"]

    def _ns(self, api_version: str, kind: str, namespace: str | None) -> str | None:
        if namespace is None and self.resource_for(api_version, kind)[1]:
            return "default"
        return namespace


def wait_for(condition: Callable[[], Any], timeout: float, what: str, interval: float = 0.2) -> Any:
    """Polls condition() until it returns something truthy; raises AssertionError naming `what`."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            result = condition()
            if result:
                return result
        except KubeError as err:
            last_error = err
        if time.monotonic() >= deadline:
            detail = f" (last error: {last_error})" if last_error else ""
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}{detail}")
        time.sleep(interval)


_CLAIM_NOT_SEEN_YET = re.compile(r'resourceclaim\.resource\.k8s\.io "[^"]+" not found')
_CLASS_MISSING = re.compile(r"device class (\S+) does not exist")


def _class_not_seen_yet(kube: "KubeClient", message: str) -> bool:
    """The scheduler named a DeviceClass missing that the apiserver has: its class informer had
    not seen the class yet when it tried the pod (DynamicResources.validateDeviceClass in PreFilter
    reads the lister and parks the pod "until a DeviceClass event occurs", dynamicresources.go;
    EventsToRegister has DeviceClass Add|Update). A class the apiserver does not have either is a
    decision."""
    missing = _CLASS_MISSING.findall(message)
    if not missing:
        return False
    for name in missing:
        try:
            kube.get("resource.k8s.io/v1", "DeviceClass", name.rstrip(".,;"))
        except KubeError as err:
            if err.status == 404:
                return False
            raise
    return True


def scheduling_outcome(kube: "KubeClient", namespace: str, name: str, timeout: float) -> dict:
    """The pod once the scheduler bound it or reported (PodScheduled=False) why it cannot. Not a
    decision: a pod still held by its scheduling gates (reason SchedulingGated); one tried before
    the resourceclaim controller made its template's claim ("ResourceClaim not created yet",
    resourceclaim.ErrClaimNotFound); or one tried after the controller named the claim in the pod's
    status but before the scheduler's claim informer had it (the lister's NotFound,
    `resourceclaim.resource.k8s.io "NAME" not found`: DynamicResources.PreFilter returns the
    error of foreachPodResourceClaim, pkg/scheduler/framework/plugins/dynamicresources); or one
    tried before its class informer had a DeviceClass the apiserver already has
    (_class_not_seen_yet). The scheduler tries such a pod again once it sees the claim or class."""
    def decided():
        pod = kube.get("v1", "Pod", name, namespace)
        if pod["spec"].get("nodeName"):
            return pod
        for condition in pod.get("status", {}).get("conditions", []):
            message = condition.get("message", "")
            if condition["type"] == "PodScheduled" and condition["status"] == "False" and \
                    condition.get("reason") != "SchedulingGated" and \
                    "ResourceClaim not created yet" not in message and not _CLAIM_NOT_SEEN_YET.search(message) \
                    and not _class_not_seen_yet(kube, message):
                return pod
        return None
    return wait_for(decided, timeout=timeout, what=f"the scheduler to decide about pod {name}")


def scheduled_message(pod: dict) -> str:
    """The PodScheduled condition's message, whole (an assertion's repr of the pod cuts it)."""
    return next((c.get("message", "") for c in pod.get("status", {}).get("conditions", [])
                 if c["type"] == "PodScheduled"), "")


def ungate_and_decide(kube: "KubeClient", namespace: str, name: str, timeout: float) -> dict:
    """Removes the pod's scheduling gates and waits for the scheduler's decision (scheduling_outcome)."""
    kube.patch("v1", "Pod", name, {"spec": {"schedulingGates": None}}, namespace)
    return scheduling_outcome(kube, namespace, name, timeout)


def first_failed_scheduling(kube: "KubeClient", namespace: str, pod: str, timeout: float = 10) -> str:
    """The message of the pod's first FailedScheduling event (later attempts may see a changed cluster)."""
    def event():
        events = [item for item in kube.list("v1", "Event", namespace)["items"]
                  if item.get("reason") == "FailedScheduling" and item["involvedObject"].get("name") == pod]
        if not events:
            return None
        first = min(events, key=lambda e: e.get("eventTime") or e.get("firstTimestamp") or "")
        return first.get("message") or first.get("note")

    return wait_for(event, timeout=timeout, what=f"the FailedScheduling event of {pod}")
