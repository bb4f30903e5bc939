"""Wake-ups: one LISTEN connection per worker process, so an idle worker claims the moment a job is
ready instead of polling.

Enqueue, retry and requeue NOTIFY the table's channel in their own transaction (see statements.py),
with the queue's name as payload. The listener thread turns any number of notifications into one
flag (`Wakeup.event`): a burst of 10,000 notifications sets it 10,000 times but the worker claims
until the queue is empty and then once more, never once per notification.

Notifications are hints, not the source of truth. One sent while the listener was disconnected is
lost, so after every (re)connect the listener sets the flag once: the worker claims and finds whatever
it missed. The worker's slow safety poll covers anything else.

Behind a transaction pooler (db/link.py) LISTEN cannot work: the next transaction may run on another
server connection, which never listened. The listener then says so in one line on stderr, sets
`unavailable`, and the worker falls back to polling every `idle_sleep` seconds.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable

import psycopg
from psycopg import sql

from pgq_tui.db.connect import connect
from pgq_tui.errors import PgqError
from pgq_tui.jobtable.statements import WAKE_QUEUE_CHARS

NOTIFY_WAIT = 0.5  # seconds per wait for notifications: how soon stop() is noticed


class Wakeup:
    """LISTENs on `channel` in a daemon thread; `event` is set when one of `queues` may have work."""

    def __init__(
        self,
        conninfo: str,
        channel: str,
        queues: Iterable[str],
        *,
        application_name: str,
        reconnect_max: float = 5.0,
    ) -> None:
        self.conninfo = conninfo
        self.channel = channel
        # A notification names one queue (cut like the sender cuts it); "" means "any queue".
        self.queues = {q[:WAKE_QUEUE_CHARS] for q in queues} | {""}
        self.application_name = application_name
        self.reconnect_max = reconnect_max
        self.event = threading.Event()
        self.notifications = 0  # received for our queues (a counter for tests and benchmarks)
        self.connects = 0
        self.pid: int | None = None  # the listening backend, while connected
        self.unavailable = False  # behind a transaction pooler: no LISTEN, the worker polls
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pgq-wakeup", daemon=True)

    def start(self) -> Wakeup:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(NOTIFY_WAIT * 4)

    def _run(self) -> None:
        retry_in = 0.05
        while not self._stop.is_set():
            conn: psycopg.Connection | None = None
            try:
                conn = connect(self.conninfo, application_name=self.application_name)
                if not conn.link.listen_ok:  # type: ignore[attr-defined]
                    print(
                        f"pgq-top worker {self.application_name}: behind a transaction pooler LISTEN "
                        "cannot work; polling for jobs instead (set PGQ_TOP_POOLER=session if it is a "
                        "session pooler)",
                        file=sys.stderr,
                    )
                    self.unavailable = True
                    self.event.set()
                    return
                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                self.pid = conn.info.backend_pid
                self.connects += 1
                self.event.set()  # we may have missed notifications while not listening: look once
                retry_in = 0.05
                while not self._stop.is_set():
                    for note in conn.notifies(timeout=NOTIFY_WAIT):
                        if note.payload in self.queues:
                            self.notifications += 1
                            self.event.set()
            except (psycopg.Error, PgqError):
                self.pid = None
                self._stop.wait(retry_in)
                retry_in = min(self.reconnect_max, retry_in * 2)
            finally:
                if conn is not None:
                    conn.close()
