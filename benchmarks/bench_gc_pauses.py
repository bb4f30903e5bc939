"""The dashboard's garbage-collector pauses, with and without freezing its long-lived heap (#35: the
foreground poll; tui/heap.py).

    python benchmarks/bench_gc_pauses.py [--dsn DSN] [--table-dsn DSN] [--queues 50] [--seconds 60]

A full collection holds the GIL: the poll's thread and the screen stand still for as long as it
visits every tracked object. This runs the dashboard headless (Textual's run_test, 160x48, a poll a
second, read-only) on the seed's `jobs` table (bench_fresh.py's, 200,000 rows over `--queues`
queues), twice in turn in fresh interpreters: as an app a test builds (nothing frozen), and as the
dashboard a user starts (`freeze_heap=True`: frozen once the first screen is drawn). Each counts,
over `--seconds` after a 3 s start, the collections of each generation and their pauses
(gc.callbacks), and the tracked objects the last full pass would visit.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from bench_fresh import on_table

CHILD = """
import asyncio, gc, json, sys, time
from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import Monitor
from pgq_tui.tui.app import PgqTopApp
dsn, freeze, seconds = sys.argv[1], sys.argv[2] == "1", float(sys.argv[3])
target = find_queues(dsn, kind="seed-jobs")[0]
pauses, started = [], {}
def timed(phase, info):
    if phase == "start":
        started["t"] = time.perf_counter()
    else:
        pauses.append((info["generation"], (time.perf_counter() - started["t"]) * 1000))
gc.callbacks.append(timed)
async def main():
    with Monitor(dsn, target.model, read_only=True) as monitor:
        app = PgqTopApp(monitor, target="bench", interval=1.0, read_only=True, freeze_heap=freeze)
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause(3)
            pauses.clear()
            await pilot.pause(seconds)
            return len(gc.get_objects()), gc.get_freeze_count()
visited, frozen = asyncio.run(main())
print(json.dumps({"pauses": pauses, "visited": visited, "frozen": frozen}))
"""


def run(dsn: str, freeze: bool, seconds: float) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, dsn, "1" if freeze else "0", str(seconds)],
        capture_output=True,
        text=True,
        check=True,
        timeout=seconds + 120,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def report(label: str, got: dict[str, object], seconds: float) -> None:
    pauses = got["pauses"]
    assert isinstance(pauses, list)
    print(f"{label}: {got['visited']:,} objects a full pass visits, {got['frozen']:,} frozen")
    for generation in (0, 1, 2):
        ms = sorted(d for g, d in pauses if g == generation)
        if not ms:
            print(f"  generation {generation}: no collection in {seconds:g} s")
            continue
        print(
            f"  generation {generation}: {len(ms)} collections, {sum(ms):.0f} ms in all,"
            f" median {ms[len(ms) // 2]:.2f} ms, max {ms[-1]:.1f} ms"
        )


def compare(dsn: str, rounds: int, seconds: float) -> None:
    for r in range(rounds):
        for label, freeze in (("nothing frozen", False), ("frozen after the first screen", True)):
            t = time.monotonic()
            report(f"round {r + 1}, {label}", run(dsn, freeze, seconds), seconds)
            print(f"  ({time.monotonic() - t:.0f} s, load {os.getloadavg()[0]:.2f})", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", help="a server to build the table on (default: a private embedded one)")
    ap.add_argument("--table-dsn", help="a seed `jobs` database built before: read it, build nothing")
    ap.add_argument("--queues", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=60.0)
    args = ap.parse_args()
    print("load average (1, 5, 15 min) at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()), flush=True)
    queues = [f"q{i}" for i in range(args.queues)]
    on_table(
        args.dsn,
        args.table_dsn,
        "seed-jobs",
        200_000,
        queues,
        lambda dsn: compare(dsn, args.rounds, args.seconds),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
