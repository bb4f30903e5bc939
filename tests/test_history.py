"""Record a live queue, then read it back: `record`, `snapshot --from --at`, SIGKILL, SIGTERM, replay."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest
from test_tui_app import seed_stuck

from pgq_tui.cli import main
from pgq_tui.exitcodes import WHY_CRITICAL, WHY_WARNING
from pgq_tui.history.record import record
from pgq_tui.history.replay import ReplaySource
from pgq_tui.history.store import Recorder, Recording
from pgq_tui.queue import JobQueue
from pgq_tui.targets import Target
from pgq_tui.tui import keys
from pgq_tui.tui.replay import ReplayApp
from pgq_tui.tui.screens.help import HelpScreen

PGQ_TOP = [sys.executable, "-m", "pgq_tui"]


def polls_in(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            return int(conn.execute("SELECT count(*) FROM polls").fetchone()[0])
    except sqlite3.Error:
        return 0


def wait_polls(path: Path, n: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while polls_in(path) < n:
        assert time.monotonic() < deadline, f"fewer than {n} polls recorded in {timeout} s"
        time.sleep(0.1)


def server_now(dsn: str) -> str:
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT now()").fetchone()[0].isoformat()


def snapshot_json(capsys: pytest.CaptureFixture[str], path: Path, when: str) -> dict:
    capsys.readouterr()
    assert main(["snapshot", "--from", str(path), "--at", when, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def by_queue(snap: dict) -> dict[str, dict]:
    return {q["queue"]: q for q in snap["queues"]}


def test_snapshot_from_a_recording_gives_the_state_before_and_after_a_known_moment(
    dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rec.pgq"
    with JobQueue(dsn) as q:
        q.enqueue("alpha", [{"i": i} for i in range(3)])
    stop = threading.Event()
    result: list[tuple[int, int]] = []
    thread = threading.Thread(
        target=lambda: result.append(
            record([Target("t", dsn)], Recorder(path), interval_s=0.3, duration_s=None, stop=stop,
                   log=sys.stderr)
        )
    )  # fmt: skip
    thread.start()
    try:
        wait_polls(path, 3)
        moment = server_now(dsn)
        with JobQueue(dsn) as q:
            q.enqueue("beta", [{"i": i} for i in range(4)])
        seed_stuck(dsn, "gamma", n=2)
        wait_polls(path, polls_in(path) + 3)
    finally:
        stop.set()
        thread.join(10)
    polls, size = result[0]
    assert polls >= 6 and size > 0

    before = by_queue(snapshot_json(capsys, path, moment))
    assert before["alpha"]["ready"] == 3
    assert "beta" not in before and "gamma" not in before
    after = by_queue(snapshot_json(capsys, path, "2099-01-01T00:00:00Z"))
    assert after["alpha"]["ready"] == 3 and after["beta"]["ready"] == 4
    assert after["gamma"]["stuck"] == 2


def test_a_recorder_killed_with_sigkill_is_readable(dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "killed.pgq"
    with JobQueue(dsn) as q:
        q.enqueue("alpha", [{"i": 1}])
    proc = subprocess.Popen(
        [*PGQ_TOP, "record", "--dsn", dsn, "--out", str(path), "--interval", "0.2"],
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_polls(path, 4)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    with Recording(path) as r:
        (queue,) = r.queues()
        polls = r.polls(queue)
        assert len(polls) >= 4
        for ref in polls:
            assert r.snapshot(ref).queues[0].ready == 1


@pytest.mark.parametrize("how", ["sigterm", "sigint", "duration"])
def test_record_stops_with_exit_0(dsn: str, tmp_path: Path, how: str) -> None:
    path = tmp_path / "r.pgq"
    argv = [*PGQ_TOP, "record", "--dsn", dsn, "--out", str(path), "--interval", "0.2"]
    if how == "duration":
        argv += ["--duration", "1.5"]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    # Timed from the line the recorder prints as it begins: the interpreter's start-up before it (a few
    # seconds on a loaded machine) is no part of the recorder's stopping.
    first = proc.stderr.readline()
    begun = time.monotonic()
    if how != "duration":
        wait_polls(path, 2)
        proc.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
    _, rest = proc.communicate(timeout=30)
    err = first + rest
    assert proc.returncode == 0, err
    assert "every 0.2s" in first and "Traceback" not in err and "polls recorded" in err
    if how == "duration":  # 1.5 s, the poll then in flight, closing, and the interpreter's exit
        assert time.monotonic() - begun < 10
    assert polls_in(path) >= 2


def test_bad_recording_input_is_one_line_and_an_exit_code(dsn: str, tmp_path: Path) -> None:
    junk = tmp_path / "junk.pgq"
    junk.write_bytes(os.urandom(5000))
    good = tmp_path / "good.pgq"
    proc = subprocess.run(
        [*PGQ_TOP, "record", "--dsn", dsn, "--out", str(good), "--interval", "0.2", "--duration", "0.5"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    cases = [
        (["snapshot", "--from", str(junk), "--at", "2026-01-01T00:00Z", "--json"], "not a pgq-top recording"),
        (["snapshot", "--from", str(good), "--at", "1999-01-01T00:00:00Z"], "before the recording starts"),
        (["snapshot", "--from", str(good), "--at", "yesterday"], "not a time"),
        (["snapshot", "--from", str(good)], "both --from FILE and --at TIME"),
        (["replay", str(tmp_path / "missing.pgq")], "no such recording"),
        (["record", "--dsn", dsn, "--out", str(junk), "--duration", "1"], "cannot write a recording"),
    ]
    for argv, message in cases:
        proc = subprocess.run([*PGQ_TOP, *argv], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, (argv, proc.stderr)
        assert message in proc.stderr and "Traceback" not in proc.stderr, (argv, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


async def test_replay_steps_through_time_and_has_no_write_keys(dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "r.pgq"
    stop = threading.Event()
    thread = threading.Thread(
        target=record, args=([Target("t", dsn)], Recorder(path)),
        kwargs={"interval_s": 0.2, "duration_s": None, "stop": stop, "log": sys.stderr},
    )  # fmt: skip
    thread.start()
    try:
        wait_polls(path, 2)
        seed_stuck(dsn, "gamma", n=2)
        wait_polls(path, polls_in(path) + 2)
    finally:
        stop.set()
        thread.join(10)
    with Recording(path) as recording:
        (queue,) = recording.queues()
        source = ReplaySource(recording, queue)
        app = ReplayApp(source, target=queue)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.3)
            header = app.header_line().plain
            assert "REPLAY" in header and f"poll {len(source.polls)}/{len(source.polls)}" in header
            assert app.snapshot is not None and sum(q.stuck for q in app.snapshot.queues) == 2
            first = app.received
            for _ in range(len(source.polls)):
                await pilot.press("left_square_bracket")
            deadline = time.monotonic() + 10
            while app.received <= first and time.monotonic() < deadline:
                await pilot.pause(0.05)
            await pilot.pause(0.3)
            assert source.index == 0 and "poll 1/" in app.header_line().plain
            assert sum(q.stuck for q in app.snapshot.queues) == 0  # before the crash
            await pilot.press("question_mark")
            await pilot.pause(0.2)
            assert isinstance(app.screen, HelpScreen)
            listed = {b.action for b in app.screen._bindings_shown}
            await pilot.press("escape")
            active = {ab.binding.action for ab in app.screen.active_bindings.values()}
            assert not active & (keys.WRITE_ACTIONS | {"advise"}), active
            assert not listed & keys.WRITE_ACTIONS
            await pilot.press("r")  # requeue's key: absent, nothing happens
            await pilot.press("q")
        assert app.return_code in (0, None)


def test_why_from_a_recording_names_the_cause_at_that_moment(
    dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rec.pgq"
    with JobQueue(dsn) as q:
        q.enqueue("alpha", [{"i": 1}])
    idle = psycopg.connect(dsn, application_name="report job")
    try:
        idle.execute("SELECT txid_current()")  # an xmin holder, idle in transaction
        pid = idle.info.backend_pid
        stop = threading.Event()
        thread = threading.Thread(
            target=record, args=([Target("t", dsn)], Recorder(path)),
            kwargs={"interval_s": 0.3, "duration_s": 4.0, "stop": stop, "log": sys.stderr},
        )  # fmt: skip
        thread.start()
        thread.join(30)
    finally:
        idle.close()
    capsys.readouterr()
    argv = [
        "why",
        "--from",
        str(path),
        "--at",
        "2099-01-01T00:00:00Z",
        "--xmin-hold",
        "1",
        "--min-duration",
        "1",
    ]
    code = main(argv)
    out = capsys.readouterr().out
    assert code in (WHY_WARNING, WHY_CRITICAL), out
    assert str(pid) in out and "idle in" in out, out
    assert main(["why", "--from", str(path)]) == 2  # --at missing: one line, usage exit


def test_record_refuses_another_applications_sqlite_file_and_leaves_it_unchanged(
    dsn: str, tmp_path: Path
) -> None:
    app = tmp_path / "app.db"
    with sqlite3.connect(app) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO users (name) VALUES ('ada'), ('grace')")
    conn.close()
    before = app.read_bytes()
    proc = subprocess.run(
        [*PGQ_TOP, "record", "--dsn", dsn, "--out", str(app), "--interval", "0.2", "--duration", "0.5"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "not a pgq-top recording" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert app.read_bytes() == before  # byte for byte: no WAL switch, no tables added
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]  # no -wal, no -shm
    with sqlite3.connect(f"file:{app}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        assert tables == [("users",)]
    conn.close()
    # an empty file, and an existing recording, are still recorded into
    empty = tmp_path / "empty.pgq"
    empty.touch()
    for out in (empty, empty):
        proc = subprocess.run(
            [*PGQ_TOP, "record", "--dsn", dsn, "--out", str(out), "--interval", "0.2", "--duration", "0.5"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    assert polls_in(empty) >= 2
