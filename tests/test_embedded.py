"""The embedded server's lifecycle: start, stop, nothing left behind, as root and as a normal user."""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psycopg
import pytest

from pgq_tui.demo.embedded import EmbeddedPostgres


def _postgres_running_in(path: Path) -> bool:
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
            status = (proc / "status").read_text()
        except OSError:
            continue
        if "State:\tZ" in status:
            continue
        if str(path) in cmdline:
            return True
    return False


def test_temporary_server_starts_and_leaves_nothing_behind() -> None:
    server = EmbeddedPostgres()
    dsn = server.start()
    base = server.socket_dir
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SHOW autovacuum_naptime").fetchone()[0] == "5s"
        assert conn.execute("SHOW listen_addresses").fetchone()[0] == ""
    assert _postgres_running_in(base)
    server.stop()
    server.stop()  # idempotent
    assert not base.exists()
    assert not _postgres_running_in(base)


def test_kept_directory_survives_a_restart(open_tmp: Path) -> None:
    kept = open_tmp / "pg"
    with EmbeddedPostgres(base_dir=kept) as server, psycopg.connect(server.dsn(), autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (x int)")
        conn.execute("INSERT INTO kept VALUES (42)")
    assert (kept / "data" / "PG_VERSION").exists()
    with EmbeddedPostgres(base_dir=kept) as server, psycopg.connect(server.dsn()) as conn:
        assert conn.execute("SELECT x FROM kept").fetchone()[0] == 42
    assert not _postgres_running_in(kept)


def test_two_servers_at_once() -> None:
    with EmbeddedPostgres() as a, EmbeddedPostgres() as b:
        assert a.dsn() != b.dsn()
        with psycopg.connect(a.dsn()) as ca, psycopg.connect(b.dsn()) as cb:
            assert ca.execute("SELECT 1").fetchone() == cb.execute("SELECT 1").fetchone()


SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pgq_tui.demo.embedded import EmbeddedPostgres
    with EmbeddedPostgres() as server:
        print(server.socket_dir, flush=True)
        time.sleep(60)
    """
)


def test_ctrl_c_stops_the_server_and_removes_its_directory() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    base = Path(proc.stdout.readline().strip())
    assert base.exists() and _postgres_running_in(base)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert not base.exists()
    deadline = time.monotonic() + 10
    while _postgres_running_in(base):
        assert time.monotonic() < deadline, "server still running after Ctrl-C"
        time.sleep(0.1)


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the run as a normal user is the default"
)
def test_runs_as_a_normal_user_too(tmp_path: Path) -> None:
    user = "nobody"
    pwd.getpwnam(user)
    probe = subprocess.run(
        ["runuser", "-u", user, "--", sys.executable, "-c", "import psycopg, pgq_tui"],
        capture_output=True,
        text=True,
        cwd="/tmp",
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    if probe.returncode != 0:
        pytest.skip(f"this Python is not usable by {user}: {probe.stderr.strip()[:120]}")
    code = "from pgq_tui.demo.embedded import EmbeddedPostgres\nimport psycopg\n" + textwrap.dedent(
        """
        with EmbeddedPostgres() as server, psycopg.connect(server.dsn()) as conn:
            print(conn.execute("SELECT current_user").fetchone()[0])
        """
    )
    env = {**os.environ, "HOME": "/tmp", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run(
        ["runuser", "-u", user, "--", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd="/tmp",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "postgres"


def test_kill_9_of_the_owner_still_stops_the_server() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    base = Path(proc.stdout.readline().strip())
    assert _postgres_running_in(base)
    proc.kill()
    proc.wait(10)
    deadline = time.monotonic() + 30
    while _postgres_running_in(base) or base.exists():
        assert time.monotonic() < deadline, "the watchdog did not stop the orphaned server"
        time.sleep(0.2)
