"""Pure functions over Snapshots: autovacuum arithmetic, rates, health
verdicts and formatters. No database, no clock: the dashboard and the tests call them directly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pgq_tui.monitor import figures
from pgq_tui.monitor.snapshot import Snapshot

OK, WARN, CRIT = "ok", "warn", "crit"
UNKNOWN = "unknown"  # a figure a verdict rests on was not taken: not healthy, not an alarm either
_LEVEL_ORDER = {OK: 0, UNKNOWN: 1, WARN: 2, CRIT: 3}


# -- autovacuum --------------------------------------------------------------------------------------
def parse_bool(value: str | None, default: bool = True) -> bool:
    """PostgreSQL's boolean spellings (on/off, true/false, yes/no, 1/0 and prefixes)."""
    if value is None:
        return default
    v = value.strip().lower()
    if v in ("on", "1") or (v and ("true".startswith(v) or "yes".startswith(v))):
        return True
    if v in ("off", "0") or (v and ("false".startswith(v) or "no".startswith(v))):
        return False
    return default


def reloptions_dict(options: Sequence[str] | None) -> dict[str, str]:
    """pg_class.reloptions ("key=value" strings) as a dict.

    >>> reloptions_dict(["fillfactor=90", "autovacuum_enabled=false"])
    {'fillfactor': '90', 'autovacuum_enabled': 'false'}
    """
    return dict(o.split("=", 1) for o in options or () if "=" in o)


def vacuum_threshold(
    base: int, scale_factor: float, reltuples: float, max_threshold: int | None = None
) -> float:
    """Dead tuples autovacuum waits for: base + scale_factor * reltuples, capped at max_threshold
    (PostgreSQL 18; -1 or None means no cap). A never-vacuumed table (reltuples < 0) counts as empty.

    >>> vacuum_threshold(50, 0.2, 1000.0), vacuum_threshold(50, 0.2, -1), vacuum_threshold(50, 0.2, 1e9, 1000)
    (250.0, 50.0, 1000.0)
    """
    threshold = base + scale_factor * max(reltuples, 0.0)
    if max_threshold is not None and max_threshold >= 0:
        threshold = min(threshold, float(max_threshold))
    return threshold


def vacuum_due(dead_tuples: int, threshold: float, enabled: bool = True) -> bool:
    """Autovacuum's own test: strictly more dead tuples than the threshold (and autovacuum on).

    >>> vacuum_due(251, 250.0), vacuum_due(250, 250.0), vacuum_due(10**6, 250.0, enabled=False)
    (True, False, False)
    """
    return enabled and dead_tuples > threshold


def _total(snap: Snapshot, name: str, total: int) -> str:
    """A sum over queues, marked like its least certain part ("≥" if any is a lower bound)."""
    accuracies = {q.accuracy(name) for q in snap.queues}
    if "unknown" in accuracies:  # some queue's count is not taken: the sum of the others is a floor
        accuracies.add("at_least")
    worst = next((a for a in ("at_least", "approximate", "stale") if a in accuracies), "exact")
    return fmt_figure(total, worst)


def dead_tuples_until_autovacuum(dead_tuples: int, threshold: float) -> int:
    """How many more dead tuples autovacuum waits for: it fires once they *exceed* the threshold, so
    at exactly the threshold one more is still needed (<= 0: due now).

    >>> dead_tuples_until_autovacuum(100, 150.0), dead_tuples_until_autovacuum(250, 250.0)
    (51, 1)
    >>> dead_tuples_until_autovacuum(251, 250.0), dead_tuples_until_autovacuum(0, 50.5)
    (0, 51)
    """
    return math.floor(threshold) + 1 - dead_tuples


# -- rates -------------------------------------------------------------------------------------------
def rate(count: float, seconds: float) -> float:
    """Events per second; 0 for an empty window.

    >>> rate(150, 10), rate(5, 0)
    (15.0, 0.0)
    """
    return count / seconds if seconds > 0 else 0.0


# -- verdicts ----------------------------------------------------------------------------------------
def latency_level(age_s: float | None, warn: float, crit: float) -> str:
    """ok / warn / crit for an age in seconds (None: nothing waiting, ok).

    >>> [latency_level(a, 10, 60) for a in (None, 5, 10, 60)]
    ['ok', 'ok', 'warn', 'crit']
    """
    if age_s is None or age_s < warn:
        return OK
    return CRIT if age_s >= crit else WARN


@dataclass(frozen=True)
class Thresholds:
    latency_warn_s: float = 30.0
    latency_crit_s: float = 300.0
    xmin_warn_s: float = 300.0
    xmin_crit_s: float = 3600.0
    idle_tx_warn_s: float = 60.0


@dataclass(frozen=True)
class Verdict:
    level: str  # "warn" or "crit"
    panel: str  # where to look: queues, leases, throughput, table, sessions, dead
    message: str


def verdicts(snap: Snapshot, t: Thresholds = Thresholds()) -> list[Verdict]:
    """What is wrong right now, worst first. Empty list: healthy (every figure they rest on known)."""
    out: list[Verdict] = []
    for panel, why in snap.errors.items():
        out.append(Verdict(WARN, panel, f"{panel} panel stale: {why}"))
    for q in snap.queues:
        if q.paused is True:  # paused the framework's way: its wait is by design, said as a pause
            if q.ready:
                out.append(
                    Verdict(WARN, "queues", f"queue {q.queue} paused: {fmt_count(q.ready)} ready wait")
                )
            continue
        level = latency_level(q.oldest_ready_age_s, t.latency_warn_s, t.latency_crit_s)
        if level != OK:
            out.append(
                Verdict(
                    level,
                    "queues",
                    f"queue {q.queue}: oldest ready job waiting {fmt_age_coarse(q.oldest_ready_age_s)}",
                )
            )
    if snap.stuck.total:
        # a holder whose liveness is unknown (the queue records nothing tying it to a session) is
        # not counted as gone: that would be a guess
        orphaned = sum(
            1 for lease in snap.stuck.rows if not lease.holder_connected and lease.liveness != "unknown"
        )
        unknown = sum(1 for lease in snap.stuck.rows if lease.liveness == "unknown")
        extra = f" ({orphaned} with no live holder)" if orphaned else ""
        if unknown:
            extra += f" ({unknown} whose holder cannot be known)"
        # the dialect's few words for its rule; the whole rule is in the help (`?`) and snapshot.stuck_rule
        what = snap.stuck_label or "stuck by the queue's rule (see ?)"
        out.append(
            Verdict(
                CRIT if orphaned or unknown else WARN,
                "leases",
                f"{_total(snap, 'stuck', snap.stuck.total)} stuck jobs: {what}{extra}",
            )
        )
    dead = sum(q.dead or 0 for q in snap.queues)
    if dead:
        out.append(Verdict(WARN, "dead", f"{_total(snap, 'dead', dead)} dead jobs (failed, out of attempts)"))
    for h in snap.sessions.xmin_holders:
        if not h.holds_tables:  # another database's transaction, a logical slot's catalog_xmin
            continue
        level = latency_level(h.age_s, t.xmin_warn_s, t.xmin_crit_s)
        if level != OK:
            out.append(Verdict(level, "sessions", f"xmin held for {fmt_age(h.age_s)} by {h.kind} {h.name}"))
    for s in snap.sessions.idle_in_transaction:
        if s.xact_age_s is not None and s.xact_age_s >= t.idle_tx_warn_s:
            out.append(
                Verdict(WARN, "sessions", f"pid {s.pid} idle in transaction for {fmt_age(s.xact_age_s)}")
            )
    if snap.sessions.blocked:
        pids = sorted({b.blocked_pid for b in snap.sessions.blocked})
        out.append(Verdict(WARN, "sessions", f"{len(pids)} sessions waiting on locks"))
    tab = snap.table
    if not tab.autovacuum_enabled:
        out.append(Verdict(WARN, "table", f"autovacuum is off for {tab.table}"))
    elif vacuum_due(tab.trigger_dead, tab.vacuum_threshold) and tab.vacuum is None:
        where = f" in partition {tab.worst_partition}" if tab.partitions else ""
        out.append(
            Verdict(
                WARN,
                "table",
                f"dead tuples above threshold{where}: {fmt_count(tab.trigger_dead)} > "
                f"{fmt_count(round(tab.vacuum_threshold))}, autovacuum not running",
            )
        )
    out += bloat_verdicts(snap)
    out += unknown_verdicts(snap)
    out.sort(key=lambda v: -_LEVEL_ORDER[v.level])
    return out


# the figures the verdicts rest on (stuck and dead jobs, the oldest ready job's wait) -> their words
VERDICT_COUNTS = {
    "stuck": ("stuck", "leases"),
    "dead": ("dead", "dead"),
    "oldest_ready_age_s": ("oldest ready age", "queues"),
}


def unknown_verdicts(snap: Snapshot) -> list[Verdict]:
    """A count a verdict rests on that was not taken (no way to count it, its statement failed, not
    counted yet): the health line says what is unknown and why instead of "healthy"."""
    by_reason: dict[str, list[str]] = {}
    panel: dict[str, str] = {}
    for name, (label, where) in VERDICT_COUNTS.items():
        why = figures.unknown_why(snap, name)
        if why is not None:
            by_reason.setdefault(why, []).append(label)
            panel.setdefault(why, where)
    return [
        Verdict(UNKNOWN, panel[why], f"{_and(labels)} unknown: {why}") for why, labels in by_reason.items()
    ]


def _and(words: Sequence[str]) -> str:
    """
    >>> _and(["stuck"]), _and(["stuck", "dead"]), _and(["stuck", "dead", "oldest ready age"])
    ('stuck', 'stuck and dead', 'stuck, dead and oldest ready age')
    """
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def bloat_verdicts(snap: Snapshot) -> list[Verdict]:
    """The leading bloat signals (monitor/bloatwatch.py): claim cost, pacing, xmin block."""
    b = snap.bloat
    if b is None:
        return []
    out = []
    if b.probe.level != OK:
        out.append(Verdict(b.probe.level, "table", b.probe.message))
    if b.pacing is not None and b.pacing.level != OK:
        out.append(Verdict(b.pacing.level, "table", b.pacing.message))
    if b.xmin_block is not None:
        out.append(Verdict(CRIT, "sessions", b.xmin_block.message))
    return out


def worst(levels: Sequence[str]) -> str:
    """The most severe level.

    >>> worst(["ok", "crit", "warn"])
    'crit'
    """
    return max(levels, key=_LEVEL_ORDER.__getitem__, default=OK)


# -- formatters --------------------------------------------------------------------------------------
def fmt_age(seconds: float | None) -> str:
    """A compact duration.

    >>> [fmt_age(s) for s in (None, 0.4, 45, 185, 7380, 180000, -3)]
    ['-', '0.4s', '45s', '3m05s', '2h03m', '2d02h', '-3s']
    """
    if seconds is None:
        return "-"
    if seconds < 0:
        return "-" + fmt_age(-seconds)
    if seconds < 10 and seconds != int(seconds):
        return f"{seconds:.1f}s"
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def fmt_age_coarse(seconds: float | None) -> str:
    """A growing age that changes at most once a minute past its first minute: seconds, then minutes,
    then hours and minutes, then days and hours. A dashboard repaints what changes, and over SSH
    every repaint costs bytes; levels are judged on the exact value, never on this text.

    >>> [fmt_age_coarse(s) for s in (None, 0.4, 45, 185, 239, 7380, 180000, -3)]
    ['-', '0.4s', '45s', '3m', '3m', '2h03m', '2d02h', '-3s']
    """
    if seconds is not None and 60 <= abs(seconds) < 3600:
        return ("-" if seconds < 0 else "") + f"{int(abs(seconds)) // 60}m"
    return fmt_age(seconds)


def fmt_wait(age_s: float | None, accuracy: str = "exact", coarse: bool = False) -> str:
    """The oldest ready job's wait with its accuracy: "?" unknown (never "-" or 0), "n/a" the kind
    has no such figure, "-" no job ready, a trailing "*" as of the last background scan.

    >>> fmt_wait(65), fmt_wait(4200, "stale"), fmt_wait(None, "unknown"), fmt_wait(None)
    ('1m05s', '1h10m*', '?', '-')
    >>> fmt_wait(None, "unsupported"), fmt_wait(185, coarse=True)
    ('n/a', '3m')
    """
    if accuracy == "unsupported":
        return "n/a"
    if accuracy == "unknown":
        return "?"
    text = fmt_age_coarse(age_s) if coarse else fmt_age(age_s)
    return f"{text}*" if accuracy == "stale" and age_s is not None else text


def fmt_bytes(n: float | None) -> str:
    """Sizes like pg_size_pretty (1024-based units).

    >>> [fmt_bytes(b) for b in (None, 512, 8192, 1536 * 1024, 5 * 1024**3)]
    ['-', '512 B', '8.0 kB', '1.5 MB', '5.0 GB']
    """
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(value) < 1024 or unit == "TB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


COUNT_MARK = {"exact": "", "stale": "*", "approximate": "~", "at_least": "≥"}


def fmt_figure(n: float | None, accuracy: str = "exact") -> str:
    """A count with its accuracy mark: "≥" a lower bound (over the cap, not counted yet), "~" an
    estimate, a trailing "*" exact as of an earlier time (stale: the age is shown beside).

    A count not taken is "?" (unknown) or "n/a" (the kind has no such state), never 0.

    >>> fmt_figure(1200), fmt_figure(1000, "at_least"), fmt_figure(25_300, "stale")
    ('1.2k', '≥1.0k', '25k*')
    >>> fmt_figure(None, "unknown"), fmt_figure(None, "unsupported"), fmt_figure(None)
    ('?', 'n/a', '?')
    >>> fmt_figure(0, "unknown")  # a value beside an unknown accuracy means nothing
    '?'
    """
    if accuracy == "unsupported":
        return "n/a"
    if n is None or accuracy == "unknown":
        return "?"
    mark = COUNT_MARK.get(accuracy, "?")
    text = fmt_count(n)
    return f"{text}{mark}" if accuracy == "stale" else f"{mark}{text}"


def fmt_count(n: float | None, approximate: bool = False) -> str:
    """Counts in 3-4 characters; "~" marks an estimate.

    >>> [fmt_count(n) for n in (None, 7, 999, 1000, 12345, 2_500_000, 3e9)]
    ['-', '7', '999', '1.0k', '12k', '2.5M', '3.0G']
    >>> fmt_count(10001, approximate=True)
    '~10k'
    """
    if n is None:
        return "-"
    prefix = "~" if approximate else ""
    value = float(n)
    if abs(value) < 1000:
        return f"{prefix}{int(value)}"
    for unit in ("k", "M", "G"):
        value /= 1000
        if abs(value) < 1000 or unit == "G":
            return f"{prefix}{value:.1f}{unit}" if abs(value) < 10 else f"{prefix}{value:.0f}{unit}"
    raise AssertionError("unreachable")
