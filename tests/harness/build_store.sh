# Sourced by build.sh and prometheus/build.sh: binaries built once per machine user, keyed by the
# hash of their inputs, so that another clone of the repository (a CI run starts from a fresh one)
# takes them by hard link instead of linking them again with Go (minutes for the control plane).
# Store: $KUBECTL_DRA_BUILD_STORE, else ${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dra/builds; one
# folder per target and hash, written whole (a temporary folder renamed) and only after a build
# succeeded; the target's older hashes are removed when a new one is stored.

BUILD_STORE="${KUBECTL_DRA_BUILD_STORE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dra/builds}"

# take_from_store TARGET HASH OUT BINARY... : links (or copies) the stored binaries into OUT.
# Returns 1 when the store has not all of them.
take_from_store() {
    local target="$1" hash="$2" out="$3"
    shift 3
    local stored="$BUILD_STORE/$target-$hash" bin
    for bin in "$@"; do [ -x "$stored/$bin" ] || return 1; done
    for bin in "$@"; do
        ln -f "$stored/$bin" "$out/$bin.tmp" 2>/dev/null || cp -f "$stored/$bin" "$out/$bin.tmp"
        mv -f "$out/$bin.tmp" "$out/$bin"
    done
}

# put_in_store TARGET HASH OUT BINARY... : keeps the binaries just built in OUT for other clones.
# A store that cannot be written (read-only home) only costs the next clone a build.
put_in_store() {
    local target="$1" hash="$2" out="$3"
    shift 3
    local stored="$BUILD_STORE/$target-$hash" staging bin
    mkdir -p "$BUILD_STORE" 2>/dev/null || return 0
    staging="$(mktemp -d "$BUILD_STORE/.$target-XXXXXX" 2>/dev/null)" || return 0
    for bin in "$@"; do
        ln -f "$out/$bin" "$staging/$bin" 2>/dev/null || cp -f "$out/$bin" "$staging/$bin" || { rm -rf "$staging"; return 0; }
    done
    rm -rf "$stored" && mv "$staging" "$stored" || { rm -rf "$staging"; return 0; }
    local other
    for other in "$BUILD_STORE/$target"-*; do
        [ "$other" = "$stored" ] || rm -rf "$other"
    done
}
