"""The diagnosis rules on hand-built Snapshot histories (no server): each cause, its chain, its fix,
and flicker (one bad poll raises nothing)."""

from __future__ import annotations

import doctest
from dataclasses import replace
from datetime import timedelta

import pytest
from bloat_sample import sample_bloat
from test_tui_sample import NOW, make_snapshot

from pgq_tui.diagnosis import Thresholds, chains, diagnose, exit_code, one_line, rules, vacuum, work
from pgq_tui.diagnosis.rules import findings
from pgq_tui.exitcodes import WHY_CRITICAL
from pgq_tui.monitor.bloat import XminBlock
from pgq_tui.monitor.pacing import pacing
from pgq_tui.monitor.snapshot import (
    Blocker,
    Lease,
    LeaseList,
    QueueStats,
    Rates,
    Session,
    Sessions,
    Snapshot,
    XminHolder,
)

T = Thresholds(min_duration_s=10, xmin_hold_s=60, stalled_after_s=30, lock_wait_s=5)
BASE = make_snapshot()


def snap(at: float = 0.0, **kw: object) -> Snapshot:
    """A healthy queue at NOW + `at` seconds; `kw` replaces Snapshot fields."""
    values: dict[str, object] = dict(
        server=replace(BASE.server, now=NOW + timedelta(seconds=at)),
        queues=(QueueStats("emails", 5, 0, 2, 0, 0, 0, 1.0),),
        leases=LeaseList((), 0),
        stuck=LeaseList((), 0),
        table=replace(BASE.table, dead_tuples=100, vacuum=None, vacuum_threshold=1000.0),
        sessions=Sessions((), (), (), 5),
        throughput=replace(BASE.throughput, total=Rates(50, 50, 0), per_queue={"emails": Rates(50, 50, 0)}),
        bloat=None,
    )
    values.update(kw)
    return replace(BASE, **values)  # type: ignore[arg-type]


def history(n: int, step: float = 5.0, **kw: object) -> list[Snapshot]:
    return [snap(i * step, **kw) for i in range(n)]


def idle_holder(age: float = 80.0) -> Sessions:
    session = Session(
        13028,
        "app",
        "report",
        "10.0.0.5",
        "idle in transaction",
        age,
        age,
        "SELECT 1",
        900,
        "ClientRead",
        False,
    )
    holder = XminHolder("backend", "13028", 900, age, "app@shop report idle in transaction", scope="database")
    return Sessions((session,), (holder,), (), 5)


def blocked_by(pid: str = "13028") -> XminBlock:
    """A vacuum that ran between two polls and removed none of the dead tuples, naming `pid`."""
    return XminBlock(NOW, 8700, 8700, "backend", pid, 80.0, "report", "vacuum ran but removed 0 of 8.7k")


def slow_claims() -> object:
    b = sample_bloat(NOW)
    probe = replace(b.probe, ratio=463.0, level="crit", message="claims are getting slower: 463 buffers")
    return replace(b, probe=probe, pacing=None)


def test_doctests() -> None:
    for module in (rules, chains, vacuum, work):
        assert doctest.testmod(module).failed == 0


def test_a_healthy_history_says_nothing() -> None:
    h = history(10)
    assert findings(h, T) == [] and diagnose(h, T) == [] and exit_code([]) == 0
    assert diagnose([], T) == []


def test_idle_in_transaction_is_the_root_of_slow_claims() -> None:
    table = replace(BASE.table, dead_tuples=8700, vacuum=None, vacuum_threshold=1000.0)
    bloat = replace(slow_claims(), xmin_block=blocked_by())  # type: ignore[type-var]
    h = history(4, sessions=idle_holder(), table=table, bloat=bloat)
    found = diagnose(h, T)
    assert [f.rule for f in found[0].links] == ["claims_slow", "dead_tuples", "xmin_holder"]
    chain = found[0]
    assert chain.level == "crit" and exit_code(found) == WHY_CRITICAL
    assert chain.fix is not None and chain.fix.key == "K"
    assert chain.fix.sql == "SELECT pg_terminate_backend(13028);"
    assert one_line(chain) == (
        "claims 463x slower ← 8.7k dead tuples vacuum can't remove ← "
        "xmin held 1m20s by pid 13028 (idle in tx, app 'report', 10.0.0.5) · K"
    )
    line = one_line(chain, 72)
    assert len(line) <= 72 and "pid 13028" in line and line.endswith(" · K")
    assert chain.root.pid == 13028
    assert any("SELECT 1" in e for e in chain.root.evidence)
    # without a vacuum that ran and left them, the same holder explains a pile, not "can't remove"
    (chain,) = diagnose(history(4, sessions=idle_holder(), table=table, bloat=slow_claims()), T)
    assert "8.7k dead tuples piling up ← xmin held 1m20s by pid 13028" in one_line(chain)


def test_one_slow_poll_raises_nothing() -> None:
    """Flicker: the probe is slow on one poll, dead tuples spike on one poll: no finding."""
    table = replace(BASE.table, dead_tuples=8700, vacuum=None, vacuum_threshold=1000.0)
    h = history(5)
    h[-1] = snap(20, bloat=slow_claims(), table=table)
    assert diagnose(h, T) == []
    h[2] = snap(10, bloat=slow_claims())  # slow, then fine, then slow again: not continuous
    assert diagnose(h, T) == []
    # held across 15 s (more than min_duration): a finding
    steady = [snap(i * 5, bloat=slow_claims()) for i in range(4)]
    assert [c.root.rule for c in diagnose(steady, T)] == ["claims_slow"]
    assert diagnose(steady, replace(T, min_duration_s=60)) == []


def test_a_young_transaction_is_not_a_cause() -> None:
    h = history(3, sessions=idle_holder(age=20.0))
    assert diagnose(h, T) == []
    assert [c.root.id for c in diagnose(h, replace(T, xmin_hold_s=15))] == ["xmin:backend:13028"]


def test_long_running_query_holds_the_horizon() -> None:
    holder = XminHolder("backend", "777", 5000, 200.0, "app@shop etl active")
    h = history(2, sessions=Sessions((), (holder,), (), 5))
    (chain,) = diagnose(h, T)
    assert chain.root.short == "xmin held 3m20s by pid 777" and chain.root.note == "(app@shop etl active)"
    assert chain.fix is not None and chain.fix.key == "K"


def test_prepared_transaction_is_rolled_back_by_sql() -> None:
    holder = XminHolder("prepared transaction", "it's-gid", 50, 120.0, "app@shop")
    table = replace(BASE.table, dead_tuples=5000, vacuum=None, vacuum_threshold=1000.0)
    h = history(3, sessions=Sessions((), (holder,), (), 5), table=table)
    (chain,) = diagnose(h, T)
    assert [f.rule for f in chain.links] == ["dead_tuples", "xmin_holder"]
    assert chain.fix is not None and chain.fix.key is None
    assert chain.fix.sql == "ROLLBACK PREPARED 'it''s-gid';"
    assert "prepared xact 'it''s-gid'" in one_line(chain)


def test_physical_slot_is_dated_from_the_first_poll_that_saw_it() -> None:
    slot = XminHolder("replication slot", "feed", 40, None, "physical inactive xmin age 40", scope="cluster")
    sessions = Sessions((), (slot,), (), 5)
    table = replace(BASE.table, dead_tuples=5000, vacuum=None, vacuum_threshold=1000.0)
    assert diagnose(history(3, step=5, sessions=sessions), T) == []  # seen for 10 s only
    (chain,) = diagnose(history(14, step=5, sessions=sessions, table=table), T)
    assert [f.rule for f in chain.links] == ["dead_tuples", "xmin_holder"]
    assert chain.root.id == "xmin:replication slot:feed" and "any database's tables" in chain.root.text
    assert chain.fix is not None and chain.fix.sql == "SELECT pg_drop_replication_slot('feed');"


def test_a_logical_slot_is_never_blamed_for_dead_tuples() -> None:
    """catalog_xmin holds catalog rows and WAL only. Read from the scope, and from the detail of a
    recording made before the scope was read."""
    table = replace(BASE.table, dead_tuples=5000, vacuum=None, vacuum_threshold=1000.0)
    slot = XminHolder(
        "replication slot", "cdc", 40, None, "logical inactive catalog_xmin age 40", scope="catalog"
    )
    legacy = replace(slot, scope=None)
    assert not slot.holds_tables and not legacy.holds_tables
    for s in (slot, legacy):
        found = findings(history(14, step=5, sessions=Sessions((), (s,), (), 5), table=table), T)
        assert [f.rule for f in found] == ["dead_tuples"]  # a pile with no cause: dropped below
        assert diagnose(history(14, step=5, sessions=Sessions((), (s,), (), 5), table=table), T) == []


def test_a_logical_slot_is_named_for_its_wal_with_its_own_advice() -> None:
    slot = XminHolder(
        "replication slot", "cdc", 40, None, "logical inactive catalog_xmin age 40", scope="catalog",
        wal_bytes=3 << 30,
    )  # fmt: skip
    table = replace(BASE.table, dead_tuples=5000, vacuum=None, vacuum_threshold=1000.0)
    assert diagnose(history(2, step=5, sessions=Sessions((), (slot,), (), 5)), T) == []  # 5 s only
    (chain,) = diagnose(history(14, step=5, sessions=Sessions((), (slot,), (), 5), table=table), T)
    assert chain.links == (chain.root,) and chain.root.rule == "slot_wal" and chain.level == "warn"
    assert one_line(chain) == "slot 'cdc' keeps 3.0 GB of WAL · check its consumer"
    assert chain.fix is not None and chain.fix.sql is None and "only if nothing consumes it" in chain.fix.what
    small = replace(slot, wal_bytes=50 << 20)  # a live consumer's ordinary lag
    assert diagnose(history(14, step=5, sessions=Sessions((), (small,), (), 5), table=table), T) == []


def test_bystanders_are_not_blamed_next_to_a_real_holder() -> None:
    """The issue's server: a logical slot and a transaction idle for 10 min in another database, next
    to dead tuples piling up. Neither is a cause; a holder in this database is, and is named alone."""
    slot = XminHolder("replication slot", "cdc", 90, None, "logical inactive", scope="catalog")
    other = XminHolder(
        "backend", "4040", 95, 600.0, "bob@crm psql idle in transaction", scope="other database"
    )
    table = replace(BASE.table, dead_tuples=5000, vacuum=None, vacuum_threshold=1000.0)
    bystanders = Sessions((), (other, slot), (), 5)
    h = history(14, step=5, sessions=bystanders, table=table)
    assert diagnose(h, T) == [] and exit_code(diagnose(h, T)) == 0
    mine = idle_holder(80.0)
    both = Sessions(mine.idle_in_transaction, (other, *mine.xmin_holders, slot), (), 5)
    found = diagnose(history(14, step=5, sessions=both, table=table), T)
    assert [c.root.id for c in found] == ["xmin:backend:13028"]
    assert [f.rule for f in found[0].links] == ["dead_tuples", "xmin_holder"]
    assert "piling up" in found[0].links[0].short  # no vacuum ran: not "vacuum can't remove"
    text = "\n".join(one_line(c) + " ".join(f.text for f in c.links) for c in found)
    assert "4040" not in text and "cdc" not in text


def test_vacuum_that_removed_nothing_blames_its_holder() -> None:
    block = XminBlock(
        NOW, 9000, 8900, "backend", "13028", 80.0, "report", "vacuum ran but removed 100 of 9.0k"
    )
    bloat = replace(slow_claims(), xmin_block=block)
    h = [snap(0, sessions=idle_holder(), bloat=bloat)]
    (chain,) = diagnose(h, T)  # one poll: the block and the holder are both dated by the server
    assert chain.root.pid == 13028 and chain.links[0].rule == "dead_tuples"
    assert any("removed 100" in e for e in chain.root.evidence)


def test_lock_blocker_stalls_the_queue() -> None:
    blocker = Blocker(
        5010,
        "SELECT ... FOR UPDATE SKIP LOCKED",
        40.0,
        5001,
        "idle in transaction",
        "LOCK TABLE jobs",
        "[bold]psql",
    )
    queues = (QueueStats("emails", 500, 0, 0, 0, 0, 0, 95.0),)
    tp = replace(BASE.throughput, total=Rates(5, 0, 0), per_queue={"emails": Rates(5, 0, 0)})
    h = history(2, sessions=Sessions((), (), (blocker,), 5), queues=queues, throughput=tp)
    (chain,) = diagnose(h, T)
    assert [f.rule for f in chain.links] == ["stalled", "lock"]
    assert chain.root.pid == 5001 and chain.fix is not None and chain.fix.key == "K"
    assert "app '[bold]psql'" in chain.root.note  # untrusted, kept literal (the TUI renders it as Text)
    assert "LOCK TABLE jobs" in "\n".join(chain.root.evidence)
    short = replace(blocker, blocked_wait_s=2.0)
    assert diagnose(history(1, sessions=Sessions((), (), (short,), 5)), T) == []


def test_autovacuum_off_is_the_root_of_piling_dead_tuples() -> None:
    table = replace(
        BASE.table,
        dead_tuples=30_000,
        vacuum=None,
        vacuum_threshold=1000.0,
        autovacuum_enabled=False,
        table='public.my "jobs"',
    )
    (chain,) = diagnose(history(4, table=table), T)
    assert [f.rule for f in chain.links] == ["dead_tuples", "autovacuum_off"]
    assert (
        chain.fix is not None
        and chain.fix.sql == 'ALTER TABLE "public"."my ""jobs""" RESET (autovacuum_enabled);'
    )
    assert chain.level == "crit"  # 30x the threshold
    # a table with autovacuum off and nothing piling is still named, as a warning
    (alone,) = diagnose(history(1, table=replace(table, dead_tuples=10)), T)
    assert alone.root.rule == "autovacuum_off" and alone.level == "warn"


def test_pacing_verdict_is_a_link() -> None:
    slow = pacing(rate=5000, threshold=20_000, naptime_s=5, vacuum_s=2, max_workers=3, workers_elsewhere=3)
    assert slow.level == "crit"
    bloat = replace(sample_bloat(NOW), pacing=slow)
    bloat = replace(bloat, probe=replace(bloat.probe, level="ok"))
    table = replace(BASE.table, dead_tuples=50_000, vacuum=None, vacuum_threshold=20_000.0)
    (chain,) = diagnose(history(4, table=table, bloat=bloat), T)
    assert [f.rule for f in chain.links] == ["dead_tuples", "autovacuum_pacing"]
    assert chain.fix is not None and chain.fix.key == "A"
    assert diagnose(history(2, table=table, bloat=bloat), T) == []  # 5 s: not yet


def test_no_worker_while_the_oldest_ready_job_ages() -> None:
    queues = (QueueStats("emails", 40, 0, 0, 0, 0, 0, 45.0),)
    tp = replace(BASE.throughput, per_queue={"emails": Rates(1, 0, 0)})
    (chain,) = diagnose(history(1, queues=queues, throughput=tp), T)
    assert chain.root.rule == "stalled" and "no live worker" in chain.root.text
    assert chain.fix is not None and "start a worker for queue emails" in chain.fix.what
    # running jobs, completions, or a young queue: not stalled
    assert diagnose(history(1, queues=(replace(queues[0], running=1),), throughput=tp), T) == []
    done = replace(BASE.throughput, per_queue={"emails": Rates(1, 2, 0)})
    assert diagnose(history(1, queues=queues, throughput=done), T) == []
    young = (replace(queues[0], oldest_ready_age_s=10.0),)
    assert diagnose(history(1, queues=young, throughput=tp), T) == []


def _lease(i: int, connected: bool, liveness: str = "") -> Lease:
    return Lease(
        i, "emails", f"w-{i}", 1, 5, NOW - timedelta(seconds=30), -30.0, connected, None, liveness=liveness
    )


def test_crashed_workers_leave_stuck_leases() -> None:
    stuck = LeaseList((_lease(1, False), _lease(2, False, "gone")), 2)
    (chain,) = diagnose(history(1, stuck=stuck), T)
    assert chain.root.rule == "crashed" and chain.fix is not None and chain.fix.key == "R"
    assert "2 stuck jobs, their workers gone" in one_line(chain)
    unknown = LeaseList((_lease(1, False, "unknown"),), 1)
    assert diagnose(history(1, stuck=unknown), T) == []  # unknown is not gone
    alive = LeaseList((_lease(1, True, "alive"),), 1)
    assert diagnose(history(1, stuck=alive), T) == []


def test_backlog_growing_with_a_drain_estimate() -> None:
    tp = replace(BASE.throughput, total=Rates(80, 30, 0), per_queue={"emails": Rates(80, 30, 0)})
    h = [
        snap(i * 10, queues=(QueueStats("emails", 1000 + 500 * i, 0, 4, 0, 0, 0, 5.0),), throughput=tp)
        for i in range(7)
    ]
    (chain,) = diagnose(h, T)
    assert chain.root.rule == "backlog"
    assert "at the last 1m00s' rates the 4.0k backlog grows by 50/s" in chain.root.text
    assert diagnose(h[:1], T) == [] and diagnose(h[-2:], replace(T, min_duration_s=11)) == []
    # the backlog grows because claims are slow: the chain says so
    slow = [replace(s, bloat=slow_claims()) for s in h]
    (chain,) = diagnose(slow, T)
    assert [f.rule for f in chain.links] == ["backlog", "claims_slow"]
    # growth but completions keep up (scheduled jobs came due): not a finding
    even = replace(BASE.throughput, total=Rates(30, 80, 0))
    assert diagnose([replace(s, throughput=even) for s in h], T) == []


def test_backlog_over_polls_further_apart_than_the_window_allows() -> None:
    """Polls 8 s apart against a 15 s window: the window reaches back to the poll 16 s old, so the
    growth is judged over 16 s, not over the last 8 s alone (under min_duration_s: nothing). Seen
    in `why --window 2 --interval 0.5 --backlog-window 1.5` on a busy CI machine (slow polls)."""
    tp = replace(BASE.throughput, total=Rates(80, 30, 0), per_queue={"emails": Rates(80, 30, 0)})
    h = [
        snap(i * 8, queues=(QueueStats("emails", 1000 + 400 * i, 0, 4, 0, 0, 0, 5.0),), throughput=tp)
        for i in range(4)
    ]
    sparse = replace(T, backlog_window_s=15)
    (found,) = work.backlog(h, sparse)
    assert found.evidence[0].startswith("ready 1.4k -> 2.2k in 16s"), found.evidence
    assert work.backlog(h[-2:], sparse) == []  # 8 s of history: under min_duration_s


def test_chains_worst_first_and_thresholds_from_a_file() -> None:
    table = replace(
        BASE.table, dead_tuples=10, vacuum=None, vacuum_threshold=1000.0, autovacuum_enabled=False
    )
    stuck = LeaseList((_lease(1, False),), 1)
    found = diagnose(history(1, table=table, stuck=stuck), T)
    assert [c.level for c in found] == ["crit", "warn"]
    assert Thresholds.from_mapping({"min_duration_s": 3, "lock_wait_s": 1.5}).lock_wait_s == 1.5
    with pytest.raises(ValueError, match="unknown key 'min_duration'"):
        Thresholds.from_mapping({"min_duration": 3})
    with pytest.raises(ValueError, match="must be a number"):
        Thresholds.from_mapping({"min_duration_s": "soon"})
    as_json = found[0].to_dict()
    assert as_json["root"] == "crashed" and as_json["fix"]["key"] == "R" and as_json["links"][0]["rule"]


def test_a_holder_a_vacuum_blamed_is_a_cause_however_young() -> None:
    """Before the holder reaches xmin_hold_s, a vacuum that removed nothing already names it: the
    dead tuples rest on it, not on the pacing verdict next in line."""
    block = XminBlock(NOW, 9000, 8900, "backend", "13028", 20.0, "report", "vacuum ran but removed 100")
    slow = pacing(rate=5000, threshold=20_000, naptime_s=5, vacuum_s=2, max_workers=3, workers_elsewhere=3)
    bloat = replace(slow_claims(), xmin_block=block, pacing=slow)
    table = replace(BASE.table, dead_tuples=9000, vacuum=None, vacuum_threshold=1000.0)
    h = history(3, sessions=idle_holder(age=20.0), bloat=bloat, table=table)
    chains_found = diagnose(h, T)
    assert [f.rule for f in chains_found[0].links] == ["claims_slow", "dead_tuples", "xmin_holder"]


def test_backlog_on_an_unknown_ready_count_is_not_judged() -> None:
    # A ready count not taken (no index, timed out) is None: the growth rule has nothing to measure,
    # so it says nothing (it used to sum the None and fail the whole diagnosis with a TypeError).
    tp = replace(BASE.throughput, total=Rates(80, 30, 0), per_queue={"emails": Rates(80, 30, 0)})
    h = [
        snap(i * 10, queues=(QueueStats("emails", 1000 + 500 * i, 0, 4, 0, 0, 0, 5.0),), throughput=tp)
        for i in range(7)
    ]
    assert [f.rule for f in work.backlog(h, T)] == ["backlog"]  # the same history, every count known
    unknown_now = [*h[:-1], replace(h[-1], queues=(QueueStats("emails", None, 0, 4, 0, 0, 0, 5.0),))]
    assert work.backlog(unknown_now, T) == []
    # an unknown count earlier in the window: the growth is measured from the first known one
    unknown_then = [replace(h[0], queues=(QueueStats("emails", None, 0, 4, 0, 0, 0, 5.0),)), *h[1:]]
    (found,) = work.backlog(unknown_then, T)
    assert found.evidence[0].startswith("ready 1.5k -> 4.0k in 50s"), found.evidence
    assert all(c.root.rule != "backlog" for c in diagnose(unknown_now, T))
