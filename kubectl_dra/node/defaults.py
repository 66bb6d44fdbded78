"""Names node mode uses by default; a module of its own so `--help` imports nothing heavy."""

from kubectl_dra.nvml_attributes import NODE_MODE_DOMAIN

# A driver name no real driver uses, so publishing never collides with an installed driver.
DEFAULT_DRIVER = NODE_MODE_DOMAIN
NVIDIA_DRIVER = "gpu.nvidia.com"
# CDI vendor of the specs `prepare` writes (kind <vendor>/claim).
DEFAULT_VENDOR = "k8s.kubectl-dra.io"
DEFAULT_CDI_ROOT = "/var/run/cdi"
DEFAULT_PROC_ROOT = "/proc"
FIELD_MANAGER = "kubectl-dra"
