"""Issue 32's acceptance with each framework's real client and worker, on its stock schema: a table of
100,000 jobs (the framework's long-lived shape, tests/frameworks/fills.py, with dead jobs of its own
failing with another error) of which 2,000 failed with error A and 300 with error B, each failure
made by the framework's own worker raising it. `error:~A state:dead` finds exactly the 2,000; the
CLI's bulk retry of all matching retries exactly those (audited, in batches); a fresh worker (the
fix deployed) runs each of them once to completion; the 300 stay dead, and so do the table's own.

The jobs are keyed "<A|B>-<i> <error text>": the framework's worker raises "always fails: <key>",
so the error the framework records carries the text, and each run recorded in pgq_test_runs names
its job, which is the ground truth here.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from pgq_tui.cli import main
from pgq_tui.detection import single_queue
from pgq_tui.errors import EXIT_OK
from pgq_tui.search.query import parse
from pgq_tui.search.run import search

from .fills import fill
from .graphile_client import Graphile
from .harness import Processes, runs, wait_for
from .pgboss_client import PgBoss
from .pgqueuer_client import Pgqueuer
from .river_client import River

TABLE = 100_000
ERROR_A, ERROR_B = "PaymentsAPI: connection refused", "CardError: invalid card"
N_A, N_B = 2_000, 300
FILLED_QUEUES = ("later", "hold")  # queues no worker of this test serves
FRAMEWORKS = [
    pytest.param(River, "river", id="river"),
    pytest.param(PgBoss, "pg-boss", id="pg-boss"),
    pytest.param(Graphile, "graphile-worker", id="graphile-worker"),
    pytest.param(Pgqueuer, "pgqueuer", id="pgqueuer"),
]


def failed_ids(dsn: str, prefix: str) -> set[str]:
    """The ids of the jobs keyed `prefix-...` whose run the worker failed (ground truth)."""
    return {i for k, i, p in runs(dsn) if p == "fail" and k.startswith(f"{prefix}-")}


@pytest.mark.parametrize(("driver", "kind"), FRAMEWORKS)
def test_error_a_is_found_retried_and_run_and_error_b_stays_dead(
    driver: Any,
    kind: str,
    framework_dsn: str,
    processes: Processes,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    driver.version()  # skips, or fails under PGQ_REQUIRE_FRAMEWORKS=1, when the client is missing
    dsn = framework_dsn
    fw = driver(dsn)
    fw.install()
    fill(dsn, kind, TABLE - N_A - N_B, FILLED_QUEUES)
    assert fw.enqueue_failing("A", ERROR_A, N_A) == N_A
    assert fw.enqueue_failing("B", ERROR_B, N_B) == N_B

    if isinstance(fw, PgBoss):  # pg-boss waits its polling interval between fetches: batch them
        fw.batched(100)
    worker = fw.start_worker(processes, fixed=False, queues=("fail",))
    wait_for(
        "the worker to fail every job of queue fail",
        lambda: len(failed_ids(dsn, "A")) == N_A and len(failed_ids(dsn, "B")) == N_B,
        timeout=240,
        every=0.5,
    )
    a_ids, b_ids = failed_ids(dsn, "A"), failed_ids(dsn, "B")
    model = single_queue(dsn, kind=kind).model
    now = datetime.now(timezone.utc)

    def found(text: str) -> set[str]:
        result = search(dsn, model, parse(text, now), limit_scan=None, all_ids=True)
        assert result.complete and result.matched == len(result.ids), result
        return {str(i) for i in result.ids}

    # every job dead by the framework's own record: the worker stays up until it has written them
    # (River's completer records job states in batches after the handler returned)
    wait_for("the failures to be dead", lambda: found("queue:fail state:dead") == a_ids | b_ids, timeout=120)
    worker.stop()
    query = 'error:~"Connection Refused" state:dead'
    assert found(query) == a_ids
    assert found('error:~"invalid card" state:dead') == b_ids
    dead_before = found("state:dead")
    assert len(dead_before) > N_A + N_B  # the table's own dead jobs ("boom") are no match

    audit = tmp_path / "audit.jsonl"
    argv = ["retry", "--dsn", dsn, "--kind", kind, "--where", query, "--yes", "--batch", "500"]
    code = main([*argv, "--audit-log", str(audit)])
    out, err = capsys.readouterr()
    assert code == EXIT_OK, err
    # progress on stderr, one line per batch of 500 off a terminal
    assert err.splitlines() == [f"pgq-top: retried {n:,} of ~{N_A:,}" for n in range(500, N_A + 1, 500)], err
    assert f"{N_A:,} match" in out, out
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(r["action"], r["event"]) for r in records] == [("retry", "start"), ("retry", "end")], records
    assert records[-1]["changed"] == N_A and records[0]["where"] == query and records[0]["planned"] == N_A
    assert found(query) == set()
    assert found("state:dead") == dead_before - a_ids  # B's and the table's own stay dead

    fresh = fw.start_worker(processes, fixed=True, queues=("fail",))
    keys = {f"A-{i} {ERROR_A}" for i in range(N_A)}
    wait_for(
        "a fresh worker to run every retried job to completion",
        lambda: {k for k, _, p in runs(dsn, pid=fresh.pid) if p == "done"} >= keys,
        timeout=240,
        every=0.5,
    )
    fresh.stop()
    ran = Counter((k, p) for k, _, p in runs(dsn, pid=fresh.pid))
    assert ran == Counter({(k, p): 1 for k in keys for p in ("start", "done")})  # those, each once
    assert found('error:~"invalid card" state:dead') == b_ids
