"""A mapping (spec.py) + the table's catalog entry -> the QueueModel's statements. Pure.

The SQL is built from fixed templates: column and table names are `{placeholders}` bound as
identifiers, status values and the lock interval as literals (so the planner can match partial
indexes on them), request values as parameters. Every count reads at most cap1 rows of one state,
over all queues together (a home-grown table's queue column may be NULL or missing, so there is no
per-queue skip-scan to rely on): a state's counts are exact while their sum stays below cap1.

A state is read through an index where one serves it: one whose predicate names its status values,
or that leads with the status column. Without one, the group's statement is a scan (`count_scan`,
`Statement.indexed` False: exact, one GROUP BY over the group's rows), which the engine runs in the
poll while the table is small and in the background above that; the model carries the index that
would make it live as advice (`IndexAdvice`), never as a requirement.
"""

from __future__ import annotations

from pgq_tui.dialects.activity import INTEGER_IDS, activity_statement
from pgq_tui.dialects.catalog import Relation
from pgq_tui.dialects.contract import (
    DEAD_COLUMNS,
    JOB_COLUMNS,
    LEASE_COLUMNS,
    OLDEST_READY,
    PASS_COUNTS,
    PASS_PART,
    PREVIEW_COLUMNS,
    ActionKind,
    ActionSpec,
    Capability,
    IndexAdvice,
    Pass,
    SearchColumns,
    State,
    Statement,
)
from pgq_tui.dialects.kit import partitioned_index
from pgq_tui.dialects.mapping.spec import Handback, MappingSpec
from pgq_tui.dialects.predicate import implied_by

# Id types the action statements may cast a parameter array to; anything else compares as text.
_ID_TYPES = {"bigint": "bigint", "integer": "integer", "smallint": "smallint", "uuid": "uuid", "text": "text"}


class Builder:
    def __init__(self, spec: MappingSpec, rel: Relation) -> None:
        self.spec = spec
        self.rel = rel
        self.idents: dict[str, tuple[str, ...]] = {"jobs": (rel.schema, rel.name)}
        for role, column in spec.columns.items():
            self.idents[f"c_{role}"] = (column,)
        self.literals: dict[str, tuple[object, ...]] = {"queue_name": (spec.queue_name,)}
        for key, values in spec.states.items():
            self.literals[f"v_{key}"] = values
        for i, values in enumerate(spec.extra.values()):
            self.literals[f"v_x{i}"] = values
        for i, label in enumerate(spec.extra):
            self.literals[f"x{i}"] = (label,)
        if spec.interval:
            self.literals["interval"] = (spec.interval,)
        # the job detail's `details`: the row's other columns (the mapped ones are shown by role)
        self.literals["mapped"] = tuple(dict.fromkeys(spec.columns.values()))

    # -- expressions --------------------------------------------------------------------------
    def has(self, role: str) -> bool:
        return role in self.spec.columns

    def col(self, role: str, cast: str) -> str:
        """The mapped column (cast) or a typed NULL."""
        return f"{{c_{role}}}::{cast}" if self.has(role) else f"NULL::{cast}"

    @property
    def queue(self) -> str:
        return "coalesce({c_queue}::text, '(null)')" if self.has("queue") else "{queue_name}::text"

    def in_state(self, *keys: str) -> str:
        """The status is one of these groups' words (one IN list). No cast on the column: a partial
        index on `status = 'running'` must still match."""
        return f"{{c_status}} IN ({', '.join(f'{{v_{k}}}' for k in keys)})"

    @property
    def rule(self) -> tuple[str, str] | None:
        """The stuck rule as (its column, the offset from now() past which a job is stuck): a lease
        column is stuck once past, a lock time once older than the interval; None: no rule."""
        if self.spec.rule == "lease":
            return "{c_lease}", ""
        if self.spec.rule == "lock_age":
            return "{c_locked_at}", " - {interval}::interval"
        return None

    @property
    def stuck_before(self) -> str:
        """The stuck rule as of the plan (the contract's `before`): a job that became stuck while the
        operator's confirmation was open waits for the next pass."""
        if self.rule is None:
            return "true"
        column, offset = self.rule
        return f"{column} < coalesce(%(before)s::timestamptz, 'infinity'){offset}"

    @property
    def expiry_order(self) -> str:
        """The stuck rule's column as it is, so an index on it gives the order."""
        return "{c_id}" if self.rule is None else self.rule[0]

    @property
    def expires(self) -> str:
        if self.rule is None:
            return "NULL::timestamptz"
        column, offset = self.rule
        return f"({column} + {{interval}}::interval)::timestamptz" if offset else f"{column}::timestamptz"

    def parts(self, state: str) -> list[str]:
        """The state as disjoint conditions within its status group, each one an index range (an OR
        or a NOT would make the planner scan: NULL run_at / lease times get a part of their own)."""
        if state in (State.READY.value, State.SCHEDULED.value):
            if not self.has("run_at"):
                return ["true"] if state == State.READY.value else []
            if state == State.READY.value:
                return ["{c_run_at} <= now()", "{c_run_at} IS NULL"]
            return ["{c_run_at} > now()"]
        if state in (State.RUNNING.value, State.STUCK.value):
            if self.rule is None:
                return ["true"] if state == State.RUNNING.value else []
            column, offset = self.rule
            if state == State.STUCK.value:
                return [f"{column} < now(){offset}"]
            return [f"{column} >= now(){offset}", f"{column} IS NULL"]
        return ["true"]

    def group(self, state: str) -> str:
        return {"scheduled": "ready", "stuck": "running"}.get(state, state)

    def condition(self, state: str) -> str:
        """The state as one boolean (for CASE and the action guards)."""
        parts = self.parts(state) or ["false"]
        either = parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"
        return f"{self.in_state(self.group(state))} AND {either}"

    def search(self) -> SearchColumns:
        """The search language on the mapped table, by its roles (docs/search.md): a jsonb payload
        serves args., the error and finished_at roles error: and since:/before:."""
        states = [(s, self.condition(s)) for s in ("ready", "scheduled", "running", "stuck") if self.parts(s)]
        states += [(k, self.in_state(k)) for k in ("dead", "done") if k in self.spec.states]
        states += [(label, f"{{c_status}} IN ({{v_x{i}}})") for i, label in enumerate(self.spec.extra)]
        id_column = self.rel.column(self.spec.columns["id"])
        payload = self.rel.column(self.spec.columns["payload"]) if self.has("payload") else None
        return SearchColumns(
            jobs=(self.rel.schema, self.rel.name),
            states=tuple(states),
            id=self.spec.columns["id"],
            integer_ids=id_column is not None and id_column.type in ("bigint", "integer", "smallint"),
            order=self.spec.columns["id"],
            queue=self.spec.columns.get("queue"),
            queue_expr=None if self.has("queue") else "{queue_name}",
            error="{c_error}::text" if self.has("error") else None,
            time="{c_finished_at}::timestamptz" if self.has("finished_at") else None,
            time_words="the finished_at column" if self.has("finished_at") else "",
            documents=(("args", self.spec.columns["payload"]),)
            if payload and payload.type == "jsonb"
            else (),
            payload="{c_payload}::text" if self.has("payload") else None,
            literals=tuple(self.literals.items()),
            idents=tuple(self.idents.items()),
        )

    @property
    def preview_text(self) -> str:
        if not self.has("payload"):
            return "NULL::text"
        return "CASE WHEN pg_column_size({c_payload}) <= 65536 THEN left({c_payload}::text, 200) END"

    @property
    def chosen(self) -> str:
        """The contract's `ids` and `queue` parameters as a filter."""
        column = self.rel.column(self.spec.columns["id"])
        idtype = _ID_TYPES.get(column.type if column else "", "text")
        cast = "" if idtype != "text" else "::text"
        queue = "{c_queue}::text" if self.has("queue") else "{queue_name}::text"
        return (
            f"(%(ids)s::{idtype}[] IS NULL OR {{c_id}}{cast} = ANY(%(ids)s::{idtype}[]))"
            f" AND (%(queue)s::text IS NULL OR {queue} = %(queue)s::text)"
        )

    def activity(self) -> Statement | None:
        """New jobs per queue since the last poll (the per-queue rates), when the id column is an
        integer with a plain index led by it (its primary key): a key-range scan of the new ids.
        None for other ids (uuid, text): the rates are then table-wide."""
        id_column = self.spec.columns["id"]
        column = self.rel.column(id_column)
        if column is None or column.type not in INTEGER_IDS:
            return None
        if not any(
            ix.valid and ix.columns[:1] == (id_column,) and not ix.predicate for ix in self.rel.indexes
        ):
            return None
        idents = {"c_queue": self.idents["c_queue"]} if self.has("queue") else {}
        return activity_statement(
            f"{self.spec.kind}.activity",
            jobs=self.idents["jobs"],
            id=id_column,
            queue_of_j=self.queue.replace("{c_queue}", "j.{c_queue}"),
            literals=self.literals,
            **idents,
        )

    def statement(self, name: str, text: str, columns: tuple[str, ...], **more: tuple[str, ...]) -> Statement:
        return Statement.of(
            f"{self.spec.kind}.{name}", text, columns, literals=self.literals, **self.idents, **more
        )

    # -- indexes ------------------------------------------------------------------------------
    def indexed(self, key: str) -> bool:
        """Some valid index serves rows of these status values (partial on them, or led by status)."""
        status = self.spec.columns["status"]
        values = self.spec.states[key] if key in self.spec.states else self.spec.extra[key]
        for ix in self.rel.indexes:
            if not ix.valid:
                continue
            if ix.columns[:1] == (status,):
                return True
            if implied_by(ix.predicate, {status: values}):
                return True
        return False

    def queue_indexed(self, key: str) -> bool:
        """Some valid index reads rows of these status values queue by queue (led by the queue column
        and partial on the values, or led by (status, queue)): counts can skip-scan per queue."""
        if not self.has("queue"):
            return False
        status, queue = self.spec.columns["status"], self.spec.columns["queue"]
        values = self.spec.states[key] if key in self.spec.states else self.spec.extra[key]
        for ix in self.rel.indexes:
            if not ix.valid:
                continue
            if ix.columns[:2] == (status, queue):
                return True
            if ix.columns[:1] == (queue,) and implied_by(ix.predicate, {status: values}):
                return True
        return False

    def advice(self, key: str, capability: Capability, states: tuple[str, ...]) -> IndexAdvice:
        status = self.spec.columns["status"]
        values = self.spec.states[key]
        lead = {"ready": "run_at", "running": "lease" if self.spec.rule == "lease" else "locked_at"}.get(key)
        first = [self.spec.columns["queue"]] if self.has("queue") else []
        if lead and self.has(lead):
            first.append(self.spec.columns[lead])
        keys = ", ".join(_quote(c) for c in (first or [self.spec.columns["id"]]))
        where = (
            f"{_quote(status)} = {_literal(values[0])}"
            if len(values) == 1
            else f"{_quote(status)} IN ({', '.join(_literal(v) for v in values)})"
        )
        name = _quote(f"{self.rel.name}_{key}_idx")
        table = f"{_quote(self.rel.schema)}.{_quote(self.rel.name)}"
        why = f"reading {key} jobs without it would scan the whole table"
        if self.rel.kind == "p":  # CONCURRENTLY is refused on a partitioned table: partition by partition
            on = (self.rel.schema, self.rel.name)
            steps = partitioned_index(
                f"{self.rel.name}_{key}_idx", on, self.rel.partitions, f"({keys}) WHERE {where}"
            )
            why += " (partitioned: ON ONLY, then each partition CONCURRENTLY and attached, one at a time)"
            return IndexAdvice(capability, "; ".join(steps) + ";", why, states, steps)
        return IndexAdvice(
            capability, f"CREATE INDEX CONCURRENTLY {name} ON {table} ({keys}) WHERE {where}", why, states
        )

    # -- statements ---------------------------------------------------------------------------
    def _capped(self, state: str, where: str, select: str, parts: list[str] | None = None) -> str:
        """At most cap1 rows of `state` (each part capped, then all together) matching `where`
        (`parts`: these of the state's parts only)."""
        group = self.in_state(self.group(state))
        legs = [
            f"(SELECT {select} FROM {{jobs}} WHERE {group} AND {p} AND {where} LIMIT %(cap1)s)"
            for p in (self.parts(state) if parts is None else parts)
        ]
        if len(legs) == 1:
            return legs[0]
        return "(SELECT * FROM (" + " UNION ALL ".join(legs) + ") u LIMIT %(cap1)s)"

    def _queues(self, where: str) -> str:
        """The CTE `qs`: the distinct non-null queues of the rows matching `where`, by a recursive
        skip-scan of an index led by the queue column (one index probe per queue)."""
        return f"""WITH RECURSIVE qs AS (
    (SELECT {{c_queue}} AS q FROM {{jobs}} WHERE {where} AND {{c_queue}} IS NOT NULL
     ORDER BY {{c_queue}} LIMIT 1)
    UNION ALL
    SELECT (SELECT {{c_queue}} FROM {{jobs}} WHERE {where} AND {{c_queue}} > qs.q
            ORDER BY {{c_queue}} LIMIT 1)
    FROM qs WHERE qs.q IS NOT NULL
)"""

    def count_per_queue(self, group: str, states: tuple[str, ...], oldest: bool = False) -> Statement:
        """The group's `states` per queue: distinct queues by ONE recursive skip-scan, then each
        queue's count of each state stops at cap1 rows. One statement, not one per state: the
        skip-scan is a probe per queue, paid once.

        `oldest` (an index led by (queue, run_at) serves the ready rows: oldest_ready_indexed()): each
        queue's oldest due run_at too, and the ready count's due part by the same walk (`o`: the first
        cap1 due rows in run_at order, counted, the first of them the oldest). The front of a queue's
        due range is where each claim left a dead index entry until autovacuum comes, a heap visit
        each: walked once, not once for the age and again for the count (#35)."""
        waiting = self.in_state(group)
        rest = self.parts(State.READY.value)[1:]  # the ready parts besides the due one (NULL run_at)

        def count(st: str, where: str) -> str:
            if oldest and st == State.READY.value:
                more = f"(SELECT count(*) FROM {self._capped(st, where, '1', rest)} x)" if rest else "0"
                return f"least(o.n + {more}, %(cap1)s::bigint) AS {st}"
            return f"(SELECT count(*) FROM {self._capped(st, where, '1')} x) AS {st}"

        def per(where: str) -> str:
            cols = [count(st, where) for st in states]
            if oldest:
                cols.append(f"extract(epoch FROM now() - o.r)::float8 AS {OLDEST_READY}")
            return ", ".join(cols)

        def walk(where: str) -> str:
            if not oldest:
                return ""
            due = self._due(where, "%(cap1)s")
            return f" CROSS JOIN LATERAL (SELECT count(*) AS n, min(d.r) AS r FROM ({due}) d) o"

        text = f"""
{self._queues(waiting)}
SELECT qs.q::text AS queue, {per("{c_queue} = qs.q")}
FROM qs{walk("{c_queue} = qs.q")} WHERE qs.q IS NOT NULL
UNION ALL
SELECT '(null)', {per("{c_queue} IS NULL")}
FROM (SELECT 1) one{walk("{c_queue} IS NULL")}
WHERE EXISTS (SELECT 1 FROM {{jobs}} WHERE {waiting} AND {{c_queue}} IS NULL)"""
        columns = ("queue", *states, *((OLDEST_READY,) if oldest else ()))
        name = "_".join((*states, *(("oldest",) if oldest else ())))
        return self.statement(f"count_{name}", text, columns)

    def count(self, state: str) -> Statement:
        text = f"""
SELECT x.queue, count(*) AS {state}
FROM {self._capped(state, "true", self.queue + " AS queue")} x
GROUP BY x.queue"""
        return self.statement(f"count_{state}", text, ("queue", state))

    def count_scan(self, groups: tuple[tuple[str, tuple[str, ...]], ...], oldest: bool) -> Statement:
        """Every state of the status groups no index serves, per queue, by ONE scan of their rows
        (one pass over the table for all of them, not one per group): exact, cap1 unused. `groups`:
        (group, its states counted) in order. `oldest`: the ready group's oldest due run_at too."""
        states = tuple(st for _, counted in groups for st in counted)
        cols = [f"count(*) FILTER (WHERE {self.condition(st)}) AS {st}" for st in states]
        columns = ["queue", *states]
        if oldest:
            cols.append(
                f"extract(epoch FROM now() - min({{c_run_at}}) FILTER (WHERE {self.condition('ready')}))"
                f"::float8 AS {OLDEST_READY}"
            )
            columns.append(OLDEST_READY)
        names = [g for g, _ in groups]
        text = f"""
SELECT {self.queue} AS queue, {", ".join(cols)}
FROM {{jobs}} WHERE {self.in_state(*names)}
GROUP BY 1"""
        return self.statement(f"count_{'_'.join(names)}_scan", text, tuple(columns)).scan()

    def oldest_scan(self) -> Statement:
        """Per queue, the oldest due run_at, by a scan of the ready rows (no index in run_at order)."""
        text = f"""
SELECT {self.queue} AS queue,
       extract(epoch FROM now() - min({{c_run_at}}) FILTER (WHERE {self.condition("ready")}))::float8
           AS {OLDEST_READY}
FROM {{jobs}} WHERE {self.in_state("ready")}
GROUP BY 1"""
        return self.statement("oldest_ready_scan", text, ("queue", OLDEST_READY)).scan()

    def count_extra(self, i: int, label: str) -> Statement:
        text = f"""
SELECT x.queue, count(*) AS {{label}}
FROM (SELECT {self.queue} AS queue FROM {{jobs}}
      WHERE {{c_status}} IN ({{v_x{i}}})
      LIMIT %(cap1)s) x
GROUP BY x.queue"""
        return self.statement(f"count_{label}", text, ("queue", label), label=(label,))

    def oldest_ready_indexed(self) -> bool:
        """An index led by (queue, run_at), or (run_at) without a queue column, among the ready rows
        serves each queue's oldest due run_at."""
        if not self.has("run_at"):
            return False
        run_at = self.spec.columns["run_at"]
        lead = (self.spec.columns["queue"], run_at) if self.has("queue") else (run_at,)
        return any(
            ix.valid
            and ix.columns[: len(lead)] == lead
            and implied_by(ix.predicate, {self.spec.columns["status"]: self.spec.states["ready"]})
            for ix in self.rel.indexes
        )

    def _due(self, where: str, limit: str = "1") -> str:
        """The due run_at (`r`) of the ready rows matching `where`, oldest first, at most `limit`
        (one: the oldest, one probe in run_at order)."""
        return (
            f"SELECT {{c_run_at}} AS r FROM {{jobs}} WHERE {self.in_state('ready')} AND {{c_run_at}} <= now()"
            f" AND {where} ORDER BY {{c_run_at}} LIMIT {limit}"
        )

    def _oldest(self, where: str) -> str:
        """The age of the oldest due ready row matching `where`."""
        return f"(SELECT extract(epoch FROM now() - o.r)::float8 FROM ({self._due(where)}) o)"

    def oldest_ready(self) -> Statement | None:
        """Per queue, the oldest due run_at, read from an index led by (queue, run_at) or (run_at)
        among waiting rows; None when there is no such index."""
        if not self.oldest_ready_indexed():
            return None
        if not self.has("queue"):
            text = f"SELECT {{queue_name}}::text AS queue, {self._oldest('true')} AS {OLDEST_READY}"
            return self.statement("oldest_ready", text, ("queue", OLDEST_READY))
        waiting = self.in_state("ready")
        text = f"""
{self._queues(waiting)}
SELECT qs.q::text AS queue, {self._oldest("{c_queue} = qs.q")} AS {OLDEST_READY}
FROM qs WHERE qs.q IS NOT NULL
UNION ALL
SELECT '(null)', {self._oldest("{c_queue} IS NULL")}
WHERE EXISTS (SELECT 1 FROM {{jobs}} WHERE {waiting} AND {{c_queue}} IS NULL)"""
        return self.statement("oldest_ready", text, ("queue", OLDEST_READY))

    def claim_probe(self) -> Statement | None:
        """The claim's candidate scan for the claim-cost probe (monitor/probe.py): the mapped ready
        status values, due, of one queue, in the mapping's [claim] order, LIMIT 1, no locking clause.
        None without a [claim] order, or without an index on the ready rows (it would scan)."""
        order = self.spec.claim_order
        if not order or not self.indexed("ready"):
            return None
        where = [self.in_state("ready")]
        if self.has("run_at"):
            where.append("{c_run_at} <= now()")
        # no queue column: the table is one queue, and only its name finds anything
        where.append("{c_queue} = %(queue)s" if self.has("queue") else "{queue_name}::text = %(queue)s::text")
        keys = ", ".join(
            f"{{o{i}}}" + (" DESC" if t.descending else "") + (f" NULLS {t.nulls}" if t.nulls else "")
            for i, t in enumerate(order)
        )
        text = f"""
SELECT {{c_id}} AS id FROM {{jobs}}
WHERE {" AND ".join(where)}
ORDER BY {keys}
LIMIT 1"""
        keyed = {f"o{i}": (t.column,) for i, t in enumerate(order)}
        return self.statement("claim_probe", text, ("id",), **keyed)

    def _lease_parts(self) -> tuple[str, str, str]:
        """A lease row's columns, the running rows' condition, and their order (most urgent first)."""
        started = "{c_locked_at}::timestamptz" if self.has("locked_at") else "NULL::timestamptz"
        cols = (
            f"{{c_id}} AS id, {self.queue} AS queue, {self.col('worker', 'text')} AS holder, "
            f"{self.col('attempts', 'int')} AS attempts, {self.col('max_attempts', 'int')} AS max_attempts, "
            f"{started} AS started_at, {self.expires} AS expires_at, {self.preview_text} AS payload_preview"
        )
        return cols, self.in_state("running"), self.expiry_order

    @staticmethod
    def _lease_select(union: str, more: str = "") -> str:
        """The lease list's rows from `union` (rows of `cols` and `stuck`), with the holder's session;
        `more`: columns of `union` after them."""
        return f"""SELECT x.id, x.queue, x.holder,
       CASE WHEN h.pid IS NOT NULL THEN 'alive' ELSE 'unknown' END AS liveness, h.pid AS holder_pid,
       x.attempts, x.max_attempts, x.started_at, x.expires_at,
       extract(epoch FROM x.expires_at - now())::float8 AS seconds_left, x.stuck, x.payload_preview{more}
FROM ({union}) x
LEFT JOIN LATERAL (SELECT min(a.pid) AS pid FROM pg_stat_activity a
                   WHERE a.datname = current_database() AND a.application_name = x.holder) h ON true"""

    def leases(self, per_queue: bool, scan: bool = False) -> Statement:
        """The most urgent stuck and running jobs, at most `rows` of each; per queue by a skip-scan
        when an index leads with the queue (each queue's rows in index order), else overall. `scan`:
        no index serves the running rows, so ONE pass reads them (_one_pass()), not one per leg."""
        cols, running, order = self._lease_parts()
        legs = []
        for state, flag in (("stuck", "true"), ("running", "false")):
            for part in self.parts(state):
                pick = f"SELECT {cols}, {flag} AS stuck FROM {{jobs}} WHERE {running} AND {part}"
                if per_queue:
                    legs.append(
                        f"(SELECT l.* FROM qs CROSS JOIN LATERAL ({pick} AND {{c_queue}} = qs.q "
                        f"ORDER BY {order} LIMIT %(rows)s) l WHERE qs.q IS NOT NULL "
                        f"ORDER BY l.expires_at LIMIT %(rows)s)"
                    )
                    legs.append(f"({pick} AND {{c_queue}} IS NULL ORDER BY {order} LIMIT %(rows)s)")
                else:
                    legs.append(f"({pick} ORDER BY {order} LIMIT %(rows)s)")
        skip = ""
        if per_queue:
            skip = self._queues(running)
        union = "\n      UNION ALL\n      ".join(legs)
        if scan and not per_queue:
            skip, union = self._one_pass()
        text = f"""{skip}
{self._lease_select(union)}
ORDER BY x.stuck DESC, x.expires_at NULLS LAST, x.id"""
        return self.statement("leases", text, LEASE_COLUMNS)

    def _one_pass(self, extra: str = "") -> tuple[str, str]:
        """The lease list's rows by ONE scan of the running rows (each leg of leases() would read
        the whole table again): their narrow keys materialized once (`extra`: more columns of them),
        the `rows` most urgent of the stuck and of the others picked from them, and only those rows'
        columns (the payload preview) read back by their tuple id, a TID lookup per row. (tableoid,
        ctid): a partitioned table's tuple ids repeat across partitions. The CTE, and the union."""
        cols, running, order = self._lease_parts()
        more = f",\n           {extra}" if extra else ""
        cte = f"""WITH pgq_running AS MATERIALIZED (
    SELECT tableoid AS pgq_rel, ctid AS pgq_tid, coalesce({self.condition("stuck")}, false) AS pgq_stuck,
           {order} AS pgq_key,
           {{c_id}} AS pgq_id{more}
    FROM {{jobs}} WHERE {running})"""
        picks = [
            f"(SELECT * FROM pgq_running WHERE {flag}pgq_stuck ORDER BY pgq_key, pgq_id LIMIT %(rows)s)"
            for flag in ("", "NOT ")
        ]
        union = f"""SELECT c.*, pick.pgq_stuck AS stuck FROM ({" UNION ALL ".join(picks)}) pick
      CROSS JOIN LATERAL (SELECT {cols} FROM {{jobs}}
                          WHERE tableoid = pick.pgq_rel AND ctid = pick.pgq_tid) c"""
        return cte, union

    def running_pass(self, count: Statement, leases: Statement) -> Pass:
        """The running group's count (`count`: running and stuck per queue) and the lease list by
        ONE scan of the running rows, for the background counter on a table too big to scan in the
        poll, where each would read the whole table (#35: the stuck count at 10M rows within 30 s on
        5% of a core). Rows as Pass says: part 0 a count row (jsonb), part 1 a lease row."""
        states = [c for c in count.columns if c != "queue"]
        flags = ", ".join(f"{self.condition(st)} AS pgq_is_{st}" for st in states)
        expires = f"extract(epoch FROM {self.expires})::float8 AS pgq_expires"
        cte, union = self._one_pass(f"{self.queue} AS pgq_queue, {expires}, {flags}")
        counted = ", ".join(f"count(*) FILTER (WHERE pgq_is_{st}) AS {st}" for st in states)
        nulls = ", ".join(["NULL"] * len(LEASE_COLUMNS))
        watched, recheck = "", None
        if self.rule is not None:  # a lease that runs out: the soonest to, for the poll to recheck
            watched = f"""
UNION ALL
SELECT 2, jsonb_build_object('rel', w.pgq_rel::bigint, 'tid', w.pgq_tid::text, 'expires', w.pgq_expires,
                             'queue', w.pgq_queue), {nulls}
FROM (SELECT * FROM pgq_running WHERE NOT pgq_stuck AND pgq_expires IS NOT NULL
      ORDER BY pgq_key, pgq_id LIMIT %(watch)s) w"""
            recheck = self._recheck()
        text = f"""{cte}
SELECT 1 AS {PASS_PART}, NULL::jsonb AS {PASS_COUNTS}, l.* FROM (
{self._lease_select(union)}
) l
UNION ALL
SELECT 0, to_jsonb(c), {nulls}
FROM (SELECT pgq_queue AS queue, {counted} FROM pgq_running GROUP BY 1) c{watched}
ORDER BY 1 DESC, stuck DESC, expires_at NULLS LAST, id"""
        columns = (PASS_PART, PASS_COUNTS, *LEASE_COLUMNS)
        return Pass(self.statement("running_pass", text, columns).scan(), (count, leases), recheck)

    def _recheck(self) -> Statement:
        """The running_pass's watched rows that are stuck now, by row version (a TID lookup each):
        still running, past their lease, and not written since the pass (a write moves the row to a
        new version, which `%(tids)s` does not name). Their lease rows, then their tableoid and
        ctid: a partitioned table's tuple ids repeat across partitions, so the engine keeps the
        pairs it asked for."""
        cols = self._lease_parts()[0]
        union = f"""SELECT {cols}, true AS stuck, tableoid::bigint AS pgq_rel, ctid::text AS pgq_tid
      FROM {{jobs}} WHERE ctid = ANY (%(tids)s::tid[]) AND {self.condition("stuck")}"""
        text = f"""{self._lease_select(union, ", x.pgq_rel, x.pgq_tid")}
ORDER BY x.expires_at, x.id"""
        return self.statement("recheck_stuck", text, (*LEASE_COLUMNS, "pgq_rel", "pgq_tid"))

    def dead(self) -> Statement:
        order = "{c_finished_at} DESC NULLS LAST, {c_id} DESC" if self.has("finished_at") else "{c_id} DESC"
        text = f"""
SELECT {{c_id}} AS id, {self.queue} AS queue, {self.col("attempts", "int")} AS attempts,
       {self.col("max_attempts", "int")} AS max_attempts,
       {self.col("finished_at", "timestamptz")} AS finished_at,
       left({self.col("error", "text")}, 500) AS error, {self.preview_text} AS payload_preview
FROM {{jobs}} WHERE {self.in_state("dead")}
ORDER BY {order} LIMIT %(rows)s"""
        return self.statement("dead", text, DEAD_COLUMNS)

    def job(self) -> Statement:
        cases = [
            f"WHEN {self.condition(s)} THEN '{s}'"
            for s in ("ready", "scheduled", "stuck", "running")
            if self.parts(s)
        ]
        cases += [f"WHEN {self.in_state(k)} THEN '{k}'" for k in ("dead", "done") if k in self.spec.states]
        cases += [f"WHEN {{c_status}} IN ({{v_x{i}}}) THEN {{x{i}}}" for i, _ in enumerate(self.spec.extra)]
        drop = " - ARRAY[{mapped}]::text[]"
        text = f"""
SELECT {{c_id}} AS id, {self.queue} AS queue,
       CASE {" ".join(cases)} ELSE {{c_status}}::text END AS state,
       {{c_status}}::text AS native_state, {self.col("attempts", "int")} AS attempts,
       {self.col("max_attempts", "int")} AS max_attempts, {self.col("run_at", "timestamptz")} AS run_at,
       NULL::timestamptz AS created_at,
       {"{c_locked_at}::timestamptz" if self.has("locked_at") else "NULL::timestamptz"} AS started_at,
       {self.col("finished_at", "timestamptz")} AS finished_at, {self.col("worker", "text")} AS holder,
       {self.col("error", "text")} AS error, {self.col("payload", "text")} AS payload,
       to_jsonb(j){drop} AS details
FROM {{jobs}} j WHERE {{c_id}} = %(id)s"""
        return self.statement("job", text, JOB_COLUMNS)

    # -- actions ------------------------------------------------------------------------------
    def _alive(self) -> str:
        if not self.has("worker"):
            return "0::bigint"
        return (
            "count(*) FILTER (WHERE EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = "
            "current_database() AND a.application_name = {c_worker}::text))"
        )

    def _handback(self, name: str, hb: Handback, guard: str, order: str) -> Statement:
        clears = {f"k{i}": (c,) for i, c in enumerate(hb.clear)}
        sets = ["{c_status} = {hb_status}"] + [f"{{{k}}} = NULL" for k in clears]
        if hb.reset_attempts:
            sets.append("{c_attempts} = 0")
        text = f"""
WITH chosen AS (
    SELECT {{c_id}} AS chosen_id FROM {{jobs}}
    WHERE {guard} AND {self.chosen}
    ORDER BY {order} LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
)
UPDATE {{jobs}} SET {", ".join(sets)}
FROM chosen
WHERE {{c_id}} = chosen.chosen_id AND {guard}
RETURNING {{c_id}} AS id"""
        st = self.statement(name, text, ("id",), **clears)
        return Statement(st.name, st.text, st.idents, st.columns, (*st.literals, ("hb_status", (hb.status,))))

    def preview(self, name: str, guard: str) -> Statement:
        text = f"""
SELECT count(*) AS eligible, {self._alive()} AS alive
FROM {{jobs}} WHERE {guard} AND {self.chosen}"""
        return self.statement(name, text, PREVIEW_COLUMNS)

    def actions(self, leases_ok: bool, dead_ok: bool) -> tuple[ActionSpec, ...]:
        """The mapping's writes. An operator-initiated, guarded write may scan the table (its preview,
        shown before it runs, says how many rows it takes): offered whatever the indexes."""
        out: list[ActionSpec] = []
        spec = self.spec
        stuck_guard = self.condition("stuck")
        if spec.requeue is not None and leases_ok:
            cleared = ", ".join(spec.requeue.clear) or "nothing"
            out.append(
                ActionSpec(
                    ActionKind.REQUEUE,
                    "requeue (mapping [requeue])",
                    State.STUCK,
                    f"{spec.columns['status']} -> {spec.requeue.status!r}; cleared: {cleared}"
                    + ("; attempts reset to 0" if spec.requeue.reset_attempts else ""),
                    spec.stuck_rule,
                    self.preview("preview_stuck", stuck_guard),
                    self._handback(
                        "requeue", spec.requeue, f"{stuck_guard} AND {self.stuck_before}", self.expiry_order
                    ),
                )
            )
        dead_guard = self.in_state("dead") if "dead" in spec.states else "false"
        if spec.retry is not None and dead_ok:
            out.append(
                ActionSpec(
                    ActionKind.RETRY,
                    "retry (mapping [retry])",
                    State.DEAD,
                    f"{spec.columns['status']} -> {spec.retry.status!r}; cleared: "
                    f"{', '.join(spec.retry.clear) or 'nothing'}"
                    + ("; attempts reset to 0" if spec.retry.reset_attempts else ""),
                    f"{spec.columns['status']} in ({', '.join(map(repr, spec.states['dead']))})",
                    self.preview("preview_dead", dead_guard),
                    self._handback("retry", spec.retry, dead_guard, "{c_id}"),
                )
            )
        if spec.discard and dead_ok:
            text = f"""
WITH chosen AS (
    SELECT {{c_id}} AS chosen_id FROM {{jobs}}
    WHERE {dead_guard} AND {self.chosen}
    ORDER BY {{c_id}} LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM {{jobs}} USING chosen
WHERE {{c_id}} = chosen.chosen_id AND {dead_guard}
RETURNING {{c_id}} AS id"""
            out.append(
                ActionSpec(
                    ActionKind.DISCARD,
                    "discard (mapping [discard])",
                    State.DEAD,
                    "the row is deleted",
                    f"{spec.columns['status']} in ({', '.join(map(repr, spec.states['dead']))})",
                    self.preview("preview_dead", dead_guard),
                    self.statement("discard", text, ("id",)),
                    destructive=True,
                )
            )
        return tuple(out)


def _quote(name: str) -> str:
    """An identifier for the advice text, quoted only when it needs it (as pg would print it)."""
    from psycopg import sql

    plain = name.isidentifier() and name == name.lower()
    return name if plain else sql.Identifier(name).as_string(None)


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
