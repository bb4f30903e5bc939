"""A recording: every poll's Snapshot in one SQLite file (the standard library's sqlite3).

Why SQLite: it is crash-safe by construction (WAL journal, one transaction per poll: a recorder killed
with SIGKILL leaves every committed poll readable), it finds "the last poll at or before 03:12" with
an index instead of a scan, it deletes old polls in place for `--keep`, and every machine can open
it with `sqlite3` when pgq-top is not there.

Why it is small (benchmarks/bench_record.py: bytes per poll for 10 queues): most of a poll repeats
the one before it. Every KEYFRAME_EVERY-th poll of a queue is stored whole (compact JSON, zlib); each
poll between is zlib-compressed with the previous poll's JSON as the preset dictionary (`zdict`), so
what it repeats costs a back-reference of a few bits. Reading a poll decodes its group from the
keyframe on (at most KEYFRAME_EVERY small inflates, a few ms); replay steps reuse the last one.
Before storing, what repeats earlier polls or is noise is dropped: the per-second throughput history
and the probe's history (replay rebuilds its charts from the polls themselves), list rows past
LIST_ROWS (each list keeps its true total), and digits below a millisecond in times and durations.

Format version 1 (meta table): polls(id, queue, at, base, body), at = the server's clock as unix
seconds, base = the group's keyframe id (NULL for a keyframe), body = zlib(JSON of the slimmed
Snapshot.to_dict()), compressed against the previous poll of the same group.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sqlite3
import threading
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pgq_tui.errors import PgqError
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.monitor.source import SnapshotSource

FORMAT = "pgq-top recording"
VERSION = 1  # the format this code writes; it reads every version up to this one
KEYFRAME_EVERY = 60  # polls per keyframe: at 2 s, one whole snapshot every 2 minutes
LIST_ROWS = 25  # rows kept per list (leases, stuck, dead): a screen's worth; the totals stay exact
PRUNE_EVERY = 100  # polls between two retention passes
EXIT_RECORDING = 2  # a recording that cannot be read: like a usage error, the input is wrong

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS polls (
    id INTEGER PRIMARY KEY,
    queue TEXT NOT NULL,
    at REAL NOT NULL,
    base INTEGER,
    body BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS polls_queue_at ON polls (queue, at);
CREATE INDEX IF NOT EXISTS polls_base ON polls (base);
"""


class RecordingError(PgqError):
    def __init__(self, message: str) -> None:
        super().__init__(message, EXIT_RECORDING)


def slim(snap: Snapshot) -> dict[str, Any]:
    """The Snapshot as stored: without the histories that repeat earlier polls, lists cut to
    LIST_ROWS rows, times and durations to the millisecond."""
    tp = dataclasses.replace(snap.throughput, history=(), queue_history={})
    bloat = snap.bloat
    if bloat is not None and len(bloat.probe.history) > 1:
        probe = dataclasses.replace(bloat.probe, history=bloat.probe.history[-1:])
        bloat = dataclasses.replace(bloat, probe=probe)
    lists = {
        name: dataclasses.replace(getattr(snap, name), rows=getattr(snap, name).rows[:LIST_ROWS])
        for name in ("leases", "stuck", "dead")
    }
    slimmed: dict[str, Any] = dataclasses.replace(snap, throughput=tp, bloat=bloat, **lists).to_dict()
    rounded: dict[str, Any] = _rounded(slimmed)
    return rounded


_ISO_MICROS = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})\d{3}")


def _rounded(value: Any) -> Any:
    """Floats to 3 decimals and ISO times to milliseconds: what changes below that is noise that
    would cost bytes at every poll.

    >>> _rounded({"a": [28.0590911, "2026-12-01T14:24:10.134769+00:00", "x.123456"]})
    {'a': [28.059, '2026-12-01T14:24:10.134+00:00', 'x.123456']}
    """
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, str):
        return _ISO_MICROS.sub(r"\1", value)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _encode(data: dict[str, Any]) -> bytes:
    return json.dumps(data, separators=(",", ":"), sort_keys=True).encode()


def _compress(raw: bytes, zdict: bytes | None) -> bytes:
    c = zlib.compressobj(
        9, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, **({"zdict": zdict} if zdict else {})
    )
    return c.compress(raw) + c.flush()


def _decompress(body: bytes, zdict: bytes | None) -> bytes:
    d = zlib.decompressobj(15, **({"zdict": zdict} if zdict else {}))
    return d.decompress(body) + d.flush()


def epoch(at: datetime) -> float:
    return at.timestamp()


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=10, check_same_thread=False, isolation_level=None)
    return conn


class Recorder:
    """Appends polls to a recording (created when missing). Thread-safe: the dashboard records from
    its collect worker. `keep_s` deletes polls older than that, whole keyframe groups at a time."""

    def __init__(self, path: str | os.PathLike[str], *, keep_s: float | None = None) -> None:
        self.path = Path(path)
        self.keep_s = keep_s
        self._lock = threading.Lock()
        _refuse_foreign(self.path)  # before anything writes: another application's file stays as it was
        try:
            self.conn = _connect(self.path)
            self.conn.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a committed poll survives the process being killed (not a power cut,
            # which may lose the last few: a recording is history, not a ledger).
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.executescript(SCHEMA)
            found = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise RecordingError(f"{self.path}: cannot write a recording there: {exc}") from None
        if not found:
            self.conn.execute("BEGIN")
            self.conn.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [
                    ("format", FORMAT),
                    ("version", str(VERSION)),
                    ("created", datetime.now(timezone.utc).isoformat()),
                ],
            )
            self.conn.execute("COMMIT")
        else:
            check_meta(self.path, found, writing=True)
        # queue -> (its group's keyframe id, the previous poll's JSON, polls since the keyframe)
        self._keyframes: dict[str, tuple[int, bytes, int]] = {}
        self._appended = 0

    def append(self, queue: str, snap: Snapshot) -> int:
        """Store one poll; returns the bytes its body took."""
        raw = _encode(slim(snap))
        with self._lock:
            key = self._keyframes.get(queue)
            if key is None or key[2] >= KEYFRAME_EVERY - 1:
                body, base = _compress(raw, None), None
            else:
                body, base = _compress(raw, key[1]), key[0]
            cur = self.conn.execute(
                "INSERT INTO polls (queue, at, base, body) VALUES (?, ?, ?, ?)",
                (queue, epoch(snap.server.now), base, body),
            )
            if base is None:
                self._keyframes[queue] = (int(cur.lastrowid or 0), raw, 0)
            else:
                assert key is not None
                self._keyframes[queue] = (key[0], raw, key[2] + 1)
            self._appended += 1
            if self.keep_s is not None and self._appended % PRUNE_EVERY == 0:
                self._prune(epoch(snap.server.now) - self.keep_s)
        return len(body)

    def prune(self, before: float) -> int:
        with self._lock:
            return self._prune(before)

    def _prune(self, before: float) -> int:
        """Delete every keyframe group whose newest poll is older than `before`, never a group a
        queue still appends to (its keyframe must outlive the polls compressed against it)."""
        current = {k[0] for k in self._keyframes.values()}
        rows = self.conn.execute(
            "SELECT COALESCE(base, id) AS g FROM polls GROUP BY g HAVING max(at) < ?", (before,)
        ).fetchall()
        groups = [(g,) for (g,) in rows if g not in current]
        self.conn.execute("BEGIN")
        self.conn.executemany("DELETE FROM polls WHERE id = ?1 OR base = ?1", groups)
        self.conn.execute("COMMIT")
        return len(groups)

    def close(self) -> None:
        with self._lock:
            self.conn.close()


def _refuse_foreign(path: Path) -> None:
    """A file that exists and holds anything must already be a recording of a format this code writes;
    read (read-only, so its journal mode and bytes stay) before the recorder switches it to WAL."""
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):
        return
    if not path.is_file():
        raise RecordingError(f"{path}: not a file: cannot write a recording there")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall()) if "meta" in tables else {}
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise RecordingError(f"{path}: cannot write a recording there: not an SQLite file ({exc})") from None
    if not tables:
        return  # an SQLite file with nothing in it: nothing to keep
    if meta.get("format") != FORMAT:
        raise RecordingError(
            f"{path}: cannot write a recording there: an SQLite file that is not a pgq-top recording"
            " (left unchanged); record into a new file"
        )
    check_meta(path, meta, writing=True)


def check_meta(path: Path, meta: dict[str, str], *, writing: bool = False) -> int:
    if meta.get("format") != FORMAT:
        raise RecordingError(f"{path}: not a pgq-top recording")
    try:
        version = int(meta.get("version", ""))
    except ValueError:
        raise RecordingError(f"{path}: a pgq-top recording with a damaged version field") from None
    if version > VERSION:
        raise RecordingError(
            f"{path}: recording format {version} is newer than this pgq-top reads (format {VERSION});"
            " upgrade pgq-top to read it"
        )
    if writing and version != VERSION:
        raise RecordingError(
            f"{path}: recording format {version}, and this pgq-top writes format {VERSION}:"
            " record into a new file"
        )
    return version


@dataclass(frozen=True)
class PollRef:
    id: int
    queue: str
    at: float  # unix seconds, server clock


class Recording:
    """A recording opened for reading. Every failure is a RecordingError (one line, exit 2)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise RecordingError(f"{self.path}: no such recording")
        try:
            # read-only: reading must never change (or create) the file a recorder may be writing
            self.conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
            meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise RecordingError(f"{self.path}: not a pgq-top recording, or damaged ({exc})") from None
        self.version = check_meta(self.path, meta)
        self._last: tuple[int, int, bytes] | None = None  # (group, poll id, its JSON): the last decoded

    def queues(self) -> list[str]:
        return [r[0] for r in self._query("SELECT DISTINCT queue FROM polls ORDER BY queue")]

    def polls(self, queue: str) -> list[PollRef]:
        rows = self._query("SELECT id, queue, at FROM polls WHERE queue = ? ORDER BY at, id", (queue,))
        return [PollRef(int(i), str(q), float(a)) for i, q, a in rows]

    def at_or_before(self, queue: str, at: float) -> PollRef | None:
        rows = self._query(
            "SELECT id, queue, at FROM polls WHERE queue = ? AND at <= ? ORDER BY at DESC, id DESC LIMIT 1",
            (queue, at),
        )
        return PollRef(int(rows[0][0]), str(rows[0][1]), float(rows[0][2])) if rows else None

    def snapshot(self, ref: PollRef) -> Snapshot:
        try:
            return Snapshot.from_dict(json.loads(self._raw(ref.id)))
        except (ValueError, TypeError, KeyError) as exc:
            raise RecordingError(f"{self.path}: poll {ref.id} is damaged ({exc})") from None

    def snapshots(self, refs: Sequence[PollRef]) -> Iterator[Snapshot]:
        for ref in refs:
            yield self.snapshot(ref)

    def _raw(self, poll_id: int) -> bytes:
        """A poll's JSON: inflate its group from the keyframe (or from the last poll decoded, when
        it is an earlier one of the same group: replay's next step costs one inflate)."""
        rows = self._query("SELECT COALESCE(base, id) FROM polls WHERE id = ?", (poll_id,))
        if not rows:
            raise RecordingError(f"{self.path}: poll {poll_id} is gone (deleted by --keep while reading)")
        group = int(rows[0][0])
        start, raw = group, None
        if self._last is not None and self._last[0] == group and self._last[1] <= poll_id:
            start, raw = self._last[1], self._last[2]
            if start == poll_id:
                return raw
        chain = self._query(
            "SELECT id, body FROM polls WHERE (id = ? OR base = ?) AND id > ? AND id <= ? ORDER BY id",
            (group, group, start if raw is not None else group - 1, poll_id),
        )
        try:
            for pid, body in chain:
                raw = _decompress(body, raw)
                self._last = (group, int(pid), raw)
        except zlib.error as exc:
            raise RecordingError(f"{self.path}: poll {poll_id} is damaged ({exc})") from None
        if raw is None or self._last is None or self._last[1] != poll_id:
            raise RecordingError(f"{self.path}: poll {poll_id} is damaged (its group is incomplete)")
        return raw

    def _query(self, text: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            return self.conn.execute(text, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise RecordingError(f"{self.path}: damaged recording ({exc})") from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RecordingSource:
    """A snapshot source that records what it returns: the dashboard's `--record FILE`."""

    def __init__(self, source: SnapshotSource, path: str, label: str) -> None:
        self.source = source
        self.label = label
        self.recorder = Recorder(path)

    def collect(self) -> Snapshot:
        snap = self.source.collect()
        self.recorder.append(self.label, snap)
        return snap

    def close(self) -> None:
        self.recorder.close()
