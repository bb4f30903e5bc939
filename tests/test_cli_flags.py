"""Flags where people type them (#31): the global --read-only is accepted after the subcommand too,
and a write command asked to be read-only refuses (exit 7) rather than failing as bad usage."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import psycopg
import pytest

from pgq_tui.errors import EXIT_OK, EXIT_REFUSED, EXIT_USAGE
from pgq_tui.queue import JobQueue


def _pgq_top(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgq_tui", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def _stuck_job(dsn: str) -> None:
    with JobQueue(dsn) as q:
        q.enqueue("q", [{}])
        q.claim("q", limit=1, lease=30)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("UPDATE jobs SET locked_until = now() - interval '1 minute'")


@pytest.mark.parametrize("where", ["after", "before"])
def test_requeue_read_only_is_refused_with_exit_7_wherever_the_flag_is(dsn: str, where: str) -> None:
    _stuck_job(dsn)
    flags = ["requeue", "--stuck", "--read-only", "--yes", "--dsn", dsn]
    if where == "before":
        flags = ["--read-only", "requeue", "--stuck", "--yes", "--dsn", dsn]
    run = _pgq_top(*flags)
    assert run.returncode == EXIT_REFUSED, run
    assert run.stderr == "pgq-top: refused: read-only mode\n"
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT status FROM jobs").fetchall() == [("running",)]
    ran = _pgq_top("requeue", "--stuck", "--yes", "--dsn", dsn)  # the same command, writes allowed
    assert ran.returncode == EXIT_OK, ran.stderr


@pytest.mark.parametrize("command", [["init"], ["worker", "--queue", "q"]])
def test_a_command_that_writes_refuses_read_only(dsn: str, command: list[str]) -> None:
    for flags in ([*command, "--read-only", "--dsn", dsn], ["--read-only", *command, "--dsn", dsn]):
        run = _pgq_top(*flags)
        assert run.returncode == EXIT_REFUSED, run
        (line,) = run.stderr.splitlines()
        assert line.startswith("pgq-top: error: read-only: writes are disabled ("), line


def test_read_only_after_a_reading_command_is_accepted(dsn: str) -> None:
    run = _pgq_top("snapshot", "--json", "--read-only", "--dsn", dsn)
    assert run.returncode == EXIT_OK, run.stderr
    dry = _pgq_top("init", "--dry-run", "--read-only", "--dsn", dsn)
    assert (dry.returncode, dry.stdout) == (EXIT_OK, "-- nothing to change\n"), dry


def test_the_fleet_screen_refuses_record_with_one_line(dsn: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    run = _pgq_top("--dsn", dsn, "--dsn", dsn, "--record", str(tmp_path / "f.pgq"))
    assert run.returncode == EXIT_USAGE, run
    assert run.stderr == (
        "pgq-top: error: --record records one dashboard; for several databases run "
        "pgq-top record --out FILE with the same --dsn/--targets\n"
    )
    assert not (tmp_path / "f.pgq").exists()


def test_the_fleet_polls_with_the_count_cap_it_is_given(dsn: str) -> None:
    from pgq_tui.fleet.poller import FleetPoller
    from pgq_tui.targets import Target

    with JobQueue(dsn) as q:
        q.enqueue("q", [{}] * 3)
    poller = FleetPoller([Target("one", dsn)], interval=0.2, count_cap=2, probe_interval_s=0).start()
    try:
        deadline = time.monotonic() + 30
        while not any(e.snapshot is not None for e in poller.entries()):
            assert time.monotonic() < deadline, poller.entries()
            time.sleep(0.05)
        (entry,) = poller.entries()
        assert entry.snapshot is not None and entry.snapshot.counts is not None
        assert entry.snapshot.counts.cap == 2
    finally:
        poller.stop()


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--interval", "5", "record", "--out", "r.pgq"],
            "pgq-top: error: --interval before record is the dashboard's: "
            "write it after, pgq-top record --interval ...",
        ),
        (
            ["--xmin-hold=3", "why"],
            "pgq-top: error: --xmin-hold before why is the dashboard's: "
            "write it after, pgq-top why --xmin-hold ...",
        ),
        (
            ["--probe-interval", "1", "exporter"],
            "pgq-top: error: --probe-interval before exporter is the dashboard's: pgq-top exporter has none",
        ),
    ],
)
def test_a_dashboard_flag_before_a_subcommand_that_would_drop_it_is_refused(
    dsn: str, argv: list[str], line: str
) -> None:
    run = _pgq_top("--dsn", dsn, *argv)
    assert (run.returncode, run.stderr, run.stdout) == (EXIT_USAGE, line + "\n", ""), run


def test_count_cap_before_snapshot_is_read(dsn: str) -> None:
    with JobQueue(dsn) as q:
        q.enqueue("q", [{}] * 3)
    run = _pgq_top("--count-cap", "2", "snapshot", "--json", "--wait", "0", "--dsn", dsn)
    assert run.returncode == EXIT_OK, run.stderr
    assert json.loads(run.stdout)["counts"]["cap"] == 2
