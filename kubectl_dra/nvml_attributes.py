"""The device attributes node mode publishes NVML's health verdict in: node/slices.py writes them,
model/health.py reads them back from any cluster, so both ends share these names.

They are qualified with node mode's own domain, not left unqualified in the publishing driver's
domain as node mode's other attributes are: node mode may publish as `gpu.nvidia.com`, and a
reader has to recognise the health verdict whatever the driver, without mistaking another
driver's `health` attribute for it. An attribute changes no allocation by itself (unlike a slice
taint, which also needs the DRADeviceTaints gate); a remediation policy's `nvmlHealth` signal
turns it into a DeviceTaintRule.
"""

NODE_MODE_DOMAIN = "node.kubectl-dra.io"
NVML_HEALTH_ATTRIBUTE = f"{NODE_MODE_DOMAIN}/health"
"""A string: Healthy or Unhealthy (node/inventory.py's gpu_health of the device's GPU)."""
NVML_HEALTH_REASON_ATTRIBUTE = f"{NODE_MODE_DOMAIN}/healthReason"
"""A string on Unhealthy devices only: why, cut to the API's 64 characters."""
