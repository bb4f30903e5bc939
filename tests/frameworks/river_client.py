"""River through its own Go client (river/main.go: River's migrator, Client.Insert and a real River
worker), for the acceptance flow and the conformance cases.

The program is built by the tests with the machine's Go (`go build` into river/bin, gitignored), its
modules pinned by river/go.mod and go.sum. Go's module cache, build cache and GOPATH default to
river/.go (gitignored), so nothing is cached outside the clone; `.ci/run` sets the same.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from .harness import HERE, Processes, Worker, client_missing, run_client, scalar, truth_rows, worker_env

RIVER_DIR = HERE / "river"
BINARY = RIVER_DIR / "bin" / "river-test"
SOURCES = ("main.go", "go.mod", "go.sum")


def go_env() -> dict[str, str]:
    """GOMODCACHE, GOCACHE and GOPATH inside the clone unless the caller set them; the module cache
    writable (-modcacherw), so that deleting the clone needs no chmod; no VCS stamp in the binary."""
    cache = RIVER_DIR / ".go"
    wanted = {"GOMODCACHE": cache / "mod", "GOCACHE": cache / "cache", "GOPATH": cache / "path"}
    env = {name: os.environ.get(name) or str(path) for name, path in wanted.items()}
    flags = os.environ.get("GOFLAGS", "").split()
    env["GOFLAGS"] = " ".join(dict.fromkeys([*flags, "-modcacherw", "-buildvcs=false"]))
    return env


def build() -> Path:
    """The River test program, built when missing or older than its sources (skip/fail without Go)."""
    if shutil.which("go") is None:
        client_missing("go is not on PATH (River's test worker is a Go program: tests/frameworks/river)")
    newest = max((RIVER_DIR / name).stat().st_mtime for name in SOURCES)
    if not BINARY.exists() or BINARY.stat().st_mtime < newest:
        done = subprocess.run(
            ["go", "build", "-o", str(BINARY), "."],
            cwd=RIVER_DIR,
            capture_output=True,
            text=True,
            timeout=900,
            env={**os.environ, **go_env()},
        )
        if done.returncode != 0:
            client_missing(f"go build of {RIVER_DIR} failed:\n{done.stderr[-3000:]}")
    return BINARY


def go_module_version(module: str) -> str:
    """The version go.mod pins for `module`."""
    for line in (RIVER_DIR / "go.mod").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in (module, "require") and module in parts:
            return parts[parts.index(module) + 1]
    raise LookupError(module)


class River:
    kind = "river"
    schema = "river_jobs"  # River's Schema option (a schema of its own, not the search path)
    detected = "migration 8"  # River v0.51's newest migration, read from river_migration

    def __init__(self, dsn: str, *, schema: str | None = None) -> None:
        self.dsn = dsn
        self.schema = schema or self.schema
        self.env = {"PGQ_TEST_DSN": dsn, "PGQ_TEST_SCHEMA": self.schema}

    @staticmethod
    def version() -> str:
        build()
        return go_module_version("github.com/riverqueue/river")

    def _run(self, *args: str) -> str:
        return run_client([str(build()), *args], env=self.env, timeout=120)

    def install(self, target: int | None = None) -> None:
        """River's own migrator (rivermigrate), up to `target` or every migration."""
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema)))
        self._run("migrate", *([str(target)] if target else []))

    def start_worker(
        self,
        procs: Processes,
        *,
        fixed: bool,
        queues: Iterable[str] | None = None,
        lifetime_s: float | None = None,
    ) -> Worker:
        return procs.start(
            "river",
            [str(build()), "work"],
            ready="READY",
            **worker_env(fixed=fixed, queues=queues, lifetime_s=lifetime_s),
            **self.env,
        )

    def enqueue(self, queue: str, key: str, *, in_seconds: int | None = None) -> str:
        """Client.Insert into `queue`; the failing job gets one attempt (then River discards it)."""
        spec = {"queue": queue, "key": key, "max_attempts": 1 if queue == "fail" else 25}
        if in_seconds:
            spec["scheduled_in_s"] = in_seconds
        return self._run("insert", json.dumps(spec)).strip()

    def enqueue_failing(self, prefix: str, suffix: str, count: int) -> int:
        """Client.InsertMany of `count` always-failing jobs on queue `fail`, one attempt each, keyed
        "<prefix>-<i> <suffix>" (the error River records names the key)."""
        spec = {"queue": "fail", "prefix": prefix, "suffix": suffix, "count": count, "max_attempts": 1}
        return int(self._run("insert-many", json.dumps(spec)).strip())

    def _job(self, column: str, job_id: str) -> Any:
        query = sql.SQL("SELECT {}::text FROM {} WHERE id = %s").format(
            sql.Identifier(column), sql.Identifier(self.schema, "river_job")
        )
        return scalar(self.dsn, query.as_string(None), (int(job_id),))

    def is_dead(self, job_id: str) -> bool:
        return self._job("state", job_id) == "discarded"

    def make_stuck(self, job_id: str) -> None:
        """River's rescue horizon (RescueStuckJobsAfter) is a client setting, 1 h by default, which
        pgq-top reads: reached by backdating attempted_at by SQL, the one thing here not done by River.
        The test workers set a 1000 h horizon of their own, so their leader's JobRescuer leaves the
        job for pgq-top to rescue."""
        query = sql.SQL(
            "UPDATE {} SET attempted_at = attempted_at - interval '1 hour 1 minute'"
            " WHERE id = %s AND state = 'running' RETURNING id"
        ).format(sql.Identifier(self.schema, "river_job"))
        assert scalar(self.dsn, query.as_string(None), (int(job_id),)) == int(job_id), job_id

    def truth(self, conn: psycopg.Connection | None = None) -> list[tuple[Any, str, str]]:
        """Each job's (id, queue, canonical state), by a full scan, from River's own states."""
        return truth_rows(self.dsn, truth_query(self.schema), conn)


def truth_query(schema: str) -> str:
    return (
        sql.SQL(
            """
            SELECT id, queue,
                   CASE state::text
                     WHEN 'available' THEN CASE WHEN scheduled_at <= now() THEN 'ready' ELSE 'scheduled' END
                     WHEN 'scheduled' THEN 'scheduled' WHEN 'retryable' THEN 'scheduled'
                     WHEN 'running' THEN CASE WHEN attempted_at < now() - interval '1 hour' THEN 'stuck'
                                              ELSE 'running' END
                     WHEN 'discarded' THEN 'dead' WHEN 'completed' THEN 'done'
                     ELSE state::text
                   END AS state
            FROM {} ORDER BY id
            """
        )
        .format(sql.Identifier(schema, "river_job"))
        .as_string(None)
    )
