"""Que's schema for the framework tests and the poll benchmark: the gem does not install here, so its
schema is the one its migrations 1-7 leave (tests/dialect_cases/ddl/que.sql, built from que 2.4.1's
own migrations)."""

from __future__ import annotations


class QueSchema:
    kind = "que"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn

    @staticmethod
    def version() -> str:
        return "2.4.1 (schema version 7, from its migrations)"

    def install(self) -> None:
        from dialect_cases import que

        que.install(self.dsn)
