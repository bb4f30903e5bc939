"""Autovacuum pacing as pure functions: how fast dead tuples are made, when autovacuum will look at
the table, and how many dead tuples pile up before a vacuum clears them.

The model (PostgreSQL's autovacuum launcher): each database is visited once per
`autovacuum_naptime`; at a visit, a table whose dead tuples exceed its threshold gets a worker, if
one of `autovacuum_max_workers` is free. A vacuum removes the tuples that were dead when it started
(and older than the xmin horizon); those made while it runs wait for the next one. So at a steady
rate r, with threshold T, naptime N and vacuum duration D:

    wait  = N * max(1, ceil(max(T/r - D, 0) / N))   seconds from one vacuum's end to the next start
    cycle = D + wait                                 start to start
    peak  = r * (cycle + D)                          dead tuples just before a vacuum finishes

When T/r < N the threshold fills before the launcher looks: the naptime, not the threshold, is the
limiter, and no per-table setting shortens it. When D exceeds max(N, T/r), vacuums run back to back
and still fall behind.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pgq_tui.monitor.bloat import Pacing, XminBlock
from pgq_tui.monitor.health import fmt_age, fmt_count
from pgq_tui.monitor.snapshot import XminHolder

OK, WARN, CRIT = "ok", "warn", "crit"


@dataclass(frozen=True)
class Counters:
    """pg_stat_user_tables counters at one poll (t: server clock, epoch seconds)."""

    t: float
    dead: int  # n_dead_tup
    deleted: int  # n_tup_del
    updated: int  # n_tup_upd
    hot_updated: int  # n_tup_hot_upd
    vacuums: int  # vacuum_count + autovacuum_count
    vacuum_time_ms: float | None = None  # total_vacuum_time + total_autovacuum_time (PostgreSQL 18)


def produced(c: Counters) -> int:
    """Dead tuples a table has made so far: every delete and every non-HOT update leaves one for
    vacuum (HOT chains are pruned on the page, without vacuum).

    >>> produced(Counters(0, 0, deleted=10, updated=5, hot_updated=2, vacuums=0))
    13
    """
    return c.deleted + c.updated - c.hot_updated


def dead_rate(samples: Sequence[Counters], window_s: float) -> float | None:
    """Dead tuples made per second over the last `window_s` seconds of samples (oldest first), from
    the monotonic counters; if they did not move (stats not flushed yet, or a writer that only
    aborts), from the growth of n_dead_tup. None with fewer than two samples.

    >>> s = [Counters(0, 0, 0, 0, 0, 0), Counters(5, 900, 1000, 0, 0, 0), Counters(10, 1900, 2000, 0, 0, 0)]
    >>> dead_rate(s, 10), dead_rate(s, 5)
    (200.0, 200.0)
    >>> dead_rate([Counters(0, 100, 0, 0, 0, 0), Counters(10, 300, 0, 0, 0, 0)], 10)
    20.0
    >>> dead_rate(s[:1], 10) is None
    True
    """
    if len(samples) < 2:
        return None
    last = samples[-1]
    first = next((s for s in reversed(samples[:-1]) if last.t - s.t >= window_s), samples[0])
    dt = last.t - first.t
    if dt <= 0:
        return None
    made = produced(last) - produced(first)
    if made <= 0:
        made = max(0, last.dead - first.dead) if last.vacuums == first.vacuums else 0
    return made / dt


def vacuum_duration(samples: Sequence[Counters]) -> float | None:
    """Seconds the latest vacuum(s) took, from PostgreSQL 18's total vacuum time across the polls
    where the vacuum count moved. None when no vacuum finished while we watched (or before 18).

    >>> a = Counters(0, 0, 0, 0, 0, vacuums=3, vacuum_time_ms=900.0)
    >>> b = Counters(5, 0, 0, 0, 0, vacuums=4, vacuum_time_ms=3400.0)
    >>> vacuum_duration([a, b]), vacuum_duration([a]), vacuum_duration([b, b])
    (2.5, None, None)
    """
    for prev, cur in zip(reversed(samples[:-1]), reversed(samples[1:]), strict=True):
        n = cur.vacuums - prev.vacuums
        if n > 0 and cur.vacuum_time_ms is not None and prev.vacuum_time_ms is not None:
            return (cur.vacuum_time_ms - prev.vacuum_time_ms) / 1000.0 / n
    return None


def wait_s(threshold: float, rate: float, naptime_s: float, vacuum_s: float = 0.0) -> float:
    """Seconds from a vacuum's end until autovacuum starts the next one: the first launcher visit at
    which the dead tuples (r * D left over, plus r per second) exceed the threshold. Worst case over
    the launcher's phase: a whole naptime at least.

    >>> wait_s(36_000, 5000, 60), wait_s(100_000, 1000, 60), wait_s(20_000, 5000, 5, vacuum_s=2)
    (60.0, 120.0, 5.0)
    """
    fill_after_end = max(threshold / rate - vacuum_s, 0.0)
    return float(naptime_s * max(1, math.ceil(fill_after_end / naptime_s)))


def predicted_peak(threshold: float, rate: float, naptime_s: float, vacuum_s: float = 0.0) -> float:
    """Dead tuples just before a vacuum finishes, at a steady rate (see the module docstring).

    PERF_NOTES' collapse: 5,000 dead/s, default threshold 50 + 0.2 * 200k, naptime 60 s, a 2 s
    vacuum: 320k at the peak (370k was measured). Scale factor 0, threshold 20k, naptime 5 s: 45k.
    >>> predicted_peak(40_050, 5000, 60, 2), predicted_peak(20_000, 5000, 5, 2)
    (320000.0, 45000.0)
    """
    cycle = vacuum_s + wait_s(threshold, rate, naptime_s, vacuum_s)
    return rate * (cycle + vacuum_s)


def pacing(
    *,
    rate: float | None,
    threshold: float,
    naptime_s: float,
    vacuum_s: float | None,
    vacuum_s_source: str = "measured",
    max_workers: int = 3,
    workers_elsewhere: int = 0,
    enabled: bool = True,
    peak_budget: float | None = None,
) -> Pacing:
    """The verdict in words. `peak_budget`: dead tuples the claims can bear (from the probe's cost
    slope, see advice.peak_budget); above it the verdict warns.

    >>> p = pacing(rate=5000, threshold=40_050, naptime_s=60, vacuum_s=2, peak_budget=50_000)
    >>> p.limiter, p.level, round(p.predicted_peak)
    ('naptime', 'crit', 320000)
    >>> pacing(rate=100, threshold=40_050, naptime_s=60, vacuum_s=2).limiter
    'threshold'
    >>> pacing(rate=5000, threshold=20_000, naptime_s=5, vacuum_s=30).limiter
    'cannot keep up'
    """
    d = vacuum_s or 0.0

    def early(limiter: str, keeps_up: bool | None, level: str, message: str) -> Pacing:
        return Pacing(
            rate, threshold, None, None, vacuum_s, vacuum_s_source, None, limiter, keeps_up, level, message
        )

    if not enabled:
        return early(
            "disabled", False, WARN, "autovacuum is off for this table: dead tuples grow until VACUUM"
        )
    if rate is None or rate <= 0:
        return early("idle", None, OK, "no dead tuples being made: nothing for autovacuum to keep up with")
    fill = threshold / rate
    wait = wait_s(threshold, rate, naptime_s, d)
    cycle = d + wait
    peak = predicted_peak(threshold, rate, naptime_s, d)
    gap = max(naptime_s, fill)  # the interval between triggers, vacuum time aside
    keeps_up = d <= gap
    made = f"{_n(rate)} dead tuples/s"
    dur = f"{d:.1f} s ({vacuum_s_source})" if vacuum_s is not None else "unknown (none seen yet)"
    if workers_elsewhere >= max_workers:
        limiter = "workers"
        why = (
            f"all {max_workers} autovacuum workers are busy on other tables: this table waits for one "
            f"while {made} pile up"
        )
    elif not keeps_up:
        limiter = "cannot keep up"
        why = (
            f"a vacuum takes {d:.0f} s, longer than the {gap:.0f} s between triggers: vacuums run back "
            f"to back and fall behind ({made}); raise its cost limit"
        )
    elif fill < naptime_s:
        limiter = "naptime"
        why = (
            f"naptime is the limiter: the threshold ({_n(threshold)}) fills in {fill:.0f} s at {made}, "
            f"but autovacuum looks only every {naptime_s:.0f} s (autovacuum_naptime, server-wide); "
            "a lower per-table threshold cannot make it look sooner"
        )
    else:
        limiter = "threshold"
        why = f"threshold is the limiter: {_n(threshold)} dead tuples take {fill:.0f} s to fill at {made}"
    message = (
        f"{why}. Predicted peak {_n(peak)} dead tuples (a vacuum every ~{cycle:.0f} s, each taking {dur})"
    )
    level = OK
    if limiter in ("workers", "cannot keep up"):
        level = CRIT
    elif peak_budget is not None and peak > peak_budget:
        level = CRIT if peak > 4 * peak_budget else WARN
        message += f"; claims stay cheap up to ~{_n(peak_budget)}"
    return Pacing(
        rate, threshold, fill, cycle, vacuum_s, vacuum_s_source, peak, limiter, keeps_up, level, message
    )


def xmin_block(
    *,
    dead_before: int | None,
    dead_after: int,
    vacuumed_at_epoch: float | None,
    now_epoch: float,
    holders: Sequence[XminHolder],
    before: Sequence[XminHolder] = (),
    vacuumed_at: datetime | None = None,
    min_dead: int = 100,
) -> XminBlock | None:
    """A vacuum ran between two polls and the dead tuples stayed: name who holds the xmin horizon.
    `dead_before`: n_dead_tup at the poll before the vacuum finished; None (the first poll, which
    sees only the last vacuum ever, not what it left) is no evidence. A holder counts only if it can
    hold this table (XminHolder.holds_tables: not a logical slot's catalog_xmin, not a transaction in
    another database) and held it through the vacuum: its transaction began before the vacuum ended,
    or (an undated slot) it was there at the poll before. The oldest such (not pgq-top's own) is
    named; None without one: the tuples left may just be newer than the vacuum.

    >>> h = XminHolder("backend", "4242", 50, 300.0, "app@db psql idle in transaction", scope="database")
    >>> xmin_block(dead_before=5000, dead_after=5000, vacuumed_at_epoch=950.0, now_epoch=1000.0,
    ...            holders=[h]).holder
    '4242'
    >>> xmin_block(dead_before=5000, dead_after=10, vacuumed_at_epoch=950.0, now_epoch=1000.0,
    ...            holders=[h]) is None
    True
    >>> xmin_block(dead_before=None, dead_after=5000, vacuumed_at_epoch=950.0, now_epoch=1000.0,
    ...            holders=[h]) is None  # the first poll
    True
    >>> other = XminHolder("backend", "77", 90, 300.0, "app@other idle", scope="other database")
    >>> slot = XminHolder("replication slot", "cdc", 90, None, "logical inactive", scope="catalog")
    >>> xmin_block(dead_before=5000, dead_after=5000, vacuumed_at_epoch=950.0, now_epoch=1000.0,
    ...            holders=[other, slot], before=[other, slot]) is None
    True
    """
    if vacuumed_at_epoch is None or dead_before is None or dead_after < min_dead:
        return None
    if dead_after < dead_before / 2:
        return None  # it removed most of them
    since_vacuum = now_epoch - vacuumed_at_epoch
    seen_before = {(h.kind, h.name) for h in before}

    def held_through(h: XminHolder) -> bool:
        if h.age_s is not None:
            return h.age_s >= since_vacuum
        return (h.kind, h.name) in seen_before

    older = [h for h in holders if not h.is_pgq_top and h.holds_tables and held_through(h)]
    holder = max(older, key=lambda h: (h.xmin_age, h.age_s or 0.0), default=None)
    if holder is None:
        # Nobody who can hold this table is older than the vacuum: under heavy churn the tuples left
        # may simply be newer than it, so there is nothing to blame.
        return None
    if dead_before:
        removed = f"removed {_n(max(0, dead_before - dead_after))} of {_n(dead_before)}"
    else:
        removed = f"left {_n(dead_after)}"
    who = f"pid {holder.name}" if holder.kind == "backend" else f"{holder.kind} {holder.name}"
    held = f" for {fmt_age(holder.age_s)}" if holder.age_s is not None else ""
    detail = f" ({holder.detail})" if holder.detail else ""
    end = {
        "backend": "end that transaction (sessions panel, K terminates)",
        "prepared transaction": "commit or roll it back (COMMIT/ROLLBACK PREPARED in its database)",
    }.get(holder.kind, "check the standby feeding it back, or drop the slot if no standby uses it")
    message = f"vacuum ran but {removed} dead tuples: the xmin horizon is held{held} by {who}{detail}; {end}"
    return XminBlock(
        vacuumed_at,
        dead_before,
        dead_after,
        holder.kind,
        holder.name,
        holder.age_s,
        holder.detail,
        message,
    )


def _n(x: float) -> str:
    return fmt_count(round(x))
