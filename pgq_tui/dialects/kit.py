"""What every dialect builds the same way: its statements from its SQL files, the model of a queue it
refuses, its common actions, and the settings it declares. Pure, like the dialects themselves.

A dialect file then reads as its framework's facts: names, states, rules and SQL file names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict

from psycopg import sql

from pgq_tui.dialects import contract
from pgq_tui.dialects.catalog import Partition, Relation
from pgq_tui.dialects.contract import ActionKind, ActionSpec, Capability, Match, QueueModel, Statement
from pgq_tui.dialects.sqlfiles import has_sql_file, sql_file

Number = float | int

# The count cap (QueueModel.count_cap) of a dialect whose per-queue waiting counts read a heap row per
# index entry on the framework's stock schema (no index of its own holds the column that tells ready
# from the rest: Que's error_count, good_job's performed_at). At the monitor's 1,000, 10 queues x 2
# counts read 20,000 heap rows a poll at 2M rows (Que: 96 ms under load 7, good_job: 15 ms), at
# 250 a quarter of them (2026-12-06, benchmarks/bench_stock_poll.py). Past it a count is the
# background counter's exact one, stale with its age, as above any cap; with pgq-top's advised index
# the counts are index-only and the monitor's own cap applies.
HEAP_COUNT_CAP = 250


# -- declared settings -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Setting:
    """A value a dialect needs that the database does not record (a worker-side timeout, a rule of
    pgq-top's own), declared by the dialect in its `settings` and set by the engine on the dialect's
    field before `model()`: from a target's key in a targets file (`key = value` in
    `[targets.NAME]`), else from the environment variable `env`, else `default`."""

    key: str  # the targets-file key, e.g. "river_rescue_after"
    field: str  # the dialect's dataclass field the engine sets, e.g. "rescue_after_s"
    default: Number
    env: str  # the environment override, e.g. "PGQ_TOP_RIVER_RESCUE_AFTER"
    doc: str
    integer: bool = False  # a whole number (else seconds, any positive number)

    def parse(self, raw: object) -> Number | None:
        """`raw` (a TOML value or an environment string) as this setting's value; None when it is not
        a positive number (a whole one when `integer`).

        >>> s = Setting("x", "x_s", 30.0, "X", "")
        >>> s.parse("45"), s.parse(" 2.5 "), s.parse("0"), s.parse("soon"), s.parse(True)
        (45.0, 2.5, None, None, None)
        >>> Setting("n", "n", 5, "N", "", integer=True).parse("3.5")
        """
        if isinstance(raw, bool):
            return None
        if isinstance(raw, str):
            text = raw.strip()
            if self.integer:
                raw = int(text) if text.isdigit() else None
            else:
                try:
                    raw = float(text)
                except ValueError:
                    return None
        if self.integer:
            return raw if isinstance(raw, int) and raw > 0 else None
        return float(raw) if isinstance(raw, (int, float)) and raw > 0 else None

    def value(self, given: Number | None) -> Number:
        """The value the dialect uses: the one the engine set, else the default."""
        return self.default if given is None else given


def from_environment(settings: Sequence[Setting], environ: Mapping[str, str]) -> dict[str, Number]:
    """Key -> value of each setting whose environment variable holds a valid value (others: absent).

    >>> from_environment([Setting("a", "a_s", 30.0, "A", "")], {"A": "12", "B": "1"})
    {'a': 12.0}
    """
    out: dict[str, Number] = {}
    for s in settings:
        value = s.parse(environ.get(s.env, ""))
        if value is not None:
            out[s.key] = value
    return out


def declared(dialect: object) -> tuple[Setting, ...]:
    """The settings a dialect declares (none for one that declares nothing)."""
    found: tuple[Setting, ...] = getattr(dialect, "settings", ())
    return found


# -- statements ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sql:
    """A dialect's statement factory: `s(name, columns)` is `<package>/sql/<name>.sql` named
    `<prefix>.<name>`, with the dialect's identifiers and literals bound."""

    package: str
    prefix: str
    idents: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    literals: Mapping[str, Sequence[Any]] = field(default_factory=dict)

    def __call__(self, name: str, columns: Sequence[str]) -> Statement:
        return Statement.of(
            f"{self.prefix}.{name}",
            sql_file(self.package, name),
            columns,
            literals=self.literals or None,
            **self.idents,
        )

    def count(self, name: str, *states: str, indexed: bool = True) -> Statement:
        """A count statement: `queue` and the states (or `oldest_ready_age_s`) it counts; `indexed`
        False: where no index serves it (`served`)."""
        return self.served(name, indexed, (contract.COUNT_KEY, *states))

    def served(self, name: str, indexed: bool, columns: Sequence[str]) -> Statement:
        """`name` when an index serves it, else `<name>_scan` as a scan (Statement.indexed False)."""
        return self(name, columns) if indexed else self(f"{name}_scan", columns).scan()

    def leases(self, name: str = "leases", indexed: bool = True) -> Statement:
        return self.served(name, indexed, contract.LEASE_COLUMNS)

    def dead(self, name: str = "dead", indexed: bool = True) -> Statement:
        return self.served(name, indexed, contract.DEAD_COLUMNS)

    def job(self) -> Statement:
        return self("job", contract.JOB_COLUMNS)

    def attempts(self) -> Statement:
        """One job's attempts (`attempts.sql`, ATTEMPT_COLUMNS; params id, shown)."""
        return self("attempts", contract.ATTEMPT_COLUMNS)

    def probe(self) -> Statement:
        return self("claim_probe", ("id",))

    def preview(self, name: str) -> Statement:
        return self(name, contract.PREVIEW_COLUMNS)

    def write(self, name: str) -> Statement:
        """An action's statement: one `id` row per job changed."""
        return self(name, ("id",))

    def reads(self, leases: Statement | None = None, dead: Statement | None = None) -> Reads:
        """A model's reads of single jobs, as QueueModel keywords (`QueueModel(..., **s.reads())`):
        `leases` and `dead` (`leases.sql`, `dead.sql` unless given), the job's detail (`job.sql`), its
        attempts (`attempts.sql`, where the framework keeps them) and the claim probe (`claim_probe.sql`)."""
        return Reads(
            leases=self.leases() if leases is None else leases,
            dead=self.dead() if dead is None else dead,
            job=self.job(),
            attempts=self.attempts() if has_sql_file(self.package, "attempts") else None,
            claim_probe=self.probe(),
        )


class Reads(TypedDict):
    """The QueueModel fields of `Sql.reads`."""

    leases: Statement
    dead: Statement
    job: Statement
    attempts: Statement | None
    claim_probe: Statement


def partitioned_index(
    name: str, on: tuple[str, str], partitions: Sequence[Partition], definition: str
) -> tuple[str, ...]:
    """The index `definition` on a partitioned table without blocking its writes. A plain CREATE INDEX
    on the parent blocks every write to every partition for the whole build, and CONCURRENTLY is
    refused on a partitioned table. So: an (invalid) index `ON ONLY` the parent and each sub-partitioned
    partition (no build), each leaf's built CONCURRENTLY (writes continue), then each attached to its
    parent's, deepest first: once all of a parent's partitions are attached, its index is valid.
    IF NOT EXISTS, and attaching twice is a no-op: a run cut short can be run again."""

    def index_of(table: tuple[str, str]) -> str:
        return name if table == on else f"{name}_{table[1]}"[:63]  # the name limit; the table keeps it unique

    def create(table: tuple[str, str], how: str) -> str:
        quoted = sql.Identifier(index_of(table)).as_string(None)
        target = sql.Identifier(*table).as_string(None)
        return f"CREATE INDEX {how}IF NOT EXISTS {quoted} ON {'' if how else 'ONLY '}{target} {definition}"

    steps = [create(on, "")]
    steps += [create((p.schema, p.name), "") for p in partitions if not p.leaf]
    steps += [create((p.schema, p.name), "CONCURRENTLY ") for p in partitions if p.leaf]
    for p in sorted(partitions, key=lambda p: -p.level):
        parent = sql.Identifier(p.parent[0], index_of(p.parent)).as_string(None)
        child = sql.Identifier(p.schema, index_of((p.schema, p.name))).as_string(None)
        steps.append(f"ALTER INDEX {parent} ATTACH PARTITION {child}")
    return tuple(steps)


def index_advice(
    cap: Capability, name: str, on: tuple[str, str], definition: str, why: str, states: tuple[str, ...]
) -> contract.IndexAdvice:
    """`CREATE INDEX CONCURRENTLY name ON schema.table definition`, identifiers quoted."""
    create = f"CREATE INDEX CONCURRENTLY {name} ON {sql.Identifier(*on).as_string(None)} {definition}"
    return contract.IndexAdvice(cap, create, why, states)


# -- detection and states --------------------------------------------------------------------------
def found(
    kind: str,
    rel: Relation,
    version: str | None,
    evidence: str,
    score: int,
    *tables: str,
    config: str | None = None,
) -> Match:
    """A queue of `kind` found at `rel` (its main table), reading `tables` besides it."""
    return Match(kind, rel.schema, rel.name, version, evidence, score, (rel.name, *tables), config)


def state_words(table: str) -> tuple[contract.StateWord, ...]:
    """A dialect's states, one line each: the canonical word (or an extra state's label), then the
    framework's word or condition, for the help screen.

    >>> state_words('''
    ...     ready   available, scheduled_at <= now()
    ...     dead    discarded
    ... ''')[0]
    StateWord(canonical='ready', native='available, scheduled_at <= now()')
    """
    out = []
    for line in table.strip().splitlines():
        canonical, native = line.split(maxsplit=1)
        out.append(contract.StateWord(canonical, native))
    return tuple(out)


# -- models ----------------------------------------------------------------------------------------
def refused(match: Match, title: str, why: str) -> QueueModel:
    """The model of a queue the dialect will not read (too old, lacking its framework's own index):
    every capability unsupported, with the reason."""
    return QueueModel(
        match=match,
        title=title,
        stuck_rule=f"not shown: {why}",
        states=(),
        counts=(),
        unsupported=tuple((cap, why) for cap in Capability),
        relations=((match.schema, match.table),),
    )


def state_led(rel: Relation | None, column: str, cols: contract.SearchColumns) -> contract.SearchColumns:
    """`cols` with each of its states served by a whole (not partial) index of `rel` that leads with
    the state `column` (River's and Oban's fetching index, `(state, queue, ...)`): every state is a
    range of it, so a search of one state reads only that state's rows (SearchColumns.indexed_states).
    The planner may walk another index of the state's rows (Oban's `(state, discarded_at)`); the
    search names the one its plan walks."""
    for ix in rel.indexes if rel is not None else ():
        if ix.valid and ix.predicate is None and ix.columns[:1] == (column,):
            return replace(cols, indexed_states=tuple((w, ix.name) for w, _ in cols.states))
    return cols


def unindexed(match: Match, title: str, index: str) -> QueueModel:
    """Refused: the table lacks the framework's own index its reads need (its migrations add it)."""
    why = f"{match.table} lacks {title}'s own {index}; pgq-top does not scan the table"
    return refused(match, title, f"{why}: run {title}'s migrations")


# -- actions ---------------------------------------------------------------------------------------
# An action's preview and write are each an SQL file name (`s.preview(name)`, `s.write(name)`) or the
# statement itself, e.g. a guarded transition composed from the dialect's guard (dialects/guarded.py).
Sqlish = str | Statement


def _preview(s: Sql, preview: Sqlish) -> Statement:
    return preview if isinstance(preview, Statement) else s.preview(preview)


def _write(s: Sql, write: Sqlish) -> Statement:
    return write if isinstance(write, Statement) else s.write(write)


def requeue(
    s: Sql,
    label: str,
    effect: str,
    guard: str,
    preview: Sqlish,
    name: Sqlish = "requeue",
    done: str | None = None,
    applies_to: contract.State = contract.State.STUCK,
) -> ActionSpec:
    """Hand stuck jobs back (the framework's rescue)."""
    return ActionSpec(
        ActionKind.REQUEUE, label, applies_to, effect, guard, _preview(s, preview), _write(s, name), done=done
    )


def retry(
    s: Sql, label: str, effect: str, guard: str, preview: Sqlish, write: Sqlish = "retry"
) -> ActionSpec:
    """A dead job runs again (`retry.sql`)."""
    preview_, statement = _preview(s, preview), _write(s, write)
    return ActionSpec(ActionKind.RETRY, label, contract.State.DEAD, effect, guard, preview_, statement)


def discard(
    s: Sql,
    label: str,
    effect: str,
    guard: str,
    preview: Sqlish,
    destructive: bool = True,
    write: Sqlish = "discard",
) -> ActionSpec:
    """A dead job is removed, or parked in the framework's terminal state (`discard.sql`)."""
    preview_, statement = _preview(s, preview), _write(s, write)
    return ActionSpec(
        ActionKind.DISCARD, label, contract.State.DEAD, effect, guard, preview_, statement, destructive
    )


def cancel(
    s: Sql,
    label: str,
    effect: str,
    guard: str,
    also: tuple[str, ...],
    preview: Sqlish = "preview_waiting",
    write: Sqlish = "cancel",
) -> ActionSpec:
    """Waiting jobs (ready, and the states in `also`) will not run (`preview_waiting.sql`, `cancel.sql`)."""
    return ActionSpec(
        ActionKind.CANCEL,
        label,
        contract.State.READY,
        effect,
        guard,
        _preview(s, preview),
        _write(s, write),
        True,
        also_applies_to=also,
    )


# -- pausing a queue -------------------------------------------------------------------------------
def pause_spec(
    s: Sql,
    label: str,
    pause_effect: str,
    resume_effect: str,
    reaction: str,
    *,
    state_source: str = "",
    durable: bool = True,
    caveat: str | None = None,
    unknown_why: str | None = None,
    unknown_refusal: str | None = None,
) -> contract.PauseSpec:
    """The framework's queue pause from `pause_preview.sql`, `pause.sql`, `resume.sql` and, unless
    `unknown_why` says why the database does not record it, `pause_state.sql`."""
    return contract.PauseSpec(
        label=label,
        pause_effect=pause_effect,
        resume_effect=resume_effect,
        reaction=reaction,
        preview=s("pause_preview", contract.PAUSE_PREVIEW_COLUMNS),
        pause=s("pause", ("queue",)),
        resume=s("resume", ("queue",)),
        state=None if unknown_why else s("pause_state", contract.PAUSED_COLUMNS),
        state_source=state_source,
        unknown_why=unknown_why,
        durable=durable,
        caveat=caveat,
        unknown_refusal=unknown_refusal,
    )
