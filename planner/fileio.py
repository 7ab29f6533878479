"""Writing files so that nothing is ever half-written, clobbered or written somewhere else.

:func:`check_writable` runs before any long computation: an output must be a regular file or a
new path in an existing folder (``-`` for standard output); a device, a FIFO, a socket, a folder
or a symbolic link is refused, never followed or replaced (CI and many users run as root, for
whom ``-o /dev/null`` would otherwise turn the system's /dev/null into a plan file).

:func:`atomic_write` writes to a temporary file created exclusively, under an unpredictable name,
beside the target (so nothing planted there is followed), flushes it to disk (fsync), checks the
target once more and renames over it (atomic on POSIX), then fsyncs the folder: an interrupted or
failed run leaves either the old file or the new one. A full disk or a file-size limit ends the
run with one line naming the path and the cause (:class:`WriteError`, exit 2), the old file intact.
The temporary name carries the writer's process ID: a run killed outright (SIGKILL, power cut)
leaves its temporary file, and the next write of the same file removes it once that process is
gone (:func:`remove_dead_temps`).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from planner.errors import InputError, Problem

STDOUT = "-"
"""The output path that means standard output."""
TEMP_SUFFIX = ".tmp"
"""Temporary files are ``.<target name>.<pid>.<random>.tmp`` in the target's folder."""


class WriteError(InputError):
    """The environment refused a write (disk full, file too large, permission): one line naming the
    path and the cause; the CLI exits 2, the previous file is left as it was."""

    def __init__(self, path: str | Path, cause: str) -> None:
        self.path = str(path)
        self.cause = cause
        super().__init__([Problem(self.path, cause)])

    def render(self) -> str:
        return f"cannot write {self.path}: {self.cause}"


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def refuse_special(path: str | Path, flag: str = "-o") -> None:
    """Raise unless ``path`` is a regular file or does not exist (a link is refused, not followed)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise WriteError(path, e.strerror or str(e)) from None
    what = _kind(st.st_mode)
    if what == "a folder":
        raise InputError(f"{flag} {path}: is a folder; give a file name to write")
    if what is not None:
        raise InputError(
            f"{flag} {path}: is {what}; give a regular file or a new path in an existing folder (standard "
            "output: -o -)"
        )


def check_writable(path: str | Path, flag: str = "-o") -> Path:
    """Refuse an output path that cannot or must not be written (module docstring). Returns the path."""
    shown = str(path)
    if shown == STDOUT:
        return Path(STDOUT)
    if "\x00" in shown:
        raise InputError(f"{flag}: the output path contains a NUL byte")
    p = Path(path)
    refuse_special(p, flag)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"{flag} {shown}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{flag} {shown}: folder {parent} is not writable")
    if p.exists() and not os.access(p, os.W_OK):
        raise InputError(f"{flag} {shown}: file exists and is not writable")
    return p


def atomic_write(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (module docstring); ``-`` writes to standard output."""
    if str(path) == STDOUT:
        import sys

        sys.stdout.write(text)
        sys.stdout.flush()
        return

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)

    atomic_write_with(path, write)


def atomic_write_with(path: str | Path, writer: Callable[[str], object]) -> None:
    """Atomically replace ``path`` with what ``writer`` writes to the temporary path it is given
    (for libraries that write files themselves: PuLP's LP writer, pandas' Parquet writer)."""
    p = Path(path)
    refuse_special(p)
    folder = p.parent if str(p.parent) else Path(".")
    remove_dead_temps(folder, p.name)
    try:
        fd, tmp = tempfile.mkstemp(
            prefix=f".{p.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=folder
        )  # O_EXCL: never an existing file or link
        os.close(fd)
    except OSError as e:
        raise WriteError(p, e.strerror or str(e)) from None
    try:
        writer(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        refuse_special(p)  # the target may have changed while we wrote
        if p.exists():
            os.chmod(tmp, p.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise WriteError(p, e.strerror or str(e)) from None
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


def atomic_write_folder(p: Path, files: dict[str, str]) -> None:
    """Files (name → UTF-8 text) into folder ``p`` (made if new) all or none: every check comes
    before the first byte (a link, FIFO or device where a file goes is refused); the files are
    written whole into a temporary folder beside ``p`` and only then moved in (the new folder
    renamed at once, or a rename per file, which needs no space), so a failure while writing (a
    full disk) leaves ``p`` as it was."""
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"-o {p}: folder {parent} does not exist")
    for name in files:
        refuse_special(p / name)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{p.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=parent))
    except OSError as e:
        raise WriteError(p, e.strerror or str(e)) from None
    try:
        for name, text in files.items():
            with open(tmp / name, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
        _move_in(tmp, p, files)
    except OSError as e:
        raise WriteError(p, e.strerror or str(e)) from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _move_in(tmp: Path, p: Path, files: dict[str, str]) -> None:
    """The written folder ``tmp`` becomes ``p``, or its files replace theirs in an existing ``p``."""
    if not p.exists():
        os.chmod(tmp, 0o755)
        os.rename(tmp, p)
        return
    for name in files:
        refuse_special(p / name)  # the target may have changed while we wrote
        os.chmod(tmp / name, 0o644)
        os.replace(tmp / name, p / name)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def remove_dead_temps(folder: Path, name: str) -> list[str]:
    """Remove the temporary files of ``name`` that a killed writer left in ``folder``: regular files
    ``.<name>.<pid>.<random>.tmp`` whose process is gone (a live writer's, a link or anything else is
    left alone). A SIGKILL or power cut leaves them; the next write of the same file sweeps them."""
    out = []
    head = f".{name}."
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return out
    for e in entries:
        if not (e.name.startswith(head) and e.name.endswith(TEMP_SUFFIX)):
            continue
        pid = e.name[len(head) :].split(".", 1)[0]
        if not pid.isdigit() or _alive(int(pid)) or not e.is_file(follow_symlinks=False):
            continue
        try:
            os.unlink(e.path)
            out.append(e.name)
        except OSError:
            pass
    return out


def remove_stale_temps(folder: Path) -> list[str]:
    """Remove temporary files a killed run left in ``folder`` (``.*.tmp`` regular files; links and
    anything else are left alone). Call only while holding the folder's lock: no live writer then."""
    out = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return out
    for e in entries:
        if e.name.startswith(".") and e.name.endswith(TEMP_SUFFIX) and e.is_file(follow_symlinks=False):
            try:
                os.unlink(e.path)
                out.append(e.name)
            except OSError:
                pass
    return out
