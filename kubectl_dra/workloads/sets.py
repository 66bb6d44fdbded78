"""Several workloads of one input placed as one set: a file of two Pods (a driver's "two pods, one
GPU each" test), a Deployment beside a Job, a directory of manifests. Their pods are queued in file
order, each workload's in its own queue order, as `kubectl apply -f` would create them; `fit --gang`
asks for all of them at once.

Pure: Documents in (kubectl_dra.targets sorted them), plain pod dicts out.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_dra.documents import Document
from kubectl_dra.errors import InputError, describe

from . import WorkloadPods, expand, split_input

REFS_NAMED = 3
"""Workloads named in a set's name; the rest are counted."""


@dataclass
class WorkloadSet:
    """The workloads of one input, in file order, each expanded into its pods."""

    members: list[WorkloadPods]
    origins: list[str]

    @property
    def pods(self) -> list[dict]:
        return [pod for member in self.members for pod in member.pods]

    @property
    def roles(self) -> list[str]:
        return [role for member in self.members for role in member.roles]

    @property
    def gang_min(self) -> int | None:
        """A Workload API gang policy of any member: the whole set is then judged as one gang."""
        return next((m.gang_min for m in self.members if m.gang_min is not None), None)

    @property
    def ref(self) -> str:
        refs = [m.ref for m in self.members]
        if len(refs) <= REFS_NAMED:
            return ", ".join(refs)
        return f"{', '.join(refs[:REFS_NAMED - 1])} and {len(refs) - REFS_NAMED + 1} more workloads"


def placed_workloads(documents: list[Document]) -> list[Document]:
    """The documents fit places: Pods and workloads, and Workloads or PodGroups with the Pods that
    name them (those Pods are placed with their group, not on their own)."""
    keep = {id(obj) for obj in split_input([d.obj for d in documents])[0]}
    return [d for d in documents if id(d.obj) in keep]


def expand_set(workloads: list[Document], others: list[dict], replicas: int | None = None) -> WorkloadSet:
    """Every workload's pods (kubectl_dra.workloads.expand), in file order. `--replicas` sets the
    count of one workload only. Pods of two workloads with one name would be one pod to the API
    server: refused, naming both. Raises InputError."""
    if replicas is not None and len(workloads) > 1:
        raise InputError(f"--replicas: the input has {len(workloads)} workloads "
                         f"({', '.join(describe(d.obj) for d in workloads[:REFS_NAMED])}); "
                         "set each one's count in its manifest")
    members = [expand(d.obj, others, replicas, d.origin) for d in workloads]
    made_by: dict[tuple[str, str], str] = {}
    for member, document in zip(members, workloads):
        for pod in member.pods:
            meta = pod["metadata"]
            key = (meta.get("namespace") or member.namespace, meta["name"])
            if key in made_by and made_by[key] != member.ref:
                raise InputError(f"{document.origin}: {member.ref}: makes Pod/{key[0]}/{key[1]}, which "
                                 f"{made_by[key]} makes too: give them different names")
            made_by[key] = member.ref
    return WorkloadSet(members, [d.origin for d in workloads])
