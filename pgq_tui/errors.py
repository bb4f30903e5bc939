"""User-facing errors: one clear line, no traceback.

Everything that reaches the command line as a failure goes through `describe()`, which turns a
psycopg exception into a sentence an operator can act on at 3 a.m.
"""

from __future__ import annotations

import psycopg
from psycopg import errors as pg_errors

# Exit codes, documented in the README.
EXIT_OK = 0
EXIT_ERROR = 1  # anything else that went wrong (a bug, a failed action)
EXIT_USAGE = 2  # bad flags or arguments (argparse uses 2 as well)
EXIT_CONNECT = 3  # cannot connect or authenticate
EXIT_SCHEMA = 4  # the jobs table is missing or has the wrong shape
EXIT_PRIVILEGE = 5  # the role lacks a privilege
EXIT_TERMINAL = 6  # the terminal cannot show the dashboard
EXIT_REFUSED = 7  # an action was refused (nothing eligible, not confirmed, read-only, no terminal)


class PgqError(Exception):
    """An error whose message is fit to print as-is, with the exit code to use."""

    def __init__(self, message: str, exit_code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def first_line(text: str) -> str:
    """The first non-empty line of a (possibly multi-line) server message."""
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()
    return str(text).strip()


def describe(exc: BaseException, *, table: str | None = None) -> PgqError:
    """Map a database exception to a one-line PgqError."""
    if isinstance(exc, PgqError):
        return exc
    if isinstance(exc, pg_errors.UndefinedTable):
        what = f"table {table}" if table else "a table"
        return PgqError(
            f"{what} does not exist ({first_line(exc)}); create it with: pgq-top init --dsn DSN",
            EXIT_SCHEMA,
        )
    if isinstance(exc, pg_errors.UndefinedColumn):
        what = f"table {table}" if table else "the jobs table"
        return PgqError(f"{what} is not a pgq-top jobs table: {first_line(exc)}", EXIT_SCHEMA)
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return PgqError(f"permission denied: {first_line(exc)}", EXIT_PRIVILEGE)
    if isinstance(exc, pg_errors.InvalidPassword | pg_errors.InvalidAuthorizationSpecification):
        return PgqError(f"authentication failed: {first_line(exc)}", EXIT_CONNECT)
    if isinstance(exc, psycopg.OperationalError):
        return PgqError(f"cannot connect to PostgreSQL: {first_line(exc)}", EXIT_CONNECT)
    if isinstance(exc, psycopg.ProgrammingError) and "invalid connection option" in str(exc).lower():
        return PgqError(f"bad DSN: {first_line(exc)}", EXIT_USAGE)
    if isinstance(exc, psycopg.Error):
        return PgqError(f"database error: {first_line(exc)}", EXIT_ERROR)
    return PgqError(f"{type(exc).__name__}: {first_line(exc)}", EXIT_ERROR)
