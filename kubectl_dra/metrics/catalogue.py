"""Every metric the exporter publishes: name, type, labels, meaning. docs/METRICS.md documents the
same list (a test checks that each name here appears there), so names are stable: add, never rename.

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
COUNTER_CONSUMED = MetricDef("dra_counter_consumed", GAUGE, ("driver", "pool", "counter_set", "counter"),
                             "Shared counter consumed by allocated devices (partitionable devices).")
COUNTER_VALUE = MetricDef("dra_counter_value", GAUGE, ("driver", "pool", "counter_set", "counter"),
                          "Shared counter's total, as the pool's slices declare it.")
CAPACITY_CONSUMED = MetricDef("dra_capacity_consumed", GAUGE, ("driver", "pool", "capacity"),
                              "Consumable capacity of the pool's multi-allocatable devices held by claims.")
CAPACITY_TOTAL = MetricDef("dra_capacity_total", GAUGE, ("driver", "pool", "capacity"),
                           "Consumable capacity of the pool's multi-allocatable devices, in total.")
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
                          "Devices with a health report (a pod's allocatedResourcesStatus or a claim's device "
                          "condition), by their worst reported health: Unhealthy, Unknown, Healthy.")
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

MODEL_METRICS = (DEVICES, DEVICES_BY_CLASS, POOLS, POOL_INCOMPLETE_SECONDS, COUNTER_CONSUMED, COUNTER_VALUE,
                 CAPACITY_CONSUMED, CAPACITY_TOTAL, CLAIMS, PENDING_PODS, TAINTED_DEVICES, DEVICE_HEALTH,
                 DEVICE_INFO)
EXPORTER_METRICS = (KIND_READABLE, UP, LAST_SYNC, WATCH_RESTARTS, LIST_WATCH_ERRORS, BUILD_SECONDS, REVISION)
ALL = MODEL_METRICS + EXPORTER_METRICS
