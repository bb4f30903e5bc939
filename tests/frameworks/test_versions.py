"""Releases pgq-top does not read are detected and named, with the reason, never read with another
release's rules: pg-boss 11 installed by its own client (Node 22). A pg-boss 12 schema without the
indexes pgq-top counts through gets them named as advice."""

from __future__ import annotations

import json

import psycopg
import pytest

from pgq_tui.cli import main
from pgq_tui.detection import single_queue
from pgq_tui.dialects.contract import Capability
from pgq_tui.errors import EXIT_OK

from .cases import follow_index_advice
from .pgboss_client import PgBoss11, PgBoss12


def test_pgboss_11_is_named_and_refused_with_the_reason(
    framework_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    PgBoss11.version()  # skips, or fails under PGQ_REQUIRE_FRAMEWORKS=1, without the client
    fw = PgBoss11(framework_dsn)
    fw.install()
    fw.enqueue("fast", "fast-0")
    model = single_queue(framework_dsn, kind="pg-boss").model
    assert model.match.version == PgBoss11.detected
    assert model.counts == () and model.actions == ()
    reason = str(model.support(Capability.COUNTS).reason)
    assert "11.0-12.18" in reason and "not supported" in reason
    code = main(["snapshot", "--json", "--dsn", framework_dsn, "--kind", "pg-boss"])
    out, err = capsys.readouterr()
    assert code == EXIT_OK, err
    snap = json.loads(out)
    assert "11.0-12.18" in snap["unsupported"]["queues"] and "11.0-12.18" in snap["unsupported"]["leases"]
    assert all(q.get("ready") is None for q in snap["queues"])  # unknown, never 0


def test_pgboss_12_without_its_state_indexes_advises_them_and_counts_by_scan(
    framework_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """pg-boss 12.38 (schema 46) builds job_i14/job_i16 on every job table, the counts' indexes; before
    46, or while its background migrations (BAM) have not built them, they are named as advice and
    the counts, leases and dead list are scans (exact on a small table, in the background on a large
    one): every count equals ground truth before and after an operator creates them."""
    PgBoss12.version()
    fw = PgBoss12(framework_dsn)
    fw.install()
    fw.enqueue("fast", "fast-0")
    fw.enqueue("later", "later-0", in_seconds=3600)
    truth = {(queue, state): 1 for _, queue, state in fw.truth()}

    def shown() -> dict[tuple[str, str], int]:
        code = main(["snapshot", "--json", "--dsn", framework_dsn, "--kind", "pg-boss"])
        out, err = capsys.readouterr()
        assert code == EXIT_OK, err
        doc = json.loads(out)
        return {(q["queue"], s): q[s] for q in doc["queues"] for s in ("ready", "scheduled") if q[s]}

    assert all(st.indexed for st in single_queue(framework_dsn, kind="pg-boss").model.counts)
    with psycopg.connect(framework_dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO pgboss.bam (name, version, table_name, command) VALUES ('i14', 46, 'job_common', '')"
        )
        model = single_queue(framework_dsn, kind="pg-boss").model
        assert Capability.COUNTS in {a.capability for a in model.advice}
        assert model.counts and not any(st.indexed for st in model.counts[:3])
        conn.execute("DELETE FROM pgboss.bam")
        # a schema before 46 (12.19-12.37), without pg-boss 12.38's indexes
        conn.execute("UPDATE pgboss.version SET version = 45")
        conn.execute("DROP INDEX pgboss.job_common_i14, pgboss.job_common_i16")
    model = single_queue(framework_dsn, kind="pg-boss").model
    assert model.match.version == "12.x (schema 45)"
    assert not any(st.indexed for st in model.counts)
    assert model.leases is not None and not model.leases.indexed
    assert {a.capability for a in model.advice} == {Capability.COUNTS, Capability.DONE, Capability.DEAD}
    assert shown() == truth  # scanned: the stock table is small
    follow_index_advice(framework_dsn, "pg-boss")
    assert all(st.indexed for st in single_queue(framework_dsn, kind="pg-boss").model.counts)
    assert shown() == truth
