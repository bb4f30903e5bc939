"""Bad input end to end: every command answers with one clear line and a documented exit code, never a
traceback, and nothing in the database changes. The dashboard runs under a real pseudo-terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import socket
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from pgq_tui.demo.embedded import EmbeddedPostgres

PGQ = [sys.executable, "-m", "pgq_tui"]


def run_cli(args: list[str], timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PGQ, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def run_in_terminal(
    args: list[str],
    *,
    size: tuple[int, int] = (80, 24),
    keys: bytes = b"",
    wait_for: bytes = b"",
    timeout: float = 30,
    env: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    """Run pgq-top on a pseudo-terminal of `size` (columns, rows); send `keys` once `wait_for` appears."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    proc = subprocess.Popen(
        [*PGQ, *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
        env={**os.environ, "TERM": "xterm-256color", **(env or {})},
        start_new_session=True,
    )
    os.close(slave)
    out = b""
    sent = not keys
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            if not sent and (wait_for in out):
                time.sleep(0.5)
                os.write(master, keys)
                sent = True
            if proc.poll() is not None and not ready:
                break
        else:
            raise AssertionError(f"pgq-top did not finish in {timeout}s; screen so far: {out[-2000:]!r}")
        return proc.wait(10), out
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def one_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


@pytest.fixture
def hung_server() -> Iterator[str]:
    """A TCP port on loopback that accepts connections and never answers (a wedged server or firewall)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"host=127.0.0.1 port={listener.getsockname()[1]} dbname=x user=x"
    stop.set()
    thread.join(2)
    for s in accepted:
        s.close()
    listener.close()


@pytest.fixture
def password_server() -> Iterator[str]:
    """A server of its own that asks for a password (scram) over its socket."""
    with EmbeddedPostgres() as server:
        with psycopg.connect(server.dsn(), autocommit=True) as conn:
            conn.execute("CREATE ROLE app LOGIN PASSWORD 'right-password'")
        hba = server.data_dir / "pg_hba.conf"
        hba.write_text("local all app scram-sha-256\n" + hba.read_text())
        with psycopg.connect(server.dsn(), autocommit=True) as conn:
            conn.execute("SELECT pg_reload_conf()")
        yield make_conninfo(server.dsn(), user="app", password="wrong-password")


@pytest.fixture
def fingerprint(sql: psycopg.Connection):  # type: ignore[no-untyped-def]
    """What the database holds, to prove a failed command changed nothing."""
    sql.execute("CREATE TABLE x (id int)")
    sql.execute("INSERT INTO x VALUES (1)")

    def take() -> list[tuple]:
        return sql.execute(
            "SELECT c.relname, c.relkind, (SELECT count(*) FROM jobs), (SELECT count(*) FROM x) "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' ORDER BY 1"
        ).fetchall()

    return take


CONNECT_CASES = {
    "bad DSN syntax": ("host=/tmp bogus_option=1", 2, "bad DSN"),
    "nothing listening": ("host=127.0.0.1 port=1 dbname=x connect_timeout=3", 3, "cannot connect"),
    "no such socket": ("host=/nonexistent-dir dbname=x", 3, "cannot connect"),
}


@pytest.mark.parametrize("case", sorted(CONNECT_CASES))
@pytest.mark.parametrize("command", ["snapshot", "init", "dashboard"])
def test_unusable_dsn(case: str, command: str) -> None:
    dsn, code, text = CONNECT_CASES[case]
    if command == "dashboard":
        rc, out = run_in_terminal(["--dsn", dsn])
        output = out.decode(errors="replace")
    else:
        proc = run_cli([command, "--dsn", dsn])
        rc, output = proc.returncode, proc.stderr
    assert rc == code, output
    assert text in one_line(output)


def test_hung_server_times_out_with_one_line(hung_server: str) -> None:
    started = time.monotonic()
    proc = run_cli(["snapshot", "--dsn", hung_server])
    assert proc.returncode == 3, proc.stderr
    assert "cannot connect" in one_line(proc.stderr) and "timeout" in proc.stderr.lower()
    assert time.monotonic() - started < 15


def test_wrong_password(password_server: str) -> None:
    for args in (["snapshot", "--dsn", password_server], ["init", "--dsn", password_server]):
        proc = run_cli(args)
        assert proc.returncode == 3, proc.stderr
        assert "password authentication failed" in one_line(proc.stderr)
    rc, out = run_in_terminal(["--dsn", password_server])
    assert rc == 3 and "password authentication failed" in one_line(out.decode())


@pytest.mark.parametrize("table", ["missing", "jobs; drop table x", 'x"; drop table x; --'])
def test_missing_or_hostile_table(dsn: str, table: str, fingerprint) -> None:  # type: ignore[no-untyped-def]
    before = fingerprint()
    for command in (["snapshot", "--json"], ["worker", "--queue", "q"]):
        proc = run_cli([command[0], "--dsn", dsn, "--table", table, *command[1:]])
        assert proc.returncode == 4, proc.stderr
        assert "does not exist" in one_line(proc.stderr)
    rc, out = run_in_terminal(["--dsn", dsn, "--table", table])
    assert rc == 4 and "does not exist" in one_line(out.decode())
    assert fingerprint() == before


def test_table_with_the_wrong_columns(dsn: str, sql: psycopg.Connection, fingerprint) -> None:  # type: ignore[no-untyped-def]
    sql.execute("CREATE TABLE not_jobs (id int, body text)")
    before = fingerprint()
    proc = run_cli(["snapshot", "--dsn", dsn, "--table", "not_jobs"])
    assert proc.returncode == 4, proc.stderr
    assert "not_jobs" in one_line(proc.stderr)
    rc, out = run_in_terminal(["--dsn", dsn, "--table", "not_jobs"])
    assert rc == 4 and "not_jobs" in one_line(out.decode())
    assert fingerprint() == before


def test_a_table_locked_by_another_session_names_the_holder(dsn: str) -> None:
    # VACUUM FULL or ALTER TABLE holds ACCESS EXCLUSIVE: reading the table's index definitions waits
    # on it. Say who holds it, quickly, instead of "cannot connect" after the statement timeout.
    with psycopg.connect(dsn) as holder:
        holder.execute("LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE")
        pid = holder.info.backend_pid
        started = time.monotonic()
        proc = run_cli(["snapshot", "--json", "--dsn", dsn])
        took = time.monotonic() - started
        holder.rollback()
    line = one_line(proc.stderr)
    assert proc.returncode == 9, proc.stderr  # EXIT_LOCK_TIMEOUT
    assert f"pid {pid} on public.jobs" in line and "LOCK TABLE jobs" in line, line
    assert took < 8, took  # the 2 s lock timeout, not the 10 s statement timeout
    assert run_cli(["snapshot", "--json", "--dsn", dsn]).returncode == 0  # released: it opens


def test_dashboard_without_a_terminal_points_to_snapshot(dsn: str) -> None:
    proc = run_cli(["--dsn", dsn])
    assert proc.returncode == 6
    assert "snapshot --json" in one_line(proc.stderr)


def test_terminal_too_small_is_a_clear_message(dsn: str) -> None:
    rc, out = run_in_terminal(["--dsn", dsn], size=(30, 10))
    assert rc == 6
    assert "30x10" in one_line(out.decode())


@pytest.mark.parametrize(("size", "term"), [((40, 12), "xterm-256color"), ((80, 24), "dumb")])
def test_small_or_dumb_terminal_still_runs_and_quits(
    dsn: str, queue, size: tuple[int, int], term: str
) -> None:  # type: ignore[no-untyped-def]
    queue.enqueue("emails", [{"to": "a@example.com"}] * 3)
    rc, out = run_in_terminal(
        ["--dsn", dsn, "--interval", "0.5"], size=size, keys=b"q", wait_for=b"emails", env={"TERM": term}
    )
    assert rc == 0, out[-2000:]
    assert b"Traceback" not in out


def test_bad_flags_are_usage_errors() -> None:
    proc = run_cli(["--interval", "soon"])
    assert proc.returncode == 2 and "invalid float value" in proc.stderr
    proc = run_cli(["worker", "--dsn", "x"])
    assert proc.returncode == 2 and "--queue" in proc.stderr
