"""Fresh figures on huge stock tables (#35 item 1): how soon 20 jobs that just became stuck show, under a
live worker fleet, and what the background work costs meanwhile.

    python benchmarks/bench_fresh.py [--dsn DSN] [--only seed-jobs,pg-boss] [--size 10000000]
                                     [--queues 50] [--watch-s 600] [--stuck-at 120] [--rate 200]
                                     [--statements] [--log-dir /tmp]

Per kind, a fresh database on the stock schema, no advised index: the seed article's `jobs` table
(bench_stock_poll.build_seed), or pg-boss 12.38's schema made by its own client (Node 22: `npm ci` in
tests/frameworks/node first) filled by tests/frameworks/fills.py (bench_framework_poll.build); --size
rows over --queues queues: 90% finished (kept), 6% ready, 2% scheduled, 1% running (a fifth of them
stuck, the others holding leases that outlast the run, as live workers' would), 1% far ahead (seed) or
dead (pg-boss). VACUUM ANALYZE, CHECKPOINT; the fill time is printed.

Then, for --watch-s seconds, all of it bounded in time:
- a live worker fleet. Seed: a child process of Python threads running the seed's own claim (`FOR
  UPDATE SKIP LOCKED` on due pending jobs, running with `locked_until = now() + 30 s`) and completion
  (`status = 'done'`), and an enqueuer inserting --rate jobs a second. pg-boss: its own client (`node
  pgboss.js fleet`: work() on every queue but the last, insert() of --rate jobs a second), its
  supervisor off so that it does not fail the jobs made stuck below. The rates measured over the
  watch are printed.
- a Monitor as the dashboard runs it: read-only, one collect() a second, its background counter beside
  it. Each poll's collect() wall time and each queue's stuck count with its accuracy and as_of are kept.
- at --stuck-at seconds, 20 jobs become stuck the way a crash leaves them. Seed: a crashed worker's
  claim of 20 due jobs of the first queue (the seed's claim, one statement, a 5 s lease), never
  completed. pg-boss: its own client inserts 20 jobs into the last queue (expireInSeconds 5, priority
  1), fetch()es them and exits without completing them (the fleet does not serve that queue, so it
  cannot take them first). T0, read from the rows, is when the last of them becomes stuck (seed:
  locked_until; pg-boss: started_on + expire_seconds). Measured: from T0 to the first poll whose
  stuck figure of that queue has risen by 20 over its figure from before the crash, and either is as
  of after T0 or lists the 20 in its stuck list (the poll's recheck by row version; the figure keeps
  its pass's as_of); and `pgq-top snapshot --json --wait 30` (the CLI, a subprocess) started at T0,
  again until one lists them or 60 s have passed since T0.

Printed: the fill time; the fleet's rates; collect() median/p95/max against one full-scan `GROUP BY` of
the table in the same run (what a naive dashboard polls); the detection latency (Monitor and CLI); the
background work's cost: the server CPU (utime + stime from /proc) of the counter's and the latency
pass's backends (they run without parallel workers), summed over every pid each had (a reconnect is a
new backend), over the watch as % of one core, and the counter's busy_s duty; the poll's count
statements it lends to the counter's session (monitor/errand.py) are foreground work, so the counter
backend's CPU around each of those errands is taken off its figure and added to the poll's (LentCpu);
the same CPU for the foreground poll's backend; the stuck figure's lag (poll time - its as_of)
median/max; the load average at start and end. A server on another machine: no CPU figure.

--statements loads pg_stat_statements into the embedded server and prints each watch's costliest
statements (the fleet's, the poll's and the counter's together), to see where a slow poll goes.

Exit 0 only when every target of the issue holds, per kind: the Monitor and the CLI show the 20 within
30 s of T0, the background ≤ 5% of one core, collect() p95 < 20 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import multiprocessing as mp
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import psycopg
from bench_framework_poll import PGBOSS_SCAN, build, drop
from bench_stock_poll import build_seed
from common import measured_server

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from dialect_cases.seed import SEED_JOBS_CLAIM
from frameworks.harness import NODE22, NODE_DIR
from frameworks.pgboss_client import PgBoss12

from pgq_tui.detection import find_queues
from pgq_tui.errors import PgqError, first_line
from pgq_tui.monitor.collect import Monitor
from pgq_tui.monitor.snapshot import Snapshot

STUCK_JOBS = 20  # the issue's: 20 jobs become stuck
CRASH_LEASE_S = (
    30  # the crashed worker's lease (seed) or expireInSeconds (pg-boss): the fleet's (--crash-lease)
)
FLEET_LEASE_S = 30  # the live seed workers' lease
CLAIM_BATCH = 5  # jobs per claim of a live seed worker
SEED_WORKERS = 3  # threads claiming in the seed's fleet process
CLI_WAIT_S = 30.0  # `snapshot --wait`
CLI_UNTIL_S = 60.0  # the CLI is run again until it lists them or this long after T0
TARGET_DETECT_S, TARGET_CPU_PCT, TARGET_POLL_MS = 30.0, 5.0, 20.0
WINDOW_POLLS = 100  # collect()'s median and p95 are also printed per this many polls: how they move
SEED_SCAN = "SELECT queue, status, count(*) FROM jobs GROUP BY 1, 2"
FLEET_APP = "bench fleet"


# -- the live fleets ---------------------------------------------------------------------------------


class Fleet(Protocol):
    what: str

    def counts(self) -> tuple[float, float, float]: ...  # completed, enqueued, errors so far

    def stop(self) -> None: ...


def seed_fleet(dsn: str, queues: list[str], rate: float, lifetime_s: float, counts: Any) -> None:
    """The seed's live fleet (a child process): SEED_WORKERS threads claiming CLAIM_BATCH due jobs at a
    time round the queues (the seed's own claim) and completing them, paced to `rate` jobs a second
    together, and an enqueuer inserting `rate` jobs a second; every thread ends after `lifetime_s`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent stops us
    stop_at = time.monotonic() + lifetime_s

    def add(i: int, n: float) -> None:
        with counts.get_lock():
            counts[i] += n

    def worker(k: int) -> None:
        per_s = rate / SEED_WORKERS
        turn, next_at = k, time.monotonic()
        with psycopg.connect(dsn, autocommit=True, application_name=FLEET_APP) as conn:
            while (now := time.monotonic()) < stop_at:
                if now < next_at:
                    time.sleep(min(next_at, stop_at) - now)
                    continue
                queue = queues[turn % len(queues)]
                turn += SEED_WORKERS
                try:
                    claim = {"queue": queue, "n": CLAIM_BATCH, "lease": FLEET_LEASE_S}
                    ids = [r[0] for r in conn.execute(SEED_JOBS_CLAIM, claim).fetchall()]
                    if ids:
                        conn.execute("UPDATE jobs SET status = 'done' WHERE id = ANY(%s)", (ids,))
                except psycopg.Error:
                    add(2, 1)
                    if conn.closed or conn.broken:
                        return
                    time.sleep(0.5)
                    continue
                add(0, len(ids))
                next_at = max(next_at + len(ids) / per_s, now + 0.01 if not ids else 0.0)

    def enqueuer() -> None:
        tick, owed, turn = 0.1, 0.0, 0
        next_at = time.monotonic()
        insert = """
            INSERT INTO jobs (queue, payload)
            SELECT (%(queues)s::text[])[1 + mod(%(turn)s + g, cardinality(%(queues)s::text[]))], '{}'
            FROM generate_series(1, %(n)s) g
        """
        with psycopg.connect(dsn, autocommit=True, application_name=FLEET_APP) as conn:
            while time.monotonic() < stop_at:
                owed += rate * tick
                n = int(owed)
                owed -= n
                try:
                    conn.execute(insert, {"queues": queues, "turn": turn, "n": n})
                    add(1, n)
                    turn += n
                except psycopg.Error:
                    add(2, 1)
                    if conn.closed or conn.broken:
                        return
                next_at += tick
                time.sleep(max(0.0, min(next_at, stop_at) - time.monotonic()))

    threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(SEED_WORKERS)]
    threads.append(threading.Thread(target=enqueuer, daemon=True))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=lifetime_s + 30)


class SeedFleet:
    what = (
        f"the seed's own claim (FOR UPDATE SKIP LOCKED, {CLAIM_BATCH} at a time, {FLEET_LEASE_S} s lease)"
        f" and completion: {SEED_WORKERS} Python threads in a child process, and an enqueuer"
    )

    def __init__(self, dsn: str, queues: list[str], rate: float, lifetime_s: float) -> None:
        ctx = mp.get_context("spawn")  # its own interpreter: the fleet's Python never delays the polls
        self._counts = ctx.Array("d", 3)
        self._proc = ctx.Process(
            target=seed_fleet, args=(dsn, queues, rate, lifetime_s, self._counts), daemon=True
        )
        self._proc.start()

    def counts(self) -> tuple[float, float, float]:
        with self._counts.get_lock():
            done, enqueued, errors = self._counts[:]
        return done, enqueued, errors

    def stop(self) -> None:
        if self._proc.is_alive():
            self._proc.terminate()
        self._proc.join(timeout=10)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(timeout=5)


def pgboss_env(dsn: str, lifetime_s: float | None = None) -> dict[str, str]:
    env = {**os.environ, **PgBoss12(dsn).env}
    env.pop("PGQ_TEST_HEARTBEAT_REFRESH_S", None)  # no heartbeats: the jobs are sent without one
    if lifetime_s is not None:
        env["PGQ_TEST_LIFETIME_S"] = str(int(lifetime_s))
    return env


class PgBossFleet:
    def __init__(self, dsn: str, queues: list[str], rate: float, lifetime_s: float, log: Path) -> None:
        serve = queues[:-1]  # the last queue is the crashing worker's (crash_pgboss)
        interval = 1.0
        batch = max(1, math.ceil(rate * interval / len(serve)))
        self.what = (
            f"pg-boss 12.38's own client (node pgboss.js fleet): work() on {len(serve)} queues, batchSize"
            f" {batch} every {interval:g} s, insert() of {rate:g} jobs/s; supervise off"
        )
        spec = {"serve": serve, "enqueue": serve, "rate": rate, "batch": batch, "interval": interval}
        self._log = log
        self._latest: tuple[float, float, float] = (0.0, 0.0, 0.0)
        self._ready = threading.Event()
        with log.open("w") as err:
            self._proc = subprocess.Popen(
                [str(NODE22), str(NODE_DIR / "pgboss.js"), "fleet", json.dumps(spec)],
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=pgboss_env(dsn, lifetime_s),
                start_new_session=True,  # its own group: stop() ends it and all it started
            )
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(60):
            self.stop()
            raise RuntimeError(f"pg-boss fleet did not start:\n{log.read_text()[-2000:]}")

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if line.startswith("READY"):
                self._ready.set()
            elif line.startswith("{"):
                c = json.loads(line)
                self._latest = (float(c["completed"]), float(c["enqueued"]), float(c["errors"]))

    def counts(self) -> tuple[float, float, float]:
        return self._latest

    def stop(self) -> None:
        if self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, signal.SIGTERM)
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait(timeout=5)


# -- the crash ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Crash:
    what: str
    ids: list[str]
    queues: dict[str, int]  # queue -> jobs made stuck in it
    before: datetime  # server time just before the crash: a figure as of then cannot include them
    t0: datetime  # when the last of them becomes stuck, from the rows


def server_now(conn: psycopg.Connection) -> datetime:
    return conn.execute("SELECT clock_timestamp()").fetchone()[0]  # type: ignore[index,no-any-return]


def crash_seed(dsn: str, queues: Sequence[str], lease_s: int) -> Crash:
    """A worker claims 20 due jobs of the first queue (the seed's claim, one statement, a short lease)
    and dies: they stay running until the lease passes, then are stuck."""
    with psycopg.connect(dsn, autocommit=True, application_name="bench crashed worker") as conn:
        before = server_now(conn)
        claim = {"queue": queues[0], "n": STUCK_JOBS, "lease": lease_s}
        ids = [r[0] for r in conn.execute(SEED_JOBS_CLAIM, claim).fetchall()]
        rows = conn.execute(
            "SELECT queue, count(*), max(locked_until) FROM jobs WHERE id = ANY(%s) GROUP BY queue", (ids,)
        ).fetchall()
    what = f"seed: a crashed worker's claim of {len(ids)} due jobs, lease {lease_s} s, never completed"
    return Crash(what, [str(i) for i in ids], {q: n for q, n, _ in rows}, before, max(r[2] for r in rows))


def crash_pgboss(dsn: str, queues: Sequence[str], lease_s: int) -> Crash:
    """pg-boss's own client inserts 20 jobs (expireInSeconds 5) into the last queue, which the fleet
    does not serve, fetch()es them and exits without completing them."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        before = server_now(conn)
    spec = {"queue": queues[-1], "count": STUCK_JOBS, "expire": lease_s}
    done = subprocess.run(
        [str(NODE22), str(NODE_DIR / "pgboss.js"), "crash", json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=120,
        env=pgboss_env(dsn),
    )
    if done.returncode != 0:
        raise RuntimeError(f"pg-boss crash failed ({done.returncode}): {done.stderr[-2000:]}")
    ids = json.loads(done.stdout.strip().splitlines()[-1])
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT name, count(*), max(started_on + expire_seconds * interval '1 second')"
            " FROM pgboss.job WHERE id = ANY(%s::uuid[]) AND state = 'active' GROUP BY name",
            (ids,),
        ).fetchall()
    what = (
        f"pg-boss: its client fetched {len(ids)} jobs (expireInSeconds {lease_s}) and exited"
        " without completing them"
    )
    return Crash(what, ids, {q: n for q, n, _ in rows}, before, max(r[2] for r in rows))


def still_active(dsn: str, kind: str, ids: list[str]) -> int:
    """How many of the crashed worker's jobs are still running-or-stuck (nobody failed or rescued them)."""
    query = (
        "SELECT count(*) FROM jobs WHERE id = ANY(%s::bigint[]) AND status = 'running'"
        if kind == "seed-jobs"
        else "SELECT count(*) FROM pgboss.job WHERE id = ANY(%s::uuid[]) AND state = 'active'"
    )
    with psycopg.connect(dsn, autocommit=True) as conn:
        return int(conn.execute(query, (ids,)).fetchone()[0])  # type: ignore[index]


# -- what a poll shows -------------------------------------------------------------------------------


StuckFigures = dict[str, tuple[int | None, str, datetime | None]]  # queue -> (count, accuracy, as_of)


def stuck_figures(snap: Snapshot) -> StuckFigures:
    out: StuckFigures = {}
    for q in snap.queues:
        figure = q.figures.get("stuck")
        as_of = figure.as_of if figure is not None else snap.server.now
        out[q.queue] = (q.stuck, q.accuracy("stuck"), as_of)
    return out


def shows(figures: StuckFigures, base: dict[str, int], crash: Crash, listed: frozenset[str]) -> str | None:
    """How the Monitor shows the crashed jobs, if it does: the stuck figure of every queue the crash
    hit has risen by its jobs, and either that figure is as of after T0 ("a pass after T0"), or every
    crashed job is in the stuck list of this poll ("the poll's recheck": the poll found them stuck by
    their row versions; the figure keeps its pass's as_of, before T0, as it never says it is fresher
    than its oldest part). None: not yet."""
    fresh = True
    for queue, n in crash.queues.items():
        count, _, as_of = figures.get(queue, (None, "", None))
        if count is None or as_of is None or count - base[queue] < n:
            return None
        fresh = fresh and as_of > crash.t0
    if fresh:
        return "a pass after T0"
    return "the poll's recheck (the jobs in its stuck list)" if set(crash.ids) <= listed else None


@dataclass
class Poll:
    at: datetime  # the poll's server time
    ms: float  # collect() wall time
    stuck: StuckFigures
    lag_s: float | None  # poll time - the oldest stuck figure's as_of


def baseline(polls: list[Poll], crash: Crash) -> dict[str, int] | None:
    """Each crashed queue's stuck count from the last poll whose figure is as of before the crash."""
    base: dict[str, int] = {}
    for queue in crash.queues:
        known = [
            p.stuck[queue][0]
            for p in polls
            if queue in p.stuck
            and p.stuck[queue][0] is not None
            and (p.stuck[queue][2] or p.at) < crash.before
        ]
        if not known:
            return None
        base[queue] = known[-1]  # type: ignore[assignment]
    return base


# -- the server CPU of a backend ---------------------------------------------------------------------


@dataclass
class LentCpu:
    """The counter's backend CPU while it ran the poll's lent statements (monitor/errand.py): read
    from /proc around each errand, when that backend runs nothing else. The clock ticks (10 ms) are
    charged to whichever process a tick finds running, so the sum over hundreds of errands of a few
    ms each is unbiased. Foreground work: taken off the counter's CPU, added to the poll's."""

    seconds: float = 0.0
    errands: int = 0
    readable: bool = True


def lent_cpu(counter: Any) -> LentCpu:
    """Count, from now on, the backend CPU of every errand `counter` (a BackgroundCounter) serves."""
    out, reader, serve = LentCpu(), BackendCpu(), counter._serve

    def measured(errand: Any) -> None:
        pid = counter._session.pid
        before = reader.read(pid) if pid is not None else None
        serve(errand)
        after = reader.read(pid) if pid is not None else None
        out.readable = out.readable and reader.readable
        if before is not None and after is not None:
            out.seconds += after - before
            out.errands += 1

    counter._serve = measured
    return out


class BackendCpu:
    """utime + stime of server backends (/proc/<pid>/stat), summed over every pid seen: a backend seen at
    the start counts from then, one that appears later (a reconnect) from its start."""

    def __init__(self) -> None:
        self.tick = os.sysconf("SC_CLK_TCK")
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.readable = True

    def read(self, pid: int) -> float | None:
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        if "postgres" not in comm:  # a server on another machine: a pid here is someone else's
            self.readable = False
            return None
        fields = stat[stat.rindex(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / self.tick  # utime, stime (fields 14, 15)

    def sample(self, pid: int | None, *, start: bool = False) -> None:
        if pid is None:
            return
        value = self.read(pid)
        if value is None:
            return
        self.first.setdefault(pid, value if start else 0.0)
        self.last[pid] = value

    def seconds(self) -> float | None:
        if not self.readable or not self.last:
            return None
        return sum(self.last[p] - self.first[p] for p in self.last)


# -- the CLI -----------------------------------------------------------------------------------------


def pgq_top() -> list[str]:
    script = Path(sys.executable).with_name("pgq-top")
    if script.exists():
        return [str(script)]
    found = shutil.which("pgq-top")
    return [found] if found else [sys.executable, "-m", "pgq_tui"]


@dataclass
class CliRun:
    started_s: float  # after T0
    ended_s: float
    listed: bool
    figures: StuckFigures = field(default_factory=dict)
    error: str | None = None


def run_cli(dsn: str, kind: str, crash: Crash, base: dict[str, int], clock: Callable[[], datetime]) -> CliRun:
    started = (clock() - crash.t0).total_seconds()
    argv = [*pgq_top(), "snapshot", "--dsn", dsn, "--kind", kind, "--json", "--wait", f"{CLI_WAIT_S:g}"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=CLI_WAIT_S + 90)
        ended = (clock() - crash.t0).total_seconds()
        snap = Snapshot.from_dict(json.loads(done.stdout))
    except (subprocess.TimeoutExpired, ValueError, KeyError, TypeError) as exc:
        ended = (clock() - crash.t0).total_seconds()
        return CliRun(started, ended, False, error=f"{type(exc).__name__}: {str(exc)[:200]}")
    figures = stuck_figures(snap)
    listed = frozenset(str(row.id) for row in snap.stuck.rows)
    how = shows(figures, base, crash, listed)
    return CliRun(started, ended, how is not None, {q: figures[q] for q in crash.queues if q in figures})


# -- one kind ----------------------------------------------------------------------------------------


@dataclass
class Watched:
    polls: list[Poll] = field(default_factory=list)
    crash: Crash | None = None
    crash_error: str | None = None
    base: dict[str, int] | None = None
    detected_s: float | None = None  # T0 -> the first poll showing them
    detected_how: str | None = None  # shows()
    cli: list[CliRun] = field(default_factory=list)
    others_drift: int = 0  # the largest change of another queue's stuck count over the watch
    failed_polls: list[str] = field(default_factory=list)  # why each poll that raised did


def watch(
    monitor: Monitor,
    dsn: str,
    kind: str,
    queues: list[str],
    fleet: Fleet,
    seconds: float,
    stuck_at: float,
    statements: bool = False,
    crash_lease: int = CRASH_LEASE_S,
) -> dict[str, Any]:
    """The dashboard's loop for `seconds`: one collect() a second; the crash at `stuck_at` (its own
    thread, then the CLI from T0); the counter's, the latency pass's and the poll's backend CPU
    sampled every poll; `statements`: pg_stat_statements is reset at the start and its top
    statements read at the end."""
    counter = monitor._counter  # the Monitor's background counter (its busy_s, its session's pid)
    bg_cpu, lat_cpu, fg_cpu = BackendCpu(), BackendCpu(), BackendCpu()
    lent = lent_cpu(counter)  # the poll's statements the counter's backend ran: foreground work
    latency = monitor._latency  # the latency pass: background work too, on its own connection
    seen = Watched()
    crash_thread: threading.Thread | None = None
    with psycopg.connect(dsn, autocommit=True) as probe:
        offset = server_now(probe) - datetime.now().astimezone()

    def clock() -> datetime:  # the server's clock, without a round trip
        return datetime.now().astimezone() + offset

    def crash_then_cli() -> None:
        try:
            seen.crash = (crash_seed if kind == "seed-jobs" else crash_pgboss)(dsn, queues, crash_lease)
        except Exception as exc:  # said in the report, never a hang
            seen.crash_error = f"{type(exc).__name__}: {exc}"
            return
        crash = seen.crash
        time.sleep(max(0.0, (crash.t0 - clock()).total_seconds()) + 0.05)
        deadline = time.monotonic() + 5
        while seen.base is None and time.monotonic() < deadline:  # the poll loop sets it
            time.sleep(0.1)
        if seen.base is None:
            return
        while not stopping.is_set():
            run = run_cli(dsn, kind, crash, seen.base, clock)
            seen.cli.append(run)
            if run.listed or run.ended_s > CLI_UNTIL_S:
                return

    stopping = threading.Event()
    monitor.collect()  # the first poll starts the counter, as the dashboard's first refresh does
    start = time.monotonic()
    if statements:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("SELECT pg_stat_statements_reset()")
    busy0, fleet0, load0 = counter.busy_s, fleet.counts(), os.getloadavg()
    bg_cpu.sample(counter._session.pid, start=True)
    lat_cpu.sample(latency._session.pid, start=True)
    fg_cpu.sample(monitor.pid, start=True)
    first: StuckFigures = {}
    tick = 0
    try:
        while (elapsed := time.monotonic() - start) < seconds:
            if crash_thread is None and elapsed >= stuck_at:
                crash_thread = threading.Thread(target=crash_then_cli, daemon=True)
                crash_thread.start()
            t = time.perf_counter()
            try:
                snap = monitor.collect()
            except PgqError as exc:  # a lost link: the dashboard says so and polls again
                seen.failed_polls.append(first_line(exc))
                tick += 1
                time.sleep(max(0.0, start + tick - time.monotonic()))
                continue
            ms = (time.perf_counter() - t) * 1000
            figures = stuck_figures(snap)
            ages = [(snap.server.now - a).total_seconds() for _, _, a in figures.values() if a is not None]
            seen.polls.append(Poll(snap.server.now, ms, figures, max(ages) if ages else None))
            first = first or figures
            bg_cpu.sample(counter._session.pid)
            lat_cpu.sample(latency._session.pid)
            fg_cpu.sample(monitor.pid)
            crash = seen.crash
            if crash is not None and seen.base is None:
                seen.base = baseline(seen.polls, crash)
            if crash is not None and seen.base is not None and seen.detected_s is None:
                listed = frozenset(str(row.id) for row in snap.stuck.rows)
                seen.detected_how = shows(figures, seen.base, crash, listed)
                if seen.detected_how is not None:
                    seen.detected_s = (snap.server.now - crash.t0).total_seconds()
            for queue, (count, _, _) in figures.items():
                was = first.get(queue, (None, "", None))[0]
                other = crash is None or queue not in crash.queues
                if other and count is not None and was is not None:
                    seen.others_drift = max(seen.others_drift, abs(count - was))
            tick += 1
            time.sleep(max(0.0, start + tick - time.monotonic()))
        elapsed = time.monotonic() - start
        busy1, fleet1 = counter.busy_s, fleet.counts()
        bg_cpu.sample(counter._session.pid)
        lat_cpu.sample(latency._session.pid)
        fg_cpu.sample(monitor.pid)
        load1 = os.getloadavg()
    finally:
        stopping.set()
    if crash_thread is not None:
        crash_thread.join(timeout=CLI_WAIT_S + 100)
    left = still_active(dsn, kind, seen.crash.ids) if seen.crash is not None else 0
    top = top_statements(dsn) if statements else []
    bg_s, lat_s, fg_s = bg_cpu.seconds(), lat_cpu.seconds(), fg_cpu.seconds()
    lent_s = lent.seconds if lent.readable else None
    return {
        "seen": seen,
        "elapsed": elapsed,
        "busy_duty": (busy1 - busy0) / elapsed,
        "counter_cpu_pct": None if bg_s is None else 100 * bg_s / elapsed,
        "lent_cpu_pct": None if lent_s is None else 100 * lent_s / elapsed,
        "lent": lent.errands,
        "bg_cpu_pct": None if bg_s is None or lent_s is None else 100 * (bg_s - lent_s) / elapsed,
        "bg_pids": sorted(bg_cpu.last),
        "lat_cpu_pct": None if lat_s is None else 100 * lat_s / elapsed,
        "lat_pids": sorted(lat_cpu.last),
        "fg_cpu_pct": None if fg_s is None or lent_s is None else 100 * (fg_s + lent_s) / elapsed,
        "fg_pids": sorted(fg_cpu.last),
        "completed_per_s": (fleet1[0] - fleet0[0]) / elapsed,
        "enqueued_per_s": (fleet1[1] - fleet0[1]) / elapsed,
        "fleet_errors": fleet1[2] - fleet0[2],
        "load": (load0, load1),
        "still_active": left,
        "statements": top,
    }


def top_statements(dsn: str, limit: int = 12) -> list[tuple[int, float, float, str]]:
    """This database's costliest statements over the watch (pg_stat_statements): calls, total
    seconds, mean ms and the statement's start; the fleet's, the poll's and the counter's together."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            """SELECT calls, total_exec_time / 1000, mean_exec_time, regexp_replace(query, '\\s+', ' ', 'g')
               FROM pg_stat_statements
               WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
               ORDER BY total_exec_time DESC LIMIT %s""",
            (limit,),
        ).fetchall()
    return [(int(c), float(t), float(m), str(q)[:140]) for c, t, m, q in rows]


def full_scan_ms(dsn: str, kind: str, runs: int = 3) -> float:
    """The reference: one full-scan GROUP BY of the table, as a naive dashboard polls it (median)."""
    query = SEED_SCAN if kind == "seed-jobs" else PGBOSS_SCAN
    with psycopg.connect(dsn, autocommit=True) as conn:
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            conn.execute(query).fetchall()
            times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p * len(ordered)) - 1))]


def renew_pgboss_leases(lease_s: float) -> Callable[[str], None]:
    """The fill's live running jobs (not the fifth whose worker died five hours ago) outlast the run,
    as jobs held by live workers would: expireInSeconds long enough, sent without a heartbeat (the fill
    gives them a 60 s one that no worker of ours refreshes)."""

    def renew(dsn: str) -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(
                "UPDATE pgboss.job SET expire_seconds = %s, heartbeat_seconds = NULL, heartbeat_on = NULL"
                " WHERE state = 'active' AND started_on > now() - interval '1 hour'",
                (int(lease_s),),
            )

    return renew


# The fill's running jobs past `--active`, finished as a fleet would have finished them: the fill
# makes 1% of the rows running (100,000 at 10M), where a live fleet holds its concurrency's worth.
KEEP_ACTIVE = {
    "seed-jobs": "UPDATE jobs SET status = 'done', locked_until = NULL WHERE status = 'running'"
    " AND id NOT IN (SELECT id FROM jobs WHERE status = 'running' ORDER BY id LIMIT %(n)s)",
    "pg-boss": "UPDATE pgboss.job SET state = 'completed', completed_on = now() WHERE state = 'active'"
    " AND id NOT IN (SELECT id FROM pgboss.job WHERE state = 'active' ORDER BY id LIMIT %(n)s)",
}


def keep_active(dsn: str, kind: str, n: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        done = conn.execute(KEEP_ACTIVE[kind], {"n": n}).rowcount
        conn.execute("VACUUM ANALYZE")
    print(f"{kind}: kept {n:,} of the fill's running jobs running, finished {done:,}", flush=True)


def build_table(server_dsn: str, kind: str, size: int, queues: list[str], lease_s: float) -> tuple[str, str]:
    """A fresh database with the kind's stock table filled (`size` rows over `queues`, the running
    jobs' leases lasting `lease_s`): its dsn, and the dialect that reads it."""
    if kind == "seed-jobs":
        return build_seed(server_dsn, size, queues, lease_s), "seed-jobs"
    after_fill = renew_pgboss_leases(lease_s)
    return build(
        server_dsn, "pg-boss-12", size, advised=False, queues=queues, after_fill=after_fill
    ), "pg-boss"


def built_pgboss(server_dsn: str, size: int, queues: list[str], version: str) -> str:
    """pg-boss 12.38's stock table of `size` rows over `queues` in a fresh database, 1,000 of the
    fill's running jobs kept running (4 h leases, as a live fleet holds its concurrency's worth): its
    dsn, the build said on stdout."""
    t = time.monotonic()
    dsn, _ = build_table(server_dsn, "pg-boss", size, queues, 4 * 3600)
    keep_active(dsn, "pg-boss", 1000)
    print(
        f"PostgreSQL {version}; pg-boss 12.38: {size:,} rows in {len(queues)} queues,"
        f" built in {time.monotonic() - t:.0f} s",
        flush=True,
    )
    return dsn


def on_table(
    server_dsn: str | None,
    table_dsn: str | None,
    kind: str,
    size: int,
    queues: list[str],
    body: Callable[[str], None],
    settings: dict[str, str] | None = None,
) -> None:
    """`body(dsn)` on the kind's table: `table_dsn`'s, built before, as it is; else one built here (on
    `server_dsn`, or a private embedded server started with `settings`) and dropped afterwards."""
    if table_dsn:
        body(table_dsn)
        return
    with measured_server(server_dsn, settings) as (server, version):
        t = time.monotonic()
        dsn, _ = build_table(server, kind, size, queues, 3600)
        built = f"{size:,} rows in {len(queues)} queues, built in {time.monotonic() - t:.0f} s"
        print(f"PostgreSQL {version}; {kind}: {built}", flush=True)
        try:
            body(dsn)
        finally:
            drop(server, dsn)


def run_kind(server_dsn: str, kind: str, args: argparse.Namespace, log_dir: Path) -> bool:
    queues = [f"q{i}" for i in range(args.queues)]
    lease_s = args.watch_s + 4 * 3600  # the fill's live leases outlast the fill, the watch and the drop
    t = time.monotonic()
    dsn, dialect = build_table(server_dsn, kind, args.size, queues, lease_s)
    if args.active is not None:
        keep_active(dsn, kind, args.active)
    fill_s = time.monotonic() - t
    print(
        f"{kind}: built and filled {args.size:,} rows in {args.queues} queues in {fill_s:.0f} s"
        " (schema, fill, VACUUM ANALYZE, CHECKPOINT)",
        flush=True,
    )
    fleet: Fleet | None = None
    try:
        if args.statements:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        lifetime = args.watch_s + 60  # the fleet ends by itself, whatever happens here
        if kind == "seed-jobs":
            fleet = SeedFleet(dsn, queues, args.rate, lifetime)
        else:
            fleet = PgBossFleet(dsn, queues, args.rate, lifetime, log_dir / f"fleet-{kind}.log")
        time.sleep(3)  # the fleet's first claims
        target = find_queues(dsn, kind=dialect)[0]
        with Monitor(dsn, target.model, read_only=True) as monitor:
            out = watch(
                monitor,
                dsn,
                kind,
                queues,
                fleet,
                args.watch_s,
                args.stuck_at,
                statements=args.statements,
                crash_lease=args.crash_lease,
            )
        fleet.stop()
        reference = full_scan_ms(dsn, kind)
    finally:
        if fleet is not None:
            fleet.stop()
        drop(server_dsn, dsn)
    return report(kind, fleet, out, reference, args)


def report(
    kind: str, fleet: Fleet | None, out: dict[str, Any], reference: float, args: argparse.Namespace
) -> bool:
    seen: Watched = out["seen"]
    ms = [p.ms for p in seen.polls] or [math.inf]
    lags = [p.lag_s for p in seen.polls if p.lag_s is not None]
    med, p95, top = statistics.median(ms), pct(ms, 0.95), max(ms)
    if seen.failed_polls:
        print(f"{kind:>9} {len(seen.failed_polls)} polls failed, first: {seen.failed_polls[0]}")
    name = f"{kind:>9}"
    print(f"{name} fleet: {fleet.what if fleet else '?'}")
    print(
        f"{name} fleet over the watch: {out['completed_per_s']:.0f} jobs/s completed, "
        f"{out['enqueued_per_s']:.0f} jobs/s enqueued, {out['fleet_errors']:.0f} errors"
    )
    print(
        f"{name} collect() over {len(ms)} polls: median {med:.1f} ms, p95 {p95:.1f} ms, max {top:.1f} ms;"
        f" one full-scan GROUP BY {reference:.0f} ms (collect() median / full scan {med / reference:.3f})"
    )
    windows = [ms[i : i + WINDOW_POLLS] for i in range(0, len(ms), WINDOW_POLLS)]
    print(
        f"{name} collect() per {WINDOW_POLLS} polls (median / p95 ms): "
        + ", ".join(f"{statistics.median(w):.1f} / {pct(w, 0.95):.1f}" for w in windows if w)
    )
    crash = seen.crash
    if crash is None:
        print(f"{name} crash: did not happen ({seen.crash_error or 'the watch ended first'})")
    else:
        print(
            f"{name} crash: {crash.what}; queues {crash.queues}; T0 {crash.t0.isoformat()}"
            f" (+{(crash.t0 - crash.before).total_seconds():.1f} s after the crash began)"
        )
        print(
            f"{name} stuck before the crash: {seen.base}; other queues' stuck counts moved by at most"
            f" {seen.others_drift}; still running or stuck at the end:"
            f" {out['still_active']} of {len(crash.ids)}"
            f"{' (pg-boss supervisor off in the fleet: nothing failed them)' if kind == 'pg-boss' else ''}"
        )
        after = [p for p in seen.polls if p.at >= crash.t0 - timedelta(seconds=1)][:40]
        trail = ", ".join(
            f"{(p.at - crash.t0).total_seconds():+.0f}s:"
            + "/".join(f"{p.stuck[q][0]}({p.stuck[q][1][:2]})" for q in crash.queues if q in p.stuck)
            for p in after[::4]
        )
        print(f"{name} stuck figure after T0 (count(accuracy)): {trail}")
    detected = seen.detected_s
    print(
        f"{name} Monitor shows the {STUCK_JOBS}: "
        + (
            f"{detected:.1f} s after T0, by {seen.detected_how}"
            if detected is not None
            else "never within the watch"
        )
    )
    for i, run in enumerate(seen.cli, 1):
        figures = {
            q: (c, a, (as_of - crash.t0).total_seconds() if as_of and crash else None)
            for q, (c, a, as_of) in run.figures.items()
        }
        print(
            f"{name} CLI run {i}: started T0{run.started_s:+.1f} s, ended T0{run.ended_s:+.1f} s,"
            f" lists them: {run.listed}; stuck (count, accuracy, as_of - T0): {figures}"
            + (f"; {run.error}" if run.error else "")
        )

    def within(seconds: float | None) -> bool:
        return seconds is not None and seconds <= TARGET_DETECT_S

    cli_s = next((run.ended_s for run in seen.cli if run.listed), None)
    counter, lat, fg = out["bg_cpu_pct"], out["lat_cpu_pct"], out["fg_cpu_pct"]
    bg = None if counter is None else counter + (lat or 0.0)  # all the background work
    print(
        f"{name} background: server CPU "
        + (
            f"{bg:.2f}% of one core: counter {counter:.2f}% (its backends {out['bg_pids']}:"
            f" {out['counter_cpu_pct']:.2f}%, less the poll's statements it ran,"
            f" {out['lent_cpu_pct']:.2f}% in {out['lent']} errands), latency pass"
            f" {lat or 0.0:.2f}% (backends {out['lat_pids']})"
            if bg is not None
            else "not measured (not this machine's server)"
        )
        + f"; counter's busy_s duty {100 * out['busy_duty']:.2f}%; foreground poll (its backend and"
        + " its statements lent to the counter's): "
        + (f"{fg:.2f}% of one core" if fg is not None else "not measured")
        + f"; over {out['elapsed']:.0f} s"
    )
    if lags:
        print(
            f"{name} stuck figure lag (poll time - as_of): median {statistics.median(lags):.1f} s,"
            f" max {max(lags):.1f} s"
        )
    for calls, total_s, mean_ms, query in out["statements"]:
        print(f"{name} statement: {total_s:8.2f} s total, {calls:7d} calls, {mean_ms:8.2f} ms mean: {query}")
    (l0, l1) = out["load"]
    print(
        f"{name} load average during the watch: start {l0[0]:.2f} {l0[1]:.2f} {l0[2]:.2f},"
        f" end {l1[0]:.2f} {l1[1]:.2f} {l1[2]:.2f}"
    )
    checks = {
        f"Monitor shows them within {TARGET_DETECT_S:g} s": within(detected),
        f"snapshot --json lists them within {TARGET_DETECT_S:g} s": within(cli_s),
        f"background <= {TARGET_CPU_PCT:g}% of one core": bg is not None and bg <= TARGET_CPU_PCT,
        f"collect() p95 < {TARGET_POLL_MS:g} ms": p95 < TARGET_POLL_MS,
    }
    for what, ok in checks.items():
        print(f"{name} {'PASS' if ok else 'FAIL'}: {what}")
    return all(checks.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn")
    ap.add_argument("--only", default="seed-jobs,pg-boss")
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--queues", type=int, default=50)
    ap.add_argument("--watch-s", type=float, default=600.0)
    ap.add_argument("--stuck-at", type=float, default=120.0)
    ap.add_argument("--rate", type=float, default=200.0, help="the fleet's jobs a second (default 200)")
    ap.add_argument(
        "--statements",
        action="store_true",
        help="load pg_stat_statements (the embedded server) and print the top statements of each watch",
    )
    ap.add_argument("--log-dir", type=Path, default=Path("/tmp"), help="where the pg-boss fleet's log goes")
    ap.add_argument(
        "--crash-lease",
        type=int,
        default=CRASH_LEASE_S,
        help=f"the crashed worker's lease, s (default {CRASH_LEASE_S}: the live workers')",
    )
    ap.add_argument(
        "--active",
        type=int,
        help="keep only this many of the fill's running jobs running (default: all, 1%% of the rows)",
    )
    args = ap.parse_args()
    kinds = args.only.split(",")
    if unknown := set(kinds) - {"seed-jobs", "pg-boss"}:
        ap.error(f"unknown kind(s) {sorted(unknown)}: seed-jobs, pg-boss")
    if args.queues < 2:
        ap.error("--queues must be 2 or more (pg-boss: the last one is the crashing worker's)")
    if args.stuck_at + args.crash_lease + TARGET_DETECT_S + 10 > args.watch_s:
        ap.error("--stuck-at leaves too little of the watch to see the stuck jobs (45 s at least)")
    # SIGTERM ends the run as Ctrl-C does: through the finally blocks (fleets stopped, databases dropped)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print("load average (1, 5, 15 min) at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()), flush=True)
    ok = True
    settings = {"shared_preload_libraries": "pg_stat_statements"} if args.statements else None
    with measured_server(args.dsn, settings) as (server_dsn, version):
        print(
            f"PostgreSQL {version}; stock schemas, no advised index; {args.size:,} rows in {args.queues}"
            f" queues; watch {args.watch_s:g} s, {STUCK_JOBS} jobs stuck at {args.stuck_at:g} s",
            flush=True,
        )
        for kind in kinds:
            ok = run_kind(server_dsn, kind, args, args.log_dir) and ok
            sys.stdout.flush()
    print("load average (1, 5, 15 min) at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
