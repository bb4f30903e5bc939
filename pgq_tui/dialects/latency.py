"""The latency statement (QueueModel.latency), one template for every dialect that keeps finished
jobs with their times (`sql/latency.sql`): a dialect supplies only its finished rows, a SELECT of
(queue, finished_at, wait_s, run_s) over the jobs finished in the last hour, newest first, LIMIT
%(newest)s (its `latency_finished.sql`); the template turns them into percentiles per queue and span.
A dialect that reads queue by queue (`per_queue`) caps each queue's rows instead, and supplies the
cap with each row (grp, the queue; cap, its limit): whether a span is whole is then judged per queue."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pgq_tui.dialects.contract import LATENCY_COLUMNS, Statement
from pgq_tui.dialects.sqlfiles import body, sql_file


def latency_statement(
    name: str,
    package: str,
    *,
    indexed: bool = True,
    finished: str = "latency_finished",
    per_queue: bool = False,
    literals: Mapping[str, Sequence[object]] | None = None,
    **idents: Sequence[str],
) -> Statement:
    """The latency statement of one dialect: `package`'s sql/<finished>.sql inside the template;
    `indexed` False where no index serves its time range (a scan: it runs in the background anyway)."""
    rows = body(sql_file(package, finished))
    if not per_queue:  # one cap over the whole table: one group
        rows = f"SELECT r.*, ''::text AS grp, %(newest)s::bigint AS cap FROM (\n{rows}\n) r"
    text = sql_file(__package__, "latency").replace("{finished}", rows)
    statement = Statement.of(name, text, LATENCY_COLUMNS, literals=literals, **idents)
    return statement if indexed else statement.scan()
