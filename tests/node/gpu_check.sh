#!/usr/bin/env bash
# Node mode on a real NVIDIA GPU: inventory, slices, match and prepare (dry run and a real write
# into a scratch CDI root), outputs under $OUT. Run from the repository root:
#
#   OUT=/tmp/out bash tests/node/gpu_check.sh
#
# Python: the repo runs from source (PYTHONPATH). Its dependencies come from the system Python or,
# without network, from wheels: WHEELS=DIR, made on a machine with a registry with
#   pip download -d .cache/node-wheels --only-binary=:all: --python-version 3.X \
#       nvidia-ml-py click pyyaml cel-expr-python
# for the GPU machine's Python 3.X (about 18 MB; cel-expr-python is what `prepare`/`match` need
# through the allocator's node-selector and object loading).
# PYTHON=INTERPRETER skips all that and uses the given interpreter as it is.
# Every step runs even if an earlier one failed; see $OUT/summary.txt.
set -u
OUT=${OUT:?set OUT to a directory for the results}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
export NODE_NAME=${NODE_NAME:-gpu-check-node}
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"

note() { echo "$*" | tee -a "$SUMMARY"; }

note "host: $(uname -srm); node name: $NODE_NAME; $(date -u +%FT%TZ)"
command -v nvidia-smi >/dev/null && {
  nvidia-smi -L > "$OUT/nvidia-smi-L.txt" 2>&1
  nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,memory.total,mig.mode.current,ecc.errors.uncorrected.volatile.total,driver_version --format=csv > "$OUT/nvidia-smi-query.csv" 2>&1
  nvidia-smi mig -lgip > "$OUT/nvidia-smi-mig-lgip.txt" 2>&1
}

# -- Python environment ------------------------------------------------------------------------
PY=${PYTHON:-python3}
VENV="$OUT/.venv"
if [ -z "${PYTHON:-}" ] && python3 -m venv --system-site-packages "$VENV" >/dev/null 2>&1; then
  PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
  if [ -n "${WHEELS:-}" ]; then
    for package in nvidia-ml-py click pyyaml cel-expr-python; do
      "${PIP[@]}" --no-index --find-links "$WHEELS" "$package" >> "$OUT/pip.log" 2>&1 ||
        echo "wheel for $package not installed (see pip.log)" >> "$SUMMARY"
    done
  fi
  if "$VENV/bin/python" -c "import pynvml, click, yaml" 2>/dev/null; then
    PY="$VENV/bin/python"
  fi
fi
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
note "python: $($PY -c 'import sys; print(sys.executable, sys.version.split()[0])')"
$PY -c "import pynvml; print('nvidia-ml-py', getattr(pynvml, '__version__', '?'))" >> "$SUMMARY" 2>&1

# step NAME ARGS...: run `python -m kubectl_dra.node ARGS`, keep stdout/stderr/exit status/time.
step() {
  local name=$1; shift
  local start rc
  start=$(date +%s%N)
  (cd "$REPO" && $PY -m kubectl_dra.node "$@") > "$OUT/$name.out" 2> "$OUT/$name.err"
  rc=$?
  echo "$rc" > "$OUT/$name.rc"
  note "$(printf '%-16s rc=%-3s %6d ms  kubectl dra node %s' "$name" "$rc" \
    $(( ($(date +%s%N) - start) / 1000000 )) "$*")"
}

step inventory inventory
step inventory-json inventory -o json
step inventory-xid inventory --xid-seconds 3 -o yaml
step slices slices
step slices-json slices -o json

# -- a snapshot with a claim allocated to this node's first published device ------------------
$PY - "$OUT/slices-json.out" "$OUT/snapshot.yaml" "$NODE_NAME" > "$OUT/snapshot.log" 2>&1 <<'EOF'
import json, sys, yaml
slices_path, snapshot_path, node = sys.argv[1:]
slices = json.load(open(slices_path))["items"]
device_slice = next(s for s in slices if s["spec"].get("devices"))
device = device_slice["spec"]["devices"][0]
driver, pool = device_slice["spec"]["driver"], device_slice["spec"]["pool"]["name"]
for i, s in enumerate(slices):
    s["metadata"].update(uid=f"00000000-0000-4000-8000-0000000001{i:02d}", resourceVersion="100")
kind = device["attributes"]["type"]["string"]
docs = [
    {"apiVersion": "kubectl-dra.io/v1alpha1", "kind": "DRASnapshot",
     "metadata": {"name": "gpu-check"}, "kubernetesVersion": "v1.36.0"},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-check", "uid": "00000000-0000-4000-8000-000000000001"}},
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "uid": "00000000-0000-4000-8000-000000000002",
     "labels": {"kubernetes.io/hostname": node}}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "check-gpu"},
     "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{driver}'"}}]}},
    *slices,
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
     "metadata": {"name": "check", "namespace": "gpu-check", "uid": "3f0c5c1e-7d2a-4b8e-9a61-5e2f0b7c9d11"},
     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "check-gpu"}}]}},
     "status": {"allocation": {
         "devices": {"results": [{"request": "gpu", "driver": driver, "pool": pool, "device": device["name"]}]},
         "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
             {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}},
]
yaml.safe_dump_all(docs, open(snapshot_path, "w"), sort_keys=False)
print(f"claim gpu-check/check allocated {driver}/{pool}/{device['name']} ({kind})")
EOF
note "snapshot: $(tail -1 "$OUT/snapshot.log")"

step prepare-dry-run prepare check -n gpu-check --from "$OUT/snapshot.yaml" --dry-run
step prepare prepare check -n gpu-check --from "$OUT/snapshot.yaml" --cdi-root "$OUT/cdi"
step prepare-again prepare check -n gpu-check --from "$OUT/snapshot.yaml" --cdi-root "$OUT/cdi" -o json
ls -l "$OUT/cdi" > "$OUT/cdi-listing.txt" 2>&1
cp "$OUT"/cdi/*.json "$OUT/" 2>/dev/null
step match match --from "$OUT/snapshot.yaml"
step unprepare unprepare check -n gpu-check --cdi-root "$OUT/cdi"
step unprepare-again unprepare check -n gpu-check --cdi-root "$OUT/cdi"

# The written spec must pass our CDI validator (the rules of the CDI loader).
$PY -c "
import json, sys
from kubectl_dra.node import cdi
import glob
for path in glob.glob(sys.argv[1] + '/k8s.kubectl-dra.io-claim_*.json'):
    errors = cdi.validate_spec(json.load(open(path)))
    print(path, 'valid' if not errors else errors)
" "$OUT" >> "$SUMMARY" 2>&1
rm -rf "$VENV"
note "done"
