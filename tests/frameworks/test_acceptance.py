"""Issues 11 and 20's acceptance, for each framework with its real client and worker (acceptance.py):

install the schema with the framework's own tool; a real worker records its runs; fast, slow, scheduled
and always-failing jobs enqueued with the framework's own client; kill -9 during the slow job. Then, on
the stock schema (no index created: what no index serves is read by a scan, with the index that would
make it live as advice beside the figure) and again with the advised indexes created: pgq-top finds
the queue, every count in the snapshot equals ground-truth SQL (exact, or stale with its age), every
queue with jobs has its row (a task whose jobs are all running or all dead included), the stuck job
shows with the framework's own rule and the dead job in its list; the CLI retries the dead job and
rescues the stuck one (and refuses the live worker's job); a fresh worker runs exactly those two jobs
to completion; the stock schema is left exactly as it was.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import psycopg
import pytest

from pgq_tui.cli import main
from pgq_tui.detection import single_queue
from pgq_tui.errors import EXIT_OK, EXIT_REFUSED

from .acceptance import Driver, crash_during_slow_job, fresh_worker_runs
from .cases import follow_index_advice
from .graphile_client import Graphile, Graphile18
from .harness import Processes
from .pgboss_client import PgBoss, PgBoss11, PgBoss12, PgBoss1212
from .pgqueuer_client import HEARTBEAT_TIMEOUT_S, Pgqueuer
from .procrastinate_client import STALLED_S, Procrastinate
from .river_client import River

# driver, --kind, liveness of the killed worker's job, of the live worker's job, the dialect's
# heartbeat threshold (the workers' own setting, told to pgq-top as an operator would)
FRAMEWORKS = [
    pytest.param(Graphile, "graphile-worker", "unknown", "unknown", None, id="graphile-worker"),
    pytest.param(Graphile18, "graphile-worker", "unknown", "unknown", None, id="graphile-worker-18"),
    pytest.param(PgBoss, "pg-boss", "unknown", "unknown", None, id="pg-boss"),
    pytest.param(PgBoss11, "pg-boss", "unknown", "unknown", None, id="pg-boss-11"),
    pytest.param(PgBoss1212, "pg-boss", "gone", "alive", None, id="pg-boss-12.12"),
    pytest.param(PgBoss12, "pg-boss", "gone", "alive", None, id="pg-boss-12"),
    pytest.param(Procrastinate, "procrastinate", "gone", "alive", STALLED_S, id="procrastinate"),
    pytest.param(Pgqueuer, "pgqueuer", "gone", "alive", HEARTBEAT_TIMEOUT_S, id="pgqueuer"),
    pytest.param(River, "river", "unknown", "unknown", None, id="river"),
]
SNAPSHOT_FIELDS = {
    "ready": "ready",
    "scheduled": "scheduled",
    "running": "running",
    "stuck": "stuck",
    "dead": "dead",
    "done": "done",
}


def snapshot(capsys: pytest.CaptureFixture[str], dsn: str, kind: str) -> dict[str, Any]:
    code = main(["snapshot", "--json", "--dsn", dsn, "--kind", kind])
    out, err = capsys.readouterr()
    assert (code, err) == (EXIT_OK, ""), err
    return json.loads(out)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def shown_counts(snap: dict[str, Any]) -> Counter[tuple[str, str]]:
    return Counter(
        {
            (q["queue"], state): q[name]
            for q in snap["queues"]
            for name, state in SNAPSHOT_FIELDS.items()
            if q[name]
        }
    )


def true_counts(fw: Driver) -> Counter[tuple[str, str]]:
    return Counter((queue, state) for _, queue, state in fw.truth())


def table_shape(dsn: str) -> list[tuple[str, str]]:
    """Every index and column of the user's schemas: the monitor must not change any of them."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(
            "SELECT 'index', indexrelid::regclass::text FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT LIKE 'pg\\_%%'"
            " AND n.nspname <> 'information_schema'"
            " UNION ALL SELECT 'column', attrelid::regclass::text || '.' || attname FROM pg_attribute a"
            " JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE a.attnum > 0 AND n.nspname NOT LIKE 'pg\\_%%' AND n.nspname <> 'information_schema'"
            " ORDER BY 1, 2"
        ).fetchall()


@pytest.mark.parametrize("advised", [False, True], ids=["stock", "indexed"])
@pytest.mark.parametrize(("driver", "kind", "stuck_liveness", "live_liveness", "threshold"), FRAMEWORKS)
def test_framework_end_to_end(
    advised: bool,
    driver: Any,
    kind: str,
    stuck_liveness: str,
    live_liveness: str,
    threshold: float | None,
    framework_dsn: str,
    processes: Processes,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    driver.version()  # skips, or fails under PGQ_REQUIRE_FRAMEWORKS=1, when the client is missing
    if threshold is not None:
        monkeypatch.setenv("PGQ_TOP_STALLED_AFTER", str(threshold))
    fw: Driver = driver(framework_dsn)
    fw.install()
    # the release the dialect names from the framework's own version marker (where the driver says)
    if getattr(driver, "detected", None):
        assert single_queue(framework_dsn, kind=kind).model.match.version == driver.detected
    crashed = crash_during_slow_job(fw, processes)

    shape = table_shape(framework_dsn)
    if advised:  # the operator follows the advice: the figures it names become live
        follow_index_advice(framework_dsn, kind)
    snap = snapshot(capsys, framework_dsn, kind)
    assert snap["kind"] == kind and snap["stuck_rule"]
    # no count is left out for want of an index (only what the framework does not record)
    assert not any("index" in why for why in snap["unsupported"].values()), snap["unsupported"]
    served = {
        s
        for s in SNAPSHOT_FIELDS.values()
        if s not in {SNAPSHOT_FIELDS.get(p, p) for p in snap["unsupported"]}
    }
    assert served >= {"ready", "scheduled", "running", "stuck", "dead"}
    want = true_counts(fw)
    assert shown_counts(snap) == +Counter({k: v for k, v in want.items() if k[1] in served})
    for q in snap["queues"]:  # exact at this poll, or exact as of a stated moment
        for name, figure in q["figures"].items():
            if figure["accuracy"] == "unsupported":  # a state the framework does not record: null, why
                core = {"ready", "scheduled", "running", "stuck", "dead"}
                assert SNAPSHOT_FIELDS.get(name, name) not in core and figure["reason"], (name, figure)
                assert q.get(name, q["extra"].get(name)) is None, (q["queue"], name)
                continue
            assert figure["accuracy"] in ("exact", "stale") and figure["as_of"], (q["queue"], name, figure)
            if not advised and SNAPSHOT_FIELDS.get(name, name) in ("running", "stuck", "dead"):
                # on the stock schema an unserved state says which index would make it live
                assert figure["note"] is None or "CREATE INDEX" in figure["note"], figure
    # a task whose jobs are all running (hold) or all dead (fail) has its row
    assert {"hold", "fail", "slow", "later"} <= {q["queue"] for q in snap["queues"]}
    assert want[("slow", "stuck")] == 1 and want[("fail", "dead")] == 1 and want[("later", "scheduled")] == 1
    assert want[("hold", "running")] == 1

    stuck = {str(r["id"]): r for r in snap["stuck"]["rows"]}
    running = {str(r["id"]): r for r in snap["leases"]["rows"]}
    assert set(stuck) == {crashed.slow} and set(running) == {crashed.held}
    assert stuck[crashed.slow]["liveness"] == stuck_liveness
    assert running[crashed.held]["liveness"] == live_liveness
    assert [str(r["id"]) for r in snap["dead"]["rows"]] == [crashed.failing]

    # The CLI: the live worker's job is refused; the dead job is retried, the stuck one rescued.
    where = ("--dsn", framework_dsn, "--kind", kind)
    code, _, err = cli(capsys, "requeue", *where, "--ids", crashed.held, "--yes")
    assert code == EXIT_REFUSED and "nothing to requeue" in err, err
    for verb, job in (("retry", crashed.failing), ("requeue", crashed.slow)):
        code, out, err = cli(capsys, verb, *where, "--ids", job, "--yes")
        assert (code, err) == (EXIT_OK, ""), err
        assert kind in out
    after = true_counts(fw)
    assert after[("slow", "stuck")] == 0 and after[("fail", "dead")] == 0
    assert after[("slow", "ready")] + after[("slow", "scheduled")] == 1 and after[("fail", "ready")] == 1

    # A fresh worker (the fix deployed) runs exactly those two jobs, each once, to completion.
    ran = fresh_worker_runs(fw, processes, {"fail", "slow"})
    assert Counter(ran) == Counter(
        {("fail", "start"): 1, ("fail", "done"): 1, ("slow", "start"): 1, ("slow", "done"): 1}
    )
    final = true_counts(fw)
    assert {state for (_, state), n in final.items() if n} <= {"done", "scheduled", "running"}
    assert final[("later", "scheduled")] == 1 and final[("hold", "running")] == 1
    if not advised:
        assert table_shape(framework_dsn) == shape, "the monitor or its actions altered the database"
