"""No secret is ever printed (issue 22, item 3): every command, run as a subprocess with hostile DSNs
in URI and keyword form, and the dashboard on a pty; the secret appears nowhere in stdout, stderr,
the /metrics page or the screen. libpq's own messages echo parts of the DSN (a bad percent-encoding
quotes the password): those are redacted too.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

from pgq_tui.db.connect import connect
from pgq_tui.errors import redact, remember_secrets, secrets_of
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.targets import name_from_dsn
from pgq_tui.tui.app import PgqTopApp
from tests.pgbouncer_support import pgbouncer

SECRET = "Sekr3tPw"
# (name, DSN, the secret as it appears in the DSN); {port} is a PgBouncer that wants another password
HOSTILE = [
    ("uri bad percent-encoding", "postgresql://app:s3cr%zzet@127.0.0.1:1/db", "s3cr%zzet"),
    ("uri bad option value", f"postgresql://app:{SECRET}@127.0.0.1:1/db?sslmode=bogus", SECRET),
    ("uri unknown option", f"postgresql://app@127.0.0.1:1/db?password={SECRET}&nosuch=1", SECRET),
    ("uri bad host", f"postgresql://app:{SECRET}@[::1/db", SECRET),
    ("uri unreachable", f"postgresql://app:{SECRET}%21@127.0.0.1:1/db?connect_timeout=2", SECRET),
    ("uri wrong password", f"postgresql://postgres:{SECRET}@127.0.0.1:{{port}}/postgres", SECRET),
    ("keyword unknown option", f"host=127.0.0.1 port=1 password={SECRET} nosuch=1", SECRET),
    ("keyword bad option value", f"host=127.0.0.1 port=abc password={SECRET}", SECRET),
    ("keyword unterminated quote", f"host=127.0.0.1 password='{SECRET}", SECRET),
    ("keyword unreachable", f"host=127.0.0.1 port=1 password='{SECRET} x' connect_timeout=2", SECRET),
    ("keyword wrong password", f"host=127.0.0.1 port={{port}} user=postgres password={SECRET}", SECRET),
]
COMMANDS = [
    ["snapshot"],
    ["snapshot", "--json"],
    ["check"],
    ["check", "--json"],
    ["requeue", "--stuck", "--yes"],
    ["init"],
    ["advise"],
    ["worker", "--queue", "q", "--processes", "1"],
]


@pytest.fixture(scope="module")
def guarded_port(server_dsn: str) -> Iterator[int]:
    """A PgBouncer that lets in only with another password: a real "wrong password"."""
    with pgbouncer(server_dsn, "transaction", password="the-right-one") as port:
        yield port


def run(args: list[str], timeout: float = 60) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "pgq_tui", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode != 0 or args[0] == "check", (args, proc.stdout, proc.stderr)
    return proc.stdout + proc.stderr


def exporter_output(dsn: str) -> str:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pgq_tui", "exporter", "--dsn", dsn, "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        text = ""
        deadline = time.monotonic() + 20
        while "metrics" not in text and proc.poll() is None and time.monotonic() < deadline:
            text += proc.stderr.readline()
        url = re.search(r"http://\S+/metrics", text)
        if url:
            with urllib.request.urlopen(url.group(0), timeout=10) as resp:
                text += resp.read().decode()
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
    return text + out + err


def dashboard_screen(dsn: str, seconds: float = 6.0) -> str:
    """What the dashboard writes to a terminal (a pty, 100x30) in its first seconds."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the dashboard on the pty
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color"}
        os.execve(sys.executable, [sys.executable, "-m", "pgq_tui", "--dsn", dsn, "--interval", "0.5"], env)
    chunks: list[bytes] = []
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    break
                if not data:
                    break
                chunks.append(data)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)
    return b"".join(chunks).decode(errors="replace")


def test_redact_finds_secrets_even_in_a_dsn_libpq_cannot_parse() -> None:
    assert secrets_of("postgresql://app:s3cr%zzet@h/db") == {"s3cr%zzet"}
    assert secrets_of("postgresql://app:a%21bc@h/db") == {"a%21bc", "a!bc"}
    assert SECRET in secrets_of(f"host=h password='{SECRET}")
    remember_secrets("postgresql://app:s3cr%zzet@h/db")
    said = redact('invalid percent-encoded token: "s3cr%zzet"')
    assert said == 'invalid percent-encoded token: "[redacted]"'


@pytest.mark.parametrize(("name", "dsn", "secret"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_no_command_prints_the_secret(
    name: str, dsn: str, secret: str, guarded_port: int, tmp_path: Path
) -> None:
    dsn = dsn.replace("{port}", str(guarded_port))
    if "wrong password" in name:
        assert "port" in conninfo_to_dict(dsn)  # parsable: it does reach the pooler, which refuses it
    targets = tmp_path / "targets.toml"
    targets.write_text(f"[targets.one]\ndsn = '''{dsn}'''\n")
    jobs: dict[str, Callable[[], str]] = {
        " ".join(c): (lambda c=c: run([*c, "--dsn", dsn])) for c in COMMANDS  # type: ignore[misc]
    }
    jobs["check --targets"] = lambda: run(["check", "--targets", str(targets)])
    jobs["snapshot --targets"] = lambda: run(["snapshot", "--targets", str(targets)])
    jobs["exporter"] = lambda: exporter_output(dsn)
    jobs["dashboard"] = lambda: dashboard_screen(dsn)
    with ThreadPoolExecutor(6) as pool:
        futures = {command: pool.submit(job) for command, job in jobs.items()}
        outputs = {command: f.result() for command, f in futures.items()}
    for command, text in outputs.items():
        assert text.strip(), (command, "printed nothing")
        for leak in {secret, SECRET, "zzet"}:
            assert leak not in text, (command, text)


class Failing:
    """A snapshot source whose every poll is a connection attempt with the hostile DSN."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn

    def collect(self) -> Snapshot:
        with connect(self.dsn, application_name="pgq-top test"):
            raise AssertionError("this DSN must not connect")


@pytest.mark.parametrize(("name", "dsn", "secret"), HOSTILE, ids=[h[0] for h in HOSTILE])
async def test_the_screen_never_shows_the_secret(name: str, dsn: str, secret: str, guarded_port: int) -> None:
    dsn = dsn.replace("{port}", str(guarded_port))
    app = PgqTopApp(Failing(dsn), interval=0.3, target=name_from_dsn(dsn))
    async with app.run_test(size=(120, 30)) as pilot:
        deadline = time.monotonic() + 20
        while app.connected is not False:
            assert time.monotonic() < deadline
            await pilot.pause(0.1)
        await pilot.pause(0.3)
        screen = app.export_screenshot()
    assert "disconnected" in screen or "bad DSN" in screen
    for leak in {secret, SECRET, "zzet"}:
        assert leak not in screen, screen
