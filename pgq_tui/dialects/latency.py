"""The latency statement (QueueModel.latency), one template for every dialect that keeps finished
jobs with their times (`sql/latency.sql`): a dialect supplies only its finished rows, a SELECT of
(queue, finished_at, wait_s, run_s) over the jobs finished in the last hour, newest first, LIMIT
%(newest)s (its `latency_finished.sql`); the template turns them into percentiles per queue and span."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pgq_tui.dialects.contract import LATENCY_COLUMNS, Statement
from pgq_tui.dialects.sqlfiles import body, sql_file


def latency_statement(
    name: str,
    package: str,
    *,
    indexed: bool = True,
    literals: Mapping[str, Sequence[object]] | None = None,
    **idents: Sequence[str],
) -> Statement:
    """The latency statement of one dialect: `package`'s sql/latency_finished.sql inside the template;
    `indexed` False where no index serves its time range (a scan: it runs in the background anyway)."""
    finished = body(sql_file(package, "latency_finished"))
    text = sql_file(__package__, "latency").replace("{finished}", finished)
    statement = Statement.of(name, text, LATENCY_COLUMNS, literals=literals, **idents)
    return statement if indexed else statement.scan()
