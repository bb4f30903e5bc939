"""Drain throughput of two checkouts of pgq-top, interleaved on one server, next to pgbench.

    git worktree add /tmp/before main   # or: git archive main | tar -x -C /tmp/before
    python benchmarks/bench_queue_ab.py --before /tmp/before [--rounds 6] [--seconds 3]

Each round refills the table and drains it for --seconds with pgbench (bench_queue.py's reference),
then with bench_queue.py's JobQueue drain of the --before checkout, then of this one (the order of
the two alternates from round to round). On a shared machine wall-clock throughput swings by 2x from
one run to the next; interleaving short runs and taking the median of the per-round ratios
(this / before) is what makes a 5% question answerable.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_queue import pgbench, refill
from common import measured_server

from pgq_tui.queue import JobQueue

THIS = Path(__file__).resolve().parent.parent

DRAIN = (
    "import sys; from bench_queue import jobqueue_drain; d, c, b, s = sys.argv[1:];"
    " print(jobqueue_drain(d, int(c), int(b), float(s)))"
)
# --pool: bench_latency.py's pool_drain instead, a WorkerPool of `clients` worker processes (batch 10)
# with heartbeats and wake-ups, as `pgq-top worker` runs; its own refill of --rows.
POOL_DRAIN = (
    "import sys, bench_latency as b; d, c, r, s = sys.argv[1:]; b.WORKERS = int(c);"
    " print(b.pool_drain(d, int(r), float(s))[0])"
)


def drain(tree: Path, dsn: str, clients: int, batch: int, seconds: float, pool_rows: int = 0) -> float:
    """bench_queue.jobqueue_drain() of the checkout at `tree` (its own pgq_tui, in subprocesses);
    with pool_rows, bench_latency.pool_drain() of a WorkerPool (batch 10) on that many rows."""
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'benchmarks'}"}
    code, third = (POOL_DRAIN, pool_rows) if pool_rows else (DRAIN, batch)
    out = subprocess.run(
        [sys.executable, "-c", code, dsn, str(clients), str(third), str(seconds)],
        env=env,
        cwd=tree,  # `python -c` puts the working directory on sys.path before PYTHONPATH's checkout
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True, help="the other checkout (e.g. main)")
    ap.add_argument(
        "--after",
        type=Path,
        default=THIS,
        help="the checkout to compare (default: this one); give both as copies in the same place, "
        "e.g. git archive into /tmp, to rule out where the code lives (an A/A run here showed 0.90)",
    )
    ap.add_argument("--dsn")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--verbose", action="store_true", help="print each round's this/before")
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--cells", default="10x2,100x2", help="batch x clients, comma-separated")
    ap.add_argument("--pool", action="store_true", help="drain with a WorkerPool (batch 10) instead")
    args = ap.parse_args()
    with measured_server(args.dsn) as (dsn, version):
        with JobQueue(dsn) as q:
            q.install()
        print(
            f"PostgreSQL {version}, {os.cpu_count()} cores,"
            f" {args.rounds} rounds of {args.seconds:.0f} s per cell"
            f"{', WorkerPool drain (batch 10)' if args.pool else ', JobQueue drain'};"
            f" load average {os.getloadavg()[0]:.1f}\n"
        )
        print(
            f"{'batch':>5} {'clients':>7} {'pgbench':>9} {'before':>9} {'this':>9} {'this/pgbench':>12}"
            f" {'before/pgbench':>14}  this/before (median of rounds)"
        )
        for cell in args.cells.split(","):
            batch, clients = (int(v) for v in cell.split("x"))
            batch = 10 if args.pool else batch
            runs: dict[str, list[float]] = {"pgbench": [], "before": [], "this": []}
            for rnd in range(args.rounds):
                order = ("before", "this") if rnd % 2 == 0 else ("this", "before")
                refill(dsn, args.rows)
                runs["pgbench"].append(pgbench(dsn, clients, batch, args.seconds))
                for name in order:
                    refill(dsn, args.rows)
                    tree = (args.before if name == "before" else args.after).resolve()
                    rows = args.rows if args.pool else 0
                    runs[name].append(drain(tree, dsn, clients, batch, args.seconds, rows))
            if args.verbose:
                pairs = zip(runs["this"], runs["before"], strict=True)
                print(f"  rounds (this/before): {', '.join(f'{t:,.0f}/{b:,.0f}' for t, b in pairs)}")
            med = {k: statistics.median(v) for k, v in runs.items()}
            ratio = statistics.median(t / b for t, b in zip(runs["this"], runs["before"], strict=True))
            this, before = med["this"] / med["pgbench"], med["before"] / med["pgbench"]
            print(
                f"{batch:>5} {clients:>7} {med['pgbench']:>9,.0f} {med['before']:>9,.0f} {med['this']:>9,.0f}"
                f" {this:>12.2f} {before:>14.2f}  {ratio:.3f}",
                flush=True,
            )
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    sys.exit(main())
