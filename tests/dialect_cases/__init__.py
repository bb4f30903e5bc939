"""Conformance cases: one module per dialect, each exporting `CASES: list[DialectCase]`.

A case builds the framework's schema with the framework's own tool (`install`), puts jobs in every
state it can express (`populate`), and answers with plain SQL what is true (`truth`): one
`TruthJob(id, queue, state)` per job row kept, `state` a canonical word or an extra label. The
conformance suite (tests/test_dialect_conformance.py) checks the dialect's detection, statements,
counts, stuck rule, job detail and action guards against it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg


@dataclass(frozen=True)
class TruthJob:
    id: Any
    queue: str | None
    state: str


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


def all_cases() -> list[DialectCase]:
    cases: list[DialectCase] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        cases.extend(getattr(module, "CASES", ()))
    return cases
