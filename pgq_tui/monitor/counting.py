"""Counts per queue and state, each with how it was obtained. Pure: rows in, QueueStats out.

The poll runs the dialect's count statements (QueueModel.counts), each reading at most cap1 rows per
queue and state through an index, or cap1 over all queues for the states a dialect marks
`capped_overall` (e.g. pgq-top's done index has no queue column). A count below cap1 is exact at
this poll. Above it the poll only knows "at least"; the figure is then the background counter's exact
value (stale, with its as_of) when it has one that still agrees with the poll, else the proven lower
bound (at_least, shown "≥cap"). Nothing is ever sampled or extrapolated: a number is exact, exact as
of a stated time, or a stated lower bound.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from pgq_tui.dialects.contract import COUNT_KEY, OLDEST_READY, Capability, QueueModel, State, Statement
from pgq_tui.monitor import cached as cached_counts
from pgq_tui.monitor.cached import Cached
from pgq_tui.monitor.snapshot import AT_LEAST, EXACT, STALE, UNKNOWN, UNSUPPORTED, Figure, QueueStats

Row = Mapping[str, Any]

# canonical state -> the QueueStats field it fills (the same word)
FIELD = {
    State.READY.value: "ready",
    State.SCHEDULED.value: "scheduled",
    State.RUNNING.value: "running",
    State.STUCK.value: "stuck",
    State.DEAD.value: "dead",
    State.DONE.value: "done",
}
DEPTH = frozenset(("ready", "scheduled", "running", "stuck", "dead"))  # every row not finished
# The counts an incident turns on keep the full cap: the poll's entry budget (collect.poll_cap)
# shrinks the others' only. Their walk is the running range, O(active jobs) whatever the cap, and a
# crash's 22 stuck jobs must read 22 at once, not "at least 20".
INCIDENT = frozenset(("running", "stuck"))
POLL = "poll"  # capped index walk in this poll
BACKGROUND = "background"  # the background exact count
SCAN = "scan"  # a scan no index serves, in this poll (a small relation: monitor/tiers.py)
BACKGROUND_SCAN = "background scan"  # the same scan, run by the background counter (a large relation)
FAILED = "background count failed: "  # a background-served figure whose statement failed: this, then why
NOT_LANDED = "the background scan (no index serves it; the table is large) has not landed yet"
# the panel (or figure) each capability feeds, for Snapshot.unsupported. A framework without its own
# counters still has a throughput panel when the rates come from its ids (RATES): "counters" says
# what is missing; "throughput" is unsupported only when neither serves it.
PANEL = {
    Capability.COUNTS: "queues",
    Capability.LEASES: "leases",
    Capability.DEAD: "dead",
    Capability.THROUGHPUT: "counters",
    Capability.RATES: "rates",
    Capability.OLDEST_READY: "oldest_ready",
    Capability.DONE: "done",
    Capability.DETAIL: "detail",
    Capability.PAUSE: "pause",
}


@dataclass(frozen=True)
class Caps:
    """cap1 (the cap + 1) of each count name at one poll: `full` for `names` (those read by a
    statement that reads an INCIDENT name: one statement has one cap), `depth` (the poll's, within
    its entry budget) for the others.

    >>> c = Caps(21, 1001); c.of("ready"), c.of("stuck"), c.walk(frozenset({"ready", "stuck"}))
    (21, 1001, 1001)
    """

    depth: int
    full: int
    names: frozenset[str] = INCIDENT

    def of(self, name: str) -> int:
        return self.full if name in self.names else self.depth

    def walk(self, names: frozenset[str]) -> int:
        """cap1 of one index walk reading `names` (one statement, one cap): the full one when any of
        them keeps it."""
        return self.full if names & self.names else self.depth


def full_cap_names(statements: Iterable[Statement]) -> frozenset[str]:
    """The names read at the full cap: every name of a count statement that reads an INCIDENT one.

    >>> a, b = Statement.of("a", "", ("queue", "running", "dead")), Statement.of("b", "", ("queue", "ready"))
    >>> sorted(full_cap_names([a, b]))
    ['dead', 'running']
    """
    return frozenset(n for s in statements if names_of(s) & INCIDENT for n in names_of(s))


def caps(cap1: int | Caps) -> Caps:
    """One cap for every name, or the poll's Caps as they are."""
    return cap1 if isinstance(cap1, Caps) else Caps(cap1, cap1)


@dataclass(frozen=True)
class Watched:
    """A running job a background pass saw, whose lease runs out soonest: the poll rechecks it by its
    row version once its lease has passed (a Pass's recheck), so a job stuck since the pass shows at
    the next poll, not at the next pass."""

    rel: int  # the row's table (tableoid: a partitioned table's tuple ids repeat across partitions)
    tid: str  # its row version (ctid): any write to the row since the pass moves it, and it is gone
    expires: float  # when its lease runs out (epoch seconds, the server's clock)
    queue: str


@dataclass(frozen=True)
class BackgroundCount:
    """One background count: exact values as of `as_of` for the count names in `groups`."""

    as_of: datetime
    cost_ms: float
    groups: frozenset[str]  # the QueueStats fields (or extra labels) this count covered
    counts: dict[tuple[str, str], int]  # (queue, field) -> rows; absent with its name counted: 0
    max_id: int  # the activity statement's max id in the same snapshot (0 without one)
    new: dict[str, int] | None = None  # rows per queue with ids above the previous count's max_id
    previous: BackgroundCount | None = field(default=None, repr=False)  # for rates over two counts
    depth: frozenset[str] = DEPTH  # the unfinished states this queue's kind has (depth_of)
    # the names of `groups` read by scans, each in its own autocommit statement (not the one snapshot
    # of the rest): exact as of at least `as_of` (taken before the first of them started)
    scanned: frozenset[str] = frozenset()
    lists: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # statement name -> its rows
    # Each background statement lands on its own (monitor/background.py): a name read by a statement
    # whose moment is not `as_of` (a scan, `list:<statement>` for a list) -> when it was true; and a
    # name whose statement failed at its last try -> why (its value, if any, is the last that landed).
    as_of_by: dict[str, datetime] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    # queue -> its oldest ready job's age in seconds, as a scan of this pass measured it (OLDEST_READY
    # in `groups` when a scan read it; a queue absent then has no ready job)
    oldest: dict[str, float] = field(default_factory=dict)
    # running jobs whose lease runs out soonest, as of the pass that saw them (Watched)
    watch: tuple[Watched, ...] = ()

    def value(self, queue: str, name: str) -> int | None:
        return self.counts.get((queue, name), 0) if name in self.groups else None

    def as_of_for(self, name: str) -> datetime:
        """When the figure `name` (a count name, or `list:<statement>`) was true."""
        return self.as_of_by.get(name, self.as_of)


def rechecked(bg: BackgroundCount, stuck_rows: Sequence[dict[str, Any]], leases: str) -> BackgroundCount:
    """The background count with the jobs a poll found stuck since its pass (`stuck_rows`: lease rows,
    running and not stuck at the pass, past their lease now and not written since): each moves from
    its queue's running count to its stuck count, and heads the lease list (`leases`: the list's
    statement name) as stuck. The as_of stays the pass's: the figure is never said to be fresher than
    it is, only less behind. Pure.

    >>> from datetime import datetime, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> bg = BackgroundCount(t, 1.0, frozenset({"running", "stuck"}), {("q", "running"): 3}, 0,
    ...                      lists={"l": [{"id": 7, "stuck": False}, {"id": 8, "stuck": False}]})
    >>> after = rechecked(bg, [{"id": 7, "queue": "q", "stuck": True}], "l")
    >>> after.counts, [r["id"] for r in after.lists["l"]], after.as_of == t
    ({('q', 'running'): 2, ('q', 'stuck'): 1}, [7, 8], True)
    """
    if not stuck_rows:
        return bg
    counts = dict(bg.counts)
    for r in stuck_rows:
        queue = str(r["queue"])
        counts[(queue, "running")] = max(0, counts.get((queue, "running"), 0) - 1)
        counts[(queue, "stuck")] = counts.get((queue, "stuck"), 0) + 1
    lists = dict(bg.lists)
    moved = {r["id"] for r in stuck_rows}
    lists[leases] = [*stuck_rows, *(r for r in lists.get(leases, ()) if r["id"] not in moved)]
    return replace(bg, counts=counts, lists=lists)


def names_of(statement: Statement) -> frozenset[str]:
    """The count names (QueueStats fields, or extra labels) one count statement reads."""
    return frozenset(FIELD.get(c, c) for c in statement.columns if c not in (COUNT_KEY, OLDEST_READY))


def poll_reads(rows: Sequence[Row]) -> tuple[dict[str, dict[str, int]], dict[str, float]]:
    """queue -> count name -> rows read (several statements summed), and queue -> oldest ready age."""
    reads: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    oldest: dict[str, float] = {}
    for r in rows:
        queue = str(r[COUNT_KEY])
        _ = reads[queue]
        for key, value in r.items():
            if key == COUNT_KEY or value is None:
                continue
            if key == OLDEST_READY:
                oldest[queue] = float(value)
            else:
                reads[queue][FIELD.get(key, key)] += int(value)
    return reads, oldest


def over_cap(reads: Mapping[str, Mapping[str, int]], model: QueueModel, cap1: int | Caps) -> frozenset[str]:
    """The count names that reached cap1 at this poll (per queue, or in sum for capped_overall).

    >>> from pgq_tui.dialects.contract import Match
    >>> m = QueueModel(Match("k", "s", "t"), "K", "", (), (), capped_overall=("done",))
    >>> sorted(over_cap({"a": {"ready": 11, "dead": 3}, "b": {"done": 6}}, m, 11))
    ['ready']
    >>> sorted(over_cap({"a": {"done": 6}, "b": {"done": 5}}, m, 11))
    ['done']
    """
    overall = {FIELD.get(s, s) for s in model.capped_overall}
    of = caps(cap1).of
    out = {n for c in reads.values() for n, v in c.items() if n not in overall and v >= of(n)}
    out |= {n for n in overall if sum(c.get(n, 0) for c in reads.values()) >= of(n)}
    return frozenset(out)


def walks(
    reads: Mapping[str, Mapping[str, int]], model: QueueModel, names: Iterable[str], cap1: int | Caps
) -> list[int | None]:
    """What each capped count read at this poll (collect.poll_cap()): per queue and name in `names`,
    the rows read, None where the read reached cap1 (a deeper count); a name capped over all queues
    together is one walk.

    >>> from pgq_tui.dialects.contract import Match
    >>> m = QueueModel(Match("k", "s", "t"), "K", "", (), (), capped_overall=("done",))
    >>> walks({"a": {"ready": 11, "done": 4}, "b": {"ready": 3, "done": 9}}, m, ("ready", "done"), 11)
    [None, 3, None]
    """
    overall = {FIELD.get(s, s) for s in model.capped_overall}
    wanted = set(names)
    of = caps(cap1).of
    out: list[int | None] = [
        None if v >= of(n) else v
        for counts in reads.values()
        for n, v in counts.items()
        if n in wanted and n not in overall
    ]
    for n in sorted(wanted & overall):
        total = sum(c.get(n, 0) for c in reads.values())
        out.append(None if total >= of(n) else total)
    return out


def figure(
    name: str,
    read: int,
    capped: bool,
    overall: bool,
    cap1: int,
    bg: BackgroundCount | None,
    queue: str,
    now: datetime,
    shared: dict[tuple[Any, ...], Figure] | None = None,
    cached: Cached | None = None,
) -> tuple[int, Figure]:
    """The poll's exact read; above the cap the background's exact count when it agrees, or the
    framework's own (`cached`) when it agrees and is newer, else the proven lower bound (cap1 - 1 per
    queue, or the rows seen when the cap is over all queues). `shared`: figures already made at this
    poll, by name and accuracy (the same for every queue).

    >>> from datetime import datetime, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> value, f = figure("ready", 7, False, False, 11, None, "q", t); value, f.accuracy
    (7, 'exact')
    >>> value, f = figure("ready", 11, True, False, 11, None, "q", t); value, f.accuracy
    (10, 'at_least')
    """
    if not capped:
        return read, Figure(EXACT, now, POLL)
    floor = read if overall else cap1 - 1
    value = bg.value(queue, name) if bg is not None else None
    stale = value is not None and bg is not None and value > floor
    own = cached_figure(name, queue, cached, bg if stale else None, floor, shared)
    if own is not None:
        return own
    key = (name, STALE if stale else AT_LEAST)
    made = shared.get(key) if shared is not None else None
    if made is None:
        why = bg.failed.get(name) if bg is not None else None
        if stale and bg is not None:
            made = Figure(STALE, bg.as_of_for(name), BACKGROUND, reason=why)
        else:
            made = Figure(AT_LEAST, now, POLL, reason=why)
        if shared is not None:
            shared[key] = made
    return (value if stale and value is not None else floor), made


def cached_figure(
    name: str,
    queue: str,
    cached: Cached | None,
    bg: BackgroundCount | None,
    floor: int | None,
    shared: dict[tuple[Any, ...], Figure] | None = None,
) -> tuple[int, Figure] | None:
    """The framework's own count of `name` (stale, as of when it counted) when it is newer than the
    background's (`bg`: the one that would be shown, or None) and above `floor` (cached.newer); its
    reason says who keeps it, and why the background's is not shown when its last try failed."""
    if cached is None:  # most kinds keep none: no work per figure
        return None
    own = cached_counts.newer(cached, queue, name, bg.as_of_for(name) if bg is not None else None, floor)
    if own is None:
        return None
    value, as_of = own
    key = (name, cached_counts.SOURCE, as_of)
    made = shared.get(key) if shared is not None else None
    if made is None:
        failed = bg.failed.get(name) if bg is not None else None
        why = f"{failed}; {cached.kept_by}" if failed else cached.kept_by
        made = Figure(STALE, as_of, cached_counts.SOURCE, reason=why)
        if shared is not None:
            shared[key] = made
    return value, made


def queue_stats(
    rows: Sequence[Row],
    model: QueueModel,
    cap1: int | Caps,
    now: datetime,
    bg: BackgroundCount | None = None,
    also: Iterable[str] = (),
    missing: Mapping[str, Figure] | None = None,
    uncapped: frozenset[str] = frozenset(),
    deferred: frozenset[str] = frozenset(),
    notes: Mapping[str, str] | None = None,
    oldest_how: str | None = POLL,
    oldest_why: str | None = None,
    reads: tuple[dict[str, dict[str, int]], dict[str, float]] | None = None,
    cached: Cached | None = None,
) -> tuple[QueueStats, ...]:
    """Sum the count statements' rows per queue, each count with its Figure. Every queue seen by the
    poll is listed, plus `also` (e.g. queues seen only in the rate window, listed with zeros). A
    count in `missing` (not_taken(): the kind has no such state, its statement failed) has no value
    (None) and that figure, in every queue. `uncapped`: names this poll read by a scan (exact,
    whatever the cap). `deferred`: names left to the background counter's scans (stale with its
    as_of, unknown and None until its first lands). `notes`: name -> why it is not live (the index
    that would make it so), carried by its Figure. The oldest ready age is a figure like the counts
    (`figures[OLDEST_READY]`, oldest_figure()): `oldest_how` says where it is taken (POLL, SCAN,
    BACKGROUND_SCAN, or None: the kind has no such figure), `oldest_why` why it is not (no index,
    its statement failed). `reads`: poll_reads(rows), when the caller has it already. `cached`: the
    framework's own counts, shown for a figure above the cap or deferred while newer than the
    background's (cached.newer)."""
    reads_of, oldest = poll_reads(rows) if reads is None else reads
    of = caps(cap1).of
    capped = over_cap(reads_of, model, cap1) - uncapped
    overall = {FIELD.get(s, s) for s in model.capped_overall}
    queues = set(reads_of) | set(also)
    if bg is not None:  # queues the capped reads did not reach, or that only a background scan sees
        queues |= {q for q, n in bg.counts if n in capped or n in deferred}
    missing = not_taken(model) if missing is None else missing
    served = {FIELD.get(c, c) for c in model.count_columns()} - {COUNT_KEY, OLDEST_READY} - set(missing)
    notes = notes or {}
    # Most queues' figures are alike: each is made once per call and shared (50 queues x 6 names
    # made and compared one by one cost a millisecond a poll). Keyed by identity, the original kept
    # alive with its copy so that no other figure can take its id.
    exact, scan = Figure(EXACT, now, POLL), Figure(EXACT, now, SCAN)
    noted: dict[tuple[int, str], tuple[Figure, Figure]] = {}
    later: dict[tuple[str, bool], Figure] = {}  # a deferred name's figure: landed or not
    capped_figures: dict[tuple[Any, ...], Figure] = {}  # above the cap: stale or at least, per name

    def with_note(f: Figure, note: str) -> Figure:
        key = (id(f), note)
        if key not in noted:
            noted[key] = (f, replace(f, note=note))
        return noted[key][1]

    def deferred_figure(name: str, q: str) -> tuple[int | None, Figure]:
        value = bg.value(q, name) if bg is not None else None
        own = cached_figure(name, q, cached, bg if value is not None else None, None, capped_figures)
        if own is not None:
            return own
        key = (name, value is None)
        if key not in later:
            later[key] = scanned_figure(name, bg, q)[1]
        return value, later[key]

    names = sorted(served)
    out = []
    for q in sorted(queues):
        values: dict[str, int | None] = dict.fromkeys(FIELD.values(), None)
        extra: dict[str, int | None] = {}
        figures: dict[str, Figure] = {}
        for name, why in missing.items():
            figures[name] = why
            if name not in values:
                extra[name] = None
        read_here = reads_of.get(q, {})
        for name in names:
            read = read_here.get(name, 0)
            if name in deferred:
                n, f = deferred_figure(name, q)
            else:
                # a per-queue cap binds only the queues whose read reached it (others are exact)
                capped_here = name in capped and (name in overall or read >= of(name))
                if capped_here:
                    n, f = figure(
                        name, read, capped_here, name in overall, of(name), bg, q, now, capped_figures, cached
                    )
                else:
                    n, f = read, exact
                if name in uncapped:
                    f = scan
            if name in notes:
                f = with_note(f, notes[name])
            figures[name] = f
            if name in values:
                values[name] = n
            else:
                extra[name] = n
        age, figures[OLDEST_READY] = oldest_figure(oldest.get(q), oldest_how, oldest_why, bg, q, now)
        if OLDEST_READY in notes and figures[OLDEST_READY].accuracy != UNSUPPORTED:
            figures[OLDEST_READY] = with_note(figures[OLDEST_READY], notes[OLDEST_READY])
        counted: dict[str, Any] = dict(values)  # the six counts by their field names
        out.append(QueueStats(queue=q, **counted, oldest_ready_age_s=age, figures=figures, extra=extra))
    return tuple(out)


def oldest_figure(
    read: float | None,
    how: str | None,
    why: str | None,
    bg: BackgroundCount | None,
    queue: str,
    now: datetime,
) -> tuple[float | None, Figure]:
    """The queue's oldest ready age and its Figure. Taken by this poll (`how` POLL or SCAN): exact at
    `now`. Left to the background counter's scans (BACKGROUND_SCAN): the age its last pass measured,
    stale with that pass's `as_of` (not advanced with the clock: the oldest job may have been claimed
    since), unknown (None, never 0) until a pass covering it has landed. None (a value) with a known
    figure: no job is ready.

    >>> from datetime import datetime, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> age, f = oldest_figure(None, BACKGROUND_SCAN, None, None, "q", t); age, f.accuracy
    (None, 'unknown')
    >>> bg = BackgroundCount(t, 5.0, frozenset({OLDEST_READY}), {}, 0, oldest={"q": 3600.0})
    >>> age, f = oldest_figure(None, BACKGROUND_SCAN, None, bg, "q", t); age, f.accuracy, f.as_of == t
    (3600.0, 'stale', True)
    >>> oldest_figure(None, BACKGROUND_SCAN, None, bg, "empty", t)[0] is None  # no job ready
    True
    >>> oldest_figure(1.5, POLL, None, None, "q", t)[1].accuracy
    'exact'
    """
    if how is None:
        return None, Figure(UNSUPPORTED, None, POLL, reason="the queue's kind has no oldest ready age")
    if why is not None:
        return None, Figure(UNKNOWN, None, POLL, reason=why)
    if how != BACKGROUND_SCAN:
        return read, Figure(EXACT, now, how)
    failed = bg.failed.get(OLDEST_READY) if bg is not None else None
    if bg is None or OLDEST_READY not in bg.groups:
        return None, Figure(UNKNOWN, None, BACKGROUND_SCAN, reason=failed or NOT_LANDED)
    # the last age that landed, as of its own scan; a later failed try says so on the figure
    return bg.oldest.get(queue), Figure(STALE, bg.as_of_for(OLDEST_READY), BACKGROUND_SCAN, reason=failed)


def not_taken(model: QueueModel, failed: Mapping[Statement, str] | None = None) -> dict[str, Figure]:
    """The count names a poll has no value for, each with why: `unknown` when the kind records the
    state but no statement counts it (the index it advises is missing) or its statement failed this
    poll (`failed`: statement -> error), `unsupported` when the kind has no such state.

    >>> from pgq_tui.dialects.contract import Match
    >>> counts = Statement.of("c", "", ("queue", "ready", "scheduled"))
    >>> m = QueueModel(Match("k", "s", "t"), "K", "", (), (counts,))
    >>> sorted((n, f.accuracy) for n, f in not_taken(m).items())[:2]
    [('dead', 'unsupported'), ('done', 'unsupported')]
    >>> not_taken(m, {counts: "canceling statement due to statement timeout"})["ready"].accuracy
    'unknown'
    """
    out: dict[str, Figure] = {}
    counted = model.count_columns()
    advised = {FIELD.get(s, s): a.definition for a in model.advice for s in a.states}
    whole = model.support(Capability.COUNTS)
    for state, name in FIELD.items():
        if not whole.ok:
            out[name] = Figure(UNKNOWN, None, POLL, reason=str(whole.reason))
        elif name in advised and state not in counted:
            out[name] = Figure(
                UNKNOWN, None, POLL, reason=f"no way to count it without an index: {advised[name]}"
            )
        elif state not in counted:
            out[name] = Figure(UNSUPPORTED, None, POLL, reason=f"{model.title} does not record {state} jobs")
    for statement, error in (failed or {}).items():
        for name in names_of(statement):
            out[name] = Figure(UNKNOWN, None, POLL, reason=f"count failed: {error}")
    return out


def oldest_unknown(model: QueueModel, failed: Mapping[Statement, str] | None = None) -> str | None:
    """Why the oldest ready job's age is not taken at this poll: the kind has ready jobs but no index
    serves their age, or the statement that reads it failed; None when it is taken (or the kind has
    no such figure)."""
    if not any(OLDEST_READY in s.columns for s in model.counts):
        for advice in model.advice:
            if advice.capability == Capability.OLDEST_READY:
                return f"no way to take it without an index: {advice.definition}"
    for statement, error in (failed or {}).items():
        if OLDEST_READY in statement.columns:
            return f"count failed: {error}"
    return None


def oldest_how(model: QueueModel, run: Sequence[Statement], deferred: Sequence[Statement]) -> str | None:
    """Where this poll's oldest ready age comes from: POLL (an index serves it), SCAN (a scan in
    the poll: a small relation), BACKGROUND_SCAN (a scan left to the background counter: a large
    one), or None when the kind has no such figure (oldest_unknown() says when it has one that no
    statement reads).

    >>> from pgq_tui.dialects.contract import Match
    >>> o = Statement.of("o", "", ("queue", "ready", OLDEST_READY))
    >>> m = QueueModel(Match("k", "s", "t"), "K", "", (), (o,))
    >>> oldest_how(m, (o,), ()), oldest_how(m, (o.scan(),), ()), oldest_how(m, (), (o.scan(),))
    ('poll', 'scan', 'background scan')
    """
    if any(OLDEST_READY in s.columns for s in deferred):
        return BACKGROUND_SCAN
    here = [s for s in run if OLDEST_READY in s.columns]
    if here:
        return POLL if all(s.indexed for s in here) else SCAN
    if any(a.capability == Capability.OLDEST_READY for a in model.advice):
        return POLL  # unknown at this poll, with the index it wants (oldest_unknown)
    return None if not model.support(Capability.OLDEST_READY).ok else POLL


def scanned_figure(name: str, bg: BackgroundCount | None, queue: str) -> tuple[int | None, Figure]:
    """A count left to the background counter's scans: its last exact value (stale, with its own
    as_of, and why its last try failed if it did), or unknown (None, never 0) before the first scan
    covering it has landed (with the scan's error when it failed).

    >>> n, f = scanned_figure("dead", None, "q"); n, f.accuracy, f.reason == NOT_LANDED
    (None, 'unknown', True)
    """
    value = bg.value(queue, name) if bg is not None else None
    if value is None or bg is None:
        why = bg.failed.get(name, NOT_LANDED) if bg is not None else NOT_LANDED
        return None, Figure(UNKNOWN, None, BACKGROUND_SCAN, reason=why)
    return value, Figure(STALE, bg.as_of_for(name), BACKGROUND_SCAN, reason=bg.failed.get(name))


def notes(model: QueueModel) -> dict[str, str]:
    """Count name (and "leases", "dead") -> the advice shown next to a figure no index serves."""
    out: dict[str, str] = {}
    for advice in model.advice:
        text = f"no index serves it (a scan); {advice.definition} would make it live"
        for state in advice.states:
            out.setdefault(FIELD.get(state, state), text)
        panel = PANEL.get(advice.capability)
        if panel in ("leases", "dead"):
            out.setdefault(panel, text)
        if advice.capability == Capability.OLDEST_READY:
            out.setdefault(OLDEST_READY, text)
    return out


def depth_of(model: QueueModel) -> frozenset[str]:
    """The unfinished states (of DEPTH) this queue's kind has: those it counts, or would count with
    the index it advises. A state it does not record at all (the seed shapes have no dead state) is
    not part of its depth; one it cannot count for want of an index is, and makes the depth unknown.

    >>> from pgq_tui.dialects.contract import Match
    >>> counts = Statement.of("c", "", ("queue", "ready", "scheduled", "running", "stuck"))
    >>> sorted(depth_of(QueueModel(Match("k", "s", "t"), "K", "", (), (counts,))))
    ['ready', 'running', 'scheduled', 'stuck']
    """
    served = {FIELD.get(c, c) for c in model.count_columns()}
    advised = {FIELD.get(s, s) for a in model.advice for s in a.states}
    return DEPTH & frozenset(served | advised)


def exact_depth(q: QueueStats, states: frozenset[str] = DEPTH) -> int | None:
    """Rows of the queue not finished (the sum of its kind's unfinished `states`), when every one is
    counted and exact at this poll; None otherwise (one the dialect cannot count without an index,
    or one above the cap). A hand-built QueueStats (no figures) is exact."""
    if q.figures and not set(q.figures) >= states:
        return None
    if any(q.accuracy(n) != EXACT for n in states):
        return None
    depth: int = sum(getattr(q, n) for n in states)
    return depth


def background_depth(bg: BackgroundCount, queue: str) -> int | None:
    """The queue's depth in one background count, when that count covered every state of it in its
    one snapshot (states read by separate scans are not one moment)."""
    if not bg.groups - bg.scanned >= bg.depth:
        return None
    return sum(bg.counts.get((queue, n), 0) for n in bg.depth)


def unsupported(model: QueueModel) -> dict[str, str]:
    """Panel -> why this dialect cannot serve it (shown as unsupported, never as an error)."""
    out: dict[str, str] = {}
    for capability, panel in PANEL.items():
        support = model.support(capability)
        if not support.ok:
            out[panel] = str(support.reason)
    if "counters" in out and "rates" in out:
        out["throughput"] = out["counters"]
    counted = model.count_columns()
    # a count the dialect cannot give is shown as n/a, not as 0. "dead" and "done" are both a panel
    # and a count: the dialect's own reason for the panel stands, else the count's (which names the state)
    explicit = {PANEL[c] for c, _ in model.unsupported if c in PANEL}
    for state, name in FIELD.items():
        if state not in counted and name not in explicit:
            out[name] = f"{model.title} does not record {state} jobs"
    return out
