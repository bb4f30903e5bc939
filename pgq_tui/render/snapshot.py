"""One Snapshot as a readable rich summary (`pgq-top snapshot` without `--json`, one per target with
`--targets`).

Every string that came from the database (queue names, queries, worker ids, errors) is rendered as
rich `Text`, never parsed as markup: a queue called "[red]x" must print as itself.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from pgq_tui.monitor import figures, health, provenance
from pgq_tui.monitor.latency import span_of
from pgq_tui.monitor.snapshot import LeaseList, Snapshot

_STYLE = {health.WARN: "yellow", health.CRIT: "bold red"}


def _t(value: object, style: str = "") -> Text:
    return Text("-" if value is None else str(value), style=style)


def _queues(snap: Snapshot) -> Table:
    table = Table(title="queues", title_justify="left", expand=False)
    for col in (
        "queue",
        "ready",
        "scheduled",
        "running",
        "stuck",
        "dead",
        "done",
        "oldest ready",
        "done/s",
        "in/s",
    ):
        table.add_column(col, justify="left" if col == "queue" else "right")
    th = health.Thresholds()
    for q in snap.queues:
        rates = snap.throughput.per_queue.get(q.queue)
        level = health.latency_level(q.oldest_ready_age_s, th.latency_warn_s, th.latency_crit_s)
        wait = figures.oldest_accuracy(snap, q)
        paused = q.paused is True  # its wait is by design: not judged against the latency thresholds
        table.add_row(
            _t(q.queue) + (Text(" paused", style="magenta") if paused else Text()),
            *(_t(health.fmt_figure(getattr(q, f), q.accuracy(f))) for f in ("ready", "scheduled", "running")),
            _t(health.fmt_figure(q.stuck, q.accuracy("stuck")), "bold red" if q.stuck else ""),
            *(_t(health.fmt_figure(getattr(q, f), q.accuracy(f))) for f in ("dead", "done")),
            _t(health.fmt_wait(q.oldest_ready_age_s, wait), "" if paused else _STYLE.get(level, "")),
            _t(_rate(rates.completed if rates else None)),
            _t(_rate(rates.enqueued if rates else None)),
        )
    table.caption = (
        "≥ over the cap, not counted yet · n* exact as of the background count (or scan, or the "
        "framework's own count) · ~ estimate · "
        "? not counted (unknown) · n/a no such state"
    )
    table.caption_justify = "left"
    return table


def _latency(snap: Snapshot) -> list[Table]:
    """Wait and run p95 per queue and span (monitor/latency.py), where the kind times its jobs."""
    latency = snap.latency
    if latency is None or latency.unsupported or not snap.queues:
        return []
    table = Table(title="wait and run time, p95 (finished jobs)", title_justify="left", expand=False)
    for col in ("queue", "wait 5m", "run 5m", "wait 1h", "run 1h"):
        table.add_column(col, justify="left" if col == "queue" else "right")
    for q in snap.queues:
        cells = []
        for name in ("5m", "1h"):
            span = span_of(latency, q.queue, name)
            cells += [
                _t("?" if p is None or p.p95 is None else health.fmt_age(p.p95))
                for p in (span.wait, span.run)
            ]
        table.add_row(_t(q.queue), *cells)
    age = (
        ""
        if latency.as_of is None
        else f", read {health.fmt_age((snap.server.now - latency.as_of).total_seconds())} ago"
    )
    table.caption = f"a background pass's{age} · ? not taken (the JSON's latency says why)"
    table.caption_justify = "left"
    return [table]


def _rate(per_s: float | None) -> str:
    return "?" if per_s is None else f"{per_s:.1f}"  # unknown (its figure says why), never 0


def _leases(title: str, leases: LeaseList) -> Table:
    total = "?" if leases.total is None else leases.total  # not known yet: never 0
    table = Table(title=f"{title} ({total})", title_justify="left")
    for col in ("id", "queue", "locked by", "attempt", "left", "holder"):
        table.add_column(col)
    for lease in leases.rows[:10]:
        holder = f"pid {lease.holder_pid}" if lease.holder_connected else "gone"
        table.add_row(
            _t(lease.id),
            _t(lease.queue),
            _t(lease.locked_by),
            _t(f"{lease.attempts}/{lease.max_attempts}"),
            _t(health.fmt_age(lease.seconds_left)),
            _t(holder, "" if lease.holder_connected else "red"),
        )
    return table


def _table_health(snap: Snapshot) -> Text:
    t = snap.table
    vac = f"vacuum running (pid {t.vacuum.pid}, {t.vacuum.phase}" if t.vacuum else "no vacuum running"
    if t.vacuum and t.vacuum.percent is not None:
        vac += f", {t.vacuum.percent:.0f}%"
    vac += ")" if t.vacuum else ""
    av = (
        "autovacuum off"
        if not t.autovacuum_enabled
        else (
            f"autovacuum at {health.fmt_count(round(t.vacuum_threshold))} dead "
            f"({health.fmt_count(max(0, round(t.until_autovacuum)))} to go)"
        )
    )
    line = (
        f"{t.table}: {health.fmt_count(t.live_tuples)} live, {health.fmt_count(t.dead_tuples)} dead "
        f"({t.dead_ratio:.0%}), table {health.fmt_bytes(t.table_bytes)}, "
        f"indexes {health.fmt_bytes(t.index_bytes)}; "
        f"{av}; {vac}"
    )
    if t.partitions:
        line += f"; sum of {len(t.partitions)} partitions, autovacuum of the worst: {t.worst_partition}"
    return Text(line)


def _sessions(snap: Snapshot) -> Group:
    s = snap.sessions
    parts: list[Table | Text] = [
        Text(f"{s.total_backends} client backends; monitor pid {snap.server.monitor_pid}")
    ]
    if s.idle_in_transaction:
        table = Table(title="idle in transaction", title_justify="left")
        for col in ("pid", "user", "application", "xact age", "query"):
            table.add_column(col)
        for sess in s.idle_in_transaction:
            app = (sess.application or "") + (" (pgq-top)" if sess.is_pgq_top else "")
            table.add_row(
                _t(sess.pid),
                _t(sess.user),
                _t(app),
                _t(health.fmt_age(sess.xact_age_s)),
                _t((sess.query or "")[:60]),
            )
        parts.append(table)
    if s.xmin_holders:
        table = Table(title="xmin horizon holders", title_justify="left")
        for col in ("kind", "name", "xmin age", "held", "reach", "detail"):
            table.add_column(col)
        for h in s.xmin_holders[:10]:
            table.add_row(
                _t(h.kind),
                _t(h.name),
                _t(h.xmin_age),
                _t(health.fmt_age(h.age_s)),
                _t(figures.holder_reach(h)),
                _t(h.detail),
            )
        parts.append(table)
    if s.blocked:
        table = Table(title="blocked sessions", title_justify="left")
        for col in ("blocked pid", "waiting", "blocked by", "blocker state", "blocker query"):
            table.add_column(col)
        for b in s.blocked:
            table.add_row(
                _t(b.blocked_pid),
                _t(health.fmt_age(b.blocked_wait_s)),
                _t(b.blocking_pid),
                _t(b.blocking_state),
                _t((b.blocking_query or "")[:60]),
            )
        parts.append(table)
    return Group(*parts)


def render(snap: Snapshot) -> Group:
    """The whole summary as rich renderables (also used by tests)."""
    srv = snap.server
    tp = snap.throughput
    header = Text(
        f"pgq-top snapshot: PostgreSQL {srv.version}, database {srv.database}"
        f"{' (standby)' if srv.in_recovery else ''}, at {srv.now:%Y-%m-%d %H:%M:%S %Z}, "
        f"collected in {srv.collect_ms:.1f} ms",
        style="bold",
    )
    rates = Text(
        f"throughput over the last {tp.interval_s:.0f} s (source: {tp.source}): "
        f"{_rate(tp.total.enqueued)} enqueued/s, {_rate(tp.total.completed)} completed/s, "
        f"{_rate(tp.total.failed)} failed/s; {provenance.background_line(snap)}"
        + (f"; {tp.foreign}: rates derived from the table" if tp.foreign else "")
        + (f"; {tp.rates_note}" if tp.rates_note else "")
    )
    verdicts = [
        Text(f"{v.level.upper()}: ", style=_STYLE.get(v.level, "")) + Text(v.message)
        for v in health.verdicts(snap)
    ] or [Text("healthy", style="green")]
    errors = [
        Text(f"{panel} unavailable: ", style="yellow") + Text(why) for panel, why in snap.errors.items()
    ]
    errors += [
        Text(f"{name} not counted: ", style="yellow") + Text(why) for name, why in snap.unknown.items()
    ]
    queue = Text("queue: ", style="bold") + Text(snap.target or snap.kind)
    if snap.stuck_rule:
        queue += Text("; stuck means: ") + Text(snap.stuck_rule)
    unsupported = [
        Text(f"{panel} unsupported: ", style="dim") + Text(why)
        for panel, why in snap.unsupported.items()
        if panel not in snap.unknown  # said above, as not counted
    ]
    return Group(
        header,
        queue,
        *verdicts,
        *errors,
        *unsupported,
        _queues(snap),
        *_latency(snap),
        rates,
        _leases("running leases", snap.leases),
        _leases("stuck jobs", snap.stuck),
        _table_health(snap),
        _sessions(snap),
    )
