"""pgmq 1.13, driven with its PyPI client (`pgmq`), as its users drive it.

The client ships pgmq's SQL and an installer (`install_pgmq_from_sql`), so the schema comes from pgmq
itself without the C extension. Messages are sent, delayed, read with a visibility timeout and left
unfinished ("crashed" consumers never delete them), archived, and read again and again until
pgq-top's dead rule (read_ct >= DEAD_READS) calls them dead, all with the client's own calls.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

from .harness import grouped, require_python_client, truth_rows

DEAD_READS = 3  # the N of pgq-top's dead rule told to the dialect in these tests
IN_FLIGHT_VT_S = 3600  # a consumer that "crashed" holding a message: invisible for an hour
SHORT_VT_S = 1  # a consumer that crashed with a short lease: visible again after a second

# Ground truth by a plain scan of every queue table and archive (pgq-top's words, its dead rule).
TRUTH = """
SELECT format('%s:%s', q, msg_id), q,
       CASE WHEN archived THEN 'done'
            WHEN read_ct >= {n} THEN 'dead'
            WHEN vt <= now() THEN 'ready'
            WHEN read_ct = 0 THEN 'scheduled' ELSE 'running' END
FROM ({union}) t
"""


def version() -> str:
    return require_python_client("pgmq")


def install(dsn: str) -> str:
    """pgmq's SQL, by the client's own installer; returns the pgmq version it installed."""
    version()
    from pgmq import install_pgmq_from_sql

    return install_pgmq_from_sql(dsn=dsn)


@contextmanager
def client(dsn: str) -> Iterator[Any]:
    from pgmq import PGMQueue

    # The client fills in a user of its own ("postgres") when the DSN names none: name the role the
    # DSN really connects as (on a server with peer authentication that is the OS user's).
    with psycopg.connect(dsn) as conn:
        user = conn.execute("SELECT current_user").fetchone()[0]  # type: ignore[index]
    queue = PGMQueue(conn_string=make_conninfo(dsn, user=user), init_extension=False, pool_size=2)
    try:
        yield queue
    finally:
        queue.close()


def make_dead(queue: Any, name: str, msg_id: int) -> None:
    """Read one message DEAD_READS times, each time "crashing" and making it visible again with the
    client's set_vt(…, 0), as a consumer that fails on it would."""
    for _ in range(DEAD_READS):
        while True:
            msg = queue.read(name, vt=IN_FLIGHT_VT_S)
            assert msg is not None, f"nothing visible in {name}"
            if msg.msg_id == msg_id:
                break
            queue.set_vt(name, msg.msg_id, 0)  # not ours: put it back as it was
        queue.set_vt(name, msg_id, 0)


def populate(dsn: str) -> dict[str, dict[str, int]]:
    """Two busy queues and an empty one with messages in every state; returns {role: msg_id}."""
    ids: dict[str, dict[str, int]] = {}
    with client(dsn) as q:
        for name in ("orders", "emails", "idle"):
            q.create_queue(name)
        for name in ("orders", "emails"):
            got: dict[str, int] = {}
            got["dead"] = q.send(name, {"key": f"{name}-dead"})
            make_dead(q, name, got["dead"])
            got["archived"] = q.send(name, {"key": f"{name}-archived"})
            assert q.archive(name, got["archived"])  # done: a consumer's last step
            got["later"] = q.send(name, {"key": f"{name}-later"}, delay=3600)
            got["held"] = q.send(name, {"key": f"{name}-held"}, headers={"trace": name})
            got["short"] = q.send(name, {"key": f"{name}-short"})
            # one consumer reads with a long vt and one with a short one; both "crash" (never delete)
            visible = [m.msg_id for m in q.read(name, vt=IN_FLIGHT_VT_S, qty=10)]
            assert got["dead"] in visible
            for msg_id in visible:
                if msg_id not in (got["held"], got["short"]):
                    q.set_vt(name, msg_id, 0)
            q.set_vt(name, got["short"], SHORT_VT_S)
            got["ready"] = q.send(name, {"key": f"{name}-ready"})
            ids[name] = got
        time.sleep(SHORT_VT_S + 0.2)  # the short leases have run out: those messages are visible again
    return ids


def truth(conn: psycopg.Connection) -> list[tuple[Any, str, str]]:
    """(id `<queue>:<msg_id>`, queue, canonical state) of every message kept, by a plain scan."""
    queues = [r[0] for r in conn.execute("SELECT queue_name FROM pgmq.meta ORDER BY 1").fetchall()]
    parts = []
    for name in queues:
        for prefix, archived in (("q", "false"), ("a", "true")):
            table = psycopg.sql.Identifier("pgmq", f"{prefix}_{name}").as_string(conn)
            literal = psycopg.sql.Literal(name).as_string(conn)
            parts.append(f"SELECT {literal} AS q, msg_id, read_ct, vt, {archived} AS archived FROM {table}")
    if not parts:
        return []
    return truth_rows(conn.info.dsn, TRUTH.format(n=DEAD_READS, union=" UNION ALL ".join(parts)), conn)


def truth_by_queue(dsn: str) -> dict[str, dict[str, int]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return grouped(truth(conn))
