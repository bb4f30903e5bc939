"""A real PgBouncer (Debian's package) in front of the test server, for the pooler tests.

Started as an unprivileged user when the tests run as root (PgBouncer refuses root), from a config
in a temporary directory that user owns, listening on 127.0.0.1 only and forwarding every database
to the test server's Unix socket, as the owner of the socket's directory.
Absent: the tests skip and say how to install it; with PGQ_REQUIRE_FRAMEWORKS=1 (CI) they fail.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

BINARY_PATHS = ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")


def run_as(server: dict[str, str]) -> str:
    """The OS user PgBouncer runs as when we are root (it refuses root): the owner of the server's
    socket directory, who can always reach the socket (the embedded server's user keeps its 0700
    directory; a Debian cluster's postgres gets in by peer authentication as role postgres); else
    postgres where it exists, else nobody."""
    host = server.get("host", "")
    if host.startswith("/") and os.path.isdir(host):
        return pwd.getpwuid(os.stat(host).st_uid).pw_name
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return "nobody"
    return "postgres"


def pgbouncer_binary() -> str:
    """The pgbouncer binary, or skip (fail under PGQ_REQUIRE_FRAMEWORKS=1)."""
    found = shutil.which("pgbouncer") or next((p for p in BINARY_PATHS if os.path.exists(p)), None)
    if found is None:
        reason = "pgbouncer is not installed (apt-get install -y pgbouncer)"
        if os.environ.get("PGQ_REQUIRE_FRAMEWORKS") == "1":
            pytest.fail(f"{reason} (PGQ_REQUIRE_FRAMEWORKS=1: the pooler tests must run)", pytrace=False)
        pytest.skip(reason)
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def pgbouncer(
    server_dsn: str, mode: str, *, pool_size: int = 2, password: str | None = None
) -> Iterator[int]:
    """A PgBouncer in `mode` (transaction or session) in front of the server; yields its port.
    With `password`, clients must log in with it (any user name the server knows, auth_type plain)."""
    binary = pgbouncer_binary()
    server = conninfo_to_dict(server_dsn)
    port = free_port()
    workdir = Path(tempfile.mkdtemp(prefix="pgq-pgb-"))
    user = run_as(server) if os.geteuid() == 0 else None
    server.setdefault("user", user or "postgres")  # a DSN without one: peer authentication as `user`
    backend = " ".join(
        f"{k}={server[k]}" for k in ("host", "port", "user", "password") if server.get(k) is not None
    )
    (workdir / "pgbouncer.ini").write_text(
        "[databases]\n"
        f"* = {backend}\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        + (f"auth_type = plain\nauth_file = {workdir}/users.txt\n" if password else "auth_type = any\n")
        + f"pool_mode = {mode}\n"
        f"default_pool_size = {pool_size}\nmax_client_conn = 500\n"
        f"logfile = {workdir}/pgbouncer.log\npidfile = {workdir}/pgbouncer.pid\n"
    )
    if password:
        (workdir / "users.txt").write_text(f'"{server.get("user", "postgres")}" "{password}"\n')
    cmd = [binary, str(workdir / "pgbouncer.ini")]
    if user is not None:
        shutil.chown(workdir, user)
        cmd = ["runuser", "-u", user, "--", *cmd]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 15
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"pgbouncer exited: {proc.stderr.read() if proc.stderr else ''}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("pgbouncer did not start listening within 15 s")
            time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)


def through(dsn: str, port: int) -> str:
    """`dsn` (same database and user) through the pooler on 127.0.0.1:port."""
    return make_conninfo(dsn, host="127.0.0.1", port=str(port))
