"""The advisor: autovacuum settings for the jobs table, computed from what the monitor measured (the
dead-tuple rate, the vacuum duration, the claim cost per dead tuple), each with its reason.

Pure: `advise(snapshot)` reads a Snapshot whose `bloat` report has measured a busy period. The
per-table part is one `ALTER TABLE ... SET (...)` the dashboard can apply (confirmed, refused under
--read-only); the server-wide part (autovacuum_naptime, idle_in_transaction_session_timeout) is
`ALTER SYSTEM` lines for the DBA, because no per-table setting can change them.

How the numbers follow from the measurements (rate r dead tuples/s, vacuum duration D):
- budget B: the dead tuples claims can bear before costing 4x their floor (probe slope), else
  ten seconds of churn when the probe has not seen enough spread yet;
- naptime N' = the largest whole second with r * (N' + 2D) <= B (pacing.predicted_peak), 1..current;
- threshold T' = max(r * N' / 2, 1.5 * r * D): crossed by every launcher visit at this rate (a
  trickle does not trigger needless vacuums), and never so low that vacuums run back to back;
- scale factor 0: a queue's row count swings with its backlog; claims pay per dead tuple, not per
  percent of the table;
- cost limit: raised when cost-based sleeps make a vacuum last longer than a tenth of B / r.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from psycopg import sql

from pgq_tui.monitor.bloatwatch import peak_budget
from pgq_tui.monitor.health import fmt_age, fmt_count
from pgq_tui.monitor.pacing import predicted_peak
from pgq_tui.monitor.snapshot import Snapshot

TABLE, SERVER = "table", "server"
MAX_COST_LIMIT = 10_000  # PostgreSQL's maximum for autovacuum_vacuum_cost_limit


@dataclass(frozen=True)
class Recommendation:
    scope: str  # "table" (ALTER TABLE, the dashboard can apply it) or "server" (ALTER SYSTEM, for the DBA)
    name: str  # the setting
    value: str  # as PostgreSQL takes it
    current: str
    reason: str


@dataclass(frozen=True)
class Advice:
    table: str  # schema.table
    basis: str  # what was measured, in words
    recommendations: tuple[Recommendation, ...]
    notes: tuple[str, ...]  # findings without a setting (e.g. updates that can never be HOT)
    table_sql: str | None  # the per-table part (one ALTER TABLE per partition when partitioned)
    server_sql: tuple[str, ...]  # ALTER SYSTEM lines, then pg_reload_conf()

    @property
    def table_options(self) -> dict[str, str]:
        return {r.name: r.value for r in self.recommendations if r.scope == TABLE}


def nice(x: float) -> int:
    """Round to two significant digits (settings people can read).

    >>> nice(23_456), nice(7.4), nice(0.2)
    (23000, 7, 0)
    """
    if x < 1:
        return round(x)
    digits = 10 ** max(0, math.floor(math.log10(x)) - 1)
    return int(round(x / digits) * digits)


def alter_table(schema: str, table: str, options: dict[str, str]) -> sql.Composed:
    """ALTER TABLE ... SET (...) with the name quoted and the values as literals.

    >>> alter_table("public", "jobs", {"fillfactor": "90"}).as_string(None)
    'ALTER TABLE "public"."jobs" SET (fillfactor = \\'90\\')'
    """
    items = sql.SQL(", ").join(
        sql.SQL("{} = {}").format(sql.SQL(name), sql.Literal(value)) for name, value in options.items()
    )
    return sql.SQL("ALTER TABLE {} SET ({})").format(sql.Identifier(schema, table), items)


def advise(snap: Snapshot, schema: str, table: str) -> Advice:
    """Recommendations for one jobs table from a snapshot taken while the queue was busy."""
    report, tab = snap.bloat, snap.table
    qualified = f"{schema}.{table}"
    if report is None or report.settings is None or report.pacing is None:
        return Advice(
            qualified, "nothing measured yet", (), ("no bloat report: let the monitor poll",), None, ()
        )
    st, pace, cost = report.settings, report.pacing, report.probe
    recs: list[Recommendation] = []
    notes: list[str] = []
    r = pace.dead_per_s or 0.0
    d = pace.vacuum_s or 0.0
    slope = cost.buffers_per_dead
    budget = peak_budget(cost.floor, slope)
    basis = f"{fmt_count(r)} dead tuples/s over the last seconds"
    basis += (
        f", vacuum {d:.1f} s ({pace.vacuum_s_source})" if pace.vacuum_s is not None else ", no vacuum seen"
    )
    if cost.floor is not None:
        basis += f", claims walk {cost.floor} buffers at best"
    if budget is not None and slope:
        basis += f" (+{slope * 1000:.1f} per 1k dead tuples: they bear ~{fmt_count(budget)})"
    elif r > 0:
        budget = max(1000.0, r * 10)
        basis += f"; no cost slope measured yet, so the budget is 10 s of churn ({fmt_count(budget)})"

    if r > 0 and budget is not None:
        # cost limit first: a shorter vacuum lets the naptime and threshold be tighter
        if st.cost_delay_ms > 0 and d > budget / r / 10:
            factor = max(2, math.ceil(d / max(budget / r / 10, 0.1)))
            limit = min(MAX_COST_LIMIT, st.cost_limit * factor)
            if limit > st.cost_limit:
                recs.append(
                    Recommendation(
                        TABLE,
                        "autovacuum_vacuum_cost_limit",
                        str(limit),
                        str(st.cost_limit),
                        f"a vacuum of this table took {d:.1f} s, sleeping {st.cost_delay_ms:g} ms every "
                        f"{st.cost_limit} cost units; at {fmt_count(r)} dead/s that is "
                        f"{fmt_count(r * d)} dead tuples made while it runs",
                    )
                )
                d = d * st.cost_limit / limit
        nap = max(1, min(int(st.naptime_s), math.floor(budget / r - 2 * d)))
        threshold = max(500, nice(max(r * nap / 2, 1.5 * r * d)))
        peak_now = predicted_peak(tab.vacuum_threshold, r, st.naptime_s, d)
        peak_new = predicted_peak(threshold, r, nap, d)
        if tab.vacuum_scale_factor > 0:
            recs.append(
                Recommendation(
                    TABLE,
                    "autovacuum_vacuum_scale_factor",
                    "0",
                    f"{tab.vacuum_scale_factor:g}",
                    f"the threshold grows with the backlog: {tab.vacuum_base_threshold} + "
                    f"{tab.vacuum_scale_factor:g} x {fmt_count(tab.total_rows_estimate)} rows = "
                    f"{fmt_count(tab.vacuum_threshold)} dead tuples; claims pay per dead tuple, not per "
                    "percent of the table",
                )
            )
        if abs(threshold - tab.vacuum_base_threshold) > 0.2 * threshold or tab.vacuum_scale_factor > 0:
            recs.append(
                Recommendation(
                    TABLE,
                    "autovacuum_vacuum_threshold",
                    str(threshold),
                    str(tab.vacuum_base_threshold),
                    f"{fmt_count(threshold)} dead tuples is {threshold / r:.1f} s of churn at "
                    f"{fmt_count(r)}/s: every autovacuum visit ({nap} s) finds it due while the queue "
                    "is busy, a trickle does not trigger needless vacuums",
                )
            )
        if nap < st.naptime_s:
            recs.append(
                Recommendation(
                    SERVER,
                    "autovacuum_naptime",
                    f"{nap}s",
                    f"{st.naptime_s:g}s",
                    f"naptime is the limiter: autovacuum looks at this table only every {st.naptime_s:g} s, "
                    f"so {fmt_count(peak_now)} dead tuples pile up at {fmt_count(r)}/s; every {nap} s: "
                    f"~{fmt_count(peak_new)} (claims bear ~{fmt_count(budget)}). Server-wide: no "
                    "per-table setting can make autovacuum look sooner",
                )
            )
        if peak_new > 2 * budget:
            notes.append(
                f"even with these settings ~{fmt_count(peak_new)} dead tuples pile up between vacuums: "
                "claim in larger batches or keep finished jobs out of the claim index"
            )
        timeout_s = min(600, max(30, 10 * math.ceil(budget / r)))
        if st.idle_tx_timeout_ms <= 0 or st.idle_tx_timeout_ms > timeout_s * 1000:
            idle = [s for s in snap.sessions.idle_in_transaction if not s.is_pgq_top]
            seen = f"; {len(idle)} idle in transaction now" if idle else ""
            recs.append(
                Recommendation(
                    SERVER,
                    "idle_in_transaction_session_timeout",
                    f"{timeout_s}s",
                    "off" if st.idle_tx_timeout_ms <= 0 else fmt_age(st.idle_tx_timeout_ms / 1000),
                    f"an idle transaction pins the xmin horizon: in {timeout_s} s it leaves "
                    f"{fmt_count(r * timeout_s)} dead tuples no vacuum can remove{seen}. Set it per role "
                    "(ALTER ROLE ... SET) instead if some application legitimately idles longer",
                )
            )
    else:
        notes.append("no dead tuples were made while measuring: advise while the queue is busy")
    if report.xmin_block is not None:
        notes.insert(
            0,
            "first end the transaction holding the xmin horizon (see above): while it is held, vacuum "
            "removes nothing and no setting here helps",
        )
    if st.workers_elsewhere >= st.max_workers:
        notes.append(
            f"all {st.max_workers} autovacuum workers were busy on other tables: raise "
            "autovacuum_max_workers (a restart before PostgreSQL 18)"
        )
    recs_ff, note_ff = _fillfactor(tab.updated, tab.hot_updated, st.fillfactor)
    recs += recs_ff
    notes += note_ff
    table_options = {x.name: x.value for x in recs if x.scope == TABLE}
    # a partitioned parent has no storage and takes no autovacuum settings: set them on each partition
    targets = tab.partitions or ((schema, table),)
    table_sql = (
        ";\n".join(alter_table(s, t, table_options).as_string(None) for s, t in targets)
        if table_options
        else None
    )
    if tab.partitions:
        notes.append(
            f"{qualified} is partitioned: the settings go on each of its {len(tab.partitions)} "
            "partitions (a partition created later starts with the server defaults)"
        )
    server_sql = tuple(
        sql.SQL("ALTER SYSTEM SET {} = {}")
        .format(sql.Identifier(x.name), sql.Literal(x.value))
        .as_string(None)
        for x in recs
        if x.scope == SERVER
    )
    if server_sql:
        server_sql += ("SELECT pg_reload_conf()",)
    return Advice(qualified, basis, tuple(recs), tuple(notes), table_sql, server_sql)


def _fillfactor(updated: int, hot: int, fillfactor: int) -> tuple[list[Recommendation], list[str]]:
    """Fillfactor only where HOT updates would help: some updates are HOT already (so they change
    no indexed column) but not all of them found room on their page.

    >>> _fillfactor(10_000, 6_000, 100)[0][0].value
    '84'
    >>> _fillfactor(10_000, 0, 90)[1][0][:38]
    'none of 10k updates was HOT: they chan'
    """
    if updated < 1000:
        return [], []
    ratio = hot / updated
    if ratio == 0:
        extra = f"; fillfactor {fillfactor} leaves room no update can use" if fillfactor < 100 else ""
        return [], [
            f"none of {fmt_count(updated)} updates was HOT: they change an indexed column (the status in "
            f"the partial indexes' predicates), so fillfactor would not help{extra}"
        ]
    if ratio < 0.9 and fillfactor >= 90:
        value = max(70, min(fillfactor - 5, round(100 - 40 * (1 - ratio))))
        reason = (
            f"{ratio:.0%} of {fmt_count(updated)} updates were HOT (no index change); the rest found no "
            f"room on their page: free space lets them stay HOT, with no index entry for vacuum to clean "
            "(new pages only: existing ones fill as before)"
        )
        return [Recommendation(TABLE, "fillfactor", str(value), str(fillfactor), reason)], []
    return [], []
