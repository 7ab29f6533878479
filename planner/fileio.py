"""Writing files so that nothing is ever half-written or clobbered.

:func:`atomic_write` writes to a temporary file beside the target, flushes it to
disk (fsync), renames it over the target (atomic on POSIX) and fsyncs the
folder: an interrupted or failed run leaves either the old file or the new
one, never a truncated mix. :func:`check_writable` is run before any long
computation, so a bad output path fails in a second, not after the solve.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from planner.errors import InputError


def check_writable(path: str | Path, flag: str = "-o") -> Path:
    """Refuse an output path that cannot be written: a missing or read-only folder, or a folder
    given as the file. Returns the path."""
    p = Path(path)
    shown = str(path)
    if "\x00" in shown:
        raise InputError(f"{flag}: the output path contains a NUL byte")
    if p.is_dir():
        raise InputError(f"{flag} {shown}: is a folder; give a file name to write")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"{flag} {shown}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{flag} {shown}: folder {parent} is not writable")
    if p.exists() and not os.access(p, os.W_OK):
        raise InputError(f"{flag} {shown}: file exists and is not writable")
    return p


def atomic_write(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (module docstring)."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)

    atomic_write_with(path, write)


def atomic_write_with(path: str | Path, writer: Callable[[str], object]) -> None:
    """Atomically replace ``path`` with what ``writer`` writes to the temporary path it is given
    (for libraries that write files themselves)."""
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        writer(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        if p.exists():
            os.chmod(tmp, p.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
