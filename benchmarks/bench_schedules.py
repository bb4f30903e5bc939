"""What reading the schedules costs on pg-boss 12 (issue #33): `monitor.schedules.read_now` with
S schedules, each with K forwarded occurrences (`__pgboss__send-it` jobs, as its cron pass keeps
them until retention) and K jobs in its queue: the statements the dashboard runs every 15 s and
`pgq-top schedules` runs once.

    python benchmarks/bench_schedules.py [--dsn DSN] [--schedules 10] [--per 1440,20160] [--runs 15]

The schema is pg-boss 12.38's own (`node tests/frameworks/node/pgboss.js migrate`, `npm ci` in
tests/frameworks/node first); schedules and jobs are inserted by SQL in pg-boss's shapes. Without
--dsn it starts a private embedded PostgreSQL.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import psycopg
from common import measured_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from pgq_tui.detection import single_queue
from pgq_tui.monitor.schedules import read_now

FILL = """
INSERT INTO pgboss.schedule (name, cron, timezone, created_on, updated_on)
SELECT 'nightly-' || s, '* * * * *', 'UTC', now() - interval '30 days', now()
FROM generate_series(1, %(s)s) s;
INSERT INTO pgboss.job (id, name, data, state, created_on, completed_on, start_after)
SELECT gen_random_uuid(), '__pgboss__send-it', jsonb_build_object('name', 'nightly-' || s, 'key', ''),
       'completed', now() - make_interval(mins => k), now() - make_interval(mins => k), now()
FROM generate_series(1, %(s)s) s, generate_series(1, %(k)s) k;
INSERT INTO pgboss.job (id, name, data, state, created_on, completed_on, start_after)
SELECT gen_random_uuid(), 'nightly-' || s, '{}', 'completed', now() - make_interval(mins => k),
       now() - make_interval(mins => k), now()
FROM generate_series(1, %(s)s) s, generate_series(1, %(k)s) k;
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn")
    ap.add_argument("--schedules", type=int, default=10)
    ap.add_argument("--per", default="1440,20160")  # a day and 14 days of a minute schedule
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    from frameworks.pgboss_client import PgBoss12

    with measured_server(args.dsn) as (server, version):
        print(f"PostgreSQL {version}, {args.schedules} schedules")
        for per in (int(p) for p in args.per.split(",")):
            name = f"bench_sched_{per}"
            with psycopg.connect(server, autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {name}")
                admin.execute(f"CREATE DATABASE {name}")
            dsn = psycopg.conninfo.make_conninfo(server, dbname=name)
            queues = [f"nightly-{s}" for s in range(1, args.schedules + 1)] + ["__pgboss__send-it"]
            os.environ["PGQ_TEST_QUEUES"] = ",".join(queues)
            PgBoss12(dsn).install()
            with psycopg.connect(dsn, autocommit=True) as conn:
                for statement in FILL.strip().split(";\n"):
                    conn.execute(statement, {"s": args.schedules, "k": per})
                conn.execute("VACUUM ANALYZE")
            model = single_queue(dsn, kind="pg-boss").model
            with psycopg.connect(dsn, autocommit=True) as conn:
                for _ in range(3):
                    read_now(conn, model)
                took = []
                for _ in range(args.runs):
                    started = time.perf_counter()
                    report = read_now(conn, model)
                    took.append((time.perf_counter() - started) * 1000)
            rows = args.schedules * per * 2
            listed = sum(len(s.jobs) for s in report.schedules)
            median = statistics.median(took)
            print(
                f"{per:>6} occurrences per schedule ({rows:,} job rows): read {median:.1f} ms, median of"
                f" {args.runs} ({len(report.schedules)} schedules, {listed} jobs listed)"
            )


if __name__ == "__main__":
    main()
