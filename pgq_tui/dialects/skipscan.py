"""The queues that hold jobs in one state, by a recursive skip-scan, written once (`sql/queues.sql`);
and capped counts per state and queue over an index on (state, queue, ...) (`sql/counted.sql`).

A count or a dead list read through a partial index on (queue) WHERE state = '<state>' first finds
its queues with one index probe each, then reads each queue's range. A dialect's statement keeps only
its own reading (its text begins with `{queues}`: the CTE `queues(queue)`, rows with a NULL queue
ending the scan); the skip-scan is bound as a Statement part, composed by psycopg with the state as a
literal (a parameter would defeat the partial index under the monitor's generic plans).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pgq_tui.dialects.contract import Statement
from pgq_tui.dialects.sqlfiles import sql_part


def over_queues(
    statement: Statement, *, queue_column: str, state: str, state_column: str = "status"
) -> Statement:
    """`statement` after the skip-scan of the queues (`queue_column`) holding jobs whose
    `state_column` is `state`."""
    idents = {**dict(statement.idents), "queue_column": (queue_column,), "state_column": (state_column,)}
    return replace(
        statement,
        idents=tuple(sorted(idents.items())),
        literals=(*statement.literals, ("state", (state,))),
        parts=(*statement.parts, ("queues", sql_part(__package__, "queues"))),
    )


def counted_per_state(statement: Statement, states: Sequence[str] | None = None) -> Statement:
    """`statement` (its text begins with `{counted}`: the CTE counted(queue, state, n)) after the shared
    capped counts of `states` per queue, bound as literals (None: the statement's own `{states}`)."""
    literals = statement.literals if states is None else (*statement.literals, ("states", tuple(states)))
    parts = (*statement.parts, ("counted", sql_part(__package__, "counted")))
    return replace(statement, literals=literals, parts=parts)
