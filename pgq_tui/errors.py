"""User-facing errors: one clear line, no traceback, no secret.

Everything that reaches the command line as a failure goes through `describe()`, which turns a
psycopg exception into a sentence an operator can act on at 3 a.m., by its SQLSTATE class: each
class below has its own words and exit code, and "cannot connect" is said of connection failures
only. Every message is passed through `redact()`: libpq's own messages echo parts of the DSN (a
bad percent-encoding quotes the password), so the secrets of every DSN seen are cut out of them.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote

import psycopg
from psycopg import errors as pg_errors

from pgq_tui import exitcodes

# Exit codes: one module holds them all (pgq_tui/exitcodes.py, docs/exit-codes.md); here under the
# names the callers import from this module.
EXIT_CONFLICT = exitcodes.EXIT_CONFLICT
EXIT_CONNECT = exitcodes.EXIT_CONNECT
EXIT_ERROR = exitcodes.EXIT_ERROR
EXIT_LOCK_TIMEOUT = exitcodes.EXIT_LOCK_TIMEOUT
EXIT_OK = exitcodes.EXIT_OK
EXIT_PRIVILEGE = exitcodes.EXIT_PRIVILEGE
EXIT_REFUSED = exitcodes.EXIT_REFUSED
EXIT_RESOURCES = exitcodes.EXIT_RESOURCES
EXIT_SCHEMA = exitcodes.EXIT_SCHEMA
EXIT_STATEMENT_TIMEOUT = exitcodes.EXIT_STATEMENT_TIMEOUT
EXIT_TERMINAL = exitcodes.EXIT_TERMINAL
EXIT_USAGE = exitcodes.EXIT_USAGE

REDACTED = "[redacted]"
_SECRETS: set[str] = set()
# password=... in keyword form (quoted or not), and user:password@ in a URI (also when unparsable)
_KEYWORD_SECRET = re.compile(r"""\bpassword\s*=\s*('(?:[^'\\]|\\.)*'|\S+)""", re.IGNORECASE)
_URI_SECRET = re.compile(r"^[a-z]+://[^:@/?#]*:([^@/?#]*)@", re.IGNORECASE)
_SECRET_KEYS = ("password", "sslpassword")


class PgqError(Exception):
    """An error whose message is fit to print as-is (secrets redacted), with the exit code to use."""

    def __init__(self, message: str, exit_code: int = EXIT_ERROR) -> None:
        super().__init__(redact(message))
        self.exit_code = exit_code


def secrets_of(dsn: str) -> set[str]:
    """The secrets a DSN holds, as written and decoded, even when libpq cannot parse it."""
    found: set[str] = set()
    for m in _KEYWORD_SECRET.finditer(dsn):
        found.add(m.group(1).strip("'"))
    for m in _URI_SECRET.finditer(dsn.strip()):
        found.add(m.group(1))
    for m in re.finditer(r"[?&](?:ssl)?password=([^&#]*)", dsn, re.IGNORECASE):
        found.add(m.group(1))
    try:
        from psycopg.conninfo import conninfo_to_dict

        parsed = conninfo_to_dict(dsn)
        found |= {str(parsed[k]) for k in _SECRET_KEYS if parsed.get(k)}
    except psycopg.Error:
        pass
    decoded = {unquote(s) for s in found}
    return {s for s in found | decoded if len(s) >= 3}  # a 1-2 character secret would redact everything


def remember_secrets(dsn: str | None) -> None:
    """Remember the secrets of a DSN, so that no message printed afterwards contains them."""
    if dsn:
        _SECRETS.update(secrets_of(dsn))


def redact(text: str) -> str:
    """`text` without any remembered secret, nor anything that looks like a password in a DSN."""
    out = _KEYWORD_SECRET.sub(f"password={REDACTED}", str(text))
    out = re.sub(r"(\b[a-z]+://[^:@/\s]*:)[^@\s]*@", rf"\1{REDACTED}@", out, flags=re.IGNORECASE)
    for secret in sorted(_SECRETS, key=len, reverse=True):
        out = out.replace(secret, REDACTED)
    return out


class RedactFilter(logging.Filter):
    """A logging filter that redacts every record's message (see `redact`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        return True


def first_line(text: object) -> str:
    """The first non-empty line of a (possibly multi-line) server message, redacted."""
    for line in str(text).splitlines():
        if line.strip():
            return redact(line.strip())
    return redact(str(text).strip())


def unexpected(exc: BaseException) -> str:
    """One line for an error that is no database's (e.g. rows a parser cannot read): its class and
    message, so a bug is told from a timeout.

    >>> unexpected(ValueError("'zombie' is not a valid Liveness"))
    "ValueError: 'zombie' is not a valid Liveness"
    """
    return f"{type(exc).__name__}: {first_line(exc)}"


# libpq's own complaints about the DSN itself (no SQLSTATE): a usage error, not "cannot connect"
_DSN_PROBLEM = re.compile(
    r"invalid [\w ]*value|invalid connection option|invalid URI|invalid percent-encoded|missing \"=\""
    r"|unterminated quoted string|invalid (?:IPv6 )?host address|end of string reached",
    re.IGNORECASE,
)

# Connection failures: class 08, the shutdown family of 57P0x, authentication (28).
_CONNECTION_SQLSTATES = ("08", "57P01", "57P02", "57P03", "57P04", "57P05")


def is_connection_failure(exc: BaseException) -> bool:
    """A connection that failed or was lost (as opposed to a statement that failed on a live one)."""
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate or ""
    return not state or state.startswith(_CONNECTION_SQLSTATES)


def describe(exc: BaseException, *, table: str | None = None, hint: str | None = None) -> PgqError:
    """Map a database exception to a one-line PgqError, by SQLSTATE class. `hint` says how to make a
    missing table or column (the queue's own words: `QueueModel.setup_hint`, `jobtable.SETUP_HINT`)."""
    if isinstance(exc, PgqError):
        return exc
    line = first_line(exc)
    fix = f"; {hint}" if hint else ""
    if isinstance(exc, pg_errors.UndefinedTable):
        what = f"table {table}" if table else "a table"
        return PgqError(f"{what} does not exist ({line}){fix}", EXIT_SCHEMA)
    if isinstance(exc, pg_errors.UndefinedColumn):
        what = f"table {table}" if table else "the queue's table"
        return PgqError(f"{what} lacks a column pgq-top reads: {line}{fix}", EXIT_SCHEMA)
    if isinstance(
        exc,
        pg_errors.UndefinedFunction
        | pg_errors.UndefinedObject
        | pg_errors.InvalidSchemaName
        | pg_errors.UndefinedParameter,
    ):
        return PgqError(f"missing object: {line}", EXIT_SCHEMA)
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return PgqError(f"permission denied: {line}", EXIT_PRIVILEGE)
    if isinstance(exc, pg_errors.InvalidPassword | pg_errors.InvalidAuthorizationSpecification):
        return PgqError(f"authentication failed: {line}", EXIT_CONNECT)
    if isinstance(exc, pg_errors.LockNotAvailable):
        return PgqError(f"lock timeout: another session holds a lock we need ({line})", EXIT_LOCK_TIMEOUT)
    if isinstance(exc, pg_errors.QueryCanceled):
        if "statement timeout" in line:
            return PgqError(
                f"statement timeout: the server stopped a statement that ran too long ({line})",
                EXIT_STATEMENT_TIMEOUT,
            )
        return PgqError(f"statement cancelled: {line}", EXIT_STATEMENT_TIMEOUT)
    if isinstance(exc, pg_errors.DeadlockDetected | pg_errors.SerializationFailure):
        what = "deadlock" if isinstance(exc, pg_errors.DeadlockDetected) else "serialization failure"
        return PgqError(f"{what}: the transaction was rolled back, try again ({line})", EXIT_CONFLICT)
    if isinstance(exc, pg_errors.InsufficientResources | pg_errors.DiskFull | pg_errors.OutOfMemory):
        return PgqError(f"the server is out of resources (disk, memory): {line}", EXIT_RESOURCES)
    if isinstance(exc, psycopg.OperationalError) and not exc.sqlstate and _DSN_PROBLEM.search(line):
        return PgqError(f"bad DSN: {line.removeprefix('connection is bad: ')}", EXIT_USAGE)
    if is_connection_failure(exc):
        return PgqError(f"cannot connect to PostgreSQL: {line}", EXIT_CONNECT)
    if isinstance(exc, psycopg.ProgrammingError) and "invalid connection option" in str(exc).lower():
        return PgqError(f"bad DSN: {line}", EXIT_USAGE)
    if isinstance(exc, psycopg.Error):
        return PgqError(f"database error: {line}", EXIT_ERROR)
    return PgqError(f"{type(exc).__name__}: {line}", EXIT_ERROR)
