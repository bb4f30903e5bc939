"""The activity statement (QueueModel.activity), one template for every dialect with integer ids.

New jobs per queue since the previous poll are read from the primary key above the previous poll's
max id (`sql/activity.sql`): the same key-range scan for every framework, so a dialect only names its
jobs table, its id column and how to get the queue of a job row `j` (a column, or a primary-key
lookup such as Graphile Worker's task identifier). The queue expression is constant SQL written in
the dialect's module, whose `{name}` placeholders are identifiers bound by Statement.compose().
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pgq_tui.dialects.contract import ACTIVITY_COLUMNS, Statement
from pgq_tui.dialects.sqlfiles import sql_file

INTEGER_IDS = frozenset(("bigint", "integer", "smallint"))  # format_type() names of integer id columns


def activity_statement(
    name: str,
    *,
    jobs: Sequence[str],
    id: str,
    queue_of_j: str,
    literals: Mapping[str, Sequence[object]] | None = None,
    **idents: Sequence[str],
) -> Statement:
    """The activity statement of one dialect: `jobs` its table, `id` its integer primary key column,
    `queue_of_j` the SQL of job row j's queue key (as its count statements name the queue)."""
    text = sql_file(__package__, "activity").replace("{queue_of_j}", queue_of_j)
    return Statement.of(name, text, ACTIVITY_COLUMNS, literals=literals, jobs=jobs, id=(id,), **idents)
