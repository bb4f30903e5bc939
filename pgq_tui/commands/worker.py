"""`pgq-top worker --queue Q --handler module:function`: a supervised pool of worker processes on
pgq-top's own table (queue/pool.py), until Ctrl-C or SIGTERM; the supervisor's log on stderr."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

from psycopg import sql

from pgq_tui.commands.writes import refuse_writes
from pgq_tui.db import resolve_dsn
from pgq_tui.errors import EXIT_ERROR, EXIT_OK, RedactFilter, redact
from pgq_tui.queue.handlers import load_handler
from pgq_tui.queue.jobqueue import JobQueue
from pgq_tui.queue.pool import WorkerPool
from pgq_tui.queue.supervise import RestartPolicy
from pgq_tui.queue.worker import WorkerConfig


def run_worker(args: argparse.Namespace) -> int:
    refuse_writes(args, "a pgq-top worker claims and completes jobs")
    dsn = resolve_dsn(args.dsn)
    args.table, args.schema = args.table or "jobs", args.schema or "public"
    load_handler(args.handler)  # fail fast, in the parent, with one line
    with JobQueue(dsn, args.table, args.schema, worker_id="pgq-top worker check") as q:
        q.conn.execute(sql.SQL("SELECT 1 FROM {} LIMIT 0").format(sql.Identifier(args.schema, args.table)))
    config = WorkerConfig(
        conninfo=dsn,
        queues=tuple(args.queue),
        table=args.table,
        schema=args.schema,
        handler=args.handler,
        batch=args.batch,
        lease=args.lease,
        keep=args.keep,
        poll=args.poll,
    )
    _log_supervision()
    stopping = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.set())
    restart = RestartPolicy(crash_limit=args.max_crashes, crash_window=args.crash_window)
    pool = WorkerPool(
        config, concurrency=args.concurrency, reap_interval=args.reap_interval, restart=restart
    ).start()
    print(
        f"pgq-top worker: {args.concurrency} processes on {', '.join(args.queue)}; Ctrl-C stops",
        file=sys.stderr,
    )
    try:
        while not stopping.is_set() and pool.wait_failure(0.2) is None:
            pass
    finally:
        pool.stop(timeout=args.lease)
        counts = pool.counts()
        print("pgq-top worker: stopped; " + ", ".join(f"{k} {v}" for k, v in counts.items()), file=sys.stderr)
    if pool.failure:
        print(f"pgq-top worker: error: {redact(str(pool.failure))}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def _log_supervision() -> None:
    """The pool's supervisor says which worker died of what, and when it restarts one: on stderr,
    credentials redacted."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("pgq-top worker: %(message)s"))
    handler.addFilter(RedactFilter())
    supervision = logging.getLogger("pgq_tui.queue.pool")
    supervision.addHandler(handler)
    supervision.setLevel(logging.INFO)
    supervision.propagate = False
