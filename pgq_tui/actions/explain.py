"""Turn a failure during an action into one line an operator can act on (never a traceback)."""

from __future__ import annotations

import psycopg
from psycopg import errors as pg_errors

from pgq_tui.errors import PgqError, describe, first_line, is_connection_failure

SIGNALS = ("cancel", "terminate")
# The privileges each table action needs on the queue's table besides SELECT: every action locks its
# rows FOR UPDATE in its guard, which takes UPDATE, and discard deletes them too (docs/grants.md).
PRIVILEGE = {
    "requeue": ("UPDATE",),
    "reap": ("UPDATE",),
    "retry": ("UPDATE",),
    "discard": ("UPDATE", "DELETE"),
}


def signal_privilege_hint(role: str) -> str:
    return (
        f"role {role} may signal only its own sessions: grant pg_signal_backend "
        f"(GRANT pg_signal_backend TO {role}); a superuser's session needs a superuser"
    )


def table_privilege_hint(action: str, role: str, table: str) -> str:
    """
    >>> table_privilege_hint("discard", "app", "jobs")
    'role app needs SELECT, UPDATE and DELETE on jobs (GRANT SELECT, UPDATE, DELETE ON jobs TO app)'
    """
    need = ("SELECT", *PRIVILEGE.get(action, ("UPDATE",)))
    words = f"{', '.join(need[:-1])} and {need[-1]}"
    return f"role {role} needs {words} on {table} (GRANT {', '.join(need)} ON {table} TO {role})"


def explain(exc: BaseException, *, action: str, role: str, table: str, lock_timeout_ms: int | None) -> str:
    """One line for ActionOutcome.error, saying truthfully whether the failed batch was rolled back: the
    server answered with an error, so it was; only a connection lost while the batch ran (each batch
    commits with its statement) leaves its fate unknown."""
    if isinstance(exc, PgqError):  # already one line, e.g. "cannot connect to PostgreSQL: ..."
        return str(exc)
    line = first_line(exc)
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        hint = signal_privilege_hint(role) if action in SIGNALS else table_privilege_hint(action, role, table)
        return f"permission denied ({line}): {hint}"
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction):
        return f"the session is read-only (read-only mode or a standby), nothing was written: {line}"
    if isinstance(exc, pg_errors.LockNotAvailable):
        return (
            f"lock timeout ({lock_timeout_ms} ms): another session holds these rows; "
            "that batch was rolled back, try again"
        )
    if isinstance(exc, pg_errors.UndefinedTable):
        return f"table {table} does not exist: {line}"
    if is_connection_failure(exc):
        return f"lost the connection to the server ({line}); the last batch may or may not have committed"
    if isinstance(exc, psycopg.Error):  # the server refused the statement: its transaction is rolled back
        said = str(describe(exc, table=table))
        return said if "rolled back" in said else f"{said}; that batch was rolled back"
    return f"{type(exc).__name__}: {line}"
