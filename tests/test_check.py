"""`pgq-top check` as a monitoring plugin, against a real server seeded into each state: exit codes
0/1/2/3, the status line naming what is wrong, and perfdata in the monitoring-plugins format."""

from __future__ import annotations

import doctest
import json
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import psycopg
import pytest

from pgq_tui.check import plugin, rules
from pgq_tui.cli import main
from pgq_tui.demo.embedded import FAST_UNSAFE_SETTINGS, EmbeddedPostgres
from pgq_tui.queue import JobQueue

# 'label'=value[UOM];[warn];[crit];[min];[max] (monitoring-plugins guidelines, "Performance data")
PERF_ITEM = re.compile(r"'(?:[^'=]|'')+'=(U|-?\d+(\.\d+)?)(s|ms|us|%|B|KB|MB|TB|c)?(;(\d+(\.\d+)?)?){0,4}")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out


def parse(out: str) -> tuple[str, dict[str, str]]:
    """The status text and the perfdata items of a plugin's first line (asserting their format)."""
    first = out.splitlines()[0]
    status, _, perf = first.partition(" | ")
    items = re.findall(r"'(?:[^']|'')+'=\S+", perf)
    assert " ".join(items) == perf, f"perfdata has stray text: {perf!r}"
    for item in items:
        assert PERF_ITEM.fullmatch(item), item
    return status, {i.split("=", 1)[0].strip("'"): i.split("=", 1)[1] for i in items}


@pytest.mark.parametrize("module", [rules, plugin])
def test_doctests(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.attempted > 0 and result.failed == 0


def test_ok(dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]) -> None:
    queue.enqueue("emails", [{}] * 3)
    code, out = run(capsys, "--dsn", dsn)
    status, perf = parse(out)
    assert code == 0 and status.startswith("PGQ OK: 3 ready, 0 running"), out
    assert len(out.splitlines()) == 1
    assert perf["ready"] == "3;;;0" and perf["stuck"] == "0;0;50;0" and perf["dead"] == "0;0;1000;0"
    assert perf["oldest_ready_age"].endswith("s;30;300;0") and perf["xmin_age"].startswith("0s;300;3600")
    assert re.fullmatch(r"\d+(\.\d+)?s;;;0", perf["poll_time"])


def test_warning_names_dead_jobs(dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]) -> None:
    queue.enqueue("emails", [{}] * 2, max_attempts=1)
    for job in queue.claim("emails", limit=2):
        assert queue.fail(job, "boom") == "failed"
    code, out = run(capsys, "--dsn", dsn)
    status, perf = parse(out)
    assert (code, status) == (1, "PGQ WARNING: 2 dead jobs"), out
    assert perf["dead"] == "2;0;1000;0"
    # the same state under a raised threshold is OK, and under a lower critical one CRITICAL
    assert run(capsys, "--dsn", dsn, "--dead-warn", "5")[0] == 0
    assert run(capsys, "--dsn", dsn, "--dead-crit", "1")[0] == 2


def test_critical_names_stuck_jobs_and_the_waiting_queue(
    dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]
) -> None:
    queue.enqueue("emails", [{}] * 60)
    assert len(queue.claim("emails", limit=60, lease=0.05)) == 60
    long_ago = datetime.now(timezone.utc) - timedelta(minutes=10)
    queue.enqueue("reports", [{}], run_at=long_ago)
    time.sleep(0.2)  # the leases expire
    code, out = run(capsys, "--dsn", dsn)
    status, perf = parse(out)
    assert code == 2 and status.startswith("PGQ CRITICAL: "), out
    # the framework's own stuck rule, in words (pgq-top's table: its lease)
    assert "60 stuck jobs (running with an expired lease: status 'running' and locked_until < now())" in status
    assert "queue reports: oldest ready job waiting 10m" in status
    assert perf["stuck"] == "60;0;50;0" and float(perf["oldest_ready_age"].split("s;")[0]) >= 600
    assert out.splitlines()[1:] == [p.strip() for p in status.split(":", 1)[1].split(";")]  # long text


def test_idle_transaction_and_xmin_thresholds(
    dsn: str, sql: psycopg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    with psycopg.connect(dsn, application_name="forgotten-tx") as idle:
        idle.execute("SELECT txid_current()")  # a transaction with an xid, left open
        time.sleep(1.5)
        code, out = run(capsys, "--dsn", dsn, "--idle-tx-age-warn", "1", "--xmin-age-crit", "1")
        status, perf = parse(out)
        pid = idle.info.backend_pid
    assert code == 2, out
    assert f"pid {pid} (forgotten-tx) idle in transaction for 1" in status
    assert f"xmin horizon held 1.5s by backend {pid}" in status or "xmin horizon held 1" in status
    assert float(perf["idle_tx_age"].split("s;")[0]) >= 1.5 and perf["idle_tx_sessions"] == "1;;;0"


def test_dead_tuples_against_the_autovacuum_threshold(
    dsn: str, queue: JobQueue, sql: psycopg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    sql.execute("ALTER TABLE jobs SET (autovacuum_enabled = false, autovacuum_vacuum_threshold = 100)")
    queue.enqueue("emails", [{}] * 1000)
    sql.execute("DELETE FROM jobs")
    if sql.info.server_version >= 150000:
        sql.execute("SELECT pg_stat_force_next_flush()")
    deadline = time.monotonic() + 10
    while True:
        code, out = run(capsys, "--dsn", dsn, "--dead-tuples-warn", "2", "--dead-tuples-crit", "off")
        status, perf = parse(out)
        if perf["dead_tuples"].startswith("1000;") or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert code == 1, out
    assert "dead tuples 10.0x the autovacuum threshold (1.0k > 100, autovacuum off)" in status
    assert perf["dead_tuples_ratio"] == "10;2;;0"


def test_json_prints_the_verdicts(dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]) -> None:
    queue.enqueue("emails", [{}], max_attempts=1)
    (job,) = queue.claim("emails")
    queue.fail(job, "boom")
    code, out = run(capsys, "--dsn", dsn, "--json")
    doc = json.loads(out)
    assert code == doc["exit_code"] == 1 and doc["status"] == "WARNING"
    (target,) = doc["targets"]
    assert target["verdicts"] == [
        {"level": "warn", "status": "WARNING", "measure": "dead", "message": "1 dead jobs"}
    ]
    assert {m["label"]: m["value"] for m in target["measures"]}["dead"] == 1


def test_unknown_when_the_table_is_missing_or_flags_are_bad(
    dsn: str, sql: psycopg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "--dsn", dsn, "--table", "nope")
    assert code == 3 and out.startswith("PGQ UNKNOWN: table public.nope does not exist"), out
    with pytest.raises(SystemExit) as exit_info:
        main(["check", "--dsn", dsn, "--stuck-warn", "many"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 3 and out.startswith("PGQ UNKNOWN: "), out
    code, out = run(capsys, "--dsn", "host=/nonexistent bogus_option=1")
    assert code == 3 and out.startswith("PGQ UNKNOWN: bad DSN"), out


def test_unknown_when_the_server_is_stopped(capsys: pytest.CaptureFixture[str]) -> None:
    with EmbeddedPostgres(settings=FAST_UNSAFE_SETTINGS) as server:
        dsn = server.dsn()
        with JobQueue(dsn) as q:
            q.install()
        assert run(capsys, "--dsn", dsn)[0] == 0
    # stopped (and its socket directory gone): the check must say so, not crash or hang
    code, out = run(capsys, "--dsn", dsn)
    assert code == 3 and out.startswith("PGQ UNKNOWN: cannot connect to PostgreSQL"), out
    assert len(out.splitlines()) == 1


def test_several_targets_one_line(
    dsn: str, queue: JobQueue, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queue.enqueue("emails", [{}], max_attempts=1)
    (job,) = queue.claim("emails")
    queue.fail(job, "boom")
    targets = tmp_path / "targets.toml"
    targets.write_text(
        f"[targets.orders]\ndsn = {json.dumps(dsn)}\n\n"
        f'[targets.gone]\ndsn = "host={tmp_path} port=1 dbname=x"\n'
    )
    code, out = run(capsys, "--targets", str(targets))
    status, perf = parse(out)
    # WARNING outranks UNKNOWN (monitoring-plugins' max_state), and both are named
    assert code == 1, out
    assert status.startswith("PGQ WARNING: orders: 1 dead jobs; gone: cannot connect"), status
    assert perf["orders:dead"] == "1;0;1000;0" and "gone:dead" not in perf
