"""Server restart under load: workers reconnect and carry on, and no job is lost."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import tui_support

from pgq_tui.demo.embedded import FAST_UNSAFE_SETTINGS, EmbeddedPostgres
from pgq_tui.queue import JobQueue
from pgq_tui.queue.pool import WorkerPool
from pgq_tui.queue.worker import WorkerConfig

N_JOBS = 3000


DONE = "SELECT count(*) FROM jobs WHERE status = 'done'"
NOT_DONE = "SELECT count(*) FROM jobs WHERE status <> 'done'"


def _count(dsn: str, query: str) -> int | None:
    """The count, or None while the server is down."""
    try:
        with psycopg.connect(dsn, connect_timeout=2) as conn:
            return conn.execute(query).fetchone()[0]
    except psycopg.OperationalError:
        return None


@contextmanager
def busy_server(n_jobs: int, ms: int) -> Iterator[tuple[EmbeddedPostgres, str, WorkerConfig]]:
    """A server of its own (restarting the shared test server would disturb other tests), holding
    n_jobs jobs of `ms` milliseconds each, and a worker config with short leases for it."""
    with EmbeddedPostgres(settings=FAST_UNSAFE_SETTINGS) as server:
        dsn = server.dsn()
        with JobQueue(dsn) as q:
            q.install()
            q.enqueue("r", [{"ms": ms} for _ in range(n_jobs)], max_attempts=50)
        config = WorkerConfig(
            conninfo=dsn,
            queues=("r",),
            handler="pgq_tui.queue.handlers:sleep",
            batch=10,
            lease=1.0,
            keep=True,
            idle_sleep=0.05,
            reconnect_max=0.5,
        )
        yield server, dsn, config


def test_workers_survive_a_server_restart_and_lose_nothing() -> None:
    with busy_server(N_JOBS, ms=2) as (server, dsn, config):
        with WorkerPool(config, concurrency=2, reap_interval=0.5) as pool:
            deadline = time.monotonic() + 30
            while (_count(dsn, DONE) or 0) < N_JOBS // 5:
                assert time.monotonic() < deadline
                time.sleep(0.1)
            server.restart(down_for_s=2.0)
            done_after_restart = _count(dsn, DONE)
            deadline = time.monotonic() + 90
            while _count(dsn, NOT_DONE) != 0:
                assert time.monotonic() < deadline, "workers did not carry on after the restart"
                time.sleep(0.2)
            counts = pool.counts()
        assert _count(dsn, DONE) == N_JOBS, "a job was lost"
        assert done_after_restart is not None and done_after_restart < N_JOBS, "the restart came too late"
        assert counts["completed"] >= N_JOBS - done_after_restart


async def test_dashboard_and_pool_ride_out_a_real_server_restart() -> None:
    """pg_ctl stop, 3 s down, pg_ctl start, with the dashboard polling every second and workers busy:
    the dashboard says disconnected, then is back within two refresh intervals of the server; no job
    is lost."""
    import asyncio

    from monitor_support import pgq_monitor
    from test_tui_app import plain

    from pgq_tui.tui.app import PgqTopApp
    from pgq_tui.tui.widgets.status import Banner

    interval = 1.0
    with busy_server(1500, ms=5) as (server, dsn, config):
        monitor = pgq_monitor(dsn)
        app = PgqTopApp(monitor, interval=interval)
        try:
            with WorkerPool(config, concurrency=2, reap_interval=0.5):
                async with app.run_test(size=(120, 40)) as pilot:
                    await tui_support.settle(pilot, app, timeout=20)
                    loop = asyncio.get_running_loop()
                    restart = loop.run_in_executor(None, lambda: server.restart(down_for_s=3.0))
                    deadline = time.monotonic() + 20
                    while app.connected is not False:
                        assert time.monotonic() < deadline, "the dashboard never noticed the server stop"
                        await pilot.pause(0.1)
                    assert "disconnected" in plain(app.query_one(Banner).content)
                    await restart
                    back_at = time.monotonic()
                    while app.connected is not True:
                        assert time.monotonic() - back_at < 2 * interval + 1.0, (
                            "not back within two intervals"
                        )
                        await pilot.pause(0.05)
                    recovered_in = time.monotonic() - back_at
                    assert not app.query_one(Banner).display
                deadline = time.monotonic() + 60
                while _count(dsn, NOT_DONE) != 0:
                    assert time.monotonic() < deadline, "workers did not carry on after the restart"
                    time.sleep(0.2)
        finally:
            monitor.close()
        assert _count(dsn, DONE) == 1500, "a job was lost"
        print(
            f"\ndashboard reconnected {recovered_in:.2f} s after the server was back (interval {interval} s)"
        )
