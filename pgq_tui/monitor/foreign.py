"""The counters table's cross-check: are writers other than pgq_tui.queue at work? Pure.

pgq-top's own table has a counters table (`<table>_stats`) that pgq_tui.queue bumps in the same
statement as each enqueue, completion and failure: exact for its own writers, blind to any other
(the seed's SQL run from another language, a COPY, psql). Every poll compares the counters with
what the table itself shows, figures that see every writer:
- per queue: enqueued/s from the new ids, completed/s from enqueued - change in depth (monitor/rates.py);
- table-wide: the pg_stat_user_tables deltas (rows inserted and deleted per second).
Where the table shows clearly more than the counters (beyond FACTOR x counters + SLACK, so the ~1 s
lag of the pg_stat counters and a poll's timing never trigger it), foreign writers are present:
the derived figure is shown, and a rate with no derived figure yet is unknown, never the counters'
lower bound of 0.
"""

from __future__ import annotations

from collections.abc import Mapping

from pgq_tui.monitor.snapshot import Rates, TableRates

FACTOR, SLACK = 1.25, 1.0  # per queue, per second
TABLE_SLACK = 5.0  # table-wide, per second (pg_stat lags by up to a second)
NAMES = ("enqueued", "completed")


def exceeds(table: float | None, counters: float | None, slack: float = SLACK) -> bool:
    """The table shows clearly more than the counters.

    >>> exceeds(30.0, 0.0), exceeds(10.5, 10.0), exceeds(None, 0.0), exceeds(3.0, None)
    (True, False, False, False)
    """
    if table is None or counters is None:
        return False
    return table > counters * FACTOR + slack


def foreign_writers(
    counters: Mapping[str, Rates] | None,
    table: Mapping[str, Rates],
    pg: TableRates | None,
    removed_per_s: float = 0.0,
    counted: Rates | None = None,
    scale: float = 1.0,
) -> str | None:
    """Why writers other than pgq_tui.queue are present (one sentence), or None: no sign of them
    (or no counters table to check). `removed_per_s`: the operator's removals (discard, prune) the
    counters recorded over the pg_stat window, deletes that are neither completions nor foreign.
    `counted`: the counters' totals over that same window (rates.counted_over), which the table-wide
    check compares with pg_stat; without it, the sum of the counters' per-queue rates. `scale`: the
    per-queue counters' rates are judged times this (rates.comparable: the table's window is shorter).

    >>> a = {"a": Rates(0.0, 0.0, 0.0, 0.0)}
    >>> foreign_writers(a, {"a": Rates(1500.0, None, None)}, None)
    'foreign writers present: the table shows 1500.0 enqueued/s on a, the counters 0.0/s'
    >>> print(foreign_writers(a, {"a": Rates(0.0, None, None)}, TableRates(5, 0, 0, 900)))
    foreign writers present: the table lost 900.0 rows/s (pg_stat), the counters saw 0.0 completed/s
    >>> foreign_writers(a, {"a": Rates(0.0, 0.0, 0.0)}, TableRates(5, 0, 0, 0)) is None
    True
    """
    if counters is None:
        return None
    for q in sorted(table):
        c = counters.get(q, Rates(0.0, 0.0, 0.0, 0.0))
        for name in NAMES:
            tv, cv = getattr(table[q], name), getattr(c, name)
            if exceeds(tv, cv * scale if cv is not None else None):
                return (
                    f"foreign writers present: the table shows {tv:.1f} {name}/s on {q}, "
                    f"the counters {cv or 0.0:.1f}/s"
                )
    if pg is None:
        return None
    enq = sum(r.enqueued or 0.0 for r in counters.values())
    done = sum(r.completed or 0.0 for r in counters.values())
    if counted is not None:  # the same seconds as pg_stat's window: the larger of the two, never less
        enq, done = max(enq, counted.enqueued or 0.0), max(done, counted.completed or 0.0)
    if exceeds(pg.inserted, enq, TABLE_SLACK):
        return (
            f"foreign writers present: the table gained {pg.inserted:.1f} rows/s (pg_stat), "
            f"the counters saw {enq:.1f} enqueued/s"
        )
    # every completion by delete removes a row, and so does an operator's discard or prune (counted)
    if exceeds(pg.deleted, done + removed_per_s, TABLE_SLACK):
        return (
            f"foreign writers present: the table lost {pg.deleted:.1f} rows/s (pg_stat), "
            f"the counters saw {done:.1f} completed/s"
        )
    return None
