"""Statement parts: the shared SQL a dialect composes with its own (guards, skip-scans), bound by psycopg.

The behaviour of each composed action is proven by the conformance suite and the framework tests (real
clients); these check the composition itself: every shared piece is bound, the guard stands where it
must, values stay parameters and the state of a skip-scan is a literal.
"""

from __future__ import annotations

from pgq_tui.dialects.contract import PREVIEW_COLUMNS, Statement
from pgq_tui.dialects.guarded import guarded, preview
from pgq_tui.dialects.skipscan import over_queues

GUARD = "-- the guard\nj.state = 'discarded' OR j.state = {gone}"
TRANSITION = (
    "-- a transition\n{chosen}\n"
    "DELETE FROM {jobs} j USING chosen c WHERE j.id = c.id AND ({guard})\nRETURNING j.id"
)


def _statement(name: str, text: str) -> Statement:
    return Statement.of(name, text, ("id",), literals={"gone": ("gone",)}, jobs=("s", "my jobs"))


def test_a_guarded_transition_locks_what_its_guard_admits_and_checks_it_again() -> None:
    guard = _statement("k.guard_discarded", GUARD)
    shown = guarded(_statement("k.discard", TRANSITION), guard, queue_column="queue name").shown()
    assert shown.count("(j.state = 'discarded' OR j.state = 'gone')") == 2  # the lock step, the re-check
    assert "-- the guard" not in shown and "{" not in shown
    assert 'FROM "s"."my jobs" j' in shown and 'j."queue name" = %(queue)s::text' in shown
    assert "ORDER BY j.\"id\" LIMIT %(batch)s" in shown and "FOR UPDATE OF j SKIP LOCKED" in shown
    assert shown.index("WITH chosen AS MATERIALIZED") < shown.index("DELETE FROM")
    assert "j.id = ANY(%(ids)s::bigint[])" in shown


def test_a_preview_counts_with_the_same_guard() -> None:
    guard = _statement("k.guard_discarded", GUARD)
    p = preview(guard)
    assert p.name == "k.preview_discarded" and p.columns == ("id",)
    shown = p.shown()
    assert shown.startswith("SELECT count(*) AS eligible, 0::bigint AS alive")
    assert "WHERE (j.state = 'discarded' OR j.state = 'gone')" in shown and "%(queue)s" in shown
    assert set(PREVIEW_COLUMNS) <= set(shown.replace(",", " ").split())


def test_uses_reads_the_parts_too() -> None:
    guard = _statement("k.guard_old", "j.locked_at < %(before)s")
    plain = _statement("k.discard", TRANSITION)
    assert not plain.uses("before") and guarded(plain, guard).uses("before")
    assert guarded(plain, guard).scan().parts == guarded(plain, guard).parts  # scan() keeps them


def test_the_skip_scan_binds_its_state_as_a_literal() -> None:
    text = "{queues}\nSELECT q.queue FROM queues q WHERE q.queue IS NOT NULL"
    st = over_queues(_statement("k.count", text), queue_column="entrypoint", state="failed")
    shown = st.shown()
    assert shown.count("j.\"status\" = 'failed'") == 2 and "%(" not in shown
    assert shown.startswith("WITH RECURSIVE queues AS (") and 'j."entrypoint" > q.queue' in shown
