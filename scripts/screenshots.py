"""Render the dashboard on a busy demo queue and save SVG screenshots into screenshots/.

    python scripts/screenshots.py [--out screenshots]

    python scripts/screenshots.py --only fleet   # just the fleet screen's shots

Starts a private demo (embedded PostgreSQL, load generator, worker pool), makes it interesting (more
load, an idle-in-transaction session pinning the xmin horizon, a worker killed mid-lease so stuck
jobs appear), then lets the app render itself at 80x24 and 160x48 via `App.save_screenshot`.
The fleet shots watch that demo, a second server holding a quiet queue beside a home-grown table of
the seed article's shape (two rows: each queue detected), and a third that was stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import psycopg

from pgq_tui.actions import Actions
from pgq_tui.demo import DemoSession
from pgq_tui.demo.embedded import EmbeddedPostgres
from pgq_tui.detection import find_queues, single_queue
from pgq_tui.fleet.poller import FleetPoller
from pgq_tui.monitor.collect import Monitor, open_monitor
from pgq_tui.queue import JobQueue
from pgq_tui.targets import Target
from pgq_tui.tui.app import PgqTopApp
from pgq_tui.tui.fleet import FleetApp

SHOTS: list[tuple[str, tuple[int, int], list[str]]] = [
    ("dashboard-80x24", (80, 24), []),
    ("dashboard-160x48", (160, 48), []),
    ("sessions-80x24", (80, 24), ["5"]),
    ("requeue-confirm-80x24", (80, 24), ["2", "space", "r"]),
    ("advisor-160x48", (160, 48), ["A"]),
    # the diagnosis once the idle transaction has held the horizon for a minute (docs/diagnosis.md)
    ("why-dashboard-80x24", (80, 24), []),
    ("why-80x24", (80, 24), ["y"]),
]
XMIN_HOLD_S = 65  # the diagnosis names an xmin holder after 60 s (Thresholds.xmin_hold_s)
FLEET_SHOTS = [("fleet-80x24", (80, 24)), ("fleet-160x48", (160, 48))]
# The seed article's first shape, as its own plain SQL makes it: waiting jobs, two claimed by a live
# worker and one by a worker that died an hour ago (stuck by the lock-age rule of its mapping).
SEED_JOB_QUEUE = """
CREATE TABLE job_queue (
    id bigserial PRIMARY KEY, payload jsonb NOT NULL DEFAULT '{}', status text NOT NULL DEFAULT 'pending',
    priority int NOT NULL DEFAULT 0, scheduled_at timestamptz NOT NULL DEFAULT now(),
    locked_at timestamptz, worker_id text);
CREATE INDEX job_queue_claim_idx ON job_queue (priority DESC, id) WHERE status = 'pending';
CREATE INDEX job_queue_running_idx ON job_queue (locked_at) WHERE status = 'processing';
INSERT INTO job_queue (priority) SELECT g % 3 FROM generate_series(1, 12) g;
UPDATE job_queue SET status = 'processing', locked_at = now(), worker_id = 'w-1' WHERE id IN (1, 2);
UPDATE job_queue SET status = 'processing', locked_at = now() - interval '1 hour', worker_id = 'w-0'
WHERE id = 3;
"""


async def shoot(session: DemoSession, out: Path, name: str, size: tuple[int, int], press: list[str]) -> None:
    controller = session.controller
    (target,) = find_queues(session.dsn, kind="pgq")
    monitor = Monitor(session.dsn, target.model, probe_interval_s=1.0)  # a few claim-cost probes in 3 polls
    actions = Actions(session.dsn, target.model)
    app = PgqTopApp(monitor, actions=actions, demo=controller, interval=1.0)
    try:
        async with app.run_test(size=size) as pilot:
            deadline = time.monotonic() + 15
            while app.received < 3 and time.monotonic() < deadline:  # rates need a few polls
                await pilot.pause(0.2)
            for key in press:
                await pilot.press(key)
                await pilot.pause(0.3)
            await pilot.pause(0.5)
            app.save_screenshot(filename=f"{name}.svg", path=str(out))
            print(f"saved {out / (name + '.svg')}", file=sys.stderr)
    finally:
        actions.close()
        monitor.close()


def wait_for_stuck_jobs(session: DemoSession, timeout: float = 60) -> int:
    """Crash workers until the monitor sees stuck jobs (a crash can hit a worker holding none)."""
    controller = session.controller
    deadline = time.monotonic() + timeout
    with open_monitor(session.dsn, single_queue(session.dsn, kind="pgq").model) as monitor:
        while time.monotonic() < deadline:
            controller.crash_worker()
            controller.add_worker()
            time.sleep(controller.lease + 1)
            stuck = monitor.collect().stuck.total
            if stuck:
                return stuck
    raise SystemExit("no stuck jobs appeared: the screenshots would not show the stuck-job panels")


SEED_TABLE = """
CREATE TABLE jobs (id bigserial PRIMARY KEY, queue text, payload jsonb, status text DEFAULT 'pending',
                   run_at timestamptz DEFAULT now(), attempts int DEFAULT 0, locked_until timestamptz);
CREATE INDEX jobs_pending_idx ON jobs (queue, run_at) WHERE status = 'pending';
CREATE INDEX jobs_running_idx ON jobs (queue, locked_until) WHERE status = 'running';
INSERT INTO jobs (queue, payload, run_at)
SELECT (ARRAY['mail', 'thumbnails', 'billing'])[1 + g % 3], jsonb_build_object('n', g),
       now() - make_interval(secs => g % 90) + CASE WHEN g % 7 = 0 THEN interval '1 hour' ELSE '0' END
FROM generate_series(1, 400) g;
UPDATE jobs SET status = 'running', attempts = 1,
       locked_until = now() + CASE WHEN id % 5 = 0 THEN interval '-3 minutes' ELSE interval '5 minutes' END
WHERE id IN (SELECT id FROM jobs WHERE run_at <= now() ORDER BY id LIMIT 40);
UPDATE jobs SET status = 'done'
WHERE id IN (SELECT id FROM jobs WHERE status = 'pending' ORDER BY id DESC LIMIT 90);
"""


async def shoot_dialect(out: Path) -> None:
    """The seed article's `jobs` table (a home-grown queue, no pgq-top schema) through its dialect."""
    import psycopg

    from pgq_tui.demo.embedded import EmbeddedPostgres

    server = EmbeddedPostgres()
    try:
        admin = server.start()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("CREATE DATABASE shop")
        dsn = server.dsn("shop")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(SEED_TABLE)
        (target,) = find_queues(dsn)
        for name, size, press in (
            ("seed-jobs-120x32", (120, 32), []),
            ("seed-jobs-detail-120x32", (120, 32), ["2", "enter"]),
        ):
            monitor = Monitor(dsn, target.model)
            actions = Actions(dsn, target.model)
            app = PgqTopApp(monitor, actions=actions, target=target.label, interval=1.0)
            try:
                async with app.run_test(size=size) as pilot:
                    while app.received < 2:
                        await pilot.pause(0.2)
                    for key in press:
                        await pilot.press(key)
                        await pilot.pause(0.3)
                    await pilot.pause(0.5)
                    app.save_screenshot(filename=f"{name}.svg", path=str(out))
                    print(f"saved {out / (name + '.svg')}", file=sys.stderr)
            finally:
                actions.close()
                monitor.close()
    finally:
        server.stop()


async def shoot_fleet(session: DemoSession, out: Path, only: str) -> None:
    """The fleet screen over the busy demo, a quiet second server and a third one that is down."""
    with EmbeddedPostgres() as quiet, EmbeddedPostgres() as gone:
        with JobQueue(quiet.dsn()) as q:
            q.install()
            q.enqueue("invoices", [{"n": i} for i in range(40)])
        with psycopg.connect(quiet.dsn(), autocommit=True) as conn:
            conn.execute(SEED_JOB_QUEUE)
        gone_dsn = gone.dsn()
        gone.stop()
        targets = [
            Target("orders", session.dsn),
            Target("billing", quiet.dsn()),
            Target("reports-eu", gone_dsn),
        ]
        poller = FleetPoller(targets, interval=1.0).start()
        try:
            for name, size in FLEET_SHOTS:
                if not name.startswith(only):
                    continue
                app = FleetApp(poller, interval=1.0)
                async with app.run_test(size=size) as pilot:
                    while not app.rows or any(r.state == "waiting" for r in app.rows):
                        await pilot.pause(0.2)
                    await pilot.pause(1.0)
                    app.save_screenshot(filename=f"{name}.svg", path=str(out))
                    print(f"saved {out / (name + '.svg')}", file=sys.stderr)
        finally:
            poller.stop()


async def shoot_replay(session: DemoSession, out: Path) -> None:
    """`pgq-top replay` at 80x24: 30 polls of the busy demo recorded, the cursor 10 polls back."""
    import tempfile

    from pgq_tui.history.replay import ReplaySource
    from pgq_tui.history.store import Recorder, Recording
    from pgq_tui.tui.replay import ReplayApp

    path = Path(tempfile.mkdtemp()) / "demo.pgq"
    target = single_queue(session.dsn, kind="pgq")
    recorder = Recorder(path)
    with open_monitor(session.dsn, target.model) as monitor:
        for _ in range(30):
            recorder.append(target.label, monitor.collect())
            time.sleep(1.0)
    recorder.close()
    with Recording(path) as recording:
        source = ReplaySource(recording, target.label)
        source.step(-10)
        app = ReplayApp(source, target=target.label)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(1.0)
            app.save_screenshot(filename="replay-80x24.svg", path=str(out))
            print(f"saved {out / 'replay-80x24.svg'}", file=sys.stderr)


async def main(out: Path, only: str = "") -> None:
    out.mkdir(parents=True, exist_ok=True)
    print("starting the demo…", file=sys.stderr)
    # The reaper is held off so the stuck jobs we make stay on screen for every shot.
    with DemoSession(reap_interval=600) as session:
        c = session.controller
        assert c is not None
        c.raise_load()
        c.raise_load()
        c.open_idle_transaction()
        opened = time.monotonic()
        time.sleep(8)  # history for the chart and sparklines, dead tuples behind the xmin holder
        print(f"{wait_for_stuck_jobs(session)} stuck jobs", file=sys.stderr)
        for name, size, press in SHOTS:
            if name.startswith(only):
                if name.startswith("why"):
                    time.sleep(max(0.0, opened + XMIN_HOLD_S - time.monotonic()))
                await shoot(session, out, name, size, press)
        await shoot_fleet(session, out, only)
        if "replay".startswith(only) or only.startswith("replay"):
            await shoot_replay(session, out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "screenshots")
    parser.add_argument("--only", default="", help="only the shots whose name starts with this")
    args = parser.parse_args()
    if not args.only.startswith("seed-jobs"):
        asyncio.run(main(args.out, args.only))
    if "seed-jobs".startswith(args.only) or args.only.startswith("seed-jobs"):
        asyncio.run(shoot_dialect(args.out))  # the seed article's table through its dialect
