"""The latency pass's one read on pg-boss 12.38's stock table: the scan of every job against the walk
of each queue's last hour in pg-boss's own job_i16 (#35: the background's cost at 10M rows).

    python benchmarks/bench_latency_read.py [--dsn DSN] [--table-dsn DSN] [--size 10000000]
                                            [--queues 50] [--rounds 3]

The table is bench_fresh.py's (`--size` rows over `--queues` queues, pg-boss 12.38's own schema and
indexes, 90% of it completed by the fill): every completed job finished within the fill's minutes,
so the hour holds 9M finished jobs at 10M rows, the walk's worst case (each queue's cap binds; a
table whose jobs finished over days holds far fewer in its last hour). `--table-dsn` reads a table
built before (by this script or bench_fresh.py) instead of building one.

Both statements are the monitor's own (`boss_latency`, as the model picks it and as the scan), run
in turn `--rounds` times each on one session, as the latency pass runs them (no parallel workers).
Printed per run: wall time, the backend's CPU (utime + stime from /proc) and the rows; then the
medians and the walk's ratio to the scan.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import psycopg
from bench_fresh import on_table

from pgq_tui.detection import find_queues
from pgq_tui.dialects.introspect import DEFAULTS
from pgq_tui.dialects.pgboss.common import boss_latency
from pgq_tui.monitor.background import BACKGROUND_SETTINGS

TICK = os.sysconf("SC_CLK_TCK")


def backend_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def compare(dsn: str, rounds: int) -> None:
    model = find_queues(dsn, kind="pg-boss")[0].model
    walk, scan = model.latency, boss_latency(model.match.schema)
    assert walk is not None and walk.indexed, "the model does not read the latency through job_i16"
    with psycopg.connect(dsn, autocommit=True) as conn:
        for name, value in BACKGROUND_SETTINGS.items():
            conn.execute("SELECT set_config(%s, %s, false)", (name, value))
        hour = conn.execute(
            "SELECT count(*) FROM pgboss.job"
            " WHERE state = 'completed' AND completed_on >= now() - interval '1 hour'"
        ).fetchone()
        print(f"completed jobs in the last hour: {hour[0] if hour else 0:,}", flush=True)
        took: dict[str, list[tuple[float, float]]] = {"scan": [], "walk": []}
        for r in range(rounds):
            for label, statement in (("scan", scan), ("walk", walk)):
                cpu0, t0 = backend_cpu_s(conn.info.backend_pid), time.perf_counter()
                rows = conn.execute(statement.compose(), DEFAULTS).fetchall()
                wall, cpu = time.perf_counter() - t0, backend_cpu_s(conn.info.backend_pid) - cpu0
                took[label].append((wall, cpu))
                print(
                    f"round {r + 1} {label}: {wall * 1000:,.0f} ms, backend CPU {cpu * 1000:,.0f} ms,"
                    f" {len(rows)} rows; load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
    scan_wall = statistics.median(w for w, _ in took["scan"])
    walk_wall = statistics.median(w for w, _ in took["walk"])
    scan_cpu = statistics.median(c for _, c in took["scan"])
    walk_cpu = statistics.median(c for _, c in took["walk"])
    medians = (("scan, every job", scan_wall, scan_cpu), ("walk, job_i16", walk_wall, walk_cpu))
    for label, wall, cpu in medians:
        print(f"{label:16s} {wall * 1000:8,.0f} ms wall, {cpu * 1000:8,.0f} ms backend CPU (medians)")
    print(f"walk / scan: {walk_wall / scan_wall:.3f}x wall, {walk_cpu / max(scan_cpu, 1e-9):.3f}x CPU")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", help="a server to build the table on (default: a private embedded one)")
    ap.add_argument("--table-dsn", help="a pg-boss 12.38 database built before: read it, build nothing")
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--queues", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print("load average (1, 5, 15 min) at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()), flush=True)
    queues = [f"q{i}" for i in range(args.queues)]
    os.environ["PGQ_TEST_QUEUES"] = ",".join(queues)  # pg-boss's install creates each queue
    on_table(args.dsn, args.table_dsn, "pg-boss", args.size, queues, lambda dsn: compare(dsn, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
