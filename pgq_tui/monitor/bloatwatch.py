"""BloatWatch: the memory the bloat signals need across polls (probe history, counter samples, the
vacuum seen running), turned into a BloatReport each poll by the pure functions of `probe` and
`pacing`. One per Monitor; the Monitor gives it its connection and the table/session panels.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from pgq_tui.monitor import pacing as pc
from pgq_tui.monitor import probe as pr
from pgq_tui.monitor.bloat import AutovacuumSettings, BloatReport, ClaimCost, ProbePoint, XminBlock
from pgq_tui.monitor.health import reloptions_dict
from pgq_tui.monitor.snapshot import QueueStats, Sessions, TableHealth, XminHolder

Rows = Callable[[str, dict[str, Any]], list[dict[str, Any]]]

# The probe never takes more than this share of wall time, whatever the interval asked for.
PROBE_MAX_DUTY = 0.02


def settings_from(row: Mapping[str, Any]) -> AutovacuumSettings:
    """The effective settings for this table: its reloptions over the server's."""
    opts = reloptions_dict(row["reloptions"])
    limit = int(opts.get("autovacuum_vacuum_cost_limit", row["av_cost_limit"]))
    return AutovacuumSettings(
        naptime_s=float(row["naptime_s"]),
        max_workers=int(row["max_workers"]),
        workers_elsewhere=int(row["workers_elsewhere"]),
        cost_limit=limit if limit > 0 else int(row["vacuum_cost_limit"]),
        cost_delay_ms=float(opts.get("autovacuum_vacuum_cost_delay", row["cost_delay_ms"])),
        idle_tx_timeout_ms=float(row["idle_tx_timeout_ms"]),
        fillfactor=int(opts.get("fillfactor", 100)),
        reloptions=tuple(row["reloptions"] or ()),
    )


def peak_budget(floor: int | None, slope: float | None, multiple: float = 4.0) -> float | None:
    """Dead tuples the claims can bear before they cost `multiple` times their floor, from the
    probe's measured slope (buffers per dead tuple).

    >>> peak_budget(6, 0.002), peak_budget(6, None)
    (9000.0, None)
    """
    if floor is None or not slope:
        return None
    return (multiple - 1) * floor / slope


class BloatWatch:
    """probe: the dialect's claim candidate scan (None: no probe for this kind of queue).
    probe_interval_s: at most one probe this often (0: never); it backs off further so that it
    never takes more than 2% of the time. window_s: history kept for the floor and the sparkline."""

    def __init__(
        self,
        probe: sql.Composable | None,
        *,
        probe_interval_s: float = 10.0,
        probe_timeout_ms: int = 1000,
        window_s: float = 300.0,
        rate_window_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.probe = probe
        self.probe_interval_s = probe_interval_s
        self.probe_timeout_ms = probe_timeout_ms
        self.window_s = window_s
        self.rate_window_s = rate_window_s
        self.clock = clock
        self._points: deque[ProbePoint] = deque()
        self._samples: deque[pc.Counters] = deque()
        self._next_probe = 0.0
        self._queue: str | None = None
        self._probe_error: str | None = None
        self._vacuum_seen: tuple[float, float] | None = None  # (first, last) epoch it was seen running
        self._seen_duration: float | None = None
        self._block: XminBlock | None = None
        self._holders: tuple[XminHolder, ...] = ()  # the previous poll's xmin holders

    # -- I/O ---------------------------------------------------------------------------------------
    def poll(
        self,
        conn: psycopg.Connection,
        rows: Rows,
        jobs_oid: int,
        table: TableHealth,
        sessions: Sessions,
        queues: Sequence[QueueStats],
        now: datetime,
    ) -> BloatReport:
        row = rows("autovacuum_pacing", {"jobs_oid": jobs_oid})[0]
        point = self._maybe_probe(conn, queues, now, table.dead_tuples)
        return self.update(row, table, sessions, now, point)

    def _maybe_probe(
        self, conn: psycopg.Connection, queues: Sequence[QueueStats], now: datetime, dead: int
    ) -> ProbePoint | None:
        if self.probe is None or self.probe_interval_s <= 0 or self.clock() < self._next_probe:
            return None
        # Stay on one queue while it exists (floors of two queues are not comparable); pick the one
        # with the most ready jobs when there is none yet or it went away.
        names = {q.queue for q in queues}
        if self._queue is None or (names and self._queue not in names):
            busiest = max(queues, key=lambda q: q.ready or 0, default=None)
            if busiest is None:
                return None
            if self._queue is not None:
                self._points.clear()
            self._queue = busiest.queue
        started = self.clock()
        try:
            point = pr.run_probe(
                conn,
                self.probe,
                {"queue": self._queue},
                at=now,
                dead_tuples=dead,
                timeout_ms=self.probe_timeout_ms,
            )
            self._probe_error = None
        except psycopg.Error as exc:
            if conn.closed or conn.broken:
                raise
            self._probe_error = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            point = None
        spent = self.clock() - started
        self._next_probe = started + max(self.probe_interval_s, spent / PROBE_MAX_DUTY)
        return point

    # -- state -> report (no I/O) -------------------------------------------------------------------
    def update(
        self,
        row: Mapping[str, Any],
        table: TableHealth,
        sessions: Sessions,
        now: datetime,
        point: ProbePoint | None,
    ) -> BloatReport:
        t = float(row["now_epoch"])
        settings = settings_from(row)
        sample = pc.Counters(
            t=t,
            dead=table.dead_tuples,
            deleted=table.deleted,
            updated=table.updated,
            hot_updated=table.hot_updated,
            vacuums=table.vacuum_count + table.autovacuum_count,
            vacuum_time_ms=row["vacuum_time_ms"],
        )
        prev = self._samples[-1] if self._samples else None
        self._samples.append(sample)
        while self._samples and t - self._samples[0].t > self.window_s:
            self._samples.popleft()
        if point is not None:
            self._points.append(point)
        while self._points and (now - self._points[0].at).total_seconds() > self.window_s:
            self._points.popleft()
        self._track_vacuum(table, t)

        points = list(self._points)
        level, floor, ratio, message = pr.cost_verdict(points)
        slope = pr.buffers_per_dead(points)
        probe = ClaimCost(
            queue=self._queue,
            history=tuple(points),
            floor=floor,
            ratio=ratio,
            level=level,
            message=message if self.probe is not None else "claim cost: no probe for this kind of queue",
            interval_s=self.probe_interval_s,
            buffers_per_dead=slope,
            error=self._probe_error,
        )
        vacuum_s, source = self._vacuum_duration(sample, table)
        pacing = pc.pacing(
            rate=pc.dead_rate(list(self._samples), self.rate_window_s),
            threshold=table.vacuum_threshold,
            naptime_s=settings.naptime_s,
            vacuum_s=vacuum_s,
            vacuum_s_source=source,
            max_workers=settings.max_workers,
            workers_elsewhere=settings.workers_elsewhere,
            enabled=table.autovacuum_enabled,
            peak_budget=peak_budget(floor, slope),
        )
        self._update_block(prev, sample, row, sessions)
        return BloatReport(probe=probe, pacing=pacing, xmin_block=self._block, settings=settings)

    def _track_vacuum(self, table: TableHealth, t: float) -> None:
        if table.vacuum is not None:
            first = self._vacuum_seen[0] if self._vacuum_seen else t
            self._vacuum_seen = (first, t)
        elif self._vacuum_seen is not None:
            first, last = self._vacuum_seen
            self._seen_duration = max(last - first, 0.0)
            self._vacuum_seen = None

    def _vacuum_duration(self, sample: pc.Counters, table: TableHealth) -> tuple[float | None, str]:
        measured = pc.vacuum_duration(list(self._samples))
        if measured is not None:
            return measured, "measured"
        if self._seen_duration is not None:
            return self._seen_duration, "seen running"
        if sample.vacuum_time_ms is not None and sample.vacuums > 0:
            return sample.vacuum_time_ms / 1000.0 / sample.vacuums, f"mean of {sample.vacuums}"
        return None, "unknown"

    def _update_block(
        self, prev: pc.Counters | None, cur: pc.Counters, row: Mapping[str, Any], sessions: Sessions
    ) -> None:
        holders = sessions.xmin_holders
        before, self._holders = self._holders, holders
        if self._block is not None:
            still = any(h.kind == self._block.holder_kind and h.name == self._block.holder for h in holders)
            if not still or cur.dead < self._block.dead_after / 2:
                self._block = None
        # A vacuum between two polls: the first poll sees only the last vacuum ever, not what it left.
        if prev is None or cur.vacuums <= prev.vacuums:
            return
        self._block = pc.xmin_block(
            dead_before=prev.dead,
            dead_after=cur.dead,
            vacuumed_at_epoch=row["vacuumed_at_epoch"],
            now_epoch=cur.t,
            holders=holders,
            before=before,
            vacuumed_at=row["vacuumed_at"],
        )
