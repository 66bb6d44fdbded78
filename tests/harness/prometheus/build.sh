#!/usr/bin/env bash
# Builds promtool and prometheus (github.com/prometheus/prometheus, pinned in this folder's go.mod)
# into <repo>/.cache/prometheus/ for the alerting-rule tests. Skipped when the stamp (a hash of the Go
# version, this script and the module files) says the binaries are current. A separate script and
# output folder from ../build.sh, so that changing one never invalidates the other's binaries; both
# keep what they built in the user's build store (../build_store.sh) for other clones.
# Environment: PROMETHEUS_OUT overrides the output folder.
set -euo pipefail

MODULE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${PROMETHEUS_OUT:-$(cd "$MODULE_DIR/../../.." && pwd)/.cache/prometheus}"
say() { printf '[prometheus] %s\n' "$*" >&2; }
# shellcheck source=../build_store.sh
source "$MODULE_DIR/../build_store.sh"
command -v go >/dev/null 2>&1 || { say "Go is not installed (need Go >= 1.26): cannot build promtool and prometheus"; exit 3; }
# Concurrent test sessions wait for one build instead of writing the same files.
mkdir -p "$OUT" && exec 9>"$OUT/.build.lock" && { flock -n 9 || { say "another build is running; waiting ..."; flock 9; }; }

hash="$({ go version; cd "$MODULE_DIR" && sha256sum build.sh ../build_store.sh go.mod go.sum tools.go; } | sha256sum | cut -d' ' -f1)"
if [ -f "$OUT/stamp" ] && [ "$(cat "$OUT/stamp")" = "$hash" ] && [ -x "$OUT/promtool" ] && [ -x "$OUT/prometheus" ]; then
    say "promtool and prometheus are up to date in $OUT"
    exit 0
fi
rm -f "$OUT/stamp"
if take_from_store prometheus "$hash" "$OUT" promtool prometheus; then
    echo "$hash" > "$OUT/stamp"
    say "promtool and prometheus taken from $BUILD_STORE (built before for the same inputs)"
    exit 0
fi
say "building promtool and prometheus: several minutes the first time, a second afterwards"
(cd "$MODULE_DIR" && go mod download)
for cmd in promtool prometheus; do
    start=$SECONDS
    # remove_all_sd leaves out every service discovery but static_configs (the cloud SDKs are most of
    # the build time), and the web UI's assets are not embedded (no builtinassets): the tests scrape
    # static targets and use the HTTP API only.
    (cd "$MODULE_DIR" && nice go build -tags remove_all_sd -o "$OUT/$cmd.tmp" "github.com/prometheus/prometheus/cmd/$cmd")
    mv -f "$OUT/$cmd.tmp" "$OUT/$cmd"
    say "built $cmd in $((SECONDS - start)) s"
done
put_in_store prometheus "$hash" "$OUT" promtool prometheus
echo "$hash" > "$OUT/stamp"
say "binaries in $OUT"
