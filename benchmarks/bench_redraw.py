"""Bytes per second a dashboard writes to its terminal, and the CPU it uses, on a real pseudo-terminal.

    python benchmarks/bench_redraw.py [--seconds 30] [--sizes 80x24,160x48] [--dsn DSN] [--no-demo]
                                      [--waiting-for SECONDS]

An idle queue (jobs waiting that no worker takes, a few dead and far-scheduled ones, nothing moving:
the oldest waiting job's age grows every second) at a 1 s refresh: pgq-top, and
pg_activity on the same server the same way for reference (when installed: `pip install pg_activity`,
it is not a pgq-top dependency). Then the busy demo (`pgq-top --demo`, load and workers running),
pgq-top's own process only. Each run warms up for 10 s (first frames, connection), then counts the
bytes read from the pty's master side and the process's user+system CPU time (all its threads,
from /proc) over --seconds.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from common import measured_server

from pgq_tui.queue import JobQueue

WARMUP_S = 10.0  # first frames and connection; 5 s was not enough on a loaded 2-core machine
TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Run:
    bytes_per_s: float
    cpu_percent: float  # of one core


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime, all threads


def measure(argv: list[str], cols: int, rows: int, seconds: float) -> Run:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    proc = subprocess.Popen(
        argv,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows)},
        start_new_session=True,
    )
    os.close(slave)

    def drain(until: float) -> int:
        n = 0
        while time.monotonic() < until:
            if select.select([master], [], [], 0.05)[0]:
                try:
                    n += len(os.read(master, 65536))
                except OSError:  # EIO: it exited
                    raise SystemExit(f"{argv[0]} exited early ({proc.poll()})") from None
        return n

    try:
        drain(time.monotonic() + WARMUP_S)
        cpu0, t0 = cpu_seconds(proc.pid), time.monotonic()
        written = drain(t0 + seconds)
        cpu1, t1 = cpu_seconds(proc.pid), time.monotonic()
        return Run(written / (t1 - t0), 100 * (cpu1 - cpu0) / (t1 - t0))
    finally:
        os.write(master, b"q")
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        os.close(master)


def idle_queue(dsn: str, waiting_s: float = 600.0) -> None:
    """A queue that has been idle for a while: something on every panel and nothing moving (jobs
    waiting with no worker, dead jobs that failed an hour ago, jobs scheduled an hour out, no recent
    counter buckets)."""
    with JobQueue(dsn) as q:
        q.install()
        q.conn.execute("TRUNCATE jobs, jobs_stats")
        q.enqueue("emails", [{"n": i} for i in range(3)], max_attempts=1)
        for job in q.claim("emails", limit=3):
            q.fail(job, "smtp: connection refused")
        q.conn.execute("UPDATE jobs SET finished_at = now() - interval '1 hour' WHERE status = 'failed'")
        later = datetime.now(timezone.utc) + timedelta(hours=1)
        q.enqueue("reports", [{"n": i} for i in range(2)], run_at=later)
        # waiting (10 minutes by default), no worker runs: an idle dashboard left open over a stalled queue
        due = datetime.now(timezone.utc) - timedelta(seconds=waiting_s)
        q.enqueue("thumbs", [{"n": i} for i in range(4)], run_at=due)
        q.conn.execute("TRUNCATE jobs_stats")


def fmt(run: Run | None) -> str:
    return "-" if run is None else f"{run.bytes_per_s / 1024:6.1f} KB/s  {run.cpu_percent:4.1f}% CPU"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--sizes", default="80x24,160x48")
    ap.add_argument("--dsn", default=None, help="measure on this server (default: a private embedded one)")
    ap.add_argument("--no-demo", action="store_true", help="skip the busy-demo figure")
    ap.add_argument(
        "--waiting-for",
        type=float,
        default=600.0,
        help="seconds the idle queue's ready jobs have waited at the start (0: the first minute, whose"
        " ages tick every second)",
    )
    args = ap.parse_args()
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    pg_activity = shutil.which("pg_activity")
    me = [sys.executable, "-m", "pgq_tui"]
    results = []
    with measured_server(args.dsn) as (dsn, version):
        idle_queue(dsn, args.waiting_for)
        for cols, rows in sizes:
            ours = measure([*me, "--dsn", dsn, "--interval", "1"], cols, rows, args.seconds)
            ref = None
            if pg_activity:
                ref = measure([pg_activity, "--refresh", "1", dsn], cols, rows, args.seconds)
            results.append((f"{cols}x{rows}", ours, ref))
    busy = []
    if not args.no_demo:
        for cols, rows in sizes:
            demo = [*me, "--demo", "--interval", "1"]
            busy.append((f"{cols}x{rows}", measure(demo, cols, rows, args.seconds)))

    print(f"PostgreSQL {version}; {args.seconds:g} s per run after {WARMUP_S:g} s warm-up, 1 s refresh, pty")
    print("idle queue      pgq-top                     pg_activity (reference)      bytes ratio")
    for size, ours, ref in results:
        ratio = f"{ours.bytes_per_s / ref.bytes_per_s:5.2f}" if ref and ref.bytes_per_s else "    -"
        print(f"  {size:8}  {fmt(ours):27}  {fmt(ref):27}  {ratio}")
    if not pg_activity:
        print("  (pg_activity not installed: pip install pg_activity, for the reference)")
    for size, run in busy:
        print(f"busy demo {size:8} pgq-top {fmt(run)}  (pgq-top's own process)")


if __name__ == "__main__":
    main()
