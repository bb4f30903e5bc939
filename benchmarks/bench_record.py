"""Bytes per poll and the recorder's CPU per poll, for a 10-queue database under live load.

    python benchmarks/bench_record.py [--dsn DSN] [--polls 150] [--interval 0.2]

A pgq table with 10 queues: jobs waiting in each, a load thread that enqueues, claims and completes
jobs in every queue (so counts, rates and leases change at each poll), a few stuck jobs, and an
idle-in-transaction session (so the sessions panel is not empty). One monitor polls it; each
Snapshot is appended to a recording. Reported: the file's size per poll (what `--keep` budgets
for), the compressed body per poll, the same Snapshot as plain JSON (the reference: what storing
`snapshot --json` per poll would cost), and the CPU the recorder spends per poll next to the CPU of
the poll itself (collect()).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import measured_server

from pgq_tui.detection import single_queue
from pgq_tui.history.store import Recorder
from pgq_tui.monitor.collect import open_monitor
from pgq_tui.queue import JobQueue

QUEUES = [f"queue_{i:02d}" for i in range(10)]


def load(dsn: str, stop: threading.Event) -> None:
    with JobQueue(dsn, worker_id="bench-load") as q:
        while not stop.is_set():
            for name in QUEUES:
                q.enqueue(name, [{"n": i} for i in range(5)])
                jobs = q.claim(name, limit=4, lease=30)
                q.complete(jobs[:3])
            time.sleep(0.05)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn")
    ap.add_argument("--polls", type=int, default=150)
    ap.add_argument("--interval", type=float, default=0.2)
    ap.add_argument("--out", help="keep the recording in this file (default: a temporary one)")
    args = ap.parse_args()
    with measured_server(args.dsn) as (dsn, version):
        with JobQueue(dsn) as q:
            q.install()
            for name in QUEUES:
                q.enqueue(name, [{"n": i} for i in range(200)])
                q.claim(name, limit=2, lease=0.01)  # stuck: their worker never comes back
        idle = psycopg.connect(dsn, application_name="bench idle tx")
        idle.execute("SELECT 1")  # the transaction stays open: an xmin holder on the sessions panel
        stop = threading.Event()
        loader = threading.Thread(target=load, args=(dsn, stop), daemon=True)
        loader.start()
        target = single_queue(dsn, kind="pgq")
        out = Path(args.out) if args.out else Path(tempfile.mkdtemp()) / "bench.pgq"
        recorder = Recorder(out)
        bodies, json_sizes, rec_cpu, poll_cpu = [], [], [], []
        with open_monitor(dsn, target.model, read_only=True, probe_interval_s=2.0) as monitor:
            for _ in range(args.polls):
                c0 = time.process_time()
                snap = monitor.collect()
                c1 = time.process_time()
                bodies.append(recorder.append(target.label, snap))
                c2 = time.process_time()
                poll_cpu.append(c1 - c0)
                rec_cpu.append(c2 - c1)
                json_sizes.append(len(json.dumps(snap.to_dict())))
                time.sleep(args.interval)
        stop.set()
        loader.join(5)
        idle.close()
        recorder.close()
        files = sum(os.path.getsize(p) for p in out.parent.glob(out.name + "*"))
        queues = len(snap.queues)
    n = len(bodies)
    print(f"PostgreSQL {version}; {n} polls of {queues} queues every {args.interval:g} s, load avg "
          f"{os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"file on disk:        {files / n:8.0f} bytes/poll (SQLite, with its index and WAL)")
    print(f"compressed body:     {statistics.mean(bodies):8.0f} bytes/poll (keyframe every 60 polls)")
    print(f"plain JSON snapshot: {statistics.mean(json_sizes):8.0f} bytes/poll (reference)")
    print(f"ratio file/JSON:     {files / n / statistics.mean(json_sizes):8.3f}")
    print(f"recorder CPU:        {statistics.median(rec_cpu) * 1000:8.2f} ms/poll (median; p90 "
          f"{sorted(rec_cpu)[int(0.9 * n)] * 1000:.2f})")  # fmt: skip
    print(f"poll CPU (collect):  {statistics.median(poll_cpu) * 1000:8.2f} ms/poll (median, reference)")


if __name__ == "__main__":
    main()
