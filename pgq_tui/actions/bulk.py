"""A job action on "all matching" a search (docs/search.md), for the dashboard: the same path as
`pgq-top retry --where` (search every matching id, plan the kind's action on them, run it in
batches that each re-check the search on their locked rows), with the plan showing the search as
its guard and a summary that counts what changed, what was skipped and what was never reached.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol

from pgq_tui.actions.actions import Progress
from pgq_tui.actions.job_plans import plan_action, refused_plan
from pgq_tui.actions.model import ActionOutcome, Plan, plural
from pgq_tui.dialects.contract import ActionKind, JobId, QueueModel
from pgq_tui.search.compile import DEFAULT_SCAN, Compiled, compile_query, recheck_statement
from pgq_tui.search.query import Query
from pgq_tui.search.run import Recheck, Result, search, still_matching

VERBS = {
    ActionKind.REQUEUE: "requeued",
    ActionKind.RETRY: "retried",
    ActionKind.DISCARD: "discarded",
    ActionKind.CANCEL: "cancelled",
}
BULK_KINDS = tuple(VERBS)


class Engine(Protocol):
    """What a bulk action needs of the actions engine (`pgq_tui.actions.Actions` is one)."""

    @property
    def conninfo(self) -> str: ...

    @property
    def model(self) -> QueueModel: ...

    def plan(
        self, kind: ActionKind, ids: Iterable[JobId] | None = None, queue: str | None = None
    ) -> Plan: ...

    def execute(
        self,
        plan: Plan,
        *,
        where: str | None = None,
        recheck: Recheck | None = None,
        progress: Progress | None = None,
        stop: threading.Event | None = None,
    ) -> ActionOutcome: ...


@dataclass(frozen=True)
class Matching:
    """A plan over every job a search matched, with what the search found."""

    kind: ActionKind
    plan: Plan
    result: Result
    compiled: Compiled


def guarded_sql(compiled: Compiled, action_sql: str) -> str:
    """The SQL each batch runs: the search re-checked on the chosen ids (locked), then the action."""
    recheck = recheck_statement(compiled).as_string(None)
    return (
        "-- each batch, in its own transaction: the chosen ids (%(w_ids)s) that still match the search,\n"
        f"-- locked\n{recheck};\n-- then the action's own guarded statement, on those ids only\n{action_sql}"
    )


def plan_matching(
    actions: Engine, kind: ActionKind, query: Query, *, limit_scan: int | None = DEFAULT_SCAN
) -> Matching:
    """Search (every matching id, bounded as asked) and plan `kind` on the matches. Raises QueryError
    (a term the kind cannot serve) or PgqError (a failed search), one line each."""
    compiled = compile_query(query, actions.model)
    result = search(actions.conninfo, actions.model, query, limit_scan=limit_scan, rows=1, all_ids=True)
    title = f"{kind.value.capitalize()} all matching jobs"
    if not result.ids:
        plan = refused_plan(plan_action(kind), title, f"no job matches ({result.summary()})", "", ())
        return Matching(kind, plan, result, compiled)
    plan = actions.plan(kind, result.ids)
    if plan.refused:
        return Matching(kind, plan, result, compiled)
    described = (
        f"Search {query.text!r}: {result.summary()}. {plan.description} Each batch first re-checks "
        "the search on its locked rows: a job that no longer matches (finished meanwhile) is skipped."
    )
    plan = replace(
        plan,
        title=f"{kind.value.capitalize()} all {plural(plan.count, 'matching job')}",
        description=described,
        sql=guarded_sql(compiled, plan.sql),
    )
    return Matching(kind, plan, result, compiled)


def run_matching(
    actions: Engine,
    matching: Matching,
    *,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> ActionOutcome:
    """Run the plan in batches (the engine's runner: audited, each batch rechecked); never raises."""
    return actions.execute(
        matching.plan,
        where=matching.result.query,
        recheck=still_matching(matching.compiled),
        progress=progress,
        stop=stop,
    )


def summary(matching: Matching, outcome: ActionOutcome) -> str:
    """Exactly what happened: changed, skipped (changed meanwhile: no longer matching), not reached.

    >>> from pgq_tui.actions.model import ActionOutcome
    >>> from datetime import datetime, timezone
    >>> r = Result("q", (), tuple(range(10)), 10, 10, 100, datetime(2026, 1, 1, tzinfo=timezone.utc), True)
    >>> m = Matching(ActionKind.RETRY, refused_plan("retry", "t", "x", "", tuple(range(10))), r, None)
    >>> summary(m, ActionOutcome("retry", 10, 4, "", "stopped by the operator", 130, 6, True)).split("; ")[1:]
    ['2 skipped (changed meanwhile: no longer matching)', 'stopped: 4 not touched']
    >>> summary(m, ActionOutcome("retry", 10, 10, "", None, 1, 10, False))
    'retried 10 of 10 matching jobs'
    """
    verb = VERBS.get(matching.kind, matching.kind.value)
    chosen = len(matching.plan.targets) or outcome.requested
    reached = outcome.attempted if outcome.attempted is not None else chosen
    parts = [f"{verb} {outcome.changed:,} of {chosen:,} matching job{'' if chosen == 1 else 's'}"]
    skipped = reached - outcome.changed
    if skipped > 0:
        parts.append(f"{skipped:,} skipped (changed meanwhile: no longer matching)")
    rest = chosen - reached
    if outcome.stopped:
        parts.append(f"stopped: {rest:,} not touched")
    elif outcome.error:
        parts.append(f"error: {outcome.error}; {rest:,} not touched")
    elif rest > 0:
        parts.append(f"{rest:,} not touched")
    return "; ".join(parts)


def rate_eta(verb: str, done: int, total: int, elapsed_s: float) -> str:
    """Done of total, rate and ETA (the total is the plan's: jobs that changed meanwhile are skipped,
    so it is approximate).

    >>> rate_eta("retry", 3_000, 40_000, 2.0)
    'retry: 3,000 of ~40,000 · 1,500/s · ETA 25 s'
    >>> rate_eta("retry", 0, 10, 0.0)
    'retry: 0 of ~10'
    """
    line = f"{verb}: {done:,} of ~{total:,}"
    if done and elapsed_s > 0:
        rate = done / elapsed_s
        line += f" · {rate:,.0f}/s · ETA {max(0.0, (total - done) / rate):.0f} s"
    return line
