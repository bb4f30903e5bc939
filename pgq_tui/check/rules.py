"""What `pgq-top check` measures in a Snapshot, and how each measure compares with its thresholds.

Pure functions: no database, no clock. A threshold follows the monitoring-plugins range rule in its
simplest form: `10` alerts when the value is above 10 (so `0` alerts on any at all), and the same
number goes into the perfdata's warn/crit fields. A measure whose panel failed this poll has no value
(perfdata `U`) and makes the result UNKNOWN unless something else is already WARNING or CRITICAL.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pgq_tui.exitcodes import CHECK_CRITICAL, CHECK_OK, CHECK_UNKNOWN, CHECK_WARNING
from pgq_tui.fleet.support import stuck_total, why_not
from pgq_tui.monitor import figures
from pgq_tui.monitor.health import CRIT, OK, WARN, fmt_age, fmt_count
from pgq_tui.monitor.latency import span_of
from pgq_tui.monitor.snapshot import AT_LEAST, Snapshot

UNKNOWN = "unknown"
# monitoring-plugins' max_state(): CRITICAL > WARNING > UNKNOWN > OK
_RANK = {OK: 0, UNKNOWN: 1, WARN: 2, CRIT: 3}
EXIT_CODE = {OK: CHECK_OK, WARN: CHECK_WARNING, CRIT: CHECK_CRITICAL, UNKNOWN: CHECK_UNKNOWN}
STATUS = {OK: "OK", WARN: "WARNING", CRIT: "CRITICAL", UNKNOWN: "UNKNOWN"}


# Measures of the whole database, not of one queue: with several queues in one database they are
# reported once (as "database"), so one idle session is not one alert per queue.
DATABASE_WIDE = frozenset({"xmin_age", "idle_tx_age", "idle_tx_sessions"})


@dataclass(frozen=True)
class Limit:
    warn: float | None
    crit: float | None

    def level(self, value: float) -> str:
        """
        >>> [Limit(0, 10).level(v) for v in (0, 1, 10, 11)]
        ['ok', 'warn', 'warn', 'crit']
        >>> Limit(None, None).level(1e9)
        'ok'
        """
        if self.crit is not None and value > self.crit:
            return CRIT
        if self.warn is not None and value > self.warn:
            return WARN
        return OK


@dataclass(frozen=True)
class CheckThresholds:
    """Defaults: any stuck or dead job warns; a queue waiting 30 s warns, 5 min is critical (the
    dashboard's colours); dead tuples at 4x the autovacuum threshold warn (a busy queue overshoots
    between autovacuum's naptime visits), 20x is critical (vacuum is not keeping up or is blocked);
    an xmin horizon held 5 min warns, an hour is critical; a transaction idle for a minute warns."""

    stuck: Limit = Limit(0, 50)
    ready_age_s: Limit = Limit(30, 300)
    dead: Limit = Limit(0, 1000)
    dead_tuples_ratio: Limit = Limit(4, 20)
    xmin_age_s: Limit = Limit(300, 3600)
    idle_tx_age_s: Limit = Limit(60, 600)
    wait_p95_s: Limit = Limit(None, None)  # off unless asked (--wait-p95): no latency figure by default


@dataclass(frozen=True)
class Measure:
    """One perfdata item; `limit` is None for figures reported but never alerted on."""

    label: str
    value: float | None  # None: unknown this poll (its panel failed)
    uom: str = ""
    limit: Limit | None = None
    minimum: float | None = 0
    maximum: float | None = None
    level: str = OK
    message: str = ""  # what is wrong, when level is not OK
    unsupported: str | None = None  # set: the dialect cannot serve this measure (why); never alerts


@dataclass(frozen=True)
class Result:
    """A check of one target: its measures, or why there are none (unreachable, missing table)."""

    name: str
    measures: tuple[Measure, ...] = ()
    error: str | None = None  # set: the target could not be checked at all (UNKNOWN)
    kind: str | None = None  # the queue's dialect (None: not detected)
    table: str = ""  # the queue's main relation, schema.table
    causes: tuple[tuple[str, str], ...] = ()  # (level, one line) per diagnosis chain, worst first

    @property
    def unsupported(self) -> list[Measure]:
        return [m for m in self.measures if m.unsupported is not None]

    @property
    def problems(self) -> list[Measure]:
        """Measures not OK, worst first."""
        return sorted((m for m in self.measures if m.level != OK), key=lambda m: -_RANK[m.level])

    @property
    def level(self) -> str:
        if self.error is not None:
            return UNKNOWN
        # a named cause makes it at least WARNING; CRITICAL stays the thresholds' call (--*-crit)
        return worst([*(m.level for m in self.measures), *(WARN for _ in self.causes)])


def rank(level: str) -> int:
    return _RANK[level]


def worst(levels: Iterable[str]) -> str:
    """
    >>> worst(["ok", "unknown", "warn"]), worst(["unknown", "ok"]), worst([])
    ('warn', 'unknown', 'ok')
    """
    return max(levels, key=_RANK.__getitem__, default=OK)


def _rated(
    snap: Snapshot,
    panel: str,
    label: str,
    value: float | None,
    limit: Limit,
    message: str,
    uom: str = "",
    needs: tuple[str, ...] | None = None,
    counts: tuple[str, ...] = (),
    lower_bound: bool = False,
) -> Measure:
    """A measure with thresholds. Unknown (UNKNOWN, saying why) when a count it rests on (`counts`,
    QueueStats fields) was not taken or its panel failed this poll; unsupported when the queue's kind
    has no such state or the dialect cannot serve what it `needs`. A `lower_bound` value (a count
    over the cap) alerts like the value it is at least, but its perfdata is `U`, never a made-up
    number; one that stays under the limit cannot prove OK, so it is unknown."""
    for name in counts:
        why = figures.unknown_why(snap, name)
        if why is not None:
            return Measure(label, None, uom, limit, level=UNKNOWN, message=f"{label} unknown: {why}")
    why = why_not(snap, *needs) if needs is not None else None
    if why is None:
        why = next((w for n in counts if (w := figures.not_recorded(snap, n)) is not None), None)
    if why is not None:
        return Measure(label, None, uom, limit, unsupported=why)
    if panel in snap.errors or value is None:
        failed = snap.errors.get(panel, "not taken")
        why = f"{label} unknown: {panel} panel failed ({failed})"
        return Measure(label, None, uom, limit, level=UNKNOWN, message=why)
    level = limit.level(value)
    if lower_bound:  # "at least value": perfdata U; alerts when the floor alone is past a limit
        if level == OK:
            why = f"{label} unknown: at least {fmt_count(value)}, the exact count not finished"
            return Measure(label, None, uom, limit, level=UNKNOWN, message=why)
        return Measure(label, None, uom, limit, level=level, message=message)
    return Measure(label, value, uom, limit, level=level, message=message if level != OK else "")


def _as_of(snap: Snapshot, queue: str | None) -> str:
    """ " (as of a background scan 4s ago)" when the queue's oldest ready age is a background scan's
    (stale: measured then, not advanced), else ""."""
    q = next((q for q in snap.queues if q.queue == queue), None)
    f = q.figures.get("oldest_ready_age_s") if q is not None else None
    age = f.stale_age_s(snap.server.now) if f is not None else None
    return "" if age is None else f" (as of a background scan {fmt_age(age)} ago)"


def measures(snap: Snapshot, t: CheckThresholds = CheckThresholds()) -> list[Measure]:
    """Every measure of one Snapshot, alerted ones carrying a message that names what is wrong."""
    failed = snap.errors
    sums = figures.totals(snap)
    out: list[Measure] = []

    # Stuck by the framework's own rule: the leases panel's true total where the dialect lists them,
    # else the stuck counts (a dialect may count stuck jobs without listing them).
    listed = "leases" not in snap.unsupported and "leases" not in failed
    stuck = stuck_total(snap)
    orphaned = sum(1 for lease in snap.stuck.rows if _gone(lease.liveness, lease.holder_connected))
    no_holder = f", {orphaned} with no live holder" if orphaned else ""
    rule = snap.stuck_rule or "lease expired"
    floor = "≥" if _at_least(snap, "stuck") else ""
    stuck_msg = f"{floor}{fmt_count(stuck)} stuck jobs ({rule}{no_holder}){_stale(snap, 'stuck')}"
    panel = "leases" if listed else "queues"
    out.append(
        _rated(
            snap,
            panel,
            "stuck",
            stuck,
            t.stuck,
            stuck_msg,
            needs=("stuck",),
            counts=("stuck",),
            lower_bound=bool(floor),
        )
    )

    queue, age = figures.oldest_ready(snap)
    slow = [
        q
        for q in snap.queues
        if q.paused is not True and t.ready_age_s.level(q.oldest_ready_age_s or 0.0) != OK
    ]
    more = f" (+{len(slow) - 1} more queues)" if len(slow) > 1 else ""
    age_msg = f"queue {queue}: oldest ready job waiting {fmt_age(age)}{_as_of(snap, queue)}{more}"
    out.append(
        _rated(
            snap,
            "queues",
            "oldest_ready_age",
            age,
            t.ready_age_s,
            age_msg,
            "s",
            ("oldest_ready",),
            counts=("oldest_ready_age_s",),
        )
    )

    floor = "≥" if _at_least(snap, "dead") else ""
    dead_msg = f"{floor}{fmt_count(sums.dead)} dead jobs{_stale(snap, 'dead')}"
    out.append(
        _rated(
            snap,
            "queues",
            "dead",
            sums.dead,
            t.dead,
            dead_msg,
            needs=("dead",),
            counts=("dead",),
            lower_bound=bool(floor),
        )
    )

    tab = snap.table
    ratio = tab.trigger_dead / tab.vacuum_threshold if tab.vacuum_threshold > 0 else 0.0
    running = ", vacuum running" if tab.vacuum is not None else ""
    autovac_off = "" if tab.autovacuum_enabled else ", autovacuum off"
    ratio_msg = (
        f"dead tuples {ratio:.1f}x the autovacuum threshold ({fmt_count(tab.trigger_dead)} > "
        f"{fmt_count(round(tab.vacuum_threshold))}{running}{autovac_off})"
    )
    out.append(_rated(snap, "table", "dead_tuples_ratio", round(ratio, 3), t.dead_tuples_ratio, ratio_msg))

    holder = figures.oldest_xmin_holder(snap)
    xmin_age = (holder.age_s or 0.0) if holder else 0.0
    xmin_msg = f"xmin horizon held {fmt_age(xmin_age)} by {holder.kind} {holder.name}" if holder else ""
    out.append(_rated(snap, "sessions", "xmin_age", xmin_age, t.xmin_age_s, xmin_msg, "s"))

    idle = figures.oldest_idle_in_transaction(snap)
    idle_age = (idle.xact_age_s or 0.0) if idle else 0.0
    app = f" ({idle.application})" if idle and idle.application else ""
    idle_msg = f"pid {idle.pid}{app} idle in transaction for {fmt_age(idle_age)}" if idle else ""
    out.append(_rated(snap, "sessions", "idle_tx_age", idle_age, t.idle_tx_age_s, idle_msg, "s"))

    latency = wait_p95(snap, t.wait_p95_s)
    if latency is not None:
        out.append(latency)

    # Reported, never alerted on: the figures a graph wants next to the alerting ones.
    queues_ok, sessions_ok = "queues" not in failed, "sessions" not in failed
    for state in ("ready", "scheduled", "running"):
        why = why_not(snap, state) or figures.not_recorded(snap, state)
        if why is not None and figures.unknown_why(snap, state) is None:
            out.append(Measure(state, None, unsupported=why))
        else:
            # unknown, or over the cap (a lower bound): perfdata U, never a capped sum as a number
            known = queues_ok and not _at_least(snap, state)
            out.append(Measure(state, getattr(sums, state) if known else None))
    out.append(Measure("dead_tuples", None if "table" in failed else tab.dead_tuples))
    # paused queues (the framework's own pause): reported, never alerted on; their waits are left out
    # of oldest_ready_age above. Unknown (U) where a pause is not recorded or was not read
    if "pause" not in snap.unsupported:
        states = [q.paused for q in snap.queues]
        unrecorded = next(
            (f.reason for q in snap.queues if (f := q.paused_figure) is not None and f.source == "none"), None
        )
        paused = None if None in states else sum(bool(p) for p in states)
        out.append(Measure("paused_queues", paused, unsupported=unrecorded))
    idle_count = len(figures.idle_in_transaction(snap))
    out.append(Measure("idle_tx_sessions", idle_count if sessions_ok else None))
    out.append(Measure("poll_time", round(snap.server.collect_ms / 1000, 4), "s"))
    return out


def wait_p95(snap: Snapshot, limit: Limit) -> Measure | None:
    """The slowest queue's p95 wait over the last 5 minutes (monitor/latency.py). A queue none of whose
    jobs finished in those minutes has no wait to judge and is left out; with thresholds set, a figure
    not taken (the pass not landed or failed, no queue finished a job) is UNKNOWN, saying why; the
    kind timing no jobs is unsupported. Without thresholds it is only reported (None: not at all,
    where the kind times no jobs)."""
    label, alerts = "wait_p95", limit.warn is not None or limit.crit is not None
    latency = snap.latency
    if latency is not None and latency.unsupported:
        why = latency.reason or "not supported"
        return Measure(label, None, "s", limit, unsupported=why) if alerts else None
    spans = [(q.queue, span_of(latency, q.queue, "5m")) for q in snap.queues]
    known = [(queue, s) for queue, s in spans if s.wait is not None and s.wait.p95 is not None]
    if not known:
        reasons = [s.figure.reason for _, s in spans if s.figure.reason]
        first = "not read" if latency is None else latency.reason
        why = first or (reasons[0] if reasons else "no job finished in the last 5m")
        if not alerts:
            return Measure(label, None, "s", limit)
        return Measure(label, None, "s", limit, level=UNKNOWN, message=f"{label} unknown: {why}")
    queue, worst_span = max(known, key=lambda k: k[1].wait.p95 or 0.0)  # type: ignore[union-attr]
    value = round(worst_span.wait.p95 or 0.0, 4)  # type: ignore[union-attr]
    level = limit.level(value)
    ago = ""
    if worst_span.figure.as_of is not None:
        ago = f", as of {fmt_age(max(0.0, (snap.server.now - worst_span.figure.as_of).total_seconds()))} ago"
    message = f"queue {queue}: p95 wait {fmt_age(value)} over the last 5m ({worst_span.jobs} jobs{ago})"
    return Measure(label, value, "s", limit, level=level, message=message if level != OK else "")


def _stale(snap: Snapshot, name: str) -> str:
    """ " (as of 45s ago)" when some queue's count `name` is stale (a background count's or the
    framework's own: exact then, not now), with the oldest such figure's age; else ""."""
    ages = [
        age
        for q in snap.queues
        if (f := q.figures.get(name)) is not None and (age := f.stale_age_s(snap.server.now)) is not None
    ]
    return f" (as of {fmt_age(max(ages))} ago)" if ages else ""


def _at_least(snap: Snapshot, name: str) -> bool:
    """Some queue's count is only a lower bound (over the cap, the exact count not in yet)."""
    return any(q.accuracy(name) == AT_LEAST for q in snap.queues)


def _gone(liveness: str, holder_connected: bool) -> bool:
    """The holder is known to be gone (a dialect that cannot know says "unknown": not counted)."""
    return liveness == "gone" if liveness else not holder_connected


def check(name: str, snap: Snapshot, t: CheckThresholds = CheckThresholds(), *, table: str = "") -> Result:
    return Result(name, tuple(measures(snap, t)), kind=snap.kind, table=table or snap.table.table)
