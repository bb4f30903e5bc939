"""The bloat collapse, seen coming and fixed by the advisor (issue #15).

    python benchmarks/bench_bloat.py [--jobs 200000] [--clients 4] [--out benchmarks/results]

Starts a private embedded PostgreSQL with stock settings (fsync on, autovacuum_naptime 1 min) and a
pgq-top jobs table whose own autovacuum settings are reset to the server defaults (scale factor 0.2,
threshold 50, cost delay 2 ms, fillfactor 100): "default autovacuum". Then, twice:

  1. fill --jobs ready jobs (one INSERT ... SELECT), VACUUM ANALYZE;
  2. drain them with pgbench, --clients clients, claim batch 1: pgq-top's claim (UPDATE ... FROM a
     FOR UPDATE SKIP LOCKED candidate, as `jobtable.statements.CLAIM`) then DELETE of the job, each its
     own transaction (2 dead tuples per job);
  3. meanwhile, once a second, a pgq-top Monitor polls with the claim-cost probe on (every 1 s) and
     records: pgbench's jobs/s (its -P 1 progress), n_dead_tup, autovacuum runs, the probe's buffers
     per claim and verdict, the pacing verdict.

Run 1 shows the collapse and when the probe's verdict fired relative to the throughput falling by a
third. Between the runs the advisor's recommendations, computed from run 1's measurements, are applied:
the per-table ALTER TABLE, and the ALTER SYSTEM lines a DBA would run (naptime, idle timeout). Run 2
shows time to drain and peak dead tuples with them. Both runs land in --out: every second of both
(bench_bloat.json.gz), a summary and a plotext text plot (docs/bloat.md); `--replot FILE` recomputes the
summary and plot from a recorded file. The machine's load average is recorded: other work skews times.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import plotext as plt
import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from pgq_tui.demo.embedded import EmbeddedPostgres, bin_dir
from pgq_tui.detection import single_queue
from pgq_tui.jobtable.schema import AUTOVACUUM_OPTIONS
from pgq_tui.monitor import open_monitor
from pgq_tui.monitor.advice import advise
from pgq_tui.monitor.health import bloat_verdicts
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.queue import JobQueue

# pgq-top's claim (jobtable/statements.py CLAIM), batch 1, then the completion's DELETE.
PGBENCH_SCRIPT = """\
WITH c AS (SELECT id FROM jobs WHERE status = 'pending' AND queue = 'default' AND run_at <= now()
           ORDER BY priority DESC, run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED),
     u AS (UPDATE jobs j SET status = 'running', attempts = j.attempts + 1,
                  locked_until = now() + interval '30 seconds', locked_by = 'bench'
           FROM c WHERE j.id = c.id RETURNING j.id)
SELECT coalesce(max(id), 0) AS id FROM u \\gset
DELETE FROM jobs WHERE id = :id AND status = 'running';
"""
PROGRESS = re.compile(r"progress: ([\d.]+) s, ([\d.]+) tps")


def fill(dsn: str, n: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE jobs, jobs_stats")
        conn.execute(
            "INSERT INTO jobs (queue, payload) SELECT 'default', jsonb_build_object('n', g) "
            "FROM generate_series(1, %s) g",
            (n,),
        )
        conn.execute("VACUUM ANALYZE jobs")
        conn.execute("CHECKPOINT")


def reset_to_stock(dsn: str) -> None:
    names = sql.SQL(", ").join(sql.SQL(k) for k in AUTOVACUUM_OPTIONS)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER TABLE jobs RESET ({})").format(names))
        conn.execute("ALTER SYSTEM SET autovacuum_naptime = '1min'")
        conn.execute("SELECT pg_reload_conf()")


def pgbench(dsn: str, clients: int, jobs: int, script: Path, progress: list[tuple[float, float]]) -> float:
    """Run pgbench until every job is drained; returns its wall time in seconds."""
    params = conninfo_to_dict(dsn)
    cmd = [
        str(bin_dir() / "pgbench"), "-n", "-M", "prepared", "-P", "1", "-c", str(clients), "-j", str(clients),
        "-t", str(jobs // clients), "-f", str(script),
        "-h", str(params["host"]), "-p", str(params.get("port", 5432)), "-U", str(params["user"]),
        str(params["dbname"]),
    ]  # fmt: skip
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        m = PROGRESS.search(line)
        if m:
            progress.append((float(m[1]), float(m[2])))
        elif "error" in line.lower() or "abort" in line.lower():
            print("pgbench:", line.rstrip(), file=sys.stderr)
    proc.wait()
    if proc.returncode:
        raise SystemExit(f"pgbench failed ({proc.returncode})")
    return time.monotonic() - started


def record(snap: Snapshot, t: float) -> dict[str, Any]:
    b = snap.bloat
    probe = b.probe.latest if b else None
    return {
        "t": round(t, 2),
        "dead_tuples": snap.table.dead_tuples,
        "autovacuum_count": snap.table.autovacuum_count,
        "vacuum_running": snap.table.vacuum is not None,
        "buffers_per_claim": probe.buffers if probe else None,
        "probe_ms": probe.ms if probe else None,
        "probe_level": b.probe.level if b else None,
        "probe_floor": b.probe.floor if b else None,
        "pacing_limiter": b.pacing.limiter if b and b.pacing else None,
        "pacing_level": b.pacing.level if b and b.pacing else None,
        "predicted_peak": b.pacing.predicted_peak if b and b.pacing else None,
        "dead_per_s": b.pacing.dead_per_s if b and b.pacing else None,
        "verdicts": [f"{v.level}: {v.message}" for v in bloat_verdicts(snap)],
        "collect_ms": round(snap.server.collect_ms, 1),
    }


def run(dsn: str, label: str, jobs: int, clients: int, script: Path) -> tuple[dict[str, Any], list[Snapshot]]:
    fill(dsn, jobs)
    progress: list[tuple[float, float]] = []
    samples: list[dict[str, Any]] = []
    snaps: list[Snapshot] = []
    done = threading.Event()
    wall: list[float] = []

    def drive() -> None:
        try:
            wall.append(pgbench(dsn, clients, jobs, script, progress))
        finally:
            done.set()

    load_before = os.getloadavg()
    thread = threading.Thread(target=drive)
    with open_monitor(dsn, single_queue(dsn, kind="pgq").model, probe_interval_s=1.0) as monitor:
        start = time.monotonic()
        thread.start()
        while not done.is_set():
            snap = monitor.collect()
            snaps.append(snap)
            samples.append(record(snap, time.monotonic() - start))
            done.wait(max(0.0, 1.0 - (time.monotonic() - start) % 1.0))
        snaps.append(monitor.collect())
    thread.join()
    tps = dict((round(t), v) for t, v in progress)
    for s in samples:
        s["jobs_per_s"] = tps.get(round(s["t"]))
    result = {
        "label": label,
        "drain_s": round(wall[0], 1),
        "jobs_per_s_mean": round(jobs / wall[0]),
        "peak_dead_tuples": max(s["dead_tuples"] for s in samples),
        "autovacuums": samples[-1]["autovacuum_count"] - samples[0]["autovacuum_count"],
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "progress": progress,
        "samples": samples,
    }
    result.update(timeline(samples, progress))
    return result, snaps


def moving_mean(progress: list[tuple[float, float]], width: int = 5) -> list[tuple[float, float]]:
    """Trailing `width`-second means of pgbench's per-second rates (one noisy second decides nothing)."""
    return [
        (progress[i][0], sum(v for _, v in progress[i - width + 1 : i + 1]) / width)
        for i in range(width - 1, len(progress))
    ]


def timeline(samples: list[dict[str, Any]], progress: list[tuple[float, float]]) -> dict[str, Any]:
    """When the probe's verdict first fired, and when throughput had fallen by a third: the reference
    is the best 5-second mean of the first 60 s (pgbench ramps up, and on a shared machine the first
    seconds can be slow for reasons of their own); it has fallen once a later 5-second mean is below
    2/3 of it."""
    means = moving_mean(progress)
    early = [m for m in means if m[0] <= 60]
    ref_t, ref = max(early, key=lambda m: m[1]) if early else (None, None)
    fell = None
    if ref:
        fell = next((t for t, v in means if t > ref_t and v < ref * 2 / 3), None)
    fired = next((s for s in samples if s["probe_level"] in ("warn", "crit")), None)
    pacing = next((s["t"] for s in samples if s["pacing_level"] in ("warn", "crit")), None)
    at_fire = None
    if fired is not None and means:
        at_fire = round(min(means, key=lambda m: abs(m[0] - fired["t"]))[1])
    return {
        "best_early_jobs_per_s": round(ref) if ref else None,
        "best_early_at_s": ref_t,
        "throughput_fell_by_a_third_at_s": fell,
        "probe_verdict_at_s": fired["t"] if fired else None,
        "buffers_when_probe_fired": f"{fired['buffers_per_claim']} (floor {fired['probe_floor']})"
        if fired
        else None,
        "jobs_per_s_when_probe_fired": at_fire,
        "pacing_verdict_at_s": pacing,
    }


def pick_advice_snapshot(snaps: list[Snapshot]) -> Snapshot:
    """What a user would have looked at: the poll with the highest measured churn whose probe has a
    cost slope (it measured enough spread of dead tuples)."""
    usable = [s for s in snaps if s.bloat and s.bloat.pacing and s.bloat.pacing.dead_per_s]
    sloped = [s for s in usable if s.bloat and s.bloat.probe.buffers_per_dead]
    pool = sloped or usable or snaps
    return max(pool, key=lambda s: (s.bloat.pacing.dead_per_s or 0) if s.bloat and s.bloat.pacing else 0)


def apply_advice(dsn: str, snap: Snapshot) -> dict[str, Any]:
    advice = advise(snap, "public", "jobs")
    with psycopg.connect(dsn, autocommit=True) as conn:
        if advice.table_sql:
            conn.execute(advice.table_sql.encode())
        for line in advice.server_sql:  # what the advisor tells the DBA to run
            conn.execute(line.encode())
    return asdict(advice)


def plot(results: list[dict[str, Any]], path: Path) -> str:
    """Two panels over time: jobs/s (5-second means), and the probe's buffers per claim with the dead
    tuples; vertical lines in run 1: the probe's verdict fired (blue), throughput fell by a third (red)."""
    plt.clear_figure()
    plt.subplots(2, 1)
    plt.plotsize(100, 40)
    plt.theme("clear")
    colors = ("red", "green")
    first = results[0]

    def marks() -> None:
        if first["probe_verdict_at_s"] is not None:
            plt.vline(first["probe_verdict_at_s"], "blue")
        if first["throughput_fell_by_a_third_at_s"] is not None:
            plt.vline(first["throughput_fell_by_a_third_at_s"], "red")

    plt.subplot(1, 1)
    plt.title("jobs/s (pgbench, 5-s means): run 1 stock autovacuum, run 2 the advisor's settings")
    for r, c in zip(results, colors, strict=False):
        means = moving_mean([(float(t), float(v)) for t, v in r["progress"]])
        plt.plot([t for t, _ in means], [v for _, v in means], label=r["label"], color=c)
    marks()
    plt.subplot(2, 1)
    plt.title("buffers per claim (probe, lines) and dead tuples / 1000 (dots)")
    for r, c in zip(results, colors, strict=False):
        probed = [s for s in r["samples"] if s["buffers_per_claim"] is not None]
        plt.plot([s["t"] for s in probed], [s["buffers_per_claim"] for s in probed],
                 label=f"{r['label']}: buffers/claim", color=c)  # fmt: skip
        plt.scatter([s["t"] for s in r["samples"]], [s["dead_tuples"] / 1000 for s in r["samples"]],
                    label=f"{r['label']}: dead/1000", color=c, marker="dot")  # fmt: skip
    marks()
    plt.xlabel("seconds")
    text = plt.build()
    path.write_text(plt.uncolorize(text))
    return text


def summary(results: list[dict[str, Any]], advice: dict[str, Any], version: str) -> str:
    lines = [
        f"PostgreSQL {version}, embedded, stock durability; load average (1, 5, 15 min) recorded per run"
    ]
    keys = (
        "drain_s", "jobs_per_s_mean", "peak_dead_tuples", "autovacuums", "best_early_jobs_per_s",
        "best_early_at_s", "probe_verdict_at_s", "buffers_when_probe_fired", "jobs_per_s_when_probe_fired",
        "throughput_fell_by_a_third_at_s", "pacing_verdict_at_s", "load_before", "load_after",
    )  # fmt: skip
    lines.append(f"{'':34}" + "".join(f"{r['label']:>28}" for r in results))
    for k in keys:
        lines.append(f"{k:34}" + "".join(f"{r.get(k)!s:>28}" for r in results))
    lines.append("advisor (from run 1): " + advice["basis"])
    if advice["table_sql"]:
        lines.append("  " + advice["table_sql"])
    lines += [f"  {line}" for line in advice["server_sql"]]
    return "\n".join(lines)


def report(results: list[dict[str, Any]], advice: dict[str, Any], version: str, out: Path) -> int:
    text = summary(results, advice, version)
    print(plot(results, out / "bench_bloat_plot.txt"))
    first, second = results
    ok = (
        first["probe_verdict_at_s"] is not None
        and first["throughput_fell_by_a_third_at_s"] is not None
        and first["probe_verdict_at_s"] < first["throughput_fell_by_a_third_at_s"]
        and second["drain_s"] < first["drain_s"]
        and second["peak_dead_tuples"] < first["peak_dead_tuples"]
    )
    text += "\nacceptance (verdict before the fall, faster drain, lower peak): " + (
        "met" if ok else "NOT met"
    )
    (out / "bench_bloat_summary.txt").write_text(text + "\n")
    print(text)
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=200_000)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    ap.add_argument("--replot", type=Path, help="recompute summary and plot from a recorded bench_bloat.json")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.replot:
        opener = gzip.open if args.replot.suffix == ".gz" else open
        with opener(args.replot, "rt") as fh:
            recorded = json.load(fh)
        for r in recorded["runs"]:
            r.update(timeline(r["samples"], [tuple(p) for p in r["progress"]]))
        return report(recorded["runs"], recorded["advice"], recorded["version"], args.out)
    # stock PostgreSQL: autovacuum_naptime back to its 1 min default (the demo server uses 5 s)
    server = EmbeddedPostgres(settings={"autovacuum_naptime": "1min"})
    dsn = server.start()
    try:
        with JobQueue(dsn) as q:
            q.install()
        reset_to_stock(dsn)
        with psycopg.connect(dsn) as conn:
            version = str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
        with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
            f.write(PGBENCH_SCRIPT)
            script = Path(f.name)
        print(
            f"run 1: stock autovacuum, {args.jobs} jobs, {args.clients} clients, claim batch 1",
            file=sys.stderr,
        )
        first, snaps = run(dsn, "1 stock", args.jobs, args.clients, script)
        advice = apply_advice(dsn, pick_advice_snapshot(snaps))
        print("advisor applied: " + (advice["table_sql"] or "-") + " | " + "; ".join(advice["server_sql"]),
              file=sys.stderr)  # fmt: skip
        print("run 2: the advisor's settings", file=sys.stderr)
        second, _ = run(dsn, "2 advised", args.jobs, args.clients, script)
        results = [first, second]
        with gzip.open(args.out / "bench_bloat.json.gz", "wt") as fh:
            json.dump({"version": version, "advice": advice, "runs": results}, fh, default=str)
        script.unlink()
        return report(results, advice, version, args.out)
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
