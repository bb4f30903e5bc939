"""Conformance cases: one module per dialect, each exporting `CASES: list[DialectCase]`.

A case builds the framework's schema with the framework's own tool (`install`), puts jobs in every
state it can express (`populate`), and answers with plain SQL what is true (`truth`): one
`TruthJob(id, queue, state)` per job row kept, `state` a canonical word or an extra label. The
conformance suite (tests/test_dialect_conformance.py) checks the dialect's detection, statements,
counts, stuck rule, job detail and action guards against it.

A case also says how a ready job's "ready since" time is set (`backdate`: the framework's run_at,
scheduled_at, vt...), so the oldest-ready test can give a queue's ready jobs different times and
know the true oldest.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql


@dataclass(frozen=True)
class TruthJob:
    id: Any
    queue: str | None
    state: str


# (connection, a ready job, age in seconds): make the job ready since exactly `age` seconds before the
# transaction's now() (run inside the test's rolled-back transaction, so the statements then read it
# against the same now())
Backdate = Callable[[psycopg.Connection, TruthJob, float], None]


def backdate_column(
    schema: str, table: str, column: str, id_column: str = "id", now: str = "now()"
) -> Backdate:
    """A Backdate that sets one column of the job's row (`now`: the SQL for the current time in the
    column's type, e.g. "(now() AT TIME ZONE 'UTC')" for a UTC timestamp without time zone)."""
    query = sql.SQL("UPDATE {} SET {} = {} - make_interval(secs => %s) WHERE {} = %s").format(
        sql.Identifier(schema, table), sql.Identifier(column), sql.SQL(now), sql.Identifier(id_column)
    )

    def backdate(conn: psycopg.Connection, job: TruthJob, age: float) -> None:
        assert conn.execute(query, (age, job.id)).rowcount == 1, (table, job)

    return backdate


@dataclass(frozen=True)
class DialectCase:
    id: str  # pytest id
    kind: str  # the dialect kind detection must report
    schema: str
    table: str  # the main relation detection must report
    install: Callable[[str], None]  # dsn of an empty database -> the framework's schema
    populate: Callable[[str], None]  # dsn -> jobs in every state (may run real workers)
    truth: Callable[[psycopg.Connection], list[TruthJob]]
    # extra dialects the case needs beyond the built-in ones (e.g. a user mapping file)
    dialects: Callable[[], tuple[Any, ...]] = field(default=lambda: ())
    marks: tuple[Any, ...] = ()  # e.g. pytest.mark.skipif(no node)
    backdate: Backdate | None = None  # how a ready job's ready-since time is set (None: no such time)
    # the dialect reads a queue's oldest ready job in id order (the framework's ids grow with time, as
    # its dialect documents): the test then makes the lowest id the oldest, else the highest
    ready_in_id_order: bool = False


def all_cases() -> list[DialectCase]:
    cases: list[DialectCase] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        cases.extend(getattr(module, "CASES", ()))
    return cases
