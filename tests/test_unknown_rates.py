"""Zero only when measured, for rates: a queue kind with no rate source has null rates with the
reason (never an exact-looking 0.0, which silently turned the backlog rule off); a rate the counters
miss because of foreign writers is unknown with the reason, and a lower bound always carries its
number; the backlog rule compares like with like (the cap's lower bound at start-up is not compared
with the background's exact count a moment later). Real causes on a real server."""

from __future__ import annotations

import json
import time
from typing import Any

import psycopg
import pytest
from dialect_cases import seed
from monitor_support import pgq_monitor

from pgq_tui.cli import main
from pgq_tui.detection import find_queues
from pgq_tui.diagnosis import Thresholds, work
from pgq_tui.monitor.collect import open_monitor
from pgq_tui.monitor.rates import NO_SOURCE_WHY
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.queue import JobQueue

FAST = Thresholds(min_duration_s=0.5, backlog_growth_per_s=1.0, backlog_window_s=60)


def _lower_bounds_carry_their_number(doc: dict[str, Any]) -> None:
    tp = doc["throughput"]
    for rates in (tp["total"], *tp["per_queue"].values()):
        for name, figure in rates["figures"].items():
            if figure["accuracy"] == "at_least":
                assert rates[name] is not None, (name, rates)
            if rates[name] is None:
                assert figure["accuracy"] == "unknown" and figure["reason"], (name, rates)


@pytest.fixture
def uuid_seed(empty_dsn: str) -> str:
    """The seed article's `jobs` shape with uuid ids: no increasing ids to follow, no counters, no
    finish times, so no per-queue rate source at all."""
    ddl = seed.SEED_JOBS.replace("id bigserial PRIMARY KEY", "id uuid PRIMARY KEY DEFAULT gen_random_uuid()")
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(ddl)
        conn.execute("INSERT INTO jobs (queue, payload) SELECT 'mail', '{}' FROM generate_series(1, 5)")
    return empty_dsn


def test_a_kind_with_no_rate_source_has_null_rates_with_the_reason(
    uuid_seed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["snapshot", "--json", "--dsn", uuid_seed]) == 0
    doc = json.loads(capsys.readouterr().out)
    total = doc["throughput"]["total"]
    for name in ("enqueued", "completed", "failed"):
        assert total[name] is None, total  # never 0.0 exact
        figure = total["figures"][name]
        assert figure["accuracy"] == "unknown" and figure["reason"] == NO_SOURCE_WHY, figure
    assert doc["throughput"]["rates_note"] == NO_SOURCE_WHY
    _lower_bounds_carry_their_number(doc)
    assert main(["snapshot", "--dsn", uuid_seed]) == 0
    text = capsys.readouterr().out
    assert "? enqueued/s, ? completed/s, ? failed/s" in text, text
    assert "0.0 completed/s" not in text


def test_the_backlog_rule_takes_its_rates_unknown_branch_without_a_rate_source(uuid_seed: str) -> None:
    (target,) = find_queues(uuid_seed)
    with open_monitor(uuid_seed, target.model, read_only=True) as monitor:
        history = [monitor.collect()]
        with psycopg.connect(uuid_seed, autocommit=True) as conn:
            conn.execute("INSERT INTO jobs (queue, payload) SELECT 'mail', '{}' FROM generate_series(1, 200)")
        time.sleep(1.0)
        history.append(monitor.collect())
    assert [q.ready for q in history[-1].queues] == [205]
    (found,) = work.backlog(history, FAST)  # the 0.0 "rates" used to say completions keep up
    assert "rates unknown" in found.evidence[0], found.evidence


def test_the_backlog_rule_does_not_compare_the_caps_lower_bound_with_a_later_count(
    dsn: str, queue: JobQueue
) -> None:
    """Start-up on a queue deeper than the cap: the first poll's ready is the cap's lower bound, the
    next one the background count's exact figure (stale). Nothing grew: no "add workers"."""
    queue.enqueue("mail", [{"n": i} for i in range(3000)])
    with pgq_monitor(dsn, read_only=True, count_cap=100) as monitor:
        first = monitor.collect()
        assert first.queues[0].accuracy("ready") == "at_least", first.queues[0]
        assert monitor.settle(20.0)
        time.sleep(1.0)
        second = monitor.collect()
    assert (second.queues[0].ready, second.queues[0].accuracy("ready")) == (3000, "stale")
    assert work.backlog([first, second], FAST) == []


def _foreign_one_shot(dsn: str, queue: JobQueue) -> Snapshot:
    """A one-shot snapshot of a queue deeper than the cap while a foreign writer (plain SQL, no
    counters) deletes 500 of its jobs between the two polls."""
    queue.enqueue("mail", [{"n": i} for i in range(2000)])
    with pgq_monitor(dsn, read_only=True, count_cap=100) as monitor:
        monitor.collect()
        assert monitor.settle(20.0)
        with psycopg.connect(dsn, autocommit=True) as foreign:
            foreign.execute("DELETE FROM jobs WHERE id IN (SELECT id FROM jobs ORDER BY id LIMIT 500)")
        time.sleep(1.5)  # pg_stat's counters are flushed about once a second
        return monitor.collect()


def test_a_rate_the_foreign_writers_hide_is_unknown_with_its_reason(dsn: str, queue: JobQueue) -> None:
    snap = _foreign_one_shot(dsn, queue)
    assert snap.throughput.foreign is not None, snap.throughput
    doc = json.loads(json.dumps(snap.to_dict()))
    mail = doc["throughput"]["per_queue"]["mail"]
    figure = mail["figures"]["completed"]
    assert mail["completed"] is None and figure["accuracy"] == "unknown" and figure["reason"], mail
    _lower_bounds_carry_their_number(doc)
