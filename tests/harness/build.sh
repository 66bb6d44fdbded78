#!/usr/bin/env bash
# Builds the Go side of the test harness into <repo>/.cache/harness/:
#   oracle:       draoracle-1.37 and draoracle-1.36 (the upstream structured allocator as a CLI)
#   controlplane: kube-apiserver, kube-scheduler, kube-controller-manager (k8s.io/kubernetes) and etcd
# Each target is skipped when a stamp (hash of its inputs and the Go version) says it is up to date,
# and taken from the user's build store (build_store.sh) when another clone built the same inputs.
# Usage: tests/harness/build.sh [oracle|controlplane|all|hashes]   (default: all; hashes prints the
# inputs' hashes that key the stamps and the build store, and builds nothing)
# Environment: HARNESS_OUT overrides the output folder; HARNESS_MEASURE=1 reports wall time and
# peak memory of each go build (needs /usr/bin/time).
set -euo pipefail

HARNESS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$HARNESS_DIR/../.." && pwd)"
OUT="${HARNESS_OUT:-$REPO_ROOT/.cache/harness}"
TARGET="${1:-all}"

# Versions of what the control plane binaries claim to be. gitVersion must have the minor of the
# code (k8s.io/kubernetes v1.37.2): feature-gate emulation is derived from it.
KUBE_VERSION="v1.37.2"
KUBE_MAJOR="1"
KUBE_MINOR="37"

say() { printf '[harness] %s\n' "$*" >&2; }
# shellcheck source=build_store.sh
source "$HARNESS_DIR/build_store.sh"

if ! command -v go >/dev/null 2>&1; then
    say "Go is not installed (need Go >= 1.26): cannot build the test harness"
    exit 3
fi
lock_out() {
    mkdir -p "$OUT"
    # Test sessions started side by side must not build into the same files at once.
    exec 9>"$OUT/.build.lock"
    if ! flock -n 9; then
        say "another build is running; waiting for it ..."
        flock 9
    fi
}

# Prints a hash of everything a target's binaries are built from.
inputs_hash() {
    local dir="$1"
    {
        go version
        (cd "$HARNESS_DIR" && sha256sum build.sh build_store.sh)  # relative: the same hash in every clone
        # The oracle module's folder holds the control plane module: its files are not oracle inputs.
        (cd "$dir" && find . -path ./controlplane -prune -o \( -name '*.go' -o -name '*.mod' -o -name '*.sum' \) -print | LC_ALL=C sort | xargs sha256sum)
    } | sha256sum | cut -d' ' -f1
}

# up_to_date STAMP_NAME HASH BINARY...
up_to_date() {
    local stamp="$OUT/$1.stamp" hash="$2"
    shift 2
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] || return 1
    local bin
    for bin in "$@"; do [ -x "$OUT/$bin" ] || return 1; done
}

# go_build DIR OUTPUT PACKAGE [extra go build args...]
go_build() {
    local dir="$1" output="$2" package="$3"
    shift 3
    local start=$SECONDS
    say "building $output from $package ..."
    if [ "${HARNESS_MEASURE:-0}" = 1 ] && [ -x /usr/bin/time ]; then
        (cd "$dir" && nice /usr/bin/time -f "[harness]   $output: %e s wall, %M KiB peak RSS" \
            go build -o "$OUT/$output.tmp" "$@" "$package")
    else
        (cd "$dir" && nice go build -o "$OUT/$output.tmp" "$@" "$package")
    fi
    mv -f "$OUT/$output.tmp" "$OUT/$output"
    say "built $output in $((SECONDS - start)) s"
}

build_oracle() {
    local dir="$HARNESS_DIR" hash
    hash="$(inputs_hash "$dir")"
    local binaries=(draoracle-1.37 draoracle-1.36 draoracle-1.35 draoracle-1.34)
    if up_to_date oracle "$hash" "${binaries[@]}"; then
        say "draoracle is up to date"
        return
    fi
    if take_from_store oracle "$hash" "$OUT" "${binaries[@]}"; then
        echo "$hash" > "$OUT/oracle.stamp"
        say "draoracle taken from $BUILD_STORE (built before for the same inputs)"
        return
    fi
    say "downloading the oracle's modules (first time only) ..."
    (cd "$dir" && go mod download && go mod download -modfile=go-1.36.mod && go mod download -modfile=go-1.35.mod && go mod download -modfile=go-1.34.mod)
    go_build "$dir" draoracle-1.37 ./cmd/draoracle
    go_build "$dir" draoracle-1.36 ./cmd/draoracle -modfile=go-1.36.mod -tags dra136
    go_build "$dir" draoracle-1.35 ./cmd/draoracle -modfile=go-1.35.mod -tags dra135
    go_build "$dir" draoracle-1.34 ./cmd/draoracle -modfile=go-1.34.mod -tags dra134
    put_in_store oracle "$hash" "$OUT" "${binaries[@]}"
    echo "$hash" > "$OUT/oracle.stamp"
}

build_controlplane() {
    local dir="$HARNESS_DIR/controlplane" hash
    hash="$(inputs_hash "$dir")"
    local binaries=(kube-apiserver kube-scheduler kube-controller-manager etcd)
    if up_to_date controlplane "$hash" "${binaries[@]}"; then
        say "control plane binaries are up to date"
        return
    fi
    if take_from_store controlplane "$hash" "$OUT" "${binaries[@]}"; then
        echo "$hash" > "$OUT/controlplane.stamp"
        say "control plane binaries taken from $BUILD_STORE (built before for the same inputs)"
        return
    fi
    say "building the control plane from k8s.io/kubernetes $KUBE_VERSION: about 15-25 min the first time, seconds afterwards"
    say "downloading modules (first time only) ..."
    (cd "$dir" && go mod download)
    local ldflags=""
    local pkg
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=$KUBE_MAJOR -X $pkg.gitMinor=$KUBE_MINOR"
        ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
    done
    local cmd
    for cmd in kube-apiserver kube-scheduler kube-controller-manager; do
        go_build "$dir" "$cmd" "k8s.io/kubernetes/cmd/$cmd" -ldflags "$ldflags"
    done
    go_build "$dir" etcd go.etcd.io/etcd/server/v3
    put_in_store controlplane "$hash" "$OUT" "${binaries[@]}"
    echo "$hash" > "$OUT/controlplane.stamp"
}

case "$TARGET" in
    # The keys of the build store: the same sources give the same hashes in every clone.
    hashes) echo "oracle $(inputs_hash "$HARNESS_DIR")"; echo "controlplane $(inputs_hash "$HARNESS_DIR/controlplane")"; exit 0 ;;
    oracle) lock_out; build_oracle ;;
    controlplane) lock_out; build_controlplane ;;
    all) lock_out; build_oracle; build_controlplane ;;
    *) say "unknown target '$TARGET' (expected oracle, controlplane, all or hashes)"; exit 2 ;;
esac
say "binaries in $OUT"
