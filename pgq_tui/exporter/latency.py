"""The wait and run time percentile families (monitor/latency.py), per queue and window: gauges with a
`quantile` label as a Prometheus summary's quantiles are (0.5, 0.95, 0.99) and a `_max_seconds` beside
them, over the jobs that finished in the window (`window` 5m, 1h), from the framework's own timestamps.
They are a background pass's, stale by pgq_queue_latency_lag_seconds. A figure not taken (the kind
times no jobs, no pass landed, no job finished in the window, the pass failed before any landed) is
absent, never 0."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from prometheus_client.core import GaugeMetricFamily, Metric

from pgq_tui.fleet.poll import QueueOutcome
from pgq_tui.monitor.latency import QUANTILES, SPANS, queue_latency
from pgq_tui.monitor.snapshot import Percentiles, Snapshot

LABELS = ["kind", "target", "queue"]
SIDES = (
    ("wait", "How long jobs waited, from due (run_at, scheduled_at, start_after) to their start"),
    ("run", "How long jobs ran, from their start to their finish"),
)


def _add(quantiles: GaugeMetricFamily, top: GaugeMetricFamily, labels: list[str], p: Percentiles) -> None:
    for name, q in QUANTILES:
        value = getattr(p, name)
        if value is not None:
            quantiles.add_metric([*labels[:3], str(q), labels[3]], value)
    if p.max is not None:
        top.add_metric(labels, p.max)


def latency_families(read: Sequence[tuple[QueueOutcome, Snapshot]]) -> Iterator[Metric]:
    families: dict[str, tuple[GaugeMetricFamily, GaugeMetricFamily]] = {
        side: (
            GaugeMetricFamily(
                f"pgq_queue_{side}_seconds",
                f"{doc}: quantiles over the jobs that finished in the window",
                labels=[*LABELS, "quantile", "window"],
            ),
            GaugeMetricFamily(
                f"pgq_queue_{side}_max_seconds",
                f"{doc}: the longest, over the jobs that finished in the window",
                labels=[*LABELS, "window"],
            ),
        )
        for side, doc in SIDES
    }
    jobs = GaugeMetricFamily(
        "pgq_queue_latency_jobs",
        "Jobs that finished in the window, which the wait and run quantiles are over",
        labels=[*LABELS, "window"],
    )
    lag = GaugeMetricFamily(
        "pgq_queue_latency_lag_seconds",
        "How far behind this collect the wait and run quantiles are (their background pass's as_of)",
        labels=["kind", "target"],
    )
    for o, snap in read:
        latency = snap.latency
        if latency is None or latency.as_of is None:
            continue
        lag.add_metric([snap.kind, o.table], max(0.0, (snap.server.now - latency.as_of).total_seconds()))
        for q in latency.queues:
            spans = queue_latency(snap, q.queue)
            for window in SPANS:
                s = spans[window]
                labels = [snap.kind, o.table, q.queue, window]
                if s.jobs is not None:  # 0 is measured: no job finished in the window
                    jobs.add_metric(labels, s.jobs)
                for side, _ in SIDES:
                    p = getattr(s, side)
                    if p is not None:
                        _add(*families[side], labels, p)
    out: list[Metric] = [m for pair in families.values() for m in pair]
    yield from (f for f in [*out, jobs, lag] if f.samples)
