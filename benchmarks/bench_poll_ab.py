"""The poll of this tree against another commit's, under one live fleet (#35: the foreground poll).

    python benchmarks/bench_poll_ab.py --base REV [--dsn DSN] [--only seed-jobs,pg-boss]
                                       [--size 10000000] [--queues 50] [--rounds 2] [--polls 60]

A poll's cost on a big table under a live fleet moves with the machine (other work on its cores) and
with the table (each claim leaves a dead index entry until autovacuum comes, so the walks grow over a
run): two runs of bench_fresh.py minutes apart are not comparable. Here both codes poll the same
table under the same fleet, one after the other, `--rounds` times each, in turn: the base commit's
(checked out in a temporary git worktree) and this tree's. Each variant is a child process (its own
interpreter, the code of its tree) that opens a Monitor as the dashboard does (read-only, its
background counter beside it), polls 5 times, then `--polls` times once a second.

The tables are bench_fresh.py's (`--size` rows over `--queues` queues, the stock schema, no advised
index, 1,000 running jobs kept), and so is the fleet (the seed's own claim and completion, or pg-boss
12.38's own client: 200 jobs a second).

Printed per round and variant: collect() median and p95, the poll's backend CPU per poll (utime +
stime from /proc), the background counter's backend CPU per poll (its own counts, and the poll's
count statements when the poll lends them to it: monitor/errand.py; how many polls did), this
process's CPU per poll (the poll and its background thread), the cap and the load; then per kind
the ratio of this tree's figures to the base's, over all rounds (the median of the medians, and the
same for the server CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_framework_poll import drop
from bench_fresh import PgBossFleet, SeedFleet, build_table, keep_active
from common import measured_server

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, os, statistics, sys, time
from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import Monitor
dsn, dialect, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
tick = os.sysconf("SC_CLK_TCK")
def cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick
target = find_queues(dsn, kind=dialect)[0]
with Monitor(dsn, target.model, read_only=True) as m:
    for _ in range(5):
        m.collect(); time.sleep(1)
    counter = m._counter._session.pid  # the background counter's backend (None: not connected)
    c0, k0, p0, ms = cpu(m.pid), cpu(counter) if counter else 0.0, time.process_time(), []
    lent0 = getattr(m._counter, "lent", 0)
    for _ in range(n):
        t = time.perf_counter(); snap = m.collect(); d = time.perf_counter() - t
        ms.append(d * 1000); time.sleep(max(0.0, 1 - d))
    server = (cpu(m.pid) - c0) / n * 1000
    same = counter is not None and m._counter._session.pid == counter
    counter_ms = (cpu(counter) - k0) / n * 1000 if same else None
    process = (time.process_time() - p0) / n * 1000
    lent = getattr(m._counter, "lent", 0) - lent0
ms.sort()
print(json.dumps({"median": statistics.median(ms), "p95": ms[int(0.95 * n) - 1], "server_ms": server,
                  "counter_ms": counter_ms, "lent": lent,
                  "process_ms": process, "cap": m.cap, "errors": sorted(snap.errors)}))
"""


def fmt(ms: float | None) -> str:
    return "?" if ms is None else f"{ms:.1f}"


def poll_child(tree: Path, dsn: str, dialect: str, polls: int) -> dict[str, Any]:
    return tree_child(tree, CHILD, [dsn, dialect, str(polls)], polls * 3 + 120)


def tree_child(tree: Path, code: str, argv: list[str], timeout: float) -> dict[str, Any]:
    """`code` run by a child interpreter on `tree`'s code (its own imports), with `argv`: the JSON it
    printed."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", code, *argv],
        env=env,
        cwd=tree,  # `python -c` puts the working directory on sys.path before PYTHONPATH's checkout
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"{tree}: the poll failed: {out.stderr.strip().splitlines()[-3:]}")
    return dict(json.loads(out.stdout))


def base_tree(rev: str, where: Path) -> Path:
    """The base commit's tree, checked out (detached) in a temporary git worktree."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), rev], check=True)
    return where


def run_kind(server_dsn: str, kind: str, args: argparse.Namespace, trees: dict[str, Path]) -> None:
    queues = [f"q{i}" for i in range(args.queues)]
    lease_s = 4 * 3600
    t = time.monotonic()
    dsn, dialect = build_table(server_dsn, kind, args.size, queues, lease_s)
    keep_active(dsn, kind, 1000)
    print(f"{kind}: built and filled {args.size:,} rows in {time.monotonic() - t:.0f} s", flush=True)
    lifetime = args.rounds * len(trees) * (args.polls + 30) + 120
    fleet: SeedFleet | PgBossFleet
    if kind == "seed-jobs":
        fleet = SeedFleet(dsn, queues, 200.0, lifetime)
    else:
        fleet = PgBossFleet(dsn, queues, 200.0, lifetime, Path(tempfile.gettempdir()) / "ab-fleet.log")
    got: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    try:
        time.sleep(20)  # the fleet's first claims
        for r in range(args.rounds):
            for name, tree in trees.items():
                one = poll_child(tree, dsn, dialect, args.polls)
                got[name].append(one)
                print(
                    f"{kind} round {r + 1} {name:5s}: collect() median {one['median']:.1f} ms,"
                    f" p95 {one['p95']:.1f} ms; poll's backend CPU {one['server_ms']:.1f} ms a poll;"
                    f" the counter's backend {fmt(one['counter_ms'])} ms a poll (its own counts, and"
                    f" the poll's counts in {one['lent']} of {args.polls} polls);"
                    f" this process {one['process_ms']:.1f} ms a poll; cap {one['cap']};"
                    f" load {os.getloadavg()[0]:.2f}; errors {one['errors']}",
                    flush=True,
                )
    finally:
        fleet.stop()
        drop(server_dsn, dsn)
    for figure in ("median", "p95", "server_ms"):
        base = statistics.median(o[figure] for o in got["base"])
        this = statistics.median(o[figure] for o in got["this"])
        print(f"{kind} {figure}: base {base:.1f}, this tree {this:.1f}: {this / base:.2f}x", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the commit to compare against (any git revision)")
    ap.add_argument("--dsn")
    ap.add_argument("--only", default="seed-jobs,pg-boss")
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--queues", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--polls", type=int, default=60)
    args = ap.parse_args()
    os.environ["PGQ_TEST_QUEUES"] = ",".join(f"q{i}" for i in range(args.queues))  # pg-boss: its queues
    print("load average (1, 5, 15 min) at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "base"
        trees = {"base": base_tree(args.base, where), "this": ROOT}
        try:
            with measured_server(args.dsn) as (server_dsn, version):
                print(f"PostgreSQL {version}; base {args.base}; {args.size:,} rows in {args.queues} queues")
                for kind in args.only.split(","):
                    run_kind(server_dsn, kind, args, trees)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
