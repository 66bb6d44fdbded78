"""Prometheus metric families derived from the cluster model (core: no CLI, no HTTP, no client).

`catalogue` names every metric (docs/METRICS.md documents them); `derive.MetricsBuilder` turns
store snapshots into `Metrics`; `pending` reduces explain's dominant cause to one word per pod;
`classes` keeps DeviceClass membership per slice. The exporter command (kubectl_dra/commands/
exporter.py) serves them.
"""
