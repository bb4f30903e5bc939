"""Fixtures for the framework tests: an empty database per test, and workers that never outlive it."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from .harness import TESTS_DIR, Processes, create_runs_table


@pytest.fixture
def empty_dsn(server_dsn: str) -> Iterator[str]:
    """A fresh, empty database (not the pgq template): each framework installs its own schema."""
    name = f"pgq_fw_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    create_runs_table(dsn)
    yield dsn
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    pythonpath = os.pathsep.join(p for p in (str(TESTS_DIR), os.environ.get("PYTHONPATH", "")) if p)
    procs = Processes(tmp_path, env={"PYTHONPATH": pythonpath})
    try:
        yield procs
    finally:
        procs.stop_all()
