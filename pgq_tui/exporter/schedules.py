"""The schedule families (docs/schedules.md): each periodic schedule's last and next run and how far
past its due run it is, from the Snapshot's ScheduleReport. A figure not known (no expression in the
database, never ran) is absent, never 0; a kind without schedules exports none."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from prometheus_client.core import GaugeMetricFamily, Metric

from pgq_tui.fleet.poll import QueueOutcome
from pgq_tui.monitor.snapshot import Snapshot

LABELS = ["kind", "target", "schedule"]


def schedule_families(read: Sequence[tuple[QueueOutcome, Snapshot]]) -> Iterator[Metric]:
    overdue = GaugeMetricFamily(
        "pgq_schedule_overdue_seconds",
        "How long past its due run a periodic schedule is (0 while not due; absent while unknown):"
        " alert on it above your --schedule-late",
        labels=LABELS,
    )
    last = GaugeMetricFamily(
        "pgq_schedule_last_run_timestamp_seconds", "When the schedule last ran (absent: never, or unknown)",
        labels=LABELS,
    )  # fmt: skip
    upcoming = GaugeMetricFamily(
        "pgq_schedule_next_run_timestamp_seconds",
        "The schedule's next run, in its stored time zone (absent while unknown)",
        labels=LABELS,
    )
    for o, snap in read:
        report = snap.schedules
        if report is None or not report.supported:
            continue
        for s in report.schedules:
            who = [snap.kind, o.table, s.name]
            if s.overdue_s is not None:
                overdue.add_metric(who, s.overdue_s)
            if s.last_run is not None:
                last.add_metric(who, s.last_run.timestamp())
            if s.next_run is not None:
                upcoming.add_metric(who, s.next_run.timestamp())
    yield from (f for f in (overdue, last, upcoming) if f.samples)
