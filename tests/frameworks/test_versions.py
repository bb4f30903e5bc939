"""Each pg-boss release is read with its own version's rules, never another's: pg-boss 11 (schema 26)
and 12.12 (schema 30) installed by their own clients (Node 22), and the schemas between 25 and 46
named by their number. A pg-boss 12 schema without the indexes pgq-top counts through gets them named
as advice."""

from __future__ import annotations

import json

import psycopg
import pytest

from pgq_tui.cli import main
from pgq_tui.detection import single_queue
from pgq_tui.dialects.contract import Capability, QueueModel
from pgq_tui.errors import EXIT_OK

from .cases import follow_index_advice
from .pgboss_client import PgBoss11, PgBoss12, PgBoss1212


@pytest.mark.parametrize("driver", [PgBoss11, PgBoss1212], ids=["pg-boss-11", "pg-boss-12.12"])
def test_pgboss_11_and_early_12_are_read_with_their_own_rules(
    driver: type[PgBoss12], framework_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before flows (31) there is no blocked state and pg-boss's fetch index job_i5 serves the ready
    and scheduled counts; before heartbeats (30) the stuck rule is the timeout alone and a holder's
    liveness is not recorded. What no index serves is a scan, exact on this small table."""
    driver.version()  # skips, or fails under PGQ_REQUIRE_FRAMEWORKS=1, without the client
    fw = driver(framework_dsn)
    fw.install()
    fw.enqueue("fast", "fast-0")
    fw.enqueue("later", "later-0", in_seconds=3600)
    model = single_queue(framework_dsn, kind="pg-boss").model
    assert model.match.version == driver.detected
    assert "blocked" not in model.count_columns() and model.extra_states == ()
    queued, *others = model.counts
    assert queued.indexed and not any(st.indexed for st in others)
    assert model.leases is not None and not model.leases.indexed
    assert ("heartbeat" in model.stuck_rule) == driver.heartbeats
    assert model.support(Capability.LIVENESS).ok == driver.heartbeats
    code = main(["snapshot", "--json", "--dsn", framework_dsn, "--kind", "pg-boss"])
    out, err = capsys.readouterr()
    assert code == EXIT_OK, err
    snap = json.loads(out)
    shown = {(q["queue"], s): q[s] for q in snap["queues"] for s in ("ready", "scheduled") if q[s]}
    assert shown == {(queue, state): 1 for _, queue, state in fw.truth()}


def test_pgboss_schemas_25_to_46_are_named_by_their_number(framework_dsn: str) -> None:
    """pg-boss 11's schema relabelled as 25 is read as 11.0; as 27-29 (12.6-12.11, the same job
    columns) as 12.x; as 30 or later, without the heartbeat columns those versions add, it is refused
    as an unknown layout rather than read with the wrong rules."""
    PgBoss11.version()
    PgBoss11(framework_dsn).install()
    for number, named in ((25, "11.0 (schema 25)"), (29, "12.x (schema 29)")):
        with psycopg.connect(framework_dsn, autocommit=True) as conn:
            conn.execute("UPDATE pgboss.version SET version = %s", (number,))
        model = single_queue(framework_dsn, kind="pg-boss").model
        assert model.match.version == named and model.counts
    with psycopg.connect(framework_dsn, autocommit=True) as conn:
        conn.execute("UPDATE pgboss.version SET version = 30")
    model = single_queue(framework_dsn, kind="pg-boss").model
    assert model.counts == () and "lacks the columns" in str(model.support(Capability.COUNTS).reason)


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

    def indexed_but_done(model: QueueModel) -> bool:
        """Every count walks an index but done's: a scan whatever the indexes (job_i16 holds failed
        and cancelled jobs too, so counting completed ones through it reads every finished row)."""
        (done,) = [st for st in model.counts if "done" in st.columns]
        return not done.indexed and all(st.indexed for st in model.counts if st is not done)

    assert indexed_but_done(single_queue(framework_dsn, kind="pg-boss").model)
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
    assert {a.capability for a in model.advice} == {Capability.COUNTS, Capability.DEAD}
    assert shown() == truth  # scanned: the stock table is small
    follow_index_advice(framework_dsn, "pg-boss")
    assert indexed_but_done(single_queue(framework_dsn, kind="pg-boss").model)
    assert shown() == truth
