"""The staging folder a build writes into, and its atomic swap into OUT.

OUT is at every instant either the previous complete build or the new complete one, whatever happens to
the process (SIGKILL included) and however many builds write the same OUT at once:
- the staging folder `.OUT.hlsgen-XXXX` sits beside OUT (same file system) and its owner holds an flock on
  it for as long as the owner lives, so a later build can tell a dead build's leftovers from a live one's;
- the swap exchanges staging and OUT in one renameat2(RENAME_EXCHANGE), then removes the old build (now under
  the staging name); a kill between the two leaves only a stale staging folder, which the next build removes.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import PathError

INFIX = ".hlsgen-"
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_OCCUPIED = (errno.ENOTEMPTY, errno.EEXIST)  # rename(2) onto a folder that is not empty
_NO_EXCHANGE = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)  # kernels or file systems without it
_SWAP_ATTEMPTS = 100  # each failed attempt means another build moved OUT in between: bounded, never spinning


@dataclass(frozen=True)
class Staging:
    """A staging folder and the descriptor whose flock marks its owner as alive."""

    folder: Path
    out: Path
    lock: int

    def commit(self) -> None:
        """The staging folder becomes OUT; the build it replaces is removed."""
        try:
            swap(self.folder, self.out)
        except OSError as exc:
            raise PathError(f"cannot create the build folder {self.out}: {exc.strerror or exc}; "
                            "choose another -o") from None
        shutil.rmtree(self.folder, ignore_errors=True)  # the old build, if there was one
        shutil.rmtree(f"{self.folder}.old", ignore_errors=True)  # or there, where the exchange is missing

    def discard(self) -> None:
        """Remove the staging folder (after a commit: what is left of the old build) and release the lock."""
        shutil.rmtree(self.folder, ignore_errors=True)
        os.close(self.lock)


def staging_for(out: Path) -> Staging:
    """A new, locked staging folder beside OUT, after removing those of builds that died (SIGKILL, power loss).
    Errors name OUT, the user's path."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        remove_stale(out)
        while True:
            folder = Path(tempfile.mkdtemp(prefix=_prefix(out), dir=out.parent))
            lock = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            # Blocking: a concurrent build's remove_stale may hold the lock for a moment, between mkdtemp and
            # here, and remove the folder; then its name is gone (or another's) and a new one is made.
            fcntl.flock(lock, fcntl.LOCK_EX)
            if _names(folder, lock):
                return Staging(folder, out, lock)
            os.close(lock)
    except OSError as exc:
        raise PathError(f"cannot create the build folder {out}: {exc.strerror or exc}; choose another -o") from None


def remove_stale(out: Path) -> list[Path]:
    """Remove every staging folder beside OUT whose owner is dead (its lock can be taken); keep live builds'.
    Returns what was removed."""
    removed = []
    for folder in sorted(out.parent.iterdir()):
        if not folder.name.startswith(_prefix(out)):
            continue
        try:
            lock = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:  # gone meanwhile, or not a folder: not ours to remove
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if _names(folder, lock):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
        except BlockingIOError:  # a live build's
            pass
        finally:
            os.close(lock)
    return removed


def swap(staging: Path, out: Path, exchange=None) -> None:
    """Put the folder `staging` at `out` atomically; a previous `out` ends up under the name `staging` (or,
    where the file system cannot exchange, `staging`.old). `exchange(a, b)` swaps two paths (renameat2 by
    default; tests pass one that fails as such file systems do)."""
    exchange = exchange or _exchange
    for _ in range(_SWAP_ATTEMPTS):
        try:
            os.rename(staging, out)  # no OUT yet; a rename never replaces a folder that holds a build
            return
        except OSError as exc:
            if exc.errno not in _OCCUPIED:
                raise
        try:
            exchange(staging, out)
            return
        except FileNotFoundError:  # another build moved OUT aside meanwhile: OUT is free again
            continue
        except OSError as exc:
            if exc.errno not in _NO_EXCHANGE:
                raise
        # No exchange here: move OUT aside, then rename. Between the two renames there is no OUT (a kill
        # there leaves the old build in `staging`.old, which the next build removes as stale).
        shutil.rmtree(f"{staging}.old", ignore_errors=True)  # from an earlier attempt
        try:
            os.rename(out, f"{staging}.old")
        except FileNotFoundError:
            continue
    raise OSError(errno.EBUSY, "other builds keep replacing it", str(out))


def _names(folder: Path, descriptor: int) -> bool:
    """Whether the path `folder` still names the folder open as `descriptor`."""
    try:
        return os.lstat(folder).st_ino == os.fstat(descriptor).st_ino
    except FileNotFoundError:
        return False


def _exchange(a: Path, b: Path) -> None:
    renameat2 = getattr(_libc(), "renameat2", None)
    if renameat2 is None:  # a C library without it
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(b))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _prefix(out: Path) -> str:
    """The staging folders' names: a long OUT is cut, so they stay names the file system takes."""
    return f".{out.name[:64]}{INFIX}"
