"""`check` and the exporter over every dialect (the conformance cases in tests/dialect_cases/: each
framework's schema by its own tool, jobs in every state by its own client and workers, one killed):
each figure they report equals ground-truth SQL, each figure the dialect cannot serve is reported as
unsupported (check) or absent (exporter), never as 0, and the stuck verdict names the framework's
own rule."""

from __future__ import annotations

import json
import time
from collections import Counter

import psycopg
import pytest
from dialect_cases import DialectCase, all_cases
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from pgq_tui.cli import main
from pgq_tui.exporter.cache import SnapshotCache
from pgq_tui.exporter.server import SnapshotCollector
from pgq_tui.fleet.poll import TargetWatch
from pgq_tui.targets import Target

CASES = [pytest.param(c, id=c.id, marks=c.marks) for c in all_cases()]
# check's measure -> canonical state
MEASURED = {
    "ready": "ready",
    "scheduled": "scheduled",
    "running": "running",
    "stuck": "stuck",
    "dead": "dead",
}


def _threshold(case: DialectCase) -> str | None:
    """The stalled/heartbeat threshold the case tells its dialect, to tell the CLI the same way an
    operator would (PGQ_TOP_STALLED_AFTER)."""
    for dialect in case.dialects():
        for name in ("stalled_after_s", "heartbeat_timeout_s"):
            if getattr(dialect, name, None):
                return str(getattr(dialect, name))
    return None


def _dead_reads(case: DialectCase) -> int | None:
    """The dead rule the case tells its dialect (pgmq's read_ct >= N), to tell the CLI and the
    exporter's target the same way an operator would (--dead-reads, a target's dead_reads)."""
    return next((d.dead_reads for d in case.dialects() if getattr(d, "dead_reads", None)), None)


@pytest.mark.parametrize("case", CASES)
def test_check_and_exporter_report_every_dialect_truthfully(
    case: DialectCase, empty_dsn: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    threshold = _threshold(case)
    if threshold is not None:
        monkeypatch.setenv("PGQ_TOP_STALLED_AFTER", threshold)
    case.install(empty_dsn)
    case.populate(empty_dsn)
    time.sleep(0.05)  # let the shortest leases of the populate step expire
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        truth = Counter((str(j.queue), j.state) for j in case.truth(conn))
    total = Counter(state for (_, state), n in truth.items() for _ in range(n))

    dead_reads = _dead_reads(case)
    told = ["--dead-reads", str(dead_reads)] if dead_reads else []
    argv = ["check", "--dsn", empty_dsn, "--kind", case.kind, "--json", "--ready-age-warn", "off", *told]
    code = main(argv)
    doc = json.loads(capsys.readouterr().out)
    (result,) = doc["targets"]
    assert (result["kind"], result["table"], result["error"]) == (
        case.kind,
        f"{case.schema}.{case.table}",
        None,
    )
    measures = {m["label"]: m for m in result["measures"]}
    for label, state in MEASURED.items():
        m = measures[label]
        if m["unsupported"] is None:
            assert m["value"] == total[state], (label, m)
        else:  # unsupported: no value, never a level, and a reason
            assert m["value"] is None and m["level"] == "ok" and m["unsupported"], (label, m)
    verdicts = {v["measure"]: v for v in result["verdicts"]}
    if measures["stuck"]["unsupported"] is None and total["stuck"]:
        assert verdicts["stuck"]["message"].startswith(f"{total['stuck']} stuck jobs (")
    assert code == doc["exit_code"] != 3, doc  # every measure was read: never UNKNOWN

    with TargetWatch(Target("db", empty_dsn, kind=case.kind, dead_reads=dead_reads)) as watch:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(SnapshotCollector(SnapshotCache(watch)))
        body = generate_latest(registry).decode()
    jobs: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(body):
        for s in family.samples:
            if s.name == "pgq_jobs":
                assert (s.labels["kind"], s.labels["target"]) == (case.kind, f"{case.schema}.{case.table}")
                jobs[(s.labels["queue"], s.labels["state"])] = s.value
            if s.name == "pgq_up":
                assert s.value == 1
    exported = {state for _, state in jobs}
    for label, state in MEASURED.items():  # what check could not serve, the exporter leaves out
        assert (state in exported) == (measures[label]["unsupported"] is None), state
    for (queue, state), value in jobs.items():
        assert value == truth[(queue, state)], (queue, state)
    for (queue, state), n in truth.items():
        if state in exported:
            assert jobs.get((queue, state)) == n, (queue, state)
