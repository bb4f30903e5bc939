"""The demo backend on real servers: clean stop, crash -> expired leases -> reap, idle-in-tx -> terminate."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import psycopg
import pytest
from actions_support import pgq_actions
from monitor_support import collect

from pgq_tui.demo import DemoController, DemoSession
from pgq_tui.demo.controller import IDLE_TX_APPLICATION
from pgq_tui.demo.load import HOSTILE, payload


def _wait(cond: Callable[[], object], timeout: float = 20.0, what: str = "condition") -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _descendants() -> set[int]:
    """Our live child processes, minus multiprocessing's own resource tracker (it lives as long as we
    do). A child that exited meanwhile (gone, or a zombie not yet reaped: an earlier test's process in
    this pytest worker) is not one."""
    alive = set()
    for p in psutil.Process().children(recursive=True):
        try:
            if "resource_tracker" not in " ".join(p.cmdline()):
                alive.add(p.pid)
        except (psutil.ZombieProcess, psutil.NoSuchProcess):
            pass
    return alive


@pytest.fixture
def controller(dsn: str) -> Iterator[DemoController]:
    ctl = DemoController(dsn, workers=2, rate=100.0, lease=1.0, reap_interval=0)
    ctl.start()
    yield ctl
    ctl.stop()


def test_two_sessions_start_and_stop_cleanly() -> None:
    before = _descendants()
    demos = [DemoSession(workers=1, rate=50.0, lease=2.0).start() for _ in range(2)]
    try:
        assert demos[0].dsn != demos[1].dsn  # separate servers side by side
        for demo in demos:
            assert demo.controller is not None
            _wait(lambda d=demo: d.controller.status().counts["completed"] > 0, what="completed jobs")
        dirs = [demo.server.socket_dir for demo in demos]
        postmasters = [int((demo.data_dir / "postmaster.pid").read_text().split()[0]) for demo in demos]
        started = [pid for demo in demos for pid in demo.controller.processes()]
        assert len(started) == 4  # a load generator and a worker each
    finally:
        for demo in demos:
            demo.stop()
    for pid in [*started, *postmasters]:
        assert _gone(pid), f"process {pid} outlived the demo"
    assert not any(Path(d).exists() for d in dirs)
    assert _descendants() <= before


# The demo as started from a terminal: SIGHUP, SIGINT and SIGTERM at their defaults. A child inherits
# an ignored signal (exec keeps SIG_IGN), and DemoSession rightly leaves an inherited SIG_IGN alone (a
# demo started with nohup keeps running when its terminal closes); so under a test runner started with
# nohup (SIGHUP ignored) or as a background job (SIGINT ignored), a demo that is not reset here would
# ignore the very signal the test sends and sleep on.
_SCRIPT = """
import json, signal, time
signal.signal(signal.SIGHUP, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
from pgq_tui.demo import DemoSession
with DemoSession(workers=1, rate=20.0) as demo:
    pids = demo.controller.processes()
    pids.append(int((demo.data_dir / "postmaster.pid").read_text().split()[0]))
    print(json.dumps({"dir": str(demo.server.socket_dir), "pids": pids}), flush=True)
    time.sleep(120)
"""


@contextmanager
def _running_demo(script: str) -> Iterator[tuple[subprocess.Popen[str], dict[str, Any]]]:
    """The demo script in its own session (a process group, as a terminal gives it), once it is up:
    the process and what it printed (its processes' pids and its directory). Afterwards the process is
    killed if it still runs, and every process it started must be gone, its directory removed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    try:
        started = json.loads(proc.stdout.readline())
        yield proc, started
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    for pid in started["pids"]:
        assert _gone(pid), f"process {pid} outlived the demo"
    assert not Path(started["dir"]).exists()



@pytest.mark.parametrize(
    ("sig", "group"),
    [(signal.SIGTERM, False), (signal.SIGINT, True), (signal.SIGHUP, True)],
    ids=["sigterm", "ctrl-c", "terminal-closed"],
)
def test_signals_stop_everything(sig: signal.Signals, group: bool) -> None:
    """SIGTERM to pgq-top, or Ctrl-C / a closed terminal hitting its whole process group."""
    with _running_demo(_SCRIPT) as (proc, _):
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        proc.wait(60)


_NOHUP_SCRIPT = _SCRIPT.replace(
    "signal.signal(signal.SIGHUP, signal.SIG_DFL)", "signal.signal(signal.SIGHUP, signal.SIG_IGN)"
)


def test_a_demo_started_with_nohup_outlives_its_terminal() -> None:
    """Started with SIGHUP ignored (nohup), a demo and its processes stay up when the terminal closes;
    SIGTERM still stops everything."""
    assert _NOHUP_SCRIPT != _SCRIPT
    with _running_demo(_NOHUP_SCRIPT) as (proc, started):
        os.killpg(proc.pid, signal.SIGHUP)
        time.sleep(1.0)  # time for a hang-up to be acted on (the exit status below says which was)
        assert proc.poll() is None, "a demo started with nohup stopped on SIGHUP"
        assert not any(_gone(pid) for pid in started["pids"])
        proc.send_signal(signal.SIGTERM)
        # 128 + the signal it stopped on (session.py): SIGTERM's, not SIGHUP's
        assert proc.wait(60) == 128 + signal.SIGTERM


def test_kept_demo_dir_survives(open_tmp: Path) -> None:
    with DemoSession(open_tmp / "demo", workers=1, rate=0.0) as demo:
        assert demo.controller is not None and demo.controller.status().running
    assert (open_tmp / "demo" / "data" / "PG_VERSION").exists()
    assert not (open_tmp / "demo" / "data" / "postmaster.pid").exists()


def test_controls(controller: DemoController) -> None:
    assert controller.raise_load() == 200.0 and controller.lower_load() == 100.0
    assert controller.toggle_slow() is True and controller.status().slow
    assert controller.toggle_slow() is False
    controller.add_worker()
    assert controller.status().workers == 3
    assert controller.remove_worker() is not None
    status = controller.status()
    assert (status.workers, status.rate, status.lease, status.fail_share) == (2, 100.0, 1.0, 0.1)
    _wait(lambda: controller.status().enqueued > 0, what="enqueued jobs")


def test_crash_leaves_expired_leases_that_a_reap_recovers(
    dsn: str, sql: psycopg.Connection, controller: DemoController
) -> None:
    controller.toggle_slow()  # each job takes ~1 s: the victim surely dies holding a lease
    # crash_worker() waits at most 3 s for its victim to hold a lease (the demo's key must not hang);
    # on a loaded machine the workers may not have claimed yet, so wait until both hold one.
    holders = "SELECT count(DISTINCT locked_by) FROM jobs WHERE status = 'running'"
    _wait(lambda: sql.execute(holders).fetchone()[0] == 2, what="both workers to hold a lease")
    pid = controller.crash_worker()
    assert pid is not None and _gone(pid)
    victim = controller.last_crashed
    # The pool's supervisor replaces it (a crash on purpose never counts toward giving up).
    _wait(lambda: controller.status().restarts == 1, what="the pool to replace the crashed worker")
    assert controller.status().workers == 2 and pid not in controller.processes()
    assert controller.pool is not None and controller.pool.failure is None

    def expired() -> int:
        query = (
            "SELECT count(*) FROM jobs WHERE locked_by = %s AND status = 'running' AND locked_until < now()"
        )
        return sql.execute(query, (victim,)).fetchone()[0]

    stuck = _wait(expired, timeout=10, what="the crashed worker's leases to expire")
    holder = sql.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (victim,))
    assert holder.fetchone() == (0,)
    snapshot = collect(dsn)
    assert any(lease.locked_by == victim and not lease.holder_connected for lease in snapshot.stuck.rows)
    with pgq_actions(dsn) as actions:
        outcome = actions.execute(actions.plan_reap())
    assert outcome.error is None and outcome.changed >= stuck
    running = sql.execute("SELECT count(*) FROM jobs WHERE locked_by = %s AND status = 'running'", (victim,))
    assert running.fetchone() == (0,)


def test_idle_transaction_pins_xmin_until_terminated(
    dsn: str, sql: psycopg.Connection, controller: DemoController
) -> None:
    pid = controller.open_idle_transaction()
    assert controller.open_idle_transaction() == pid  # one at a time
    row = sql.execute(
        "SELECT state, application_name, backend_xmin IS NOT NULL FROM pg_stat_activity WHERE pid = %s",
        (pid,),
    ).fetchone()
    assert row == ("idle in transaction", IDLE_TX_APPLICATION, True)
    snapshot = collect(dsn)
    assert any(s.pid == pid for s in snapshot.sessions.idle_in_transaction)
    assert any(h.kind == "backend" and h.name == str(pid) for h in snapshot.sessions.xmin_holders)
    assert controller.status().idle_tx_pid == pid
    with pgq_actions(dsn) as actions:
        outcome = actions.execute(actions.plan_terminate([pid], snapshot))
    assert (outcome.changed, outcome.error) == (1, None)
    assert sql.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone() == (0,)
    _wait(lambda: controller.status().idle_tx_pid is None, timeout=5, what="the controller to notice")
    assert controller.close_idle_transaction() is False


def test_payloads_are_varied_and_some_are_hostile() -> None:
    import random

    rng = random.Random(1)
    bodies = [payload(rng, q, n) for n in range(200) for q in ("emails", "reports", "webhooks", "thumbnails")]
    assert any(isinstance(b.get("vars"), dict) for b in bodies)  # nested objects
    assert any(b.get("comment") == HOSTILE for b in bodies)  # markup and an ANSI escape, to be escaped
