"""pgmq 1.13, installed by its PyPI client's own installer and filled with the client's own calls
(tests/frameworks/pgmq_client.py): two busy queues and an empty one, messages in every state. The
dialect is told the tests' dead rule (read_ct >= 3), as an operator would; the read_ct indexes it
advises are created first, as an operator following the advice would."""

import psycopg
from frameworks import pgmq_client
from frameworks.cases import follow_index_advice
from psycopg import sql

from dialect_cases import DialectCase, TruthJob
from pgq_tui.dialects.pgmq import PgmqDialect


def _dialects() -> tuple[PgmqDialect, ...]:
    return (PgmqDialect(dead_reads=pgmq_client.DEAD_READS),)


def _populate(dsn: str) -> None:
    pgmq_client.populate(dsn)
    follow_index_advice(dsn, "pgmq", _dialects())


def _backdate(conn: psycopg.Connection, job: TruthJob, age: float) -> None:
    """A visible message is ready since its vt, in its queue's own table (id `<queue>:<msg_id>`)."""
    queue, _, msg_id = str(job.id).rpartition(":")
    table = sql.Identifier("pgmq", f"q_{queue}")
    query = sql.SQL("UPDATE {} SET vt = now() - make_interval(secs => %s) WHERE msg_id = %s").format(table)
    assert conn.execute(query, (age, int(msg_id))).rowcount == 1, job


CASES = [
    DialectCase(
        "pgmq",
        "pgmq",
        "pgmq",
        "meta",
        install=lambda dsn: (pgmq_client.install(dsn), None)[1],
        populate=_populate,
        truth=lambda conn: [TruthJob(*row) for row in pgmq_client.truth(conn)],
        dialects=_dialects,
        backdate=_backdate,
    )
]
