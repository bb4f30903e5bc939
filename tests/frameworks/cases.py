"""Conformance cases (tests/dialect_cases/) for the frameworks, built on the acceptance flow's drivers.

populate() runs the framework for real: a worker that is killed during a slow job (stuck), fast jobs
(done, or deleted where the framework deletes them), a failing job (dead), a job an hour ahead
(scheduled), two jobs nobody serves (ready) and a live worker holding one job (running). First it
creates the indexes the dialect's own advice names, as an operator following it would (the
`-stock` cases don't: the same figures then come from scans); tests/frameworks/test_*.py check the
advice itself.

The live worker outlives populate() (the suite checks it while it runs): it exits by itself after
LIVE_WORKER_S, and at the latest when the test process ends.
"""

from __future__ import annotations

import atexit
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import psycopg
from dialect_cases import Backdate, DialectCase, TruthJob

from pgq_tui.dialects import registry
from pgq_tui.dialects.detect import detect
from pgq_tui.dialects.introspect import read_catalog

from .acceptance import Driver, crash_during_slow_job
from .harness import Processes, create_runs_table

LIVE_WORKER_S = 300

_live = Processes.under(Path(tempfile.mkdtemp(prefix="pgq-cases-")))
atexit.register(_live.stop_all)


def stop_live_workers() -> None:
    """Stop the live workers the cases left running (tests/conftest.py calls it when a session ends:
    a pytest-xdist worker process ends without running atexit hooks)."""
    _live.stop_all()


class DriverClass(Protocol):
    def __call__(self, dsn: str) -> Driver: ...
    @staticmethod
    def version() -> str: ...


def follow_index_advice(dsn: str, kind: str, dialects: tuple[Any, ...] = ()) -> list[str]:
    """Run every CREATE INDEX the dialect advises for this database; returns the statements."""
    every = (*dialects, *registry.builtin())
    with psycopg.connect(dsn, autocommit=True) as conn:
        catalog = read_catalog(conn, every)
        dialect = next(d for d in every if d.kind == kind)
        (match,) = [m for m in detect(catalog, every) if m.kind == kind]
        advice = [s for a in dialect.model(match, catalog).advice for s in a.statements]
        for statement in advice:  # one at a time: CONCURRENTLY runs in no transaction
            conn.execute(statement)
    return advice


def framework_case(
    driver: DriverClass,
    kind: str,
    schema: str,
    table: str,
    dialects: Callable[[], tuple[Any, ...]] = tuple,
    *,
    case_id: str | None = None,
    advised: bool = True,
    backdate: Backdate | None = None,
    ready_in_id_order: bool = False,
) -> DialectCase:
    """The framework's case; `advised=False`: its stock schema, no advised index created (every
    figure the advice would make live is then read by a scan). `backdate`, `ready_in_id_order`: how
    a ready job's ready-since time is set (DialectCase)."""

    def install(dsn: str) -> None:
        driver.version()  # skips (or fails under PGQ_REQUIRE_FRAMEWORKS=1) when the client is missing
        create_runs_table(dsn)
        driver(dsn).install()

    def populate(dsn: str) -> None:
        if advised:
            follow_index_advice(dsn, kind, dialects())
        fw = driver(dsn)
        crash_during_slow_job(fw, _live, holder_lifetime_s=LIVE_WORKER_S)
        for i in range(2):
            fw.enqueue("fast", f"ready-{i}")

    def truth(conn: psycopg.Connection) -> list[TruthJob]:
        return [TruthJob(*row) for row in driver(conn.info.dsn).truth(conn)]

    name = case_id or kind
    return DialectCase(
        name if advised else f"{name}-stock",
        kind,
        schema,
        table,
        install,
        populate,
        truth,
        dialects=dialects,
        backdate=backdate,
        ready_in_id_order=ready_in_id_order,
    )
