"""Flags the demo controller flips at run time and every worker's handler reads: a tiny shared file.

WorkerPool passes its workers nothing but a WorkerConfig, so the demo hands the file's path to the
worker processes through one environment variable, set only while they are spawned. The file is
memory-mapped on both sides: the handler reads two doubles per job without a system call.
"""

from __future__ import annotations

import contextlib
import mmap
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

from pgq_tui import env

ENV = "PGQ_TOP_DEMO_CONTROL"
_LAYOUT = struct.Struct("<dd")  # slow (0 or 1), fail_share
_SPAWN_LOCK = threading.Lock()  # two demos in one process must not hand out each other's path


class Control:
    def __init__(self, path: Path | str, *, create: bool = False, fail_share: float = 0.1) -> None:
        self.path = Path(path)
        if create:
            self.path.write_bytes(_LAYOUT.pack(0.0, fail_share))
        self._fh = open(self.path, "r+b")  # noqa: SIM115 - kept open for the mapping's lifetime
        self._mm = mmap.mmap(self._fh.fileno(), _LAYOUT.size)

    def read(self) -> tuple[bool, float]:
        slow, fail_share = _LAYOUT.unpack_from(self._mm, 0)
        return bool(slow), float(fail_share)

    def write(self, *, slow: bool | None = None, fail_share: float | None = None) -> None:
        old_slow, old_share = self.read()
        new_slow = old_slow if slow is None else slow
        new_share = old_share if fail_share is None else fail_share
        _LAYOUT.pack_into(self._mm, 0, 1.0 if new_slow else 0.0, min(1.0, max(0.0, new_share)))

    def close(self) -> None:
        with contextlib.suppress(BufferError, ValueError):
            self._mm.close()
        self._fh.close()


@contextlib.contextmanager
def spawning_with(path: Path) -> Iterator[None]:
    """Processes started inside this block find the control file through ENV (spawn copies environ)."""
    with _SPAWN_LOCK:
        previous = env.get(ENV)
        env.set_for_children(ENV, str(path))
        try:
            yield
        finally:
            env.set_for_children(ENV, previous)
