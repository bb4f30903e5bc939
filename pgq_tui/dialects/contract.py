"""The dialect contract: what a queue framework's dialect supplies to pgq-top (see the package docstring).

Everything here is plain frozen data and pure functions: a dialect never opens a connection, never
reads the environment, never imports the monitor, the actions engine or the TUI. The engine (monitor,
actions, CLI) runs the statements a `QueueModel` carries and turns their rows into the canonical shapes
below. A value the database does not record (a worker-side timeout) is a setting the dialect declares
(`kit.Setting`): the engine sets it on the dialect from a target's key or the environment before
`model()` is called (detection.dialects).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from psycopg import sql

from pgq_tui.jobid import JobId as JobId  # the contract's name for it (JobId = int | str | UUID)

if TYPE_CHECKING:
    from pgq_tui.dialects.catalog import Catalog, VersionMarker


# -- the canonical words ---------------------------------------------------------------------------
class State(str, Enum):
    """The words the Snapshot, the JSON and the screen use, whatever the framework calls them."""

    READY = "ready"  # runnable now
    SCHEDULED = "scheduled"  # waits for its run time (incl. retry backoff)
    RUNNING = "running"  # claimed by a worker, not stuck by the framework's rule
    STUCK = "stuck"  # claimed, and stuck by the framework's own rule (QueueModel.stuck_rule)
    DEAD = "dead"  # failed for good, kept (retry/discard candidates)
    DONE = "done"  # finished and kept (0 when finished jobs are deleted)


CANONICAL_STATES: tuple[str, ...] = tuple(s.value for s in State)


class Liveness(str, Enum):
    """Is the worker holding a job still there? Unknowable is not the same as gone."""

    ALIVE = "alive"
    GONE = "gone"
    UNKNOWN = "unknown"  # the framework ties no worker id to anything the database can see


class ActionKind(str, Enum):
    """Every write pgq-top knows; a dialect offers the subset its framework has an equivalent for."""

    REQUEUE = "requeue"  # hand stuck jobs back to the queue (rescue / unlock)
    REAP = "reap"  # the framework's own reaper pass: every stuck job, dead when out of attempts
    RETRY = "retry"  # a dead job runs again
    DISCARD = "discard"  # a dead job is removed (or parked in the framework's terminal state)
    CANCEL = "cancel"  # a waiting job will not run (the framework's cancelled state)


class Capability(str, Enum):
    """Panels and keys a dialect may or may not serve. Unserved ones show as unsupported, not errors."""

    COUNTS = "counts"  # per-queue ready/scheduled/running/stuck/dead
    OLDEST_READY = "oldest_ready"  # age of the oldest ready job per queue
    DONE = "done"  # kept finished jobs per queue
    LEASES = "leases"  # running and stuck jobs listed with their holder
    LIVENESS = "liveness"  # holder liveness can be alive/gone, not only unknown
    DEAD = "dead"  # dead jobs listed with their error
    DETAIL = "detail"  # one job in full
    THROUGHPUT = "throughput"  # exact per-second rates from the framework's own counters
    RATES = "rates"  # per-queue rates derived from the table (QueueModel.activity), for any writer
    SCHEDULES = "schedules"  # periodic schedules kept in the database (QueueModel.schedules)
    PAUSE = "pause"  # pause and resume a queue, the framework's own way (QueueModel.pause)
    ATTEMPTS = "attempts"  # one job's attempts, one by one (QueueModel.attempts)
    LATENCY = "latency"  # wait and run time percentiles of finished jobs (QueueModel.latency)


# -- statements ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Statement:
    """One SQL statement, readable as text: `{name}` placeholders are identifiers bound from `idents`
    (quoted by psycopg.sql, never formatted in), `%(param)s` are values the engine passes.

    Standard parameters (the engine passes all of them; a statement uses those it needs):
      cap1   int | NULL  each count stops after this many rows (NULL: exact, for background counts)
      rows   int         rows per list (leases, dead)
      id     JobId       one job (detail)
      shown  int         rows of one job's attempts (QueueModel.attempts)
      newest int         finished jobs the latency statement reads at most (QueueModel.latency)
      ids    array|NULL  chosen jobs; NULL = every job the action's guard admits
      queue  text|NULL   restrict an action to one queue; NULL = all queues
      batch  int         rows per write transaction; the engine repeats until fewer come back
      before timestamptz the server's now() when the action was planned (its preview ran in the
                         same transaction): a write may bound its guard with it, e.g.
                         `locked_until < %(before)s`, to touch only jobs that were stuck when the
                         operator confirmed, never one that became stuck while the dialog was open
    The activity statement (QueueModel.activity) takes its own: after, max_span, gap_rows, lo, hi.
    `columns` declares the result columns; the conformance suite checks them against the server.

    `indexed` says whether an index serves the statement (its cost class). An unindexed statement is
    a scan whose cost grows with the relation: a count of that kind reads every row of its states and
    is exact (it ignores cap1), a list reads at most `rows` rows after the scan. The engine runs it in
    the poll while the relation is small, else in the background counter (monitor/tiers.py).
    """

    name: str
    text: str
    idents: tuple[tuple[str, tuple[str, ...]], ...] = ()
    columns: tuple[str, ...] = ()
    # `{placeholder}` -> constant values bound as quoted literals, comma-separated (e.g. status values
    # from a mapping file: literals, not parameters, so the planner can match partial indexes)
    literals: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    indexed: bool = True
    # `{placeholder}` -> an SQL fragment (constant text from a .sql file, e.g. a guard or a shared
    # template of dialects/sql/), composed by psycopg with the same idents and literals and the parts
    # before it, then bound like an identifier: never formatted in (see dialects/guarded.py)
    parts: tuple[tuple[str, str], ...] = ()

    def scan(self) -> Statement:
        """The same statement, marked as served by no index (a scan: see the class docstring)."""
        return replace(self, indexed=False)

    def uses(self, param: str) -> bool:
        """Whether the statement (its text or a part) takes the parameter `%(param)s`."""
        return any(f"%({param})s" in text for text in (self.text, *(t for _, t in self.parts)))

    @classmethod
    def of(
        cls,
        name: str,
        text: str,
        columns: Sequence[str] = (),
        *,
        literals: Mapping[str, Sequence[Any]] | None = None,
        **idents: Sequence[str],
    ) -> Statement:
        return cls(
            name,
            text,
            tuple((k, tuple(v)) for k, v in sorted(idents.items())),
            tuple(columns),
            tuple((k, tuple(v)) for k, v in sorted((literals or {}).items())),
        )

    def compose(self, *, executed: bool = True) -> sql.Composed:
        """The statement as psycopg runs it. The engine always passes parameters, and psycopg then reads
        every `%` of the composed text as a placeholder: a `%` inside a bound name or value (a mapping's
        status `50%`, a queue named `a%b`) is doubled, so it stays that text (`executed=False`: as shown)."""

        def wrap(c: sql.Composable) -> sql.Composable:
            return _Percent(c) if executed else c

        bound: dict[str, sql.Composable] = {k: wrap(sql.Identifier(*parts)) for k, parts in self.idents}
        for k, values in self.literals:
            bound[k] = sql.SQL(", ").join(wrap(sql.Literal(v)) for v in values)
        for k, text in self.parts:
            bound[k] = sql.SQL(text).format(**bound)
        return sql.SQL(self.text).format(**bound)

    def shown(self) -> str:
        """The SQL as it will run, identifiers quoted, parameters as placeholders (for a confirm)."""
        return self.compose(executed=False).as_string(None).strip()


class _Percent(sql.Composable):
    """A bound name or value inside a statement psycopg parses for `%(name)s`: its `%` doubled."""

    def as_bytes(self, context: Any = None) -> bytes:
        return bytes(self._obj.as_bytes(context)).replace(b"%", b"%%")


# -- canonical row shapes (what each statement returns, column for column) -------------------------
# Counts: `queue` plus any of the canonical states, the model's extra states and `oldest_ready_age_s`.
# A NULL means "not counted here"; several count statements are summed per queue, each state counted
# by one statement. A count below cap1 is exact; one that reaches cap1 means "cap1 or more" (the engine
# flags it approximate and may recount with cap1 = NULL). States in QueueModel.capped_overall read
# cap1 rows over all queues together instead, and are exact only while their sum stays below cap1.
COUNT_KEY = "queue"
OLDEST_READY = "oldest_ready_age_s"

LEASE_COLUMNS = (
    "id",
    "queue",
    "holder",  # the framework's worker id (text), NULL when it records none
    "liveness",  # 'alive' | 'gone' | 'unknown'
    "holder_pid",  # a backend pid when the holder is tied to one, else NULL
    "attempts",
    "max_attempts",
    "started_at",  # when the current attempt began (NULL if unknown)
    "expires_at",  # when the framework's rule calls it stuck (lease end, lock age limit); NULL if never
    "seconds_left",  # expires_at - now() in seconds (negative once stuck); NULL if no expiry
    "stuck",  # bool: stuck by the framework's rule
    "payload_preview",  # first 200 characters of the payload as text; NULL when large
)
# Optional lease columns a dialect may add after LEASE_COLUMNS (declared in its statement's columns).
LEASE_EXTRA_COLUMNS = ("heartbeat_age",)  # seconds since the holder last renewed the lease
# QueueModel.activity: the rows new since the previous poll, per queue (dialects/sql/activity.sql):
# kind 'new'/'late' (queue, n rows), 'gap' (lo, hi ids), 'top' (n = the max id).
ACTIVITY_COLUMNS = ("kind", "queue", "n", "lo", "hi")
# QueueModel.finished: per queue, the jobs created (`enqueued`), finished (`completed`) and failed for
# good (`failed`) in [%(since)s, %(until)s), from the framework's own timestamps (pg-boss created_on and
# completed_on, River finalized_at, ...): right whoever writes.
# A statement declares the columns it counts: FINISHED_DONE where enqueued/s comes from the ids.
FINISHED_COLUMNS = ("queue", "enqueued", "completed", "failed")
FINISHED_DONE = ("queue", "completed", "failed")
DEAD_COLUMNS = ("id", "queue", "attempts", "max_attempts", "finished_at", "error", "payload_preview")
JOB_COLUMNS = (
    "id",
    "queue",
    "state",  # canonical word (or an extra state's label)
    "native_state",  # the framework's own word
    "attempts",
    "max_attempts",
    "run_at",
    "created_at",
    "started_at",
    "finished_at",
    "holder",
    "error",
    "payload",  # text
    "details",  # jsonb: framework-specific fields, shown as they are
)
# QueueModel.attempts: one job's attempts where the framework keeps them (River's and Oban's `errors`,
# procrastinate's events, pgqueuer's log, ...), newest first; params `id` and `shown` (at most that
# many rows: the engine passes ATTEMPTS_SHOWN).
# A column the framework does not record is NULL (never made up).
ATTEMPT_COLUMNS = (
    "attempt",  # int: the attempt's number, 1 = the first run
    "at",  # timestamptz: when it ended (the framework's error time), else when it started
    "outcome",  # the framework's word for how it ended ("errored", "exception", "failed", ...)
    "worker",  # text: who ran it
    "error",  # text: the error (message, class), as the framework stored it
    "trace",  # text: the stack trace or backtrace
)
ATTEMPTS_SHOWN = 50
# QueueModel.latency: per queue and span ('5m', '1h'), the wait (run_at/scheduled/available -> the
# attempt's start) and run (start -> finish) of the jobs that finished in it, from the framework's own
# timestamps (dialects/latency.py composes the template with the dialect's finished rows); param
# `newest`: at most that many finished jobs are read, newest first (`whole` false: the span's figures
# are over the newest ones only); a dialect that reads queue by queue reads at most
# max(LATENCY_PER_QUEUE, newest / its queues) of each queue. read_cap is that limit and cap_per_queue
# whether it is the queue's own. wait and run are float8[] [p50, p95, p99] in seconds, NULL where the
# framework recorded no such time.
LATENCY_COLUMNS = (
    "queue",
    "span",
    "jobs",
    "wait",
    "wait_max",
    "run",
    "run_max",
    "whole",
    "read_cap",
    "cap_per_queue",
    "as_of",
)
LATENCY_SPANS = (("5m", 300), ("1h", 3600))
LATENCY_NEWEST = 100_000
LATENCY_PER_QUEUE = 1_000  # the least a queue-by-queue latency read takes of each queue
PREVIEW_COLUMNS = ("eligible", "alive")  # an action's preview: rows its guard admits now; of them, alive
# Optional preview columns after those two, for richer plans: `holders` text[] names up to 5 live
# holders ("worker (pid 42)"), `exhausted` counts eligible jobs the action sends to dead (no attempts left).
PREVIEW_OPTIONAL = ("holders", "exhausted")


@dataclass(frozen=True)
class LeaseRow:
    id: JobId
    queue: str | None
    holder: str | None
    liveness: Liveness
    holder_pid: int | None
    attempts: int | None
    max_attempts: int | None
    started_at: datetime | None
    expires_at: datetime | None
    seconds_left: float | None
    stuck: bool
    payload_preview: str | None
    heartbeat_age: float | None = None  # LEASE_EXTRA_COLUMNS, when the dialect supplies it


@dataclass(frozen=True)
class DeadRow:
    id: JobId
    queue: str | None
    attempts: int | None
    max_attempts: int | None
    finished_at: datetime | None
    error: str | None
    payload_preview: str | None


def lease_row(r: Mapping[str, Any]) -> LeaseRow:
    return LeaseRow(
        id=r["id"],
        queue=r["queue"],
        holder=r["holder"],
        liveness=Liveness(r["liveness"]),
        holder_pid=r["holder_pid"],
        attempts=r["attempts"],
        max_attempts=r["max_attempts"],
        started_at=r["started_at"],
        expires_at=r["expires_at"],
        seconds_left=float(r["seconds_left"]) if r["seconds_left"] is not None else None,
        stuck=bool(r["stuck"]),
        payload_preview=r["payload_preview"],
        heartbeat_age=float(r["heartbeat_age"]) if r.get("heartbeat_age") is not None else None,
    )


def dead_row(r: Mapping[str, Any]) -> DeadRow:
    return DeadRow(**{k: r[k] for k in DEAD_COLUMNS})


# -- actions ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ActionSpec:
    """One write the framework allows, in its own terms, with its guard in words and in SQL.

    preview: params ids/queue -> one row PREVIEW_COLUMNS, then any of PREVIEW_OPTIONAL (read-only,
    fills the confirmation).
    statement: params ids/queue/batch/before -> one row per job really changed, `id` its first column.
    Its WHERE repeats the guard on the locked row, so a race with a live worker leaves the row alone.
    REAP is the framework's own pass over every stuck job: it may ignore `ids` and `queue`.
    """

    kind: ActionKind
    label: str  # the framework's name for it, e.g. "reschedule_jobs()", "pgq requeue"
    applies_to: State  # the jobs it takes: STUCK for requeue/reap, DEAD for retry/discard
    effect: str  # what changes, in words
    guard: str  # the precondition, in words (the same one the SQL states)
    preview: Statement
    statement: Statement
    destructive: bool = False
    # further canonical words (or extra states) it takes besides applies_to, e.g. a cancel of waiting
    # jobs takes ready and scheduled ones
    also_applies_to: tuple[str, ...] = ()
    # of those, the states it takes only when the operator names the jobs (`ids`): with ids NULL
    # ("every job the guard admits") it leaves them alone, e.g. pgmq's retry of archived messages,
    # which usually were processed
    chosen_only: tuple[str, ...] = ()
    # the outcome's verb when the framework's transition is not what the kind's verb says (Solid
    # Queue's requeue fails a dead process's claims, as its supervisor does): "failed 2 of 2 jobs"
    done: str | None = None

    @property
    def takes(self) -> frozenset[str]:
        """Every state word the action takes (its guard admits jobs in these states only)."""
        return frozenset((self.applies_to.value, *self.also_applies_to))


# -- what the dialect says about one detected queue ------------------------------------------------
# -- pausing a queue -------------------------------------------------------------------------------
# QueueModel.pause.state: every paused queue (a queue not listed is not paused), no parameter.
PAUSED_COLUMNS = ("queue", "paused_at")
# PauseSpec.preview: param queue -> one row: `known` (the framework has a row or jobs for it; a pause
# of a queue it does not know is refused where the framework refuses it) and `paused` (NULL: unknown).
PAUSE_PREVIEW_COLUMNS = ("known", "paused")


@dataclass(frozen=True)
class PauseSpec:
    """Pausing a queue, the framework's own way: the rows its workers read (River's
    river_queue.paused_at, Solid Queue's solid_queue_pauses, pgq-top's <table>_pauses) and the
    notification they listen to, or only the notification where that is all the framework has (Oban
    OSS: then `durable` is False and `caveat` says so on screen and in the CLI's output).

    pause / resume: param queue -> one row (`queue`) when it changed; their WHERE states the guard
    (not paused yet / paused now), so a second operator's pause changes nothing. They never take
    several queues: a framework's "every queue" (River's '*') is left to the framework's own tools.
    """

    label: str  # the framework's name for it, e.g. "QueuePause / QueueResume"
    pause_effect: str  # what pausing changes, in words
    resume_effect: str
    reaction: str  # when the workers notice, in words (their own reaction time)
    preview: Statement  # PAUSE_PREVIEW_COLUMNS
    pause: Statement
    resume: Statement
    state: Statement | None = None  # PAUSED_COLUMNS; None: the database does not record it
    state_source: str = ""  # where `state` reads it, e.g. "river_queue.paused_at"
    unknown_why: str | None = None  # with state None: why a queue's paused state is unknown
    durable: bool = True  # the pause survives the workers' restart
    caveat: str | None = None  # said with every pause (e.g. not durable)
    unknown_refusal: str | None = None  # the refusal when preview says the queue is not known


@dataclass(frozen=True)
class Match:
    """One queue found in the catalog. `score` ranks dialects that match the same table (the more
    specific shape wins); `evidence` says how it was recognised, for `--kind` errors and the header."""

    kind: str
    schema: str
    table: str  # the main jobs relation (the table panel watches it)
    version: str | None = None
    evidence: str = ""
    score: int = 0
    tables: tuple[str, ...] = ()  # every relation of the framework it reads, main table first
    config: str | None = None  # e.g. the mapping file a mapping dialect came from

    @property
    def label(self) -> str:
        """For the header and the picker, e.g. "graphile-worker 0.17 · graphile_worker._private_jobs"."""
        version = f" {self.version}" if self.version else ""
        return f"{self.kind}{version} · {self.schema}.{self.table}"


@dataclass(frozen=True)
class StateWord:
    """How one native state (or condition) maps to a canonical state, for the help screen."""

    canonical: str  # a CANONICAL_STATES word or one of QueueModel.extra_states
    native: str  # the framework's word or condition, e.g. "todo, scheduled_at > now()"


@dataclass(frozen=True)
class IndexAdvice:
    """An index that would make a figure live: an optimization offered next to the figure, never the
    price of it. Without it the dialect still supplies the statement, as a scan (Statement.indexed
    False): small relations are scanned in the poll, large ones in the background (stale, with age)."""

    capability: Capability
    definition: str  # CREATE INDEX CONCURRENTLY ... (for the operator to run, never run by pgq-top)
    why: str
    states: tuple[str, ...] = ()  # the counts it would make live (e.g. ("running", "stuck"))
    # statements to run one at a time, in order, where one is not enough (a partitioned table: see
    # kit.partitioned_index); `definition` is then all of them, `;`-separated (psql runs each alone)
    steps: tuple[str, ...] = ()

    @property
    def statements(self) -> tuple[str, ...]:
        """What to run, each statement on its own (none may share a transaction: CONCURRENTLY)."""
        return self.steps or (self.definition,)


@dataclass(frozen=True)
class Support:
    ok: bool
    reason: str | None = None  # why not, in words (e.g. "needs index: CREATE INDEX ...")


@dataclass(frozen=True)
class SearchColumns:
    """Which of the kind's columns serve which term of the search language (docs/search.md). The
    engine (pgq_tui/search) composes the SQL; the dialect only declares. Expressions are constant SQL
    on the job row `j` (composed by psycopg, never formatted with values); a term whose column is
    None (or a document or state not listed) is refused, naming the term."""

    jobs: tuple[str, str]  # (schema, table) of the job rows
    states: tuple[tuple[str, str], ...]  # canonical word -> condition on j, e.g. "j.status = 'failed'"
    id: str = "id"  # the primary key column
    integer_ids: bool = True
    order: str = "id"  # newest first by this column: the bounded scan reads the newest N by it
    # False: no index orders the jobs by `order`, so a bound would read and sort every row anyway:
    # the search reads them all (cheaper: no sort) under its statement_timeout, and says so
    order_indexed: bool = True
    queue: str | None = "queue"  # column
    queue_expr: str | None = None  # expression instead, when the queue lives in another table
    error: str | None = None  # expression: the job's last error(s) as text
    time: str | None = None  # expression: the timestamptz since:/before: compare
    time_words: str = ""  # what that time is, in words (docs, --help)
    documents: tuple[tuple[str, str], ...] = ()  # language document (args, meta, output) -> jsonb column
    payload: str | None = None  # expression shown as the match's payload preview
    tags: str | None = None  # column: the job's tags, an array of text (River, Oban); `tags:x` holds x
    # Kinds with a table per queue (pgmq): constant SQL of the job rows (a UNION ALL subquery) read
    # instead of `jobs`. It takes %(w_scan)s (at most that many newest rows per table; NULL: all) and
    # %(w_ids)s (only these ids; NULL: any). A union cannot be locked: the per-batch recheck then
    # only reads, and the action's own guarded statement locks its rows.
    source: str | None = None
    # state word -> the index (its name) that restricts a read to that state's rows (a partial index
    # on exactly those rows, or one leading with the state column), as the catalog showed it: a
    # `state:` term of such a state reads all of its rows through that index when they number at
    # most the scan bound, instead of the newest N jobs (docs/search.md). Not for a `source` kind.
    indexed_states: tuple[tuple[str, str], ...] = ()
    # `{name}` in the expressions -> a constant bound as a quoted literal (e.g. a rescue horizon)
    literals: tuple[tuple[str, Any], ...] = ()
    # `{name}` -> another relation an expression reads (e.g. a workers table), quoted as an identifier
    idents: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # `{name}` -> a constant SQL fragment of the kind's own .sql files (a stuck rule, a lock set),
    # composed with the literals, identifiers and parts before it, as Statement.parts are
    parts: tuple[tuple[str, str], ...] = ()

    def fragment(self, text: str) -> sql.Composable:
        """One of the expressions, its `{name}` literals, identifiers and parts bound (composed,
        never formatted)."""
        bound: dict[str, sql.Composable] = {
            # a tuple is a list of values (`status IN ({v_dead})`), comma-separated literals
            k: sql.SQL(", ").join(map(sql.Literal, v)) if isinstance(v, tuple) else sql.Literal(v)
            for k, v in self.literals
        }
        bound.update({k: sql.Identifier(*v) for k, v in self.idents})
        for k, part in self.parts:
            bound[k] = sql.SQL(part).format(**bound)
        return sql.SQL(text).format(**bound)

    def document(self, name: str) -> str | None:
        return dict(self.documents).get(name)

    def state(self, word: str) -> str | None:
        return dict(self.states).get(word)

    def state_index(self, word: str) -> str | None:
        """The index that reads only `word`'s rows, if the kind has one (indexed_states)."""
        return dict(self.indexed_states).get(word)


@dataclass(frozen=True)
class ScheduleSource:
    """Where a kind keeps its periodic schedules (docs/schedules.md): its own tables, read as they are.

    statement: no params -> one row per schedule, SCHEDULE_COLUMNS (pgq_tui.schedules.model).
    jobs: params `names` text[], `rows` int -> the jobs each schedule made, newest first,
    SCHEDULE_JOB_COLUMNS; None when the framework makes no jobs for a schedule or cannot link them.
    scheduler: no params -> one row `pass_at`: when the framework's scheduler last ran (pg-boss's
    version.cron_on), the cause of a late schedule when it stopped; None when it records none.
    """

    statement: Statement
    links: str  # how the jobs are linked to a schedule, in words
    timezone_rule: str  # how the framework reads a schedule's zone, in words
    jobs: Statement | None = None
    scheduler: Statement | None = None
    scheduler_name: str = ""  # e.g. "pg-boss's cron pass"
    seconds_first: bool = False  # a six-field expression has its seconds first (cron-parser, fugit)
    # the expressions live in the application (Graphile's crontab file, procrastinate's decorators):
    # the rows give the last run only, unless a crontab file supplies the expressions (--crontab)
    expressions_elsewhere: str | None = None


@dataclass(frozen=True)
class Pass:
    """ONE scan that yields the rows of several statements no index serves, each of which would read
    the whole relation again (a count and a list of the same rows): the background counter runs it
    instead of them when the relation is too big to scan in the poll (monitor/background.py). Its
    rows: `pgq_part`, the index in `covers` of the statement the row belongs to; for a count, the
    count row as jsonb in `pgq_counts`; for a list, the list's own columns. The covered statements
    stay as they are: the poll still runs them on a small relation.

    A Pass whose statement an index serves (`statement.indexed`: one walk of an index range both
    covered statements would walk) is the poll's instead: it runs it in place of the covered
    statements whenever it runs them all, with their parameters (cap1 for a count, which the
    Pass's count rows respect, and rows for a list)."""

    statement: Statement
    covers: tuple[Statement, ...]
    # The running rows whose lease runs out soonest, as part len(covers) (`pgq_counts`: rel, tid,
    # expires, queue; at most %(watch)s of them), and the statement a poll rechecks them with by row
    # version (%(tids)s: tid[]): their lease rows (LEASE_COLUMNS, then pgq_rel and pgq_tid) for those
    # stuck now. None: the pass yields no such rows.
    recheck: Statement | None = None


PASS_PART, PASS_COUNTS = "pgq_part", "pgq_counts"  # a Pass's row: which statement, and a count row


# QueueModel.cached: each queue's counts as the framework's own process last wrote them (`queue`,
# `as_of`: when they were true, then count names in our meaning, e.g. pg-boss 12.38's monitor
# writes ready, deferred, blocked and failed on pgboss.queue). A queue never counted has no row.
CACHED_KEYS = ("queue", "as_of")


@dataclass(frozen=True)
class CachedCounts:
    """Counts the framework keeps itself, read at each poll (a row per queue, no job read). They stand
    for a figure the poll cannot take exactly (above the cap, or a scan left to the background) while
    no background count newer than their `as_of` has landed: stale, with that `as_of`, never fresher.
    """

    statement: Statement  # CACHED_KEYS, then the count names it keeps
    kept_by: str  # who writes them and how often, in words (the queue detail says it)


@dataclass(frozen=True)
class QueueModel:
    """Everything the engine needs to monitor and act on one detected queue."""

    match: Match
    title: str  # e.g. "Graphile Worker"
    stuck_rule: str  # the framework's rule in words, shown in the help and the job detail
    states: tuple[StateWord, ...]
    counts: tuple[Statement, ...]
    leases: Statement | None = None
    dead: Statement | None = None
    job: Statement | None = None
    attempts: Statement | None = None  # ATTEMPT_COLUMNS for one job (the detail's history), newest first
    # wait/run percentiles per queue over LATENCY_SPANS (LATENCY_COLUMNS), read in the background
    latency: Statement | None = None
    # why a queue may have no finished job to read although jobs finished (its finished rows are
    # deleted, e.g. pgq-top's workers without --keep), said with a span's "no job finished"
    latency_gap: str = ""
    throughput: Statement | None = None  # rows: queue, bucket, enqueued, completed, failed, dead
    # New jobs per queue since the previous poll (ACTIVITY_COLUMNS), for per-queue rates whoever
    # writes: a key-range scan of the primary key above the previous poll's max id. Only for ids that
    # are increasing integers (None for uuids: the rates are then table-wide, from pg_stat).
    activity: Statement | None = None
    # Jobs created / finished / failed per queue between two polls, from the framework's timestamps
    # (FINISHED_COLUMNS; params since, until): done/s and failed/s for kinds that keep finished rows,
    # enqueued/s where ids are not increasing integers. `finished_scans` names the relations it reads
    # without an index serving the time range: the engine runs it only while they are small (their
    # pages, partitions included), and says why the rates are unknown otherwise; () = index-served.
    finished: Statement | None = None
    finished_scans: tuple[tuple[str, str], ...] = ()
    # The claim-cost probe (monitor/probe.py): the SELECT inside the framework's claim, same WHERE and
    # ORDER BY, `LIMIT 1`, no locking clause; param `queue`. None: the table-health panel says so.
    claim_probe: Statement | None = None
    actions: tuple[ActionSpec, ...] = ()
    # actions the framework has but only its application can do (good_job's retry goes through
    # ActiveJob): kind -> why, said instead of a plan; nothing is written
    needs_app: tuple[tuple[ActionKind, str], ...] = ()
    extra_states: tuple[str, ...] = ()  # labelled extras counted beside the canonical six
    # states whose count statement caps over all queues together (cap1 rows in total, e.g. a done
    # index without a queue column): exact only while their sum is below cap1
    capped_overall: tuple[str, ...] = ()
    # the count cap this dialect's poll defaults to (None: the monitor's own), for a framework whose
    # counts walk more index entries per queue and state; `--count-cap` still overrides it
    count_cap: int | None = None
    liveness_known: bool = False  # LeaseRow.liveness can be alive/gone (else always unknown)
    advice: tuple[IndexAdvice, ...] = ()
    unsupported: tuple[tuple[Capability, str], ...] = ()  # capability -> why, beyond missing indexes
    relations: tuple[tuple[str, str], ...] = ()  # (schema, table) whose health is shown; main first
    # The monitor's check of the main relation at each poll: the columns its statements read (a table
    # without them gets one clear error, not failing panels) and what to tell a user whose table is
    # missing or lacks them (e.g. "create it with: pgq-top init --dsn DSN").
    required_columns: tuple[str, ...] = ()
    setup_hint: str | None = None
    # The stuck rule in a few words for one-line verdicts ("lease expired"); "" -> "stuck by the
    # queue's rule", with the full rule in stuck_rule.
    stuck_label: str = ""
    # A queue kept in several alike tables, one per queue (pgmq): their scans read them all, so the
    # tier is picked from their total size, and table health shows the worst of them (most dead tuples,
    # then the biggest), not the first by name. Empty: the main relation alone.
    sized_together: tuple[tuple[str, str], ...] = ()
    # the search language's columns (pgq_tui/search); None: this kind cannot be searched yet
    search: SearchColumns | None = None
    # periodic schedules kept in the database (None: the kind keeps none, `unsupported` says why)
    schedules: ScheduleSource | None = None
    # pausing a queue the framework's own way; None: the framework has no queue pause (said in
    # `unsupported` under Capability.PAUSE, or "<title> has no queue pause")
    pause: PauseSpec | None = None
    # scans the background counter runs as one (Pass): a count and a list of the same rows
    passes: tuple[Pass, ...] = ()
    # the framework's own per-queue counts (CachedCounts); None: it keeps none we can read
    cached: CachedCounts | None = None

    @property
    def kind(self) -> str:
        return self.match.kind

    @property
    def main_relation(self) -> tuple[str, str]:
        """(schema, table) the table-health panel and the relation check watch."""
        return self.relations[0] if self.relations else (self.match.schema, self.match.table)

    def count_columns(self) -> frozenset[str]:
        return frozenset(c for s in self.counts for c in s.columns)

    @property
    def scans(self) -> tuple[Statement, ...]:
        """The count and list statements no index serves (their cost grows with the relation)."""
        return tuple(s for s in (*self.counts, self.leases, self.dead) if s is not None and not s.indexed)

    def support(self, cap: Capability) -> Support:
        """Whether the dialect serves a capability at all. A missing index never turns one off (it is
        advice: `advice`); only what the framework does not record, or a statement not supplied."""
        for c, why in self.unsupported:
            if c == cap:
                return Support(False, why)
        cols = self.count_columns()
        ok = {
            Capability.COUNTS: bool(self.counts),
            Capability.OLDEST_READY: OLDEST_READY in cols,
            Capability.DONE: State.DONE.value in cols,
            Capability.LEASES: self.leases is not None,
            Capability.LIVENESS: self.leases is not None and self.liveness_known,
            Capability.DEAD: self.dead is not None,
            Capability.DETAIL: self.job is not None,
            Capability.ATTEMPTS: self.attempts is not None,
            Capability.LATENCY: self.latency is not None,
            Capability.THROUGHPUT: self.throughput is not None,
            Capability.RATES: self.activity is not None or self.finished is not None,
            Capability.SCHEDULES: self.schedules is not None,
            Capability.PAUSE: self.pause is not None,
        }[cap]
        if cap == Capability.SCHEDULES and not ok:
            return Support(False, f"{self.title} keeps no periodic schedules in the database")
        if cap == Capability.RATES and not ok:
            return Support(False, "job ids are not increasing integers: table-wide rates only (pg_stat)")
        if cap == Capability.PAUSE and not ok:
            return Support(False, f"{self.title} has no queue pause")
        return Support(True) if ok else Support(False, f"{self.title} does not record this")

    def action(self, kind: ActionKind) -> ActionSpec | None:
        return next((a for a in self.actions if a.kind == kind), None)


@runtime_checkable
class Dialect(Protocol):
    """A queue framework: detection from the catalog, and the model of a detected queue. Pure."""

    kind: str  # stable name for --kind and JSON, e.g. "pgq", "graphile-worker"
    title: str  # human name
    versions: str  # versions covered, in words (README table)
    version_markers: tuple[VersionMarker, ...]  # version rows the one catalog read should fetch

    def detect(self, catalog: Catalog) -> list[Match]:
        """Every queue of this kind in the catalog (any schema), with version and evidence."""
        ...

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        """The statements, states, rule and actions for one match."""
        ...
