"""Issue 33's acceptance for River's pause, with River's real Go client (river/main.go): pgq-top's
pause is River's own QueuePause (river_queue.paused_at and the control notification in River's
format), the running client stops fetching from the queue within its own reaction time (the test
client has no notifier, so its queue-settings poll: QueuePollInterval, 2 s), resuming makes it run
the queue's jobs again, and the snapshot and the dashboard's queues panel show both states."""

from __future__ import annotations

import json
import time
from typing import Any

import psycopg
import pytest
from psycopg import sql

from pgq_tui.cli import main
from pgq_tui.errors import EXIT_OK, EXIT_REFUSED

from .harness import Processes, phases, scalar, wait_for
from .river_client import River

REACTION_S = 2.0  # River's QueuePollInterval default (producer.go queuePollIntervalDefault)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _queue(capsys: pytest.CaptureFixture[str], dsn: str, name: str) -> dict[str, Any]:
    code, out, err = _cli(capsys, "snapshot", "--json", "--dsn", dsn, "--kind", "river")
    assert (code, err) == (EXIT_OK, ""), err
    return next(q for q in json.loads(out)["queues"] if q["queue"] == name)


def test_pgq_top_pauses_and_resumes_a_running_river_client(
    framework_dsn: str, processes: Processes, capsys: pytest.CaptureFixture[str]
) -> None:
    dsn = framework_dsn
    river = River(dsn)
    river.install()
    river.start_worker(processes, fixed=True, queues=["fast", "other"])
    rows = sql.SQL("SELECT count(*) FROM {} WHERE name IN ('fast', 'other')").format(
        sql.Identifier(river.schema, "river_queue")
    )
    wait_for("the River client's river_queue rows", lambda: scalar(dsn, rows.as_string(None)) == 2)
    river.enqueue("fast", "before")
    wait_for("the client to run a job", lambda: "done" in phases(dsn, "before"))
    code, _, err = _cli(capsys, "pause", "--dsn", dsn, "--kind", "river", "--queue", "missing", "--yes")
    assert code == EXIT_REFUSED and "ErrNotFound" in err, err  # as River's own QueuePause

    with psycopg.connect(dsn, autocommit=True) as listener:
        listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(f"{river.schema}.river_control")))
        code, out, err = _cli(capsys, "pause", "--dsn", dsn, "--kind", "river", "--queue", "fast", "--yes")
        assert (code, err) == (EXIT_OK, ""), err
        assert "paused queue 'fast'" in out
        (note,) = list(listener.notifies(timeout=5, stop_after=1))
    assert json.loads(note.payload) == {"action": "pause", "queue": "fast"}  # River's controlEventPayload
    paused_at = scalar(
        dsn,
        sql.SQL("SELECT paused_at FROM {} WHERE name = 'fast'")
        .format(sql.Identifier(river.schema, "river_queue"))
        .as_string(None),
    )
    assert paused_at is not None
    fast = _queue(capsys, dsn, "fast")
    assert fast["paused"] is True and fast["paused_figure"]["source"] == "river_queue.paused_at"

    time.sleep(REACTION_S + 1.0)  # the client's own reaction time, and a margin
    river.enqueue("fast", "while-paused")
    river.enqueue("other", "bystander")
    wait_for("the unpaused queue's job to run", lambda: "done" in phases(dsn, "bystander"))
    time.sleep(3.0)  # 15 fetch polls of 200 ms: the paused queue's job must still wait
    assert phases(dsn, "while-paused") == []
    assert _queue(capsys, dsn, "other")["paused"] is False
    fast = _queue(capsys, dsn, "fast")
    assert fast["ready"] == 1 and fast["paused"] is True

    code, out, err = _cli(capsys, "resume", "--dsn", dsn, "--kind", "river", "--queue", "fast", "--yes")
    assert (code, err) == (EXIT_OK, ""), err
    started = time.monotonic()
    wait_for("the resumed queue's job to run", lambda: "done" in phases(dsn, "while-paused"), timeout=30)
    took = time.monotonic() - started
    assert took < 3 * REACTION_S + 5, took
    assert _queue(capsys, dsn, "fast")["paused"] is False
    print(f"River resumed after {took:.1f} s")  # measured: docs/actions.md
