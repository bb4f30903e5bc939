"""Stock schemas made by each framework's own tool (procrastinate's CLI, pg-boss 10's and pgqueuer's
clients), written by a foreign fleet in plain SQL: INSERT and COPY enqueues, claim + mark done on one
queue, claim + mark failed on the other, as fast as this shared machine allows. The timestamps'
done/s and failed/s (QueueModel.finished: procrastinate's events, written by its own triggers;
pg-boss's completed_on; pgqueuer's log, written here as pgqueuer's own log_job does) and enqueued/s
(ids; pg-boss's created_on) see the fleet like any worker; checked against what the fleet did over
each figure's own window, within 10%. pgqueuer deletes finished jobs: a job claimed and finished
between two polls leaves no id, so its enqueued/s is checked within its stated bound."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

import pytest
from foreign_fleet import Shape, foreign_fleet
from test_monitor_foreign import Sampler

from pgq_tui.detection import single_queue
from pgq_tui.monitor import open_monitor
from pgq_tui.monitor.finished import LAG_S

from .pgboss_client import PgBoss
from .pgqueuer_client import Pgqueuer
from .procrastinate_client import Procrastinate

PROCRASTINATE = Shape(
    insert="INSERT INTO procrastinate_jobs (queue_name, task_name, args) "
    "SELECT %(queue)s, 'job', jsonb_build_object('n', g) FROM generate_series(1, %(n)s) g",
    copy="COPY procrastinate_jobs (queue_name, args, task_name) FROM STDIN",
    copy_extra=("job",),
    claim="""
UPDATE procrastinate_jobs SET status = 'doing', attempts = attempts + 1
WHERE id IN (SELECT id FROM procrastinate_jobs WHERE status = 'todo' AND queue_name = %(queue)s
             ORDER BY priority DESC, id LIMIT %(n)s FOR UPDATE SKIP LOCKED)
RETURNING id
""",
    finish={
        "delete": "UPDATE procrastinate_jobs SET status = 'failed' WHERE id = ANY(%s)",
        "done": "UPDATE procrastinate_jobs SET status = 'succeeded' WHERE id = ANY(%s)",
    },
)
PGBOSS = Shape(
    insert="INSERT INTO pgboss.job (name, data) "
    "SELECT %(queue)s, jsonb_build_object('n', g) FROM generate_series(1, %(n)s) g",
    copy="COPY pgboss.job (name, data) FROM STDIN",
    claim="""
UPDATE pgboss.job SET state = 'active', started_on = now()
WHERE name = %(queue)s
  AND id IN (SELECT id FROM pgboss.job WHERE name = %(queue)s AND state < 'active' AND start_after < now()
             ORDER BY priority DESC, created_on, id LIMIT %(n)s FOR UPDATE SKIP LOCKED)
RETURNING id
""",
    finish={
        "delete": "UPDATE pgboss.job SET state = 'failed', completed_on = now() WHERE id = ANY(%s)",
        "done": "UPDATE pgboss.job SET state = 'completed', completed_on = now() WHERE id = ANY(%s)",
    },
)
_PGQUEUER_LOG = """
WITH d AS (DELETE FROM pgqueuer WHERE id = ANY(%s) RETURNING id, entrypoint, priority)
INSERT INTO pgqueuer_log (job_id, status, entrypoint, priority) SELECT id, '{}', entrypoint, priority FROM d
"""
PGQUEUER = Shape(  # pgqueuer's own log_job transition, written by hand
    insert="INSERT INTO pgqueuer (priority, entrypoint, payload, status) "
    "SELECT 0, %(queue)s, convert_to(g::text, 'UTF8'), 'queued' FROM generate_series(1, %(n)s) g",
    copy="COPY pgqueuer (entrypoint, payload, priority, status) FROM STDIN",
    copy_extra=("0", "queued"),
    claim="""
UPDATE pgqueuer SET status = 'picked', updated = now(), heartbeat = now()
WHERE id IN (SELECT id FROM pgqueuer WHERE status = 'queued' AND entrypoint = %(queue)s
               AND execute_after < now()
             ORDER BY priority DESC, id LIMIT %(n)s FOR UPDATE SKIP LOCKED)
RETURNING id
""",
    finish={"delete": _PGQUEUER_LOG.format("exception"), "done": _PGQUEUER_LOG.format("successful")},
)
PER_S = 1500.0
TOLERANCE = 0.10


def _procrastinate(dsn: str) -> Shape:
    Procrastinate.version()  # skips (or fails under PGQ_REQUIRE_FRAMEWORKS=1) without the client
    Procrastinate(dsn).install()
    return PROCRASTINATE


def _pgboss(dsn: str) -> Shape:
    PgBoss.version()
    boss = PgBoss(dsn)
    boss.env["PGQ_TEST_QUEUES"] = "del,done"  # the queues (and their partitions) the client creates
    boss.install()
    return PGBOSS


def _pgqueuer(dsn: str) -> Shape:
    Pgqueuer.version()
    Pgqueuer(dsn).install()
    return PGQUEUER


@pytest.mark.parametrize(
    ("setup", "kind"),
    [(_procrastinate, "procrastinate"), (_pgboss, "pg-boss"), (_pgqueuer, "pgqueuer")],
    ids=["procrastinate", "pg-boss", "pgqueuer"],
)
def test_rates_under_a_foreign_fleet(framework_dsn: str, setup: Callable[[str], Shape], kind: str) -> None:
    shape = setup(framework_dsn)
    target = single_queue(framework_dsn, kind=kind)
    snaps = []
    with (
        foreign_fleet(framework_dsn, PER_S, workers=2, shape=shape) as fleet,
        open_monitor(framework_dsn, target.model, rate_window_s=3) as monitor,
    ):
        sampler = Sampler(fleet)
        fleet.wait_running(60)  # spawned processes take seconds to start on a loaded machine
        monitor.collect()
        deadline = time.monotonic() + 7  # what the timestamps scan stays under 1,000 pages
        while time.monotonic() < deadline:
            snaps.append(monitor.collect())
            time.sleep(0.5)
        sampler.stop.set()
    snap = snaps[-1]
    tp = snap.throughput
    assert tp.rates_note is None, tp.rates_note
    assert tp.window_s is not None
    lag = timedelta(seconds=LAG_S)
    end = snap.server.now
    start = end - timedelta(seconds=tp.window_s)
    rows = {}
    # queue "done" finishes jobs (succeeded), queue "del" fails them (failed for good)
    for q, name in (("done", "completed"), ("del", "failed")):
        rates = tp.per_queue[q]
        assert rates.figures[name].source == "timestamps", rates
        low, high = sampler.stamped(q, start - lag, end - lag)
        shown = getattr(rates, name)
        rows[q] = ((low + high) / 2, shown)
        inside = shown is not None and low * (1 - TOLERANCE) <= shown <= high * (1 + TOLERANCE)
        assert inside, (q, name, shown, low, high)
        if rates.figures["enqueued"].source == "timestamps":  # pg-boss's created_on
            enq = sampler.rate(q, 0, start - lag, end - lag)
            truth_low = truth_high = enq
        else:  # ids: read by each poll's statements, some instant of its collect_ms
            first = next(s for s in snaps if abs((s.server.now - start).total_seconds()) < 1e-3)
            truth_low, truth_high = sampler.span(q, 0, first, snap)
            enq = (truth_low + truth_high) / 2
        rows[q] += (enq, rates.enqueued)
        bound = rates.figures["enqueued"].bound or 0.0  # ids never seen by a poll (rows deleted)
        low, high = (
            (rates.enqueued or 0.0) * (1 - TOLERANCE),
            ((rates.enqueued or 0.0) + bound) * (1 + TOLERANCE),
        )
        assert low <= truth_high and truth_low <= high, (q, rates, truth_low, truth_high)
    print(f"{kind} fleet over {tp.window_s:.1f} s (truth done, shown, truth in, shown): {rows}")
