"""How soon a dashboard knows each deep queue's depth on a big pg-boss table, with and without reading
pg-boss's own counts (#35: "use what the framework already maintains").

    python benchmarks/bench_first_figures.py --base REV [--dsn DSN] [--size 10000000] [--queues 50]
                                             [--rounds 2] [--seconds 20] [--budgets 20000,50]

pg-boss 12.38's stock schema made by its own client and filled as bench_fresh.py fills it (--size
rows over --queues queues: 6% ready, 2% scheduled, so every queue is far deeper than the poll's cap),
under its own client's fleet (200 jobs a second) and one supervising pg-boss instance with its default
monitor (`node pgboss.js monitor '{"interval": 60, "keep": true}'`: pg-boss's own counts every 60 s).

Then, `--rounds` times, each code in turn (the base commit's, checked out in a temporary git worktree,
and this tree's): a child process opens a Monitor as the dashboard does (read-only, its background
counter beside it) and polls every 0.5 s for `--seconds`. Per poll it tallies the queues whose ready
and scheduled figures both have a value (exact, or stale with its as_of) against those still shown as
a lower bound (`≥cap`) or unknown. Once with the background counter's own budget (`--budgets`' first:
its statement_timeout, 20 s by default) and once with a budget its counts cannot meet (50 ms: the
count times out, as on a bloated table in an incident).

Printed per round, code and budget: the queues known at the first poll, the seconds until every queue
was known (or "never" within --seconds), where the figures came from at the last poll, and the age of
the oldest figure shown; then the collect() median of each code.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_framework_poll import drop
from bench_fresh import NODE22, NODE_DIR, PgBossFleet, built_pgboss, pgboss_env
from bench_poll_ab import base_tree, tree_child
from common import measured_server

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import collections, json, statistics, sys, time
from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import Monitor
dsn, seconds, budget = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
target = find_queues(dsn, kind="pg-boss")[0]
KNOWN = ("exact", "stale")
polls, ms = [], []
with Monitor(dsn, target.model, read_only=True, count_budget_ms=budget) as m:
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        t = time.perf_counter(); snap = m.collect(); ms.append((time.perf_counter() - t) * 1000)
        figures = [(q, q.figures[n]) for q in snap.queues for n in ("ready", "scheduled")]
        known = {q.queue for q in snap.queues if all(q.accuracy(n) in KNOWN for n in ("ready", "scheduled"))}
        sources = collections.Counter(f"{f.accuracy}/{f.source}" for _, f in figures)
        ages = [(snap.server.now - f.as_of).total_seconds() for _, f in figures if f.as_of is not None]
        polls.append({"t": round(time.monotonic() - start, 2), "known": len(known),
                      "queues": len(snap.queues), "sources": dict(sources),
                      "oldest_s": round(max(ages), 1) if ages else None})
        time.sleep(max(0.0, 0.5 - (time.perf_counter() - t)))
print(json.dumps({"polls": polls, "median_ms": statistics.median(ms)}))
"""


def child(tree: Path, dsn: str, seconds: float, budget_ms: int) -> dict[str, Any]:
    return tree_child(tree, CHILD, [dsn, str(seconds), str(budget_ms)], seconds + 120)


def summary(got: dict[str, Any]) -> str:
    polls = got["polls"]
    first, last = polls[0], polls[-1]
    everyone = next((p["t"] for p in polls if p["known"] == p["queues"]), None)
    when = f"{everyone:.1f} s" if everyone is not None else "never"
    return (
        f"first poll {first['known']}/{first['queues']} queues known; all known at {when};"
        f" last poll's figures {last['sources']}, the oldest {last['oldest_s']} s old"
    )


def boss_monitor(dsn: str, log: Path) -> subprocess.Popen[str]:
    """A supervising pg-boss instance with its default monitor interval (60 s), once it has counted
    every queue."""
    with log.open("w") as err:
        proc = subprocess.Popen(
            [str(NODE22), str(NODE_DIR / "pgboss.js"), "monitor", json.dumps({"interval": 60, "keep": True})],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=pgboss_env(dsn),
            start_new_session=True,
        )
    assert proc.stdout is not None
    if not proc.stdout.readline().startswith("["):
        stop(proc)
        raise RuntimeError(f"pg-boss's monitor did not count every queue:\n{log.read_text()[-2000:]}")
    return proc


def stop(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the commit to compare against (any git revision)")
    ap.add_argument("--dsn")
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--queues", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--budgets", default="20000,50")
    args = ap.parse_args()
    queues = [f"q{i}" for i in range(args.queues)]
    os.environ["PGQ_TEST_QUEUES"] = ",".join(queues)  # pg-boss: its queues
    budgets = [int(b) for b in args.budgets.split(",")]
    print("load average (1, 5, 15 min) at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()), flush=True)
    with tempfile.TemporaryDirectory() as tmp, measured_server(args.dsn, None) as (server, version):
        trees = {"base": base_tree(args.base, Path(tmp) / "base"), "this": ROOT}
        dsn = built_pgboss(server, args.size, queues, version)
        lifetime = args.rounds * len(trees) * len(budgets) * (args.seconds + 30) + 300
        fleet = PgBossFleet(dsn, queues, 200.0, lifetime, Path(tmp) / "fleet.log")
        medians: dict[str, list[float]] = {name: [] for name in trees}
        try:
            t = time.monotonic()
            monitor = boss_monitor(dsn, Path(tmp) / "monitor.log")
            print(f"pg-boss's monitor counted every queue in {time.monotonic() - t:.1f} s", flush=True)
            try:
                time.sleep(20)  # the fleet's first claims
                for r in range(args.rounds):
                    for budget in budgets:
                        for name, tree in trees.items():
                            got = child(tree, dsn, args.seconds, budget)
                            medians[name].append(got["median_ms"])
                            print(
                                f"round {r + 1}, background budget {budget} ms, {name:4s}: {summary(got)};"
                                f" load {os.getloadavg()[0]:.2f}",
                                flush=True,
                            )
            finally:
                stop(monitor)
        finally:
            fleet.stop()
            drop(server, dsn)
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(trees["base"])], check=False
            )
    for name, values in medians.items():
        print(
            f"collect() median, {name}: {statistics.median(values):.1f} ms over {len(values)} runs",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
