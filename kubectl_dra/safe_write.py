"""Writing a file we produce (a snapshot, a CDI spec) without ever clobbering what is not ours.

The rules, the same for every file kubectl-dra writes:
- a new path or a regular file is replaced atomically (a temporary file in the same directory,
  fsync, rename), so a reader sees the old file or the new one, never half of one; an existing
  file keeps its permission bits;
- a symlink is followed to its target, as a shell's `>` does and as kubectl does when it writes a
  kubeconfig that is a symlink: the target is replaced and the link stays a link;
- a directory, device node (/dev/null, /dev/full), FIFO or socket is refused with one line naming
  the path: renaming over them would replace the special file instead of writing to it;
- a failing write (ENOSPC, EACCES, EROFS...) removes the temporary file, leaves the old file as it
  was and raises WriteError (exit 2).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from typing import IO, Callable

from kubectl_dra.errors import CommandError

STDOUT = "-"

_SPECIAL_KINDS = (
    (stat.S_ISDIR, "is a directory"),
    (stat.S_ISCHR, "is a character device"),
    (stat.S_ISBLK, "is a block device"),
    (stat.S_ISFIFO, "is a FIFO (named pipe)"),
    (stat.S_ISSOCK, "is a socket"),
)


class WriteError(CommandError):
    """A file we were asked to write could not be written; nothing was changed."""


def target_of(path: str) -> str:
    """The path that will be replaced: `path` itself, or the file a symlink chain leads to.
    Raises WriteError for anything but a regular file or a path that does not exist yet."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target
    except OSError as error:
        raise WriteError(f"{path}: cannot write: {error.strerror}") from None
    for check, what in _SPECIAL_KINDS:
        if check(mode):
            shown = path if target == path else f"{path} (a symlink to {target})"
            raise WriteError(f"{shown}: {what}; only a regular file or a new path can be written")
    return target


def write_file(path: str, produce: Callable[[IO], object], *, binary: bool = False,
               new_file_mode: int | None = None) -> str:
    """Write what `produce(stream)` writes to `path` atomically; returns the path written to
    (a symlink's target). `new_file_mode` defaults to 0666 less the umask, like `open()`."""
    target = target_of(path)
    directory = os.path.dirname(os.path.abspath(target))
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = new_file_mode if new_file_mode is not None else 0o666 & ~_umask()
    except OSError as error:
        raise WriteError(f"{path}: cannot write: {error.strerror}") from None
    try:
        handle, temp_path = tempfile.mkstemp(prefix=".kubectl-dra-", suffix=".tmp", dir=directory)
    except OSError as error:
        raise WriteError(f"{path}: cannot write: {error.strerror}") from None
    try:
        with os.fdopen(handle, "wb" if binary else "w", encoding=None if binary else "utf-8") as stream:
            produce(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp_path, mode)
        os.replace(temp_path, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temp_path)
        if isinstance(error, OSError):
            raise WriteError(f"{path}: cannot write: {error.strerror or error}") from None
        raise
    return target


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
