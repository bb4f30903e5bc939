"""Where a statement no index serves runs: in the poll, or in the background. Pure.

A dialect supplies its count, lease and dead statements whether or not an index serves them
(`Statement.indexed`). An indexed statement's cost is bounded by the count cap and the list length; an
unindexed one is a scan, whose cost grows with the relation. The engine picks its tier per poll:

- in the poll, as a scan, while the relation (the table and every partition under it) is at most
  `SCAN_PAGES` pages: their `relpages` scaled to the rows the statistics count now, read without a
  lock (db/sql/check_table.sql; `relpages` alone lags behind a table filled and not yet analyzed).
  Its counts are exact at this poll (uncapped: the scan reads every row of the state anyway); its
  lists are the first `rows` rows of the scan.
- above it, in the background counter (monitor/background.py): one statement at a time in autocommit
  (each its own snapshot, each bounded by the counter's statement_timeout), paced within the counter's
  budget (background.DUTY of one backend, split by urgency). Its figures are stale with their age;
  before the first one lands they are unknown (never 0).

`SCAN_PAGES`, by measurement (benchmarks/bench_scan_threshold.py, docs/stock-schemas.md): a scan-form
count over the seed `jobs` table cost 5.3-7.7 us per page warm on this machine (2 shared cores, load
1.8), so 512 pages (4 MB, about 45k seed rows) scan in at most about 4 ms; PERF_NOTES measured 8-11 ms
over 4,032 pages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pgq_tui.dialects.contract import QueueModel, Statement

SCAN_PAGES = 512
POLL = "poll"
BACKGROUND = "background"


def tier(pages: int | None, threshold: int = SCAN_PAGES) -> str:
    """The tier of an unindexed statement on a relation of `pages` pages (None: size unknown, so
    the poll does not risk it).

    >>> tier(100), tier(512), tier(513), tier(None)
    ('poll', 'poll', 'background', 'background')
    """
    return POLL if pages is not None and pages <= threshold else BACKGROUND


@dataclass(frozen=True)
class Plan:
    """The statements one poll runs and the ones it leaves to the background counter."""

    tier: str
    pages: int | None  # the relation's size as the tier was picked (every partition summed)
    counts: tuple[Statement, ...]  # count statements the poll runs (scans among them run uncapped)
    lists: tuple[Statement, ...]  # leases / dead statements the poll runs
    deferred: tuple[Statement, ...]  # unindexed statements the background counter runs instead

    @property
    def scanned_here(self) -> tuple[Statement, ...]:
        return tuple(s for s in self.counts if not s.indexed)


def plan(model: QueueModel, pages: int | None, threshold: int = SCAN_PAGES) -> Plan:
    """Split the model's count and list statements by tier.

    >>> from pgq_tui.dialects.contract import Match
    >>> a, b = Statement.of("a", "", ("queue", "ready")), Statement.of("b", "", ("queue", "dead")).scan()
    >>> m = QueueModel(Match("k", "s", "t"), "K", "", (), (a, b), dead=b)
    >>> p = plan(m, 10); p.tier, [s.name for s in p.counts], [s.name for s in p.deferred]
    ('poll', ['a', 'b'], [])
    >>> p = plan(m, 10_000); p.tier, [s.name for s in p.counts], [s.name for s in p.deferred]
    ('background', ['a'], ['b', 'b'])
    """
    where = tier(pages, threshold)
    lists = tuple(s for s in (model.leases, model.dead) if s is not None)
    if where == POLL:
        return Plan(where, pages, model.counts, lists, ())
    counts = tuple(s for s in model.counts if s.indexed)
    deferred = tuple(s for s in (*model.counts, *lists) if not s.indexed)
    return Plan(where, pages, counts, tuple(s for s in lists if s.indexed), deferred)


@dataclass(frozen=True)
class Together:
    """The alike tables of one queue kind (QueueModel.sized_together) at this poll."""

    pages: int | None  # their total (None: a size unknown, so the poll does not risk the scans)
    worst: str  # schema.table: most dead tuples, then the most pages; what table health shows
    worst_oid: int


def together(rows: Sequence[Mapping[str, Any]], fallback: tuple[str, int]) -> Together:
    """From db/sql/queue_tables.sql's rows (name, oid, pages, dead_tuples); `fallback` (name, oid):
    the main relation, when no table is there.

    >>> rows = [{"name": "pgmq.q_a", "oid": 1, "pages": 0, "dead_tuples": 0},
    ...         {"name": "pgmq.q_z", "oid": 2, "pages": 900, "dead_tuples": 40}]
    >>> together(rows, ("pgmq.q_a", 1))
    Together(pages=900, worst='pgmq.q_z', worst_oid=2)
    >>> together(rows[:1] + [{**rows[1], "pages": None}], ("pgmq.q_a", 1)).pages is None
    True
    """
    if not rows:
        return Together(None, *fallback)
    sizes = [r["pages"] for r in rows]
    total = None if any(p is None for p in sizes) else sum(int(p) for p in sizes)
    worst = max(rows, key=lambda r: (int(r["dead_tuples"] or 0), int(r["pages"] or 0)))
    return Together(total, str(worst["name"]), int(worst["oid"]))
