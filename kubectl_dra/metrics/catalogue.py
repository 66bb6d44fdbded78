"""Every metric the exporter publishes: name, type, labels, meaning. docs/METRICS.md documents the
same list (a test checks that each name here appears there), so names are stable: add, and rename only
through a deprecation (the old name served alongside for one release, `replaced_by` saying its
successors, CHANGELOG.md saying when it goes).

Names follow the Prometheus conventions `promtool check metrics` lints: `_total` only on counters,
a base-unit suffix (`_seconds`, `_bytes`) where a value has a unit, one unit per family.

Cardinality is bounded by the cluster's pools, classes, namespaces and the fixed state and reason
words; nothing is labelled per pod, and per device only with `--per-device` (DEVICE_INFO).
"""

from __future__ import annotations

from dataclasses import dataclass

GAUGE, COUNTER = "gauge", "counter"


@dataclass(frozen=True)
class MetricDef:
    name: str
    """Without the `_total` suffix a counter gets on the wire."""
    type: str
    labels: tuple[str, ...]
    help: str
    replaced_by: tuple[str, ...] = ()
    """Set on a deprecated name: the names that replace it (its HELP says so)."""


DEVICES = MetricDef("dra_devices", GAUGE, ("driver", "pool", "node", "state"),
                    "Devices of the newest generation of a pool, by device state (the STATE words of "
                    "`kubectl dra devices`); the states of a pool add up to its devices (a state with no device "
                    "is left out, except Free). node is set for pools published for one node only.")
DEVICES_BY_CLASS = MetricDef("dra_devices_by_class", GAUGE, ("class", "state"),
                             "Devices a DeviceClass's selectors accept, by device state (a device may count "
                             "in several classes).")
POOLS = MetricDef("dra_pools", GAUGE, ("driver", "state"),
                  "Pools by state: Complete, Incomplete, BeingReplaced, Invalid.")
POOL_INCOMPLETE_SECONDS = MetricDef("dra_pool_incomplete_seconds", GAUGE, ("driver", "pool"),
                                    "How long a pool has been Incomplete or BeingReplaced (absent when it is "
                                    "Complete or Invalid).")
SHARED_COUNTER_CONSUMED = MetricDef(
    "dra_shared_counters_consumed", GAUGE, ("driver", "pool", "counter_set", "counter"),
    "Shared counter (partitionable devices) consumed by allocated devices, for counters that count things "
    "(the _bytes family has the counters of bytes).")
SHARED_COUNTER_CONSUMED_BYTES = MetricDef(
    "dra_shared_counters_consumed_bytes", GAUGE, ("driver", "pool", "counter_set", "counter"),
    "Shared counter (partitionable devices) consumed by allocated devices, in bytes, for counters of bytes.")
SHARED_COUNTER_SIZE = MetricDef(
    "dra_shared_counters_size", GAUGE, ("driver", "pool", "counter_set", "counter"),
    "Shared counter's total as the pool's slices declare it, for counters that count things.")
SHARED_COUNTER_SIZE_BYTES = MetricDef(
    "dra_shared_counters_size_bytes", GAUGE, ("driver", "pool", "counter_set", "counter"),
    "Shared counter's total as the pool's slices declare it, in bytes, for counters of bytes.")
CONSUMABLE_CAPACITY_CONSUMED = MetricDef(
    "dra_consumable_capacity_consumed", GAUGE, ("driver", "pool", "capacity"),
    "Consumable capacity of the pool's multi-allocatable devices held by claims, for capacities that count "
    "things.")
CONSUMABLE_CAPACITY_CONSUMED_BYTES = MetricDef(
    "dra_consumable_capacity_consumed_bytes", GAUGE, ("driver", "pool", "capacity"),
    "Consumable capacity of the pool's multi-allocatable devices held by claims, in bytes, for capacities of "
    "bytes.")
CONSUMABLE_CAPACITY_SIZE = MetricDef(
    "dra_consumable_capacity_size", GAUGE, ("driver", "pool", "capacity"),
    "Consumable capacity of the pool's multi-allocatable devices in total, for capacities that count things.")
CONSUMABLE_CAPACITY_SIZE_BYTES = MetricDef(
    "dra_consumable_capacity_size_bytes", GAUGE, ("driver", "pool", "capacity"),
    "Consumable capacity of the pool's multi-allocatable devices in total, in bytes, for capacities of bytes.")


def _deprecated(name: str, successors: tuple[MetricDef, MetricDef], meaning: str) -> MetricDef:
    names = tuple(d.name for d in successors)
    return MetricDef(name, GAUGE, successors[0].labels, f"Deprecated, removed in the next release: use "
                     f"{' and '.join(names)}. {meaning} (bytes and plain counts mixed in one family).", names)


COUNTER_CONSUMED, COUNTER_VALUE, CAPACITY_CONSUMED, CAPACITY_TOTAL = (_deprecated(*row) for row in (
    ("dra_counter_consumed", (SHARED_COUNTER_CONSUMED, SHARED_COUNTER_CONSUMED_BYTES),
     "Shared counter consumed by allocated devices"),
    ("dra_counter_value", (SHARED_COUNTER_SIZE, SHARED_COUNTER_SIZE_BYTES),
     "Shared counter's total, as the pool's slices declare it"),
    ("dra_capacity_consumed", (CONSUMABLE_CAPACITY_CONSUMED, CONSUMABLE_CAPACITY_CONSUMED_BYTES),
     "Consumable capacity held by claims"),
    ("dra_capacity_total", (CONSUMABLE_CAPACITY_SIZE, CONSUMABLE_CAPACITY_SIZE_BYTES),
     "Consumable capacity in total; a gauge, though its name ends like a counter's")))
CLAIMS = MetricDef("dra_claims", GAUGE, ("namespace", "state"),
                   "ResourceClaims by state (the STATE words of `kubectl dra claims`: pending, allocated, "
                   "allocated,reserved, with ,deleting).")
PENDING_PODS = MetricDef("dra_pending_pods", GAUGE, ("namespace", "reason"),
                         "Pods that use resource claims (or extended resources a DeviceClass backs) and are not "
                         "scheduled, by the dominant cause `kubectl "
                         "dra explain` finds (a bounded set of words, see docs/METRICS.md); recomputed at most "
                         "every --explain-interval seconds per pod.")
TAINTED_DEVICES = MetricDef("dra_tainted_devices", GAUGE, ("driver", "key", "effect"),
                            "Devices carrying a taint, by taint key and effect (slice taints and DeviceTaintRules).")
DEVICE_HEALTH = MetricDef("dra_device_health", GAUGE, ("driver", "pool", "health"),
                          "Devices with a health report (a pod's allocatedResourcesStatus, a claim's device "
                          "condition or node mode's NVML health attribute), by their worst reported health: "
                          "Unhealthy, Unknown, Healthy.")
LEAKED_CLAIMS = MetricDef("dra_leaked_claims", GAUGE, ("namespace", "reason"),
                          "Allocated claims holding devices for nobody, by reason: ReservedForDeletedPod, "
                          "OwnerPodDeleted, ReservedForNobody (doctor's claims.leaked).")
CLAIM_DELETING_SECONDS = MetricDef("dra_claim_deleting_seconds", GAUGE, ("namespace",),
                                   "How long the oldest claim being deleted in the namespace has waited on its "
                                   "finalizers (absent when none is being deleted).")
DRIVER_MISSING_NODES = MetricDef("dra_driver_missing_nodes", GAUGE, ("driver",),
                                 "Ready nodes labelled like the nodes a driver publishes devices for, yet publishing "
                                 "none of its devices (doctor's drivers.nodes-without-devices).")
TAINT_RULE_EVICTING = MetricDef("dra_device_taint_rule_eviction_in_progress", GAUGE, ("rule",),
                                "1 while a DeviceTaintRule's EvictionInProgress condition is True (pods using its "
                                "devices are being evicted), else 0; one series per DeviceTaintRule.")
DEVICE_INFO = MetricDef("dra_device_info", GAUGE, ("driver", "pool", "device", "node", "state"),
                        "One series per device with its state (only with --per-device).")
KIND_READABLE = MetricDef("dra_exporter_kind_readable", GAUGE, ("kind", "state"),
                          "1 for the state each kind was read with: ok, forbidden (RBAC), not-served, error. "
                          "Values derived from an unreadable kind are counted in the Unknown state.")
UP = MetricDef("dra_exporter_connected", GAUGE, (),
               "1 while the watches follow the cluster (or a file or the demo is loaded), 0 while stale.")
LAST_SYNC = MetricDef("dra_exporter_last_sync_timestamp_seconds", GAUGE, (),
                      "When the metrics were last derived from an up-to-date store (Unix time).")
WATCH_RESTARTS = MetricDef("dra_exporter_watch_restarts", COUNTER, ("kind",),
                           "Lists of a kind done again after its watch was lost or expired (410 Gone).")
LIST_WATCH_ERRORS = MetricDef("dra_exporter_list_watch_errors", COUNTER, ("kind",),
                              "Failed list or watch requests, by kind.")
BUILD_SECONDS = MetricDef("dra_exporter_build_seconds", GAUGE, (),
                          "How long the last derivation of the metrics from the store took.")
REVISION = MetricDef("dra_exporter_store_revision", GAUGE, (),
                     "The store revision the metrics were derived from (increases with every change seen).")

DEPRECATED = (COUNTER_CONSUMED, COUNTER_VALUE, CAPACITY_CONSUMED, CAPACITY_TOTAL)
"""Served while the exporter runs with --legacy-metric-names (the default for this release)."""
MODEL_METRICS = (DEVICES, DEVICES_BY_CLASS, POOLS, POOL_INCOMPLETE_SECONDS, SHARED_COUNTER_CONSUMED,
                 SHARED_COUNTER_CONSUMED_BYTES, SHARED_COUNTER_SIZE, SHARED_COUNTER_SIZE_BYTES,
                 CONSUMABLE_CAPACITY_CONSUMED, CONSUMABLE_CAPACITY_CONSUMED_BYTES, CONSUMABLE_CAPACITY_SIZE,
                 CONSUMABLE_CAPACITY_SIZE_BYTES, CLAIMS, LEAKED_CLAIMS, CLAIM_DELETING_SECONDS, PENDING_PODS,
                 DRIVER_MISSING_NODES, TAINTED_DEVICES, TAINT_RULE_EVICTING, DEVICE_HEALTH, DEVICE_INFO,
                 *DEPRECATED)
EXPORTER_METRICS = (KIND_READABLE, UP, LAST_SYNC, WATCH_RESTARTS, LIST_WATCH_ERRORS, BUILD_SECONDS, REVISION)
ALL = MODEL_METRICS + EXPORTER_METRICS
