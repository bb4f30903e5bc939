"""Fixtures for the framework tests: an empty database with the run record, and workers that never
outlive the test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import Processes, create_runs_table


@pytest.fixture
def framework_dsn(empty_dsn: str) -> str:
    """A fresh, empty database (no pgq-top schema) with pgq_test_runs: the framework installs its own."""
    create_runs_table(empty_dsn)
    return empty_dsn


@pytest.fixture
def processes(framework_dsn: str, tmp_path: Path) -> Iterator[Processes]:
    """Workers started by the test: stopped (kill -9 at worst) before its database is dropped."""
    procs = Processes.under(tmp_path)
    try:
        yield procs
    finally:
        procs.stop_all()
