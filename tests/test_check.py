"""`pgq-top check` as a monitoring plugin, against a real server seeded into each state: exit codes
0/1/2/3, the status line naming what is wrong, and perfdata in the monitoring-plugins format."""

from __future__ import annotations

import doctest
import json
import re
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import psycopg
import pytest
from dialect_cases import seed

import pgq_tui.dialects.mapping as seed_mappings
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


def truth_states(dsn: str, query: str) -> Counter[str]:
    """Jobs per canonical state, by a plain scan written from the table's own rules."""
    with psycopg.connect(dsn) as conn:
        return Counter(str(state) for _, _, state in conn.execute(query).fetchall())


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
    assert (
        "60 stuck jobs (running with an expired lease: status 'running' and locked_until < now())" in status
    )
    assert "queue reports: oldest ready job waiting 10m" in status
    assert perf["stuck"] == "60;0;50;0" and float(perf["oldest_ready_age"].split("s;")[0]) >= 600
    assert out.splitlines()[1:] == [p.strip() for p in status.split(":", 1)[1].split(";")]  # long text


def test_idle_transaction_and_xmin_thresholds(
    dsn: str, sql: psycopg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    with psycopg.connect(dsn, application_name="forgotten-tx") as idle:
        opened = time.monotonic()
        idle.execute("SELECT txid_current()")  # a transaction with an xid, left open
        time.sleep(1.5)
        code, out = run(capsys, "--dsn", dsn, "--idle-tx-age-warn", "1", "--xmin-age-crit", "1")
        open_for = time.monotonic() - opened  # the ages shown lie between 1.5 s and this
        status, perf = parse(out)
        pid = idle.info.backend_pid
    assert code == 2, out
    shown = re.search(rf"pid {pid} \(forgotten-tx\) idle in transaction for ([\d.]+)s", status)
    held = re.search(rf"xmin horizon held ([\d.]+)s by backend {pid}", status)
    assert shown and held, status
    for age in (float(shown[1]), float(held[1])):  # shown with one decimal (under 10 s): +-0.05
        assert 1.5 - 0.05 <= age <= open_for + 0.05, (age, open_for, status)
    assert 1.5 <= float(perf["idle_tx_age"].split("s;")[0]) <= open_for, (perf, open_for)
    assert perf["idle_tx_sessions"] == "1;;;0"


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


# -- any detected queue: a seed-shape table (plain SQL), pgq-top's table beside another queue ---------


def test_seed_table_with_a_stuck_job_is_critical_naming_its_rule(
    empty_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    seed.seed_jobs_install(empty_dsn)
    seed.seed_jobs_populate(empty_dsn)  # two queues, one expired lease each (a crashed worker's)
    truth = truth_states(empty_dsn, seed.SEED_JOBS_TRUTH)
    assert truth["stuck"] == 2
    code, out = run(capsys, "--dsn", empty_dsn, "--stuck-crit", "1")
    status, perf = parse(out)
    rule = "status in ('running') and locked_until < now() (the lease has expired)"
    assert code == 2 and status == f"PGQ CRITICAL: 2 stuck jobs ({rule})", out
    assert perf["stuck"] == "2;0;1;0"
    for state in ("ready", "scheduled", "running"):
        assert perf[state] == f"{truth[state]};;;0", state
    # the seed shape has no dead state: the rule is unsupported, not OK and not an error
    assert "dead" not in perf
    why = "Seed jobs table (lease in locked_until) does not record dead jobs"
    assert out.splitlines()[1] == f"unsupported for seed-jobs: dead ({why})"

    doc = json.loads(run(capsys, "--dsn", empty_dsn, "--json")[1])
    (target,) = doc["targets"]
    assert (target["kind"], target["table"], doc["status"]) == ("seed-jobs", "public.jobs", "WARNING")
    dead = next(m for m in target["measures"] if m["label"] == "dead")
    assert dead["value"] is None and dead["level"] == "ok" and "does not record dead" in dead["unsupported"]

    # the stuck jobs handed back by plain SQL, as the seed's own reaper does: OK, and says what it lacks
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute("UPDATE jobs SET status = 'pending', locked_until = NULL WHERE locked_until < now()")
    code, out = run(capsys, "--dsn", empty_dsn)
    assert code == 0, out
    ready = truth_states(empty_dsn, seed.SEED_JOBS_TRUTH)["ready"]
    assert out.startswith(f"PGQ OK: {ready} ready, 2 running, oldest ready "), out
    assert ", 0 stuck, dead unsupported | " in out.splitlines()[0]


def test_a_mapping_file_and_pins_choose_the_queue(
    empty_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed.seed_jobs_install(empty_dsn)
    seed.seed_jobs_populate(empty_dsn)
    shipped = Path(seed_mappings.__file__).parent / "seeds" / "seed_jobs.toml"
    mine = tmp_path / "mine.toml"
    mine.write_text(shipped.read_text().replace('kind = "seed-jobs"', 'kind = "billing-jobs"'))
    doc = json.loads(run(capsys, "--dsn", empty_dsn, "--mapping", str(mine), "--json")[1])
    assert [t["kind"] for t in doc["targets"]] == ["billing-jobs"]  # the user's mapping outranks ours
    code, out = run(capsys, "--dsn", empty_dsn, "--kind", "pgq")
    assert code == 3 and out == (
        "PGQ UNKNOWN: no queue matches --kind pgq; found: seed-jobs · public.jobs\n"
    ), out
    # bad input: one line, UNKNOWN, before any server is asked
    code, out = run(capsys, "--dsn", "host=/nonexistent", "--kind", "nope")
    assert (
        code == 3 and out.startswith("PGQ UNKNOWN: unknown --kind 'nope' (known: ") and out.count("\n") == 1
    )
    code, out = run(capsys, "--dsn", empty_dsn, "--mapping", str(tmp_path / "missing.toml"))
    assert code == 3 and out.startswith("PGQ UNKNOWN: ") and "missing.toml" in out and out.count("\n") == 1
    targets = tmp_path / "targets.toml"
    targets.write_text(f'[targets.a]\ndsn = {json.dumps(empty_dsn)}\nkind = "sidekiq"\n')
    code, out = run(capsys, "--targets", str(targets))
    assert code == 3 and out.startswith(f"PGQ UNKNOWN: {targets}: targets.a: unknown kind 'sidekiq'"), out


def test_every_queue_of_a_database_is_checked_and_named(
    dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]
) -> None:
    """pgq-top's own table and a seed-shape table in one database: both checked, the worst wins,
    each named in the status line and the perfdata labels; a pin checks one."""
    queue.enqueue("emails", [{}] * 3)
    seed.job_queue_install(dsn)
    seed.job_queue_populate(dsn)  # one job locked an hour ago: stuck by the lock-age rule
    truth = truth_states(dsn, seed.JOB_QUEUE_TRUTH)
    assert truth["stuck"] == 1
    code, out = run(capsys, "--dsn", dsn)
    status, perf = parse(out)
    assert code == 1, out
    assert status.startswith("PGQ WARNING: seed-job-queue: 1 stuck jobs (status in ('processing') and ")
    assert perf["pgq:ready"] == "3;;;0" and perf["pgq:stuck"] == "0;0;50;0"
    assert perf["seed-job-queue:stuck"] == "1;0;50;0"
    assert perf["seed-job-queue:ready"] == f"{truth['ready']};;;0"
    # the whole database's measures once, not per queue
    assert perf["database:xmin_age"] == "0s;300;3600;0" and "pgq:xmin_age" not in perf
    # no dead state; the oldest ready job is read by a scan (its claim index is by priority, not by
    # scheduled_at): measured, not left out
    assert "seed-job-queue:dead" not in perf
    assert float(perf["seed-job-queue:oldest_ready_age"].split("s;")[0]) > 0
    assert " unknown: " not in out  # nothing left unknown for want of an index
    note = out.splitlines()[1]
    assert note == (
        "seed-job-queue: unsupported: dead (Seed job_queue table (lock age in locked_at) does not record"
        " dead jobs)"
    )
    with psycopg.connect(dsn, application_name="forgotten-tx") as idle:
        idle.execute("SELECT txid_current()")  # left open: one alert for the database, not one per queue
        time.sleep(0.3)
        code, out = run(capsys, "--dsn", dsn, "--idle-tx-age-crit", "0.1")
        pid = idle.info.backend_pid
    assert code == 2 and out.splitlines()[0].count("idle in transaction") == 1, out
    assert f"database: pid {pid} (forgotten-tx) idle in transaction for" in out
    code, out = run(capsys, "--dsn", dsn, "--kind", "pgq")
    assert code == 0 and out.startswith("PGQ OK: 3 ready, 0 running"), out
    code, out = run(capsys, "--dsn", dsn, "--table", "job_queue", "--stuck-crit", "0")
    assert code == 2 and out.startswith("PGQ CRITICAL: 1 stuck jobs (status in ('processing')"), out
