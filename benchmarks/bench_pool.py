"""The worker pool's drain against pgbench running the same claim, interleaved on one server (#35).

    python benchmarks/bench_pool.py [--rounds 8] [--seconds 3] [--before CHECKOUT] [--dsn DSN]

Each round, on the same freshly refilled table (--rows jobs, queue 'bench'), batch 10, 2 clients:
  - pgbench, the pool's own claim (statements.CLAIM, verbatim but for its parameters, which become
    pgbench variables), then `DELETE ... WHERE id = ANY(ids)` in a second transaction: no fence, no
    counters, no rows decoded by a client (the ceiling);
  - pgbench, the seed's claim (bench_queue.py's PGBENCH_SCRIPT: no pause check, no started_at), the
    reference of the earlier runs;
  - the WorkerPool of this checkout (2 `pgq-top worker` processes, noop handler, heartbeats,
    wake-ups, exact counters), and with --before, of that checkout too (this script's pool_window()
    with that checkout's pgq_tui).
The order of the drains rotates from round to round. Every side is timed by the same rule: from
0.5 s after its first 2,000 jobs were gone and every client was draining, for --seconds (pgbench:
from its per-transaction log, `-l`; the pool: from its own counters). Printed: each side's median
jobs/s, the median of the per-round ratios to pgbench, and per 1,000 jobs the client's CPU and the
whole server's CPU (every PostgreSQL process, walwriter included), each over its whole drain.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_queue import PGBENCH_SCRIPT, refill, remaining
from common import measured_server

from pgq_tui.demo.embedded import bin_dir
from pgq_tui.jobtable import statements as st
from pgq_tui.queue import JobQueue

THIS = Path(__file__).resolve().parent.parent
BATCH = 10
CLIENTS = 2
SKIP_JOBS = 2000  # the window opens SETTLE_S after this many jobs are gone (pool_drain's rule)
SETTLE_S = 0.5
# pool_window() below, run with the checkout's pgq_tui (its WorkerPool, its worker): prints jobs/s and
# worker CPU ms per 1,000 jobs.
POOL_DRAIN = "import sys, bench_pool as b; d, s = sys.argv[1:]; print(*b.pool_window(d, float(s)))"


def same_claim_script() -> str:
    """pgbench's script running the pool's claim itself: CLAIM's text with the parameters turned
    into pgbench variables (`-D` for the constants; locked_by is the client's number), its
    UPDATE ... RETURNING read as a CTE for the ids the DELETE then takes."""
    claim = st.compose(st.CLAIM, "jobs", "public", limit=BATCH).as_string(None)
    for name, var in (
        ("queue", ":queue"),
        ("lease", ":lease"),
        ("worker", ":client_id"),
    ):
        claim = claim.replace(f"%({name})s", var)
    ctes, update = claim.strip().split("\nUPDATE ", 1)
    return (
        f"{ctes},\nu AS (UPDATE {update})\n"
        "SELECT coalesce(array_agg(id), '{}') AS ids FROM u \\gset\n"
        "DELETE FROM jobs WHERE id = ANY(:ids::bigint[]);\n"
    )


def server_cpu(dsn: str) -> Callable[[], float] | None:
    """A reader of the CPU seconds every process of the (local) server has used so far, exited
    backends included (the postmaster's reaped children); None when /proc can't show it."""
    try:
        with psycopg.connect(dsn) as conn:
            row = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'"
            ).fetchone()
        assert row is not None
        postmaster = int(Path(f"/proc/{row[0]}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (psycopg.Error, OSError, AssertionError, ValueError):
        return None
    tick = os.sysconf("SC_CLK_TCK")

    def read() -> float:
        fields = Path(f"/proc/{postmaster}/stat").read_text().rsplit(")", 1)[1].split()
        total = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
        for child in Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split():
            try:
                fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # exited meanwhile: counted in cutime at the next read
            total += int(fields[11]) + int(fields[12])
        return total / tick

    return read


def pgbench_drain(dsn: str, script: str, seconds: float) -> tuple[float, float]:
    """(jobs/s in the window, pgbench's CPU ms per 1,000 jobs over its run)."""
    params = conninfo_to_dict(dsn)
    env = {
        **os.environ,
        "PGHOST": str(params.get("host", "")),
        "PGPORT": str(params.get("port", "5432")),
        "PGUSER": str(params.get("user", "postgres")),
        "PGDATABASE": str(params.get("dbname", "postgres")),
    }
    before = remaining(dsn)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "script.sql"
        path.write_text(script)
        usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(
            [
                str(bin_dir() / "pgbench"),
                *("-n", "-M", "prepared", "-c", str(CLIENTS), "-j", str(CLIENTS)),
                *("-T", str(int(seconds + 6)), "-f", str(path), "-l", "--log-prefix", str(Path(tmp) / "log")),
                *("-D", "queue=bench", "-D", "lease=30"),
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"pgbench failed: {proc.stderr.strip()[-400:]}")
        ends = sorted(
            int(f[4]) + int(f[5]) / 1e6
            for log in Path(tmp).glob("log*")
            for f in (line.split() for line in log.read_text().splitlines())
        )
    gone = before - remaining(dsn)
    if gone != len(ends) * BATCH:  # every script run claimed and deleted a full batch
        raise SystemExit(
            f"pgbench drained {gone} jobs in {len(ends)} runs of batch {BATCH}: the table ran dry"
        )
    if len(ends) < SKIP_JOBS // BATCH:
        raise SystemExit(f"pgbench ran {len(ends)} batches in {seconds + 6:g} s: the server is too slow")
    start = ends[SKIP_JOBS // BATCH - 1] + SETTLE_S
    if start + seconds > ends[-1]:
        raise SystemExit("pgbench's run ended before its window did: the server is too slow to measure")
    jobs = sum(BATCH for t in ends if start < t <= start + seconds)
    cpu = (usage1.ru_utime + usage1.ru_stime) - (usage0.ru_utime + usage0.ru_stime)
    return jobs / seconds, cpu * 1e6 / gone


def pool_window(dsn: str, seconds: float) -> tuple[float, float]:
    """(jobs/s, worker CPU ms per 1,000 jobs) of a WorkerPool of CLIENTS worker processes, batch
    BATCH, noop handler, heartbeats and wake-ups as `pgq-top worker` runs them (no reaper). The
    window opens SETTLE_S after SKIP_JOBS jobs are gone and every worker has completed a batch (a
    worker still starting up would otherwise leave its share of the window to the other)."""
    from bench_latency import cpu_seconds, wait_until

    from pgq_tui.queue.pool import WorkerPool
    from pgq_tui.queue.worker import COUNTER_NAMES, WorkerConfig

    completed = COUNTER_NAMES.index("completed")
    cfg = WorkerConfig(dsn, ("bench",), batch=BATCH)
    with WorkerPool(cfg, concurrency=CLIENTS, reap_interval=0) as pool:

        def draining() -> bool:
            workers = pool.workers
            every = len(workers) == CLIENTS and all(s.counters[completed] > 0 for s in workers)
            return every and pool.counts()["completed"] >= SKIP_JOBS

        wait_until(draining, 60, "every worker to drain")
        time.sleep(SETTLE_S)
        pids = [s.process.pid for s in pool.workers if s.process.pid]
        start, cpu0, t0 = pool.counts()["completed"], cpu_seconds(pids), time.perf_counter()
        time.sleep(seconds)
        done, cpu1, t1 = pool.counts()["completed"] - start, cpu_seconds(pids), time.perf_counter()
    return done / (t1 - t0), (cpu1 - cpu0) * 1e6 / max(done, 1)


def pool_drain(tree: Path, dsn: str, seconds: float) -> tuple[float, float]:
    """pool_window() with the WorkerPool of the checkout at `tree`, in a subprocess."""
    here = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (tree, here)))}
    out = subprocess.run(
        [sys.executable, "-c", POOL_DRAIN, dsn, str(seconds)],
        env=env,
        cwd=tree,  # `python -c` puts the working directory on sys.path before PYTHONPATH's checkout
        capture_output=True,
        text=True,
        check=True,
    )
    rate, cpu = out.stdout.split()[-2:]
    return float(rate), float(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dsn")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--before", type=Path, help="another checkout whose pool drains in the same rounds")
    ap.add_argument("--after", type=Path, default=THIS, help="the checkout to measure (default: this one)")
    ap.add_argument("--verbose", action="store_true", help="print every round")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting of the embedded server, e.g. synchronous_commit=off (no commit waits for a"
        " WAL flush: CPU, not the disk, bounds both sides)",
    )
    args = ap.parse_args()
    settings = dict(item.split("=", 1) for item in args.set)
    with measured_server(args.dsn, settings) as (dsn, version):
        with JobQueue(dsn) as q:
            q.install()
        cpu_reader = server_cpu(dsn)
        print(
            f"PostgreSQL {version}, {os.cpu_count()} cores; {args.rounds} rounds, {args.seconds:g} s windows,"
            f" batch {BATCH}, {CLIENTS} clients, {args.rows:,} rows refilled before each drain;"
            f"{''.join(f' {k}={v};' for k, v in settings.items())}"
            f" load average {os.getloadavg()[0]:.1f}\n",
            flush=True,
        )
        sides: dict[str, Callable[[], tuple[float, float]]] = {
            "pgbench, same claim": lambda: pgbench_drain(dsn, same_claim_script(), args.seconds),
            "pgbench, seed claim": lambda: pgbench_drain(
                dsn, PGBENCH_SCRIPT.format(batch=BATCH), args.seconds
            ),
            "pool": lambda: pool_drain(args.after.resolve(), dsn, args.seconds),
        }
        if args.before:
            before = args.before.resolve()
            sides["pool, before"] = lambda: pool_drain(before, dsn, args.seconds)
        names = list(sides)
        runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in names}
        for rnd in range(args.rounds):
            order = names[rnd % len(names) :] + names[: rnd % len(names)]
            for name in order:
                refill(dsn, args.rows)
                cpu0 = cpu_reader() if cpu_reader else 0.0
                rate, client_cpu = sides[name]()
                time.sleep(0.3)  # the drain's backends exit and are reaped
                server = (cpu_reader() - cpu0) if cpu_reader else 0.0
                gone = args.rows - remaining(dsn)
                runs[name].append((rate, client_cpu, server * 1e6 / max(gone, 1)))
            if args.verbose:
                print(
                    f"  round {rnd + 1}: " + ", ".join(f"{n} {runs[n][-1][0]:,.0f}" for n in names),
                    f"(load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
        ref = runs["pgbench, same claim"]
        print(
            f"\n{'':22} {'jobs/s':>8} {'/ pgbench same claim':>21} {'client CPU':>11} {'server CPU':>11}"
            "   (medians; ratio: median of per-round ratios; CPU ms per 1,000 jobs)"
        )
        for name in names:
            rates = [r for r, _, _ in runs[name]]
            ratios = sorted(r / p for r, (p, _, _) in zip(rates, ref, strict=True))
            spread = f"({ratios[0]:.2f}-{ratios[-1]:.2f})"
            print(
                f"{name:22} {statistics.median(rates):>8,.0f} {statistics.median(ratios):>10.2f} {spread}"
                f" {statistics.median(c for _, c, _ in runs[name]):>11.1f}"
                f" {statistics.median(s for _, _, s in runs[name]):>11.1f}"
            )
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    sys.exit(main())
