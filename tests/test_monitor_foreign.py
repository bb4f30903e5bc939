"""pgq-top's own table (its counters table present) written by a foreign fleet: the seed's plain SQL
from "another language" (claim + DELETE on `del`, claim + mark done on `done`, INSERT and COPY
enqueues), which bumps no counters, next to pgq_tui.queue's own writer on `own`. The per-queue rates
are checked against what the fleet really did over each figure's own window (the fleet counts its
work; a sampler thread notes the counts with the time, the server runs on the same clock), and the
snapshot must say that foreign writers are present.

What a poll cannot see: a row claimed and deleted between two polls leaves no id behind. Those ids
are counted table-wide (the id sequence moved past them) as the figure's `bound`: the true rate of
the deleting queue lies in [value, value + bound]. A queue that keeps its finished rows is exact."""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from datetime import datetime

from foreign_fleet import Fleet, foreign_fleet
from monitor_support import pgq_monitor
from rich.console import Console

from pgq_tui.monitor.background import BackgroundCount
from pgq_tui.monitor.provenance import queue_provenance
from pgq_tui.monitor.snapshot import Figure, Snapshot
from pgq_tui.queue import JobQueue

PER_S = 1500.0  # per queue: 3,000 jobs/s in all, if this shared machine gets there (see docs/rates.md)
WINDOW_S = 5
TOLERANCE = 0.10


class Sampler:
    """The fleet's counts every 20 ms, with the time: the truth over any window."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.samples: list[tuple[float, dict[str, tuple[int, int, int]]]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            self.samples.append((time.time(), self.fleet.read()))
            time.sleep(0.02)

    def at(self, when: float) -> dict[str, tuple[int, int, int]]:
        i = min(bisect_left([t for t, _ in self.samples], when), len(self.samples) - 1)
        return self.samples[i][1]

    def rate(self, queue: str, which: int, start: datetime, end: datetime) -> float:
        a, b = self.at(start.timestamp())[queue][which], self.at(end.timestamp())[queue][which]
        return (b - a) / (end - start).total_seconds()

    def stamped(self, queue: str, start: datetime, end: datetime) -> tuple[float, float]:
        """Jobs per second whose finishing statement's now() fell in [start, end), as a range: each
        was counted as sent before its stamp and as completed after it (foreign_fleet), so a machine
        that stalls a claimer between the two moves only the range's ends, never the truth out of it."""
        a, b = self.at(start.timestamp())[queue], self.at(end.timestamp())[queue]
        dt = (end - start).total_seconds()
        return max(0, b[1] - a[2]) / dt, (b[2] - a[1]) / dt

    def span(self, queue: str, which: int, start: Snapshot, end: Snapshot) -> tuple[float, float]:
        """The truth over the window between two polls, as a range: a poll's `now` is its start, and
        its statements read the table at some instant of the next collect_ms (a loaded machine makes
        that hundreds of ms)."""
        ms0, ms1 = start.server.collect_ms, end.server.collect_ms
        return self.between(queue, which, start.server.now, ms0, end.server.now, ms1)

    def between(
        self, queue: str, which: int, start: datetime, ms0: float, end: datetime, ms1: float
    ) -> tuple[float, float]:
        """The truth between two reads of the table, each taken at some instant of the `ms` after
        its `now`, as a range (the fleet's counts read at both ends of each), per second of now."""
        t0, t1 = start.timestamp(), end.timestamp()
        s0, s1 = t0 + ms0 / 1000, t1 + ms1 / 1000
        dt = t1 - t0
        count = {t: self.at(t)[queue][which] for t in (t0, s0, t1, s1)}
        return (count[t1] - count[s0]) / dt, (count[s1] - count[t0]) / dt


def within(value: float | None, figure: Figure, truth: tuple[float, float]) -> bool:
    """The truth (a range) meets [value, value + bound], with the tolerance either side."""
    assert value is not None
    low, high = truth
    return value * (1 - TOLERANCE) <= high and low <= (value + (figure.bound or 0.0)) * (1 + TOLERANCE)


def test_foreign_fleet_rates_match_the_truth(dsn: str, queue: JobQueue) -> None:
    snaps: list[Snapshot] = []
    counts: dict[datetime, BackgroundCount] = {}
    with (
        foreign_fleet(dsn, PER_S, workers=2) as fleet,
        pgq_monitor(dsn, rate_window_s=WINDOW_S, count_interval_s=0.5) as monitor,
    ):
        sampler = Sampler(fleet)
        fleet.wait_running(60)  # spawned processes take seconds to start on a loaded machine
        # every background count, by as_of (a figure from them names the one it used), read every
        # 10 ms: passes are at least count_interval_s apart, so none lands and is replaced unseen
        watching = threading.Event()

        def watch_counts() -> None:
            while not watching.wait(0.01):
                bg = monitor._counter.latest()
                if bg is not None:
                    counts.setdefault(bg.as_of, bg)

        watcher = threading.Thread(target=watch_counts, daemon=True)
        watcher.start()
        deadline = time.monotonic() + 14
        while time.monotonic() < deadline:
            queue.enqueue("own", [{}] * 5)
            queue.complete(queue.claim("own", limit=5))
            snaps.append(monitor.collect())
            time.sleep(0.5)
        watching.set()
        watcher.join()
        sampler.stop.set()
    snap = snaps[-1]
    tp = snap.throughput
    assert tp.window_s is not None and tp.window_s >= WINDOW_S
    end = snap.server.now
    first = next(s for s in snaps if abs((end - s.server.now).total_seconds() - tp.window_s) < 1e-3)
    achieved = {}
    for q in ("del", "done"):
        rates = tp.per_queue[q]
        enq = sampler.span(q, 0, first, snap)
        assert within(rates.enqueued, rates.figures["enqueued"], enq), (q, rates, enq)
        figure = rates.figures["completed"]
        if figure.source == "depth":  # exact at this poll: over the same window
            done = sampler.span(q, 1, first, snap)
        else:  # a queue deeper than the cap: over the last two background counts
            bg = counts.get(figure.as_of) if figure.as_of is not None else None
            assert figure.source == "background depth" and bg is not None and bg.previous is not None, figure
            prev = bg.previous
            done = sampler.between(q, 1, prev.as_of, prev.cost_ms, bg.as_of, bg.cost_ms)
        assert within(rates.completed, figure, done), (q, rates, done)
        achieved[q] = (enq, done, rates.enqueued, rates.completed, figure.source, figure.bound)
    print(f"foreign fleet over {tp.window_s:.1f} s (truth in/s, done/s; shown in/s, done/s, source, bound):")
    for q, row in achieved.items():
        print(f"  {q}: {row}")
    assert sum(row[1][0] for row in achieved.values()) > 200  # the fleet really ran
    # the queue that keeps its rows: every id is seen, so its enqueue rate is exact
    kept = tp.per_queue["done"]
    low, high = achieved["done"][0]
    assert low * (1 - TOLERANCE) <= kept.enqueued <= high * (1 + TOLERANCE)
    # pgq_tui.queue's own queue keeps its exact counters
    assert tp.per_queue["own"].figures["completed"].source == "counters"
    assert tp.foreign is not None and "foreign writers present" in tp.foreign
    assert "foreign writers present" in snap.to_dict()["throughput"]["foreign"]
    console = Console(width=200, record=True)
    console.print(queue_provenance(snap, next(q for q in snap.queues if q.queue == "del")))
    assert "foreign writers present" in console.export_text()
