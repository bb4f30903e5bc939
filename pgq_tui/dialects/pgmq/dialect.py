"""pgmq 1.x (`pgmq.meta`, one `pgmq.q_<name>` table and one `pgmq.a_<name>` archive per queue).

pgmq is a message queue: `read()` takes visible messages (vt <= now()), pushes their visibility
timeout `vt` forward and bumps `read_ct`; nothing ties a message to a consumer, and there is no
heartbeat (liveness is unknown). In pgq-top's words: ready = visible (vt <= now()); scheduled = sent
with a delay (read_ct = 0, vt > now()); running = in flight (read_ct > 0, vt > now()); done =
archived. pgmq has no stuck state (a message in flight past its vt becomes visible again by itself)
and no dead state: pgq-top offers "dead" as its own, labelled rule, read_ct >= N (the declared
setting DEAD_READS: --dead-reads, a target's dead_reads or PGQ_TOP_PGMQ_DEAD_READS, default 5),
counted through an index on read_ct that pgmq does not create (advised per queue table).

One target holds every queue: the statements are composed over the queue tables found at detection
(compose.py), each queue counted up to the cap on its own table, so a poll's cost grows with the
number of queues, never with their sizes. Re-detection picks up queues created since.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from psycopg import sql

from pgq_tui.dialects.catalog import Catalog, Relation, VersionMarker
from pgq_tui.dialects.contract import (
    ACTIVITY_COLUMNS,
    OLDEST_READY,
    ActionKind,
    ActionSpec,
    Capability,
    Match,
    QueueModel,
    SearchColumns,
    State,
)
from pgq_tui.dialects.kit import Setting, discard, found, index_advice, requeue, state_words
from pgq_tui.dialects.pgmq.compose import QueueSql, QueueTables, preview, search_source

KIND = "pgmq"
DEAD_READS = Setting(
    "dead_reads",
    "dead_reads",
    5,
    "PGQ_TOP_PGMQ_DEAD_READS",
    "the N of pgq-top's dead rule for pgmq (read_ct >= N; pgmq has no dead state); also --dead-reads",
    integer=True,
)
META_COLUMNS = frozenset(("queue_name", "is_partitioned", "is_unlogged"))
QUEUE_COLUMNS = frozenset(("msg_id", "read_ct", "enqueued_at", "vt", "message"))
ARCHIVE_COLUMNS = QUEUE_COLUMNS | {"archived_at"}
MOVED = ("last_read_at", "message", "headers")  # archive() copies these besides msg_id, vt, read_ct...
# The index pgq-top advises on each queue table (pgmq creates only (vt) and the primary key).
ADVISED_COLUMNS = ("read_ct", "vt")
ADVISED_INDEX = "(read_ct, vt) INCLUDE (msg_id)"
COUNT_CAP = 100  # per queue and state: 50 queues x 5 counts walk at most ~25k index entries a poll


def dead_rule(n: int) -> str:
    return f"read_ct >= {n} (pgq-top's rule, not pgmq's: pgmq has no dead state)"


def version(catalog: Catalog, schema: str, queues: list[Relation]) -> str:
    """A SQL-only install keeps no version: the newest shape present says the least version.

    >>> from pgq_tui.dialects.catalog import table
    >>> version(Catalog(()), "pgmq", [table("pgmq", "q_a", {"headers": "jsonb"})])
    '1.5+'
    """
    if catalog.relation(schema, "topic_bindings") is not None:
        return "1.11+"
    columns = frozenset(c for r in queues for c in r.column_names)
    if "last_read_at" in columns:
        return "1.10+"
    return "1.5+" if "headers" in columns else "before 1.5"


def queue_tables(catalog: Catalog, schema: str) -> list[tuple[Relation, Relation]]:
    """(q_<name>, a_<name>) of every queue of pgmq's shape in `schema`, by name."""
    out = []
    for rel in sorted(catalog.in_schema(schema), key=lambda r: r.name):
        if not rel.name.startswith("q_") or rel.kind not in ("r", "p"):
            continue
        if not rel.column_names >= QUEUE_COLUMNS:
            continue
        archive = catalog.relation(schema, "a_" + rel.name[2:])
        if archive is not None and archive.column_names >= ARCHIVE_COLUMNS:
            out.append((rel, archive))
    return out


def _fragments(q: Relation, a: Relation) -> dict[str, str]:
    """Constant SQL for the columns this queue's tables have (pgmq versions differ by columns)."""
    moved = [c for c in MOVED if c in q.column_names and c in a.column_names]
    headers = "headers" in q.column_names and "headers" in a.column_names
    return {
        "last_read_at": "m.last_read_at" if "last_read_at" in q.column_names else "NULL::timestamptz",
        "headers": "m.headers" if "headers" in q.column_names else "NULL::jsonb",
        "moved": ", ".join(f"m.{c}" for c in moved),
        "moved_columns": ", ".join(moved),
        "headers_of_m": "m.headers" if headers else "NULL::jsonb AS headers",
        "headers_column": ", headers" if headers else "",
        "headers_of_r": ", r.headers" if headers else "",
    }


@dataclass(frozen=True)
class PgmqDialect:
    dead_reads: int | None = None  # DEAD_READS, set by the engine; None: 5
    settings: ClassVar[tuple[Setting, ...]] = (DEAD_READS,)
    kind: str = KIND
    title: str = "pgmq"
    versions: str = "1.5+ (tested with 1.13.0, the SQL the PyPI client pgmq 1.1 installs)"
    version_markers: tuple[VersionMarker, ...] = ()

    def detect(self, catalog: Catalog) -> list[Match]:
        out = []
        for meta in catalog.named("meta"):
            if not meta.column_names >= META_COLUMNS:
                continue
            pairs = queue_tables(catalog, meta.schema)
            if not pairs and not catalog.has_function(meta.schema, "set_vt"):
                continue  # a `meta` table of someone else's, with no queue of pgmq's shape
            names = ", ".join(q.name[2:] for q, _ in pairs) or "none yet"
            evidence = (
                f"{meta.schema}.meta and {len(pairs)} queue table(s) q_<name>/a_<name> (queues: {names})"
            )
            found_version = version(catalog, meta.schema, [q for q, _ in pairs])
            tables = (r.name for q, a in pairs for r in (q, a))
            out.append(
                found(KIND, meta, found_version, evidence, len(META_COLUMNS) + len(QUEUE_COLUMNS), *tables)
            )
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema = match.schema
        n = int(DEAD_READS.value(self.dead_reads))
        pairs = queue_tables(catalog, schema)
        queues = [QueueTables(q.name[2:], schema, q.name, a.name, _fragments(q, a)) for q, a in pairs]
        states = state_words(f"""
            ready       visible: vt <= now() (and read_ct below the dead rule)
            scheduled   delayed: read_ct = 0 and vt > now()
            running     in flight: read_ct > 0 and vt > now()
            stuck       never: pgmq makes a message visible again when its vt passes
            dead        {dead_rule(n)}
            done        archived (a_<name>)
        """)
        rule = (
            "none: pgmq has no stuck state; a message in flight whose visibility timeout (vt) passes is"
            " visible again by itself and counts as ready. Dead is pgq-top's rule, not pgmq's (pgmq has"
            f" no dead state): read_ct >= {n}; set N with --dead-reads, a target's dead_reads or"
            f" {DEAD_READS.env}"
        )
        base = QueueModel(
            match=match,
            title=self.title,
            stuck_rule=rule,
            stuck_label="never (pgmq re-delivers after vt)",
            states=states,
            liveness_known=False,
            count_cap=COUNT_CAP,
            unsupported=(
                (Capability.LATENCY, "pgmq keeps no start or finish time of a message"),
                (
                    Capability.THROUGHPUT,
                    "pgmq keeps no per-second history (its msg_id sequences give the per-queue"
                    " rates: see the queues panel)",
                ),
            ),
            counts=(),
            relations=((schema, match.table),),
        )
        if not queues:
            return replace(base, unsupported=(*base.unsupported, (Capability.RATES, "no queue yet")))
        s = QueueSql(
            __package__, KIND, queues=queues, constants={"dead_reads": sql.Literal(int(n)).as_string(None)}
        )
        advice = tuple(
            index_advice(
                Capability.DEAD,
                sql.Identifier(q.name + "_read_ct_vt_idx").as_string(None),
                (schema, q.name),
                ADVISED_INDEX,
                f"pgq-top's dead rule ({dead_rule(n)}) needs an index on read_ct, which pgmq does not"
                " create; with it every count and the in-flight list read exact index ranges (without it,"
                " they walk pgmq's vt index past the other states' messages)",
                ("dead",),
            )
            for q, _ in pairs
            if not q.has_index(ADVISED_COLUMNS)
        )
        if advice:  # pgmq's own vt index only: dead is counted and listed by scans (stock tiers)
            counts = [
                # through the vt index, but each count walks past the other states' messages on its
                # side of now(): ready past every visible dead one, however many. Its cost grows with
                # the table, as a scan's does: in the poll while the queue tables are small only
                s.count("counts", "ready", "scheduled", "running", OLDEST_READY).scan(),
                s.count("count_dead_scan", "dead").scan(),
            ]
            leases = s.leases()
        else:
            counts = [s.count("counts_indexed", "ready", "scheduled", "running", "dead", OLDEST_READY)]
            leases = s.leases("leases_indexed")
        counts.append(s.count("count_done", "done"))
        in_flight = f"read_ct > 0 AND vt > now() AND read_ct < {n}"
        return replace(
            base,
            counts=tuple(counts),
            activity=s("activity", ACTIVITY_COLUMNS),
            **s.reads(leases, s.dead().scan() if advice else s.dead()),
            actions=(
                requeue(
                    s,
                    "set_vt(queue, msg_id, 0)",
                    "vt = now(): the message is visible now (read_ct kept); a consumer still working on it"
                    " is not known to pgmq and may process it twice",
                    f"in flight: {in_flight}",
                    preview(__package__, queues, s.constants, "running"),
                    applies_to=State.RUNNING,
                ),
                ActionSpec(
                    kind=ActionKind.RETRY,
                    label="send() a copy + delete the original (pgmq has no unarchive)",
                    applies_to=State.DEAD,
                    also_applies_to=(State.DONE.value,),
                    chosen_only=(State.DONE.value,),  # archived: only the messages named by id
                    effect="a copy is sent (new msg_id, read_ct 0, visible now, same message and"
                    " headers) and the original deleted from the queue or the archive, in one transaction",
                    guard=f"dead ({dead_rule(n)}), or archived and chosen by id",
                    preview=preview(__package__, queues, s.constants, "dead", archived=True),
                    statement=s.write("retry"),
                ),
                discard(
                    s,
                    "archive(queue, msg_ids)",
                    "moved to the archive a_<name> (archived_at now), as pgmq.archive() does; retry brings"
                    " it back",
                    f"dead: {dead_rule(n)}",
                    preview(__package__, queues, s.constants, "dead"),
                    destructive=False,
                ),
            ),
            advice=advice,
            relations=tuple((schema, q.name) for q, _ in pairs),
            sized_together=tuple((schema, q.name) for q, _ in pairs),
            required_columns=tuple(sorted(QUEUE_COLUMNS)),
            setup_hint="pgmq queues are created with pgmq.create(name)",
            search=_search(
                schema, match.table, queues, n, all("headers" in q.column_names for q, _ in pairs)
            ),
        )


def _search(
    schema: str, meta: str, queues: list[QueueTables], dead_reads: int, headers: bool
) -> SearchColumns:
    """The search language over every queue table and its archive (sql/search_source.sql): `queue:`
    is the queue (its table), `args.` the message, `meta.` the headers; the states are the counts'."""
    source, idents, literals = search_source(__package__, queues)
    live = "NOT j.archived AND "
    return SearchColumns(
        jobs=(schema, meta),
        states=(
            ("ready", f"{live}j.vt <= now() AND j.read_ct < {{dead_reads}}"),
            ("scheduled", f"{live}j.vt > now() AND j.read_ct = 0"),
            ("running", f"{live}j.vt > now() AND j.read_ct > 0 AND j.read_ct < {{dead_reads}}"),
            ("dead", f"{live}j.read_ct >= {{dead_reads}}"),
            ("done", "j.archived"),
        ),
        integer_ids=False,
        order="enqueued_at",
        time="coalesce(j.archived_at, j.enqueued_at)",
        time_words="archived_at for archived messages, else enqueued_at",
        documents=(("args", "message"), ("meta", "headers")) if headers else (("args", "message"),),
        payload="j.message",
        literals=(("dead_reads", dead_reads), *literals),
        idents=idents,
        source=source,
    )
