"""`pod/NAME` and `claim/NAME`: the objects `explain` accepts, with kubectl's spellings."""

from __future__ import annotations

from kubectl_dra.errors import InputError

TARGET_KINDS = {
    "pod": "Pod", "pods": "Pod", "po": "Pod",
    "claim": "ResourceClaim", "claims": "ResourceClaim",
    "resourceclaim": "ResourceClaim", "resourceclaims": "ResourceClaim",
    "resourceclaim.resource.k8s.io": "ResourceClaim",
}
PREFERRED_WORDS = ("pod", "claim")


def parse_target(words: tuple[str, ...]) -> tuple[str, str]:
    """(kind, name) from `pod/NAME`, `claim/NAME` or `pod NAME`; raises InputError."""
    if len(words) == 1 and "/" in words[0]:
        word, _, name = words[0].partition("/")
    elif len(words) == 2:
        word, name = words
    else:
        raise InputError(f"want pod/NAME or claim/NAME, got {' '.join(words) or 'nothing'!r}")
    kind = TARGET_KINDS.get(word.lower())
    if kind is None:
        raise InputError(f"cannot explain {word!r}: want pod/NAME or claim/NAME")
    if not name:
        raise InputError(f"{word}/: missing name")
    return kind, name
