"""Job-action plans from a dialect's preview, without a database: wording, counts and the second
confirmation, for pgq-top's own dialect (richer previews) and a mapping (the two required columns)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from pgq_tui.actions.job_plans import job_plan
from pgq_tui.dialects.catalog import Catalog, Column, Relation
from pgq_tui.dialects.contract import ActionKind, ActionSpec, Match, QueueModel, Statement
from pgq_tui.dialects.pgq.dialect import REQUIRED_COLUMNS, PgqDialect

NOBODY = {"eligible": 0, "alive": 0, "holders": None, "exhausted": 0}


def _pgq() -> QueueModel:
    columns = tuple(Column(name, "text", True) for name in sorted(REQUIRED_COLUMNS))
    jobs = Relation("public", "jobs", "r", columns, ())
    match = PgqDialect().detect(Catalog((jobs,)))[0]
    return PgqDialect().model(match, Catalog((jobs,)))


def _spec(model: QueueModel, kind: ActionKind) -> ActionSpec:
    spec = model.action(kind)
    assert spec is not None
    return spec


def _plan(kind: ActionKind, preview: dict, targets: tuple = (), **kw):  # type: ignore[no-untyped-def]
    model = _pgq()
    return job_plan(
        _spec(model, kind),
        model,
        {**NOBODY, **preview},
        targets,
        queue=None,
        sql_text="SQL",
        batch=1000,
        **kw,
    )


def test_requeue_counts_only_stuck_jobs_and_says_what_it_leaves_alone() -> None:
    plan = _plan(ActionKind.REQUEUE, {"eligible": 2}, (1, 2, 3))
    assert plan.count == 2 and plan.refused is None and not plan.needs_second_confirmation
    assert plan.title == "Requeue 2 stuck jobs"
    assert "1 selected job outside the guard will be left alone" in plan.description
    assert "idle workers are notified" in plan.description and "at most 2 rows change" in plan.description


def test_requeue_of_a_live_holder_needs_a_second_confirmation() -> None:
    plan = _plan(ActionKind.REQUEUE, {"eligible": 1, "alive": 1, "holders": ["w1 (pid 42)"]}, (7,))
    assert plan.needs_second_confirmation
    assert plan.warning is not None and "w1 (pid 42)" in plan.warning and "second time" in plan.warning


def test_nothing_to_do_is_a_refusal_not_an_empty_write() -> None:
    assert _plan(ActionKind.REQUEUE, {}, (1,)).refused == (
        "none of the 1 selected job is stuck (status = 'running' AND locked_until < now()): "
        "nothing to requeue"
    )
    assert _plan(ActionKind.REAP, {}).refused == (
        "no job is stuck (status = 'running' AND locked_until < now()): nothing to reap"
    )
    assert _plan(ActionKind.DISCARD, {}, (1, 2)).refused is not None


def test_reap_and_discard_wording() -> None:
    as_of = datetime(2026, 1, 1, tzinfo=timezone.utc)
    reap = _plan(ActionKind.REAP, {"eligible": 5, "exhausted": 2}, as_of=as_of)
    assert reap.count == 5 and "batches of 1000" in reap.description
    assert "2 of them have no attempts left: dead now" in reap.description
    assert "left for the next pass" in reap.description  # the pgq reap reads %(before)s
    assert reap.expired_before == as_of  # execute() passes it: only what had expired when planned
    discard = _plan(ActionKind.DISCARD, {"eligible": 3}, (1, 2, 3))
    assert discard.destructive and discard.title == "Discard 3 dead jobs"
    retry = _plan(ActionKind.RETRY, {"eligible": 1}, (1,))
    assert not retry.destructive and "fresh budget" in retry.description


def test_a_preview_with_only_the_required_columns_and_no_before_bound() -> None:
    """Most dialects preview `eligible, alive` only, and their writes are bounded by the count alone."""
    model = _pgq()
    spec = replace(_spec(model, ActionKind.REQUEUE), statement=Statement.of("x", "UPDATE t SET a = 1"))
    plan = job_plan(spec, model, {"eligible": 2, "alive": 1}, (), queue="mail", sql_text="SQL", batch=10)
    assert (plan.count, plan.title, plan.needs_second_confirmation) == (2, "Requeue 2 stuck jobs", True)
    assert plan.warning is not None and "still connected. Requeue lets" in plan.warning
    assert "in queue 'mail'" in plan.description and "next pass" not in plan.description


def test_a_plan_names_its_framework_and_table() -> None:
    plan = _plan(ActionKind.RETRY, {"eligible": 1}, (1,))
    assert plan.description.startswith("pgq-top · public.jobs: retry on 1 dead job")
    assert Match("pgq", "public", "jobs").label == "pgq · public.jobs"
