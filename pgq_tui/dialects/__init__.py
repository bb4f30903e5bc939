"""Dialects: one description per job-queue framework, so one dashboard serves them all.

The contract for implementers
=============================

A dialect is an object satisfying `contract.Dialect` (a Protocol), shipped in a subpackage
`pgq_tui/dialects/<name>/` whose `__init__.py` exports `DIALECTS: tuple[Dialect, ...]`; `registry.builtin()`
finds it there, no other file to edit. A dialect *answers questions*; it never opens a connection, never
imports `pgq_tui.monitor`, `pgq_tui.actions`, `pgq_tui.tui` or another dialect. The engine runs its SQL.

1. Detection (pure). pgq-top reads the catalog once (`catalog.CATALOG_SQL`: relations with columns,
   indexes and comments, enum types with labels, functions), then `max()` of each version table the
   dialects ask for through `version_markers` (e.g. `VersionMarker("migrations", "id")`: graphile's
   migration id; `Catalog.marker(schema, table, column)` has it). `Dialect.detect(catalog) ->
   list[Match]` finds its framework *by shape* in any schema (names and prefixes are configurable in
   most frameworks) and fills `Match(kind, schema, table, version, evidence, score, tables)`. When two
   dialects match one relation the higher `score` wins unless `--kind` forces one (use the number of
   columns/objects your probe checked). Build test catalogs by hand with `catalog.table()`.

2. The model (pure). `Dialect.model(match, catalog) -> QueueModel` gives:
   - `stuck_rule`: the framework's own rule in words ("locked_at older than 4 hours"), shown in the
     help and the job detail; `states`: native word -> canonical word (`StateWord`), for the help;
   - statements (`Statement.of(name, sql_text, columns, **idents)`: identifiers as `{placeholders}`
     bound with psycopg.sql.Identifier, values as `%(param)s`; see `Statement` for the standard
     parameters `cap1 rows id ids queue batch`):
       counts   -> rows `queue` + any of ready/scheduled/running/stuck/dead/done, `extra_states`
                   labels and `oldest_ready_age_s`; NULL = not counted here; several statements are
                   summed per queue; each count stops at `cap1` rows per queue (or over all queues:
                   list the state in `capped_overall`); the background exact count runs the same
                   statements with cap1 NULL;
       leases   -> contract.LEASE_COLUMNS: running and stuck jobs with holder, liveness
                   ('alive'|'gone'|'unknown': never 'gone' when you cannot know), expiry, `stuck`;
       dead     -> contract.DEAD_COLUMNS, with the error text;
       job      -> contract.JOB_COLUMNS for `%(id)s` (state canonical, native_state, details jsonb);
       throughput (optional) -> queue, bucket, enqueued, completed, failed, dead per second.
       claim_probe (optional) -> the SELECT inside the framework's claim (same WHERE and ORDER BY),
                   LIMIT 1, no locking clause, `%(queue)s`: the claim-cost probe EXPLAINs it.
       activity (optional) -> contract.ACTIVITY_COLUMNS: new jobs per queue since the previous poll
                   (per-queue rates for any writer). Only for increasing integer ids: build it with
                   `dialects.activity.activity_statement(name, jobs=, id=, queue_of_j=)` (one template
                   reading the primary key above the previous poll's max id). Leave it out for uuids.
   - `required_columns`, `setup_hint`, `stuck_label` (optional): the main table's columns the monitor
     checks at each poll (one clear error instead of failing panels), what to tell a user whose table
     is missing or lacks them, and the stuck rule in a few words for one-line verdicts.
     Cost must stay flat: a statement an index serves walks it and stops at a LIMIT. Where the table
     lacks that index, still supply the statement, as a scan (`Statement.scan()`: a count reads every
     row of its states, exact; a list stops at its LIMIT), and add `IndexAdvice(capability, "CREATE
     INDEX CONCURRENTLY ...", why, states)`: the engine runs the scan in the poll while the relation
     is small, else in its background counter (monitor/tiers.py), and shows the advice beside the
     figure. An index is an optimization, never the price of a figure.
   - `actions`: `ActionSpec(kind, label, applies_to, effect, guard, preview, statement)` for each
     `ActionKind` the framework has an equivalent for, in its own terms (its functions where it has
     them; else the same transition its own code makes), taking the jobs of `applies_to` (and of
     `also_applies_to`, e.g. a cancel of ready and scheduled jobs). The statement's WHERE states the guard and
     is re-checked on the locked row; it returns one `id` row per job changed, and may bound itself
     with `%(before)s` (the server's now() when the plan's preview ran). The preview returns
     `eligible, alive`, optionally `holders` and `exhausted` (PREVIEW_OPTIONAL) for a richer plan.
     Framework-specific values (a NOTIFY channel) are bound as literals (`Statement.of(...,
     literals=...)`). An action the framework lacks is absent, never faked.
   - `pause` (optional): `PauseSpec`, the framework's own queue pause, read from its source and done
     as its tools do it: `pause_preview.sql` (known, paused for `%(queue)s`), `pause.sql` and
     `resume.sql` (guarded: one `queue` row when it changed), `pause_state.sql` (the paused queues,
     PAUSED_COLUMNS) unless the database does not record it (`unknown_why`; `durable=False` and a
     `caveat` for a pause that is only a notification, as Oban OSS's): `kit.pause_spec` builds it.
     Absent: "<title> has no queue pause", never a fake one.
   - capabilities follow from what is present (`QueueModel.support(Capability.X)`); add
     `unsupported=((Capability.X, "why"),)` for what the framework cannot tell.
   - `kit.py` builds the usual parts: `Sql(__package__, prefix, idents, literals)` is the statement
     factory (`s("leases", LEASE_COLUMNS)`, `s.count(...)`, `s.served(name, indexed, columns)`,
     `**s.reads()` for the leases, dead, job and claim-probe statements),
     `refused(match, title, why)` the model of a queue the dialect will not read, and `requeue`,
     `retry`, `discard`, `cancel` the usual actions over `preview_*.sql` and `<action>.sql`.
   - settings: a value the database does not record (a worker-side timeout, a rule of pgq-top's own)
     is declared, never read from the environment: a dataclass field plus `settings: ClassVar[tuple[
     kit.Setting, ...]]` naming its targets-file key, field, default and environment override. The
     engine (`detection.dialects`) sets the field before `model()`: a target's key, else the
     environment variable, else the default (docs/dialects.md lists them).

3. Conformance. `tests/test_dialect_conformance.py` runs over every `DialectCase` found in
   `tests/dialect_cases/*.py` (each module exports `CASES`): install the framework's schema with its
   own tool, put jobs in every state, then check detection, declared columns against the server,
   counts against ground-truth SQL, the stuck rule, and that actions refuse rows outside their guard.
   Add a module there for a new dialect.

Modules: `contract` (the types), `catalog` (the one catalog read), `detect` (matching and choosing),
`registry` (the built-in dialects), `pgq/` (pgq-top's own table), `mapping/` (home-grown tables
described by a TOML mapping, with the two seed shapes shipped), `river/` (tested with River's own Go
migrator and worker), `oban/`, `solid_queue/` (frameworks whose workers do not install here: their SQL
transitions, tested on their own migrations' schemas), `dbos/` (DBOS Transact's workflow_status, tested
with its own PyPI client and executors).
"""

from pgq_tui.dialects.catalog import Catalog, VersionMarker
from pgq_tui.dialects.contract import (
    ActionKind,
    ActionSpec,
    Capability,
    Dialect,
    IndexAdvice,
    Liveness,
    Match,
    QueueModel,
    State,
    Statement,
    StateWord,
    Support,
)

__all__ = [
    "ActionKind",
    "ActionSpec",
    "Capability",
    "Catalog",
    "Dialect",
    "IndexAdvice",
    "Liveness",
    "Match",
    "QueueModel",
    "State",
    "StateWord",
    "Statement",
    "Support",
    "VersionMarker",
]
