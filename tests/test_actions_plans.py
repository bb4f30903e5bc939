"""Job-action plans from a preview, without a database: wording, counts and the second confirmation."""

from __future__ import annotations

from datetime import datetime, timezone

from pgq_tui.actions.job_plans import failed_plan, reap_plan, requeue_plan

NOBODY = {
    "as_of": None,
    "stuck": 0,
    "exhausted": 0,
    "connected": 0,
    "connected_ids": None,
    "connected_holders": None,
}


def test_requeue_counts_only_stuck_jobs_and_says_what_it_leaves_alone() -> None:
    plan = requeue_plan({**NOBODY, "stuck": 2}, (1, 2, 3), None, "SQL")
    assert plan.count == 2 and plan.refused is None and not plan.needs_second_confirmation
    assert (
        plan.title == "Requeue 2 stuck jobs"
        and "1 selected job not stuck will be left alone" in plan.description
    )


def test_requeue_of_a_live_holder_needs_a_second_confirmation() -> None:
    preview = {
        **NOBODY,
        "stuck": 1,
        "connected": 1,
        "connected_ids": [7],
        "connected_holders": ["w1 (pid 42)"],
    }
    plan = requeue_plan(preview, (7,), None, "SQL")
    assert plan.needs_second_confirmation
    assert plan.warning is not None and "w1 (pid 42)" in plan.warning and "second time" in plan.warning


def test_nothing_to_do_is_a_refusal_not_an_empty_write() -> None:
    assert requeue_plan(NOBODY, (1,), None, "SQL").refused == (
        "none of the 1 selected job is stuck (running with an expired lease): nothing to requeue"
    )
    assert reap_plan(NOBODY, None, "SQL", 1000).refused == "no expired leases right now: nothing to reap"
    assert failed_plan("discard", {"failed": 0}, (1, 2), "SQL").refused is not None


def test_reap_and_discard_wording() -> None:
    as_of = datetime(2026, 1, 1, tzinfo=timezone.utc)
    reap = reap_plan({**NOBODY, "as_of": as_of, "stuck": 5, "exhausted": 2}, None, "SQL", 1000)
    assert reap.count == 5 and "batches of 1000" in reap.description and "(2 now)" in reap.description
    assert reap.expired_before == as_of  # execute() reaps only what had expired when planned
    discard = failed_plan("discard", {"failed": 3}, (1, 2, 3), "SQL")
    assert discard.destructive and discard.title == "Discard 3 dead jobs"
    retry = failed_plan("retry", {"failed": 1}, (1,), "SQL")
    assert not retry.destructive and "fresh budget" in retry.description
