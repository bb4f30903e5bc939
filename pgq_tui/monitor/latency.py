"""Wait-time and run-time percentiles per queue (issue #33 item 4), read on the side.

The dialect's latency statement (QueueModel.latency, dialects/sql/latency.sql) reads the jobs that
finished in the last hour, newest first, at most LATENCY_NEWEST of them, and returns p50/p95/p99/max
of their wait (due -> started) and run (started -> finished) per queue, for the last 5 minutes and
the last hour. However an index serves it, it reads up to that many rows: it never runs in the poll.
A daemon thread runs it on its own connection with its own statement_timeout (`budget_ms`), paced by
its measured cost like the background counter (background.pacing_wait: at most `duty` of a backend,
at least `min_interval_s` apart), so it never delays a poll nor holds the poll's connection, and it
holds back the xmin horizon for its own duration only.

Its figures are exact as of the statement's now() and are shown stale with that as_of (the panel's
age mark); a span read over the newest LATENCY_NEWEST jobs only (a dialect that reads queue by queue:
the queue's newest read_cap) is approximate. A pass that fails
keeps the previous figures with their true as_of and says why (Latency.error); before any pass
landed, or where the kind does not time its jobs, every figure is unknown with the reason, never 0.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

import psycopg
from psycopg.rows import dict_row

from pgq_tui.db.connect import Session
from pgq_tui.dialects.contract import LATENCY_NEWEST, LATENCY_SPANS, Capability, QueueModel
from pgq_tui.dialects.introspect import DEFAULTS
from pgq_tui.errors import first_line
from pgq_tui.monitor.background import BACKGROUND_SETTINGS, LATENCY_DUTY, pacing_wait
from pgq_tui.monitor.snapshot import (
    APPROXIMATE,
    STALE,
    UNKNOWN,
    UNSUPPORTED,
    Figure,
    Latency,
    Percentiles,
    QueueLatency,
    Snapshot,
    SpanLatency,
)

APPLICATION_NAME = "pgq-top latency"
SOURCE = "background"
NOT_LANDED = "not read yet (the latency pass has not landed)"
NO_ROWS = "no job finished in the last {span}"
NOT_TIMED = "the framework recorded no {side} time for the jobs that finished in the last {span}"
PARTIAL = "over the newest {cap:,} finished jobs of the last hour only"
PARTIAL_QUEUE = "over this queue's newest {cap:,} finished jobs of the last hour only"
SPANS = tuple(name for name, _ in LATENCY_SPANS)
QUANTILES = (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))


def _percentiles(values: Any, top: Any) -> Percentiles | None:
    """[p50, p95, p99] and the max from the statement, or None when the framework timed none."""
    if values is None or top is None:
        return None
    p50, p95, p99 = (float(v) if v is not None else None for v in values)
    return Percentiles(p50, p95, p99, float(top))


def from_rows(
    rows: Iterable[Mapping[str, Any]], *, note: str | None = None, cost_ms: float | None = None
) -> Latency:
    """The Latency of one pass: LATENCY_COLUMNS rows, one per queue and span with finished jobs.

    >>> from datetime import datetime, timezone
    >>> at = datetime(2026, 12, 2, tzinfo=timezone.utc)
    >>> lat = from_rows([{"queue": "q", "span": "5m", "jobs": 3, "wait": [0.1, 0.5, 0.9], "wait_max": 1.0,
    ...     "run": None, "run_max": None, "whole": True, "read_cap": 100_000, "cap_per_queue": False,
    ...     "as_of": at}])
    >>> s = lat.queues[0].spans[0]
    >>> (s.span, s.jobs, s.wait.p95, s.run, s.figure.accuracy)
    ('5m', 3, 0.5, None, 'stale')
    >>> s.figure.reason
    'the framework recorded no run time for the jobs that finished in the last 5m'
    """
    per_queue: dict[str, dict[str, SpanLatency]] = {}
    as_of = None
    for r in rows:
        as_of = r["as_of"]
        wait, run = _percentiles(r["wait"], r["wait_max"]), _percentiles(r["run"], r["run_max"])
        missing = [side for side, got in (("start", wait), ("run", run)) if got is None]
        reason = NOT_TIMED.format(side=" or ".join(missing), span=r["span"]) if missing else None
        if not r["whole"]:
            partial = (PARTIAL_QUEUE if r["cap_per_queue"] else PARTIAL).format(cap=r["read_cap"])
            reason = f"{partial}; {reason}" if reason else partial
        accuracy = STALE if r["whole"] else APPROXIMATE
        figure = Figure(accuracy, as_of, SOURCE, reason=reason, note=note)
        per_queue.setdefault(str(r["queue"]), {})[r["span"]] = SpanLatency(
            r["span"], int(r["jobs"]), wait, run, figure
        )
    queues = tuple(
        QueueLatency(q, tuple(spans[s] for s in SPANS if s in spans))
        for q, spans in sorted(per_queue.items())
    )
    return Latency(queues, as_of, cost_ms=cost_ms, note=note)


def span_of(latency: Latency | None, queue: str, span: str) -> SpanLatency:
    """The queue's figures over `span`, always an answer: read, or unknown with why (no pass, the
    kind does not time its jobs, no job of the queue finished in it)."""
    if latency is None:
        return SpanLatency(span, None, None, None, Figure(UNKNOWN, None, SOURCE, reason="not read"))
    for q in latency.queues:
        if q.queue == queue:
            for s in q.spans:
                if s.span == span:
                    return s
    if latency.reason is not None:
        accuracy = UNSUPPORTED if latency.unsupported else UNKNOWN
        return SpanLatency(span, None, None, None, Figure(accuracy, None, SOURCE, reason=latency.reason))
    why = NO_ROWS.format(span=span) + (f" ({latency.gap})" if latency.gap else "")
    return SpanLatency(
        span, 0, None, None, Figure(UNKNOWN, latency.as_of, SOURCE, reason=why, note=latency.note)
    )


def complete(latency: Latency, queues: Iterable[str]) -> Latency:
    """`latency` with an entry for every listed queue and span: what the pass read, else unknown
    with why (so the JSON says null and the reason for each queue, never leaves it out)."""
    names = sorted({*queues, *(q.queue for q in latency.queues)})
    full = tuple(QueueLatency(q, tuple(span_of(latency, q, s) for s in SPANS)) for q in names)
    return dataclasses.replace(latency, queues=full)


def queue_latency(snap: Snapshot, queue: str) -> dict[str, SpanLatency]:
    """span -> the queue's figures, for every span (see span_of)."""
    return {s: span_of(snap.latency, queue, s) for s in SPANS}


class LatencyReader:
    """The latency pass of one Monitor (see the module docstring). Started by the first latest();
    closed by its owner only (Monitor.close)."""

    def __init__(
        self,
        conninfo: str,
        model: QueueModel,
        *,
        read_only: bool = False,
        budget_ms: int = 10_000,
        min_interval_s: float = 10.0,
        duty: float = LATENCY_DUTY,
    ) -> None:
        self.statement = model.latency
        self.reason = None if model.latency is not None else model.support(Capability.LATENCY).reason
        self.note = None
        if model.latency is not None and not model.latency.indexed:
            self.note = "no index serves the finish times: a scan, in the background"
        self.gap = model.latency_gap
        self.min_interval_s = min_interval_s
        self.duty = duty
        self._session = Session(
            conninfo,
            application_name=APPLICATION_NAME,
            gucs=BACKGROUND_SETTINGS,  # one backend, as its duty counts
            autocommit=True,
            statement_timeout_ms=budget_ms,
            lock_timeout_ms=1000,
            read_only=read_only,
        )
        self._cond = threading.Condition()
        self._result: Latency | None = None
        self._passes = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def latest(self) -> Latency:
        """The newest pass's figures (starting the pass on first use), or why there are none."""
        if self.statement is None:
            return Latency((), None, reason=self.reason or "not supported", unsupported=True)
        if self._thread is None and not self._stop.is_set():
            self._thread = threading.Thread(target=self._loop, name="pgq-top latency", daemon=True)
            self._thread.start()
        with self._cond:
            return self._result or Latency((), None, reason=NOT_LANDED)

    @property
    def owed(self) -> bool:
        """No pass has landed yet (there is a statement to run)."""
        with self._cond:
            return self.statement is not None and self._passes == 0

    def wait_for_pass(self, timeout: float) -> bool:
        """Block until a pass has landed (or failed) since the reader started; False on timeout."""
        self.latest()
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._passes == 0:
                left = deadline - time.monotonic()
                if left <= 0 or self.statement is None:
                    return self.statement is None
                self._cond.wait(left)
        return True

    def close(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._session.close()

    def _loop(self) -> None:
        statement = self.statement
        assert statement is not None
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                with self._session.conn.cursor(row_factory=dict_row) as cur:
                    cur.execute(statement.compose(), {**DEFAULTS, "newest": LATENCY_NEWEST})
                    rows = cur.fetchall()
                cost = time.perf_counter() - started
                result = from_rows(rows, note=self.note, cost_ms=cost * 1000)
                if not rows:  # nothing finished in the hour: the statement's clock is still its as_of
                    result = Latency((), self._server_now(), cost_ms=cost * 1000, note=self.note)
            except (psycopg.Error, OSError) as exc:
                cost = time.perf_counter() - started
                error = first_line(exc)
                if not self._session.usable:
                    self._session.close()
                previous = self._result
                result = (
                    Latency(
                        previous.queues, previous.as_of, error=error, cost_ms=previous.cost_ms, note=self.note
                    )
                    if previous is not None and previous.reason is None
                    else Latency((), None, reason=f"not read: {error}", error=error)
                )
            result = dataclasses.replace(result, gap=self.gap)
            with self._cond:
                self._result = result
                self._passes += 1
                self._cond.notify_all()
            self._stop.wait(pacing_wait(cost, self.min_interval_s, self.duty))

    def _server_now(self) -> Any:
        row = self._session.conn.execute("SELECT now()").fetchone()
        return row[0] if row else None
