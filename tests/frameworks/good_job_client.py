"""good_job 4.19.2's schema for the plan tests and benchmarks: built from its own install migration in
plain SQL (tests/dialect_cases/ddl/good_job.sql), since the gem does not install here."""

from __future__ import annotations

from dialect_cases.good_job import install

VERSION = "4.19.2"  # the good_job release whose migrations the schema was built from


class GoodJobSchema:
    kind = "good-job"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn

    @staticmethod
    def version() -> str:
        return VERSION

    def install(self) -> None:
        install(self.dsn)
