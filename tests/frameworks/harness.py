"""Drive the real queue frameworks from tests: their clients, their workers, a record of every run.

The clients are pinned in `tests/frameworks/node/package.json` (npm: graphile-worker, pg-boss; `npm ci`
there installs them, `.ci/run` does it) and in the `test` extra (PyPI: procrastinate, pgqueuer). A test
whose client is missing skips and says which install would bring it, unless PGQ_REQUIRE_FRAMEWORKS=1
(CI sets it), where a missing client fails the test instead of hiding it.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE / "node"
# Node 22 from npm (the `node` package in node/package.json): pg-boss 12 and Graphile Worker 0.18 need
# it; pg-boss 10 and Graphile Worker 0.17 keep running on the machine's Node 20.
NODE22 = NODE_DIR / "node_modules" / "node" / "bin" / "node"
TESTS_DIR = HERE.parent

T = TypeVar("T")

# The test queues: fast (completes), slow (hangs until the fix is deployed), fail (always fails until
# then), later (scheduled an hour ahead), hold (hangs, always: a live worker's running job).
QUEUES = ("fast", "slow", "fail", "later", "hold")


def client_missing(reason: str) -> None:
    """Skip (or, with PGQ_REQUIRE_FRAMEWORKS=1, fail) a test whose framework client isn't installed."""
    if os.environ.get("PGQ_REQUIRE_FRAMEWORKS") == "1":
        pytest.fail(f"{reason} (PGQ_REQUIRE_FRAMEWORKS=1: the framework tests must run)", pytrace=False)
    pytest.skip(reason)


def require_node_client(package: str, *, node22: bool = False) -> str:
    """The installed version of an npm client from tests/frameworks/node (an npm alias such as
    `pg-boss-12` included), or skip/fail. `node22`: it runs on the Node 22 that npm installed there."""
    if node22 and not NODE22.exists():
        client_missing(
            f"{package}: Node 22 is not installed: run `npm ci` in {NODE_DIR.relative_to(TESTS_DIR.parent)}"
        )
    if not node22 and shutil.which("node") is None:
        client_missing(f"{package}: node is not on PATH (the npm clients need Node 20+)")
    manifest = NODE_DIR / "node_modules" / package / "package.json"
    if not manifest.exists():
        client_missing(
            f"{package} is not installed: run `npm ci` in {NODE_DIR.relative_to(TESTS_DIR.parent)}"
        )
    return str(json.loads(manifest.read_text())["version"])


def require_python_client(distribution: str) -> str:
    """The installed version of a PyPI client, or skip/fail."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        client_missing(f"{distribution} is not installed: pip install -e '.[test]'")
        raise  # unreachable: client_missing raises


def node_connection(dsn: str) -> dict[str, Any]:
    """node-postgres pool settings for a libpq DSN (Unix socket directories work as `host`)."""
    params = conninfo_to_dict(dsn)
    config: dict[str, Any] = {
        "host": params.get("host") or "/var/run/postgresql",
        "port": int(params.get("port") or 5432),
        "database": params.get("dbname"),
        "user": params.get("user") or os.environ.get("PGUSER") or _os_user(),
    }
    if params.get("password"):
        config["password"] = params["password"]
    return config


def _os_user() -> str:
    import getpass

    return getpass.getuser()


# -- the record of runs ------------------------------------------------------------------------------

RUNS_DDL = """
CREATE TABLE IF NOT EXISTS public.pgq_test_runs (
    id bigserial PRIMARY KEY,
    job_key text NOT NULL,
    job_id text NOT NULL,
    phase text NOT NULL CHECK (phase IN ('start', 'done', 'fail')),
    pid int NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
)
"""


def create_runs_table(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(RUNS_DDL)


def runs(dsn: str, *, pid: int | None = None) -> list[tuple[str, str, str]]:
    """(job_key, job_id, phase) in the order they happened, optionally only one worker's."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT job_key, job_id, phase FROM pgq_test_runs"
            " WHERE %(pid)s::int IS NULL OR pid = %(pid)s ORDER BY id",
            {"pid": pid},
        ).fetchall()
    return [(str(k), str(i), str(p)) for k, i, p in rows]


def phases(dsn: str, key: str, *, pid: int | None = None) -> list[str]:
    return [p for k, _, p in runs(dsn, pid=pid) if k == key]


def wait_for(what: str, probe: Callable[[], T | None], *, timeout: float = 30.0, every: float = 0.1) -> T:
    """Poll until probe() returns something truthy; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}", pytrace=False)
        time.sleep(every)


def scalar(dsn: str, query: str, params: dict[str, Any] | tuple[Any, ...] | None = None) -> Any:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(query, params).fetchone()
    return None if row is None else row[0]


# -- processes ----------------------------------------------------------------------------------------


@dataclass
class Worker:
    """A framework worker in its own process group, so kill -9 hits it and nothing else."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill9(self) -> None:
        """kill -9, as an OOM killer or a pulled plug would: no handler, no cleanup."""
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        """Ask politely (SIGTERM), then kill -9 whatever is left after a few seconds."""
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
        self.kill9()


@dataclass
class Processes:
    """Every worker a test started; all are stopped at teardown, whatever happened."""

    tmp: Path
    env: dict[str, str] = field(default_factory=dict)
    started: list[Worker] = field(default_factory=list)

    def start(self, name: str, argv: list[str], *, ready: str | None = None, **env: str) -> Worker:
        log = self.tmp / f"{name}-{len(self.started)}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env, **env},
                start_new_session=True,
            )
        worker = Worker(name, proc, log)
        self.started.append(worker)
        if ready is not None:

            def is_ready() -> bool:
                if not worker.alive():
                    pytest.fail(f"{name} exited early:\n{worker.output()}", pytrace=False)
                return ready in log.read_text(errors="replace")

            wait_for(f"{name} to start (log {log})", is_ready, timeout=60)
        return worker

    @classmethod
    def under(cls, tmp: Path) -> Processes:
        """Workers whose logs go to `tmp`, able to import the test packages (frameworks.*)."""
        pythonpath = os.pathsep.join(p for p in (str(TESTS_DIR), os.environ.get("PYTHONPATH", "")) if p)
        return cls(tmp, env={"PYTHONPATH": pythonpath})

    def stop_all(self) -> None:
        for worker in self.started:
            worker.stop()


def run_client(argv: list[str], *, env: dict[str, str] | None = None, timeout: float = 60) -> str:
    """Run a framework's own command-line client to completion; its stdout, or fail with its output."""
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )
    if done.returncode != 0:
        pytest.fail(f"{' '.join(argv[:3])} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def worker_env(
    *, fixed: bool, queues: Iterable[str] | None, lifetime_s: float | None = None
) -> dict[str, str]:
    """The environment every test worker reads (see node/behaviour.js)."""
    env = {"PGQ_TEST_FIXED": "1" if fixed else "0", "PGQ_TEST_QUEUES": ",".join(queues or QUEUES)}
    if lifetime_s:
        env["PGQ_TEST_LIFETIME_S"] = str(lifetime_s)
    return env


def exit_after_lifetime() -> None:
    """Python workers: exit by themselves after PGQ_TEST_LIFETIME_S, like the Node ones."""
    import threading

    lifetime = float(os.environ.get("PGQ_TEST_LIFETIME_S") or 0)
    if lifetime > 0:
        timer = threading.Timer(lifetime, os._exit, args=(0,))
        timer.daemon = True
        timer.start()


def worker_queues() -> list[str]:
    return (os.environ.get("PGQ_TEST_QUEUES") or ",".join(QUEUES)).split(",")


def python_argv(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]


def truth_rows(dsn: str, query: str, conn: psycopg.Connection | None = None) -> list[tuple[Any, str, str]]:
    """(id, queue, canonical state) per job, from a framework's ground-truth query (a plain scan), on
    `conn` when given (so it sees that connection's uncommitted writes), else on a new connection."""
    if conn is not None:
        return [(i, str(q), str(s)) for i, q, s in conn.execute(query).fetchall()]
    with psycopg.connect(dsn, autocommit=True) as own:
        return truth_rows(dsn, query, own)


def grouped(rows: Iterable[tuple[Any, str, str]]) -> dict[str, dict[str, int]]:
    """{queue: {state: count}} from truth_rows()."""
    out: dict[str, dict[str, int]] = {}
    for _, queue, state in rows:
        out.setdefault(queue, {}).setdefault(state, 0)
        out[queue][state] += 1
    return out


def ids_of(rows: Iterable[tuple[Any, ...]]) -> list[str]:
    return sorted(str(r[0]) for r in rows)
