"""The rate rules as pure functions: no database, no clock."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pgq_tui.monitor.background import BackgroundCount
from pgq_tui.monitor.rates import Activity, Removal, merge, source_of, table_rates, with_counts
from pgq_tui.monitor.snapshot import APPROXIMATE, AT_LEAST, EXACT, STALE, Figure, Rates, TableRates

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def act(s: float, new: dict[str, int], depth: dict[str, int | None], unresolved: int = 0) -> Activity:
    dead = {q: 0 for q in depth}
    return Activity(T0 + timedelta(seconds=s), 0, new, 0, unresolved, (), depth, dead)


def test_completed_is_enqueued_minus_the_change_in_depth() -> None:
    window = [act(0, {}, {"a": 100}), act(5, {"a": 60}, {"a": 130}), act(10, {"a": 40}, {"a": 110})]
    r = table_rates(window)["a"]
    assert (r.enqueued, r.completed) == (10.0, 9.0)  # 100 in, depth +10: 90 out over 10 s
    assert r.figures["enqueued"].accuracy == r.figures["completed"].accuracy == EXACT
    assert (r.figures["enqueued"].source, r.figures["completed"].source) == ("ids", "depth")


def test_ids_never_seen_make_a_bound_and_unknown_depth_no_rate() -> None:
    window = [act(0, {}, {"a": 5, "b": None}), act(4, {"a": 8, "b": 4}, {"a": 5, "b": 2000}, unresolved=12)]
    rates = table_rates(window)
    assert (
        rates["a"].figures["enqueued"].accuracy == APPROXIMATE and rates["a"].figures["enqueued"].bound == 3.0
    )
    assert rates["b"].completed is None and "completed" not in rates["b"].figures


def test_a_queue_first_seen_after_an_empty_poll_has_exact_rates() -> None:
    """A poll that counted and found no queue at all knows every depth is 0, not unknown."""
    window = [act(0, {}, {}), act(2, {"a": 6}, {"a": 6})]
    r = table_rates(window)["a"]
    assert (r.enqueued, r.completed, r.failed) == (3.0, 0.0, 0.0)
    assert r.figures["completed"].accuracy == r.figures["failed"].accuracy == EXACT


def test_a_kind_without_a_dead_state_still_has_completions() -> None:
    """The seed shapes record no dead jobs: their depth is ready + scheduled + running + stuck, so
    completed/s is known; failed/s, which that state would give, is not (not a made-up 0)."""
    from pgq_tui.monitor.snapshot import QueueStats

    seen = {"ready", "scheduled", "running", "stuck"}

    def poll(s: float, new: dict[str, int], ready: int) -> Activity:
        figures = {n: Figure(EXACT, T0, "poll") for n in seen}
        q = QueueStats("a", ready, 0, 0, 0, 0, 0, None, figures)
        bare = Activity(T0 + timedelta(seconds=s), 0, new, 0, 0, ())
        return with_counts(bare, [q], None, frozenset(seen))

    rates = table_rates([poll(0, {}, 10), poll(4, {"a": 20}, 14)])["a"]
    assert (rates.enqueued, rates.completed, rates.failed) == (5.0, 4.0, None)
    assert rates.figures["completed"].accuracy == EXACT and "failed" not in rates.figures
    assert source_of({"a": rates}) == "table"  # an unknown rate comes from no counters


def test_counters_are_kept_unless_the_table_shows_more() -> None:
    ids = {"enqueued": Figure(EXACT, T0, "ids"), "completed": Figure(EXACT, T0, "depth")}
    table = {"a": Rates(30.0, 30.0, 0.0, 0.0, ids), "b": Rates(10.0, 9.0, 0.0, 0.0, ids)}
    counters = {"a": Rates(0.0, 0.0, 0.0, 0.0), "b": Rates(10.5, 9.5, 0.0, 0.0)}
    merged = merge(counters, table, None)
    assert merged["a"].enqueued == 30.0 and merged["a"].figures["enqueued"].source == "ids"  # foreign writer
    assert merged["b"].enqueued == 10.5 and merged["b"].figures["enqueued"].source == "counters"
    # deep queue, no table figure for completions: counters say 0 but pg_stat saw deletes
    merged = merge(
        {"c": Rates(0.0, 0.0, 0.0, 0.0)}, {"c": Rates(0.0, None, 0.0, 0.0)}, None, TableRates(5, 0, 0, 900)
    )
    # foreign writers (pg_stat saw deletes the counters did not): unknown, never the counters' 0
    # (unknown with the reason: a lower bound always carries its number)
    figure = merged["c"].figures["completed"]
    assert merged["c"].completed is None and figure.accuracy == "unknown" and figure.reason
    assert figure.source == "foreign writers"
    # a counters figure above 0 stays, as a lower bound
    merged = merge(
        {"c": Rates(0.0, 4.0, 0.0, 0.0)}, {"c": Rates(0.0, None, 0.0, 0.0)}, None, TableRates(5, 0, 0, 900)
    )
    assert merged["c"].completed == 4.0 and merged["c"].figures["completed"].accuracy == AT_LEAST


def test_a_queue_the_counters_never_saw_shows_the_tables_bound_not_their_zero() -> None:
    """A foreign fleet deleting its jobs before any poll sees them: the table shows 0 new ids on its
    queue and the unseen ids as the bound; with foreign writers present (another queue's ids), the
    counters' 0 attests nothing, so the table's 0 + bound stands, never an exact 0 from the counters.
    A queue the counters did see keeps them (pgq_tui.queue's own workers)."""
    bound = Figure(APPROXIMATE, T0, "ids", 1500.0)
    table = {
        "del": Rates(
            0.0, 0.4, 0.0, 0.0, {"enqueued": bound, "completed": Figure(APPROXIMATE, T0, "depth", 1500.0)}
        ),
        "done": Rates(1500.0, 1490.0, 0.0, 0.0, {"enqueued": bound, "completed": bound}),
        "own": Rates(10.0, 10.0, 0.0, 0.0, {"enqueued": bound, "completed": bound}),
    }
    counters = {"own": Rates(10.0, 10.0, 0.0, 0.0)}
    merged = merge(counters, table, None)
    for name in ("enqueued", "completed"):
        figure = merged["del"].figures[name]
        assert figure.source != "counters" and figure.accuracy == APPROXIMATE and figure.bound == 1500.0
        assert merged["own"].figures[name].source == "counters"
    assert merged["del"].enqueued == 0.0 and merged["del"].completed == 0.4
    # without foreign writers the counters' exact 0 stands: nothing says they miss anything
    quiet = {"del": table["del"], "own": table["own"]}
    assert merge(counters, quiet, None)["del"].figures["enqueued"].source == "counters"


def test_deep_queue_completions_from_two_background_counts() -> None:
    def bg(
        s: float, ready: int, max_id: int, new: dict[str, int] | None, prev: BackgroundCount | None
    ) -> BackgroundCount:
        groups = frozenset(("ready", "scheduled", "running", "stuck", "dead"))  # the depth
        return BackgroundCount(
            T0 + timedelta(seconds=s), 300.0, groups, {("a", "ready"): ready}, max_id, new, prev
        )

    first = bg(0, 50_000, 1000, None, None)
    second = bg(10, 48_000, 1500, {"a": 500}, first)
    merged = merge(None, {"a": Rates(50.0, None, 0.0, 0.0)}, second)
    assert merged["a"].completed == 250.0  # 500 in, depth -2000: 2500 out over 10 s
    # 1,000 of those the operator discarded between the two counts (recorded in the counters): not
    # completions; one before the first count and one of another queue change nothing
    found = (
        Removal(T0 + timedelta(seconds=4), "a", 1000, 0),
        Removal(T0 - timedelta(seconds=1), "a", 700, 0),
        Removal(T0 + timedelta(seconds=5), "b", 300, 0),
    )
    merged = merge(None, {"a": Rates(50.0, None, 0.0, 0.0)}, second, found=found)
    assert merged["a"].completed == 150.0
    assert merged["a"].figures["completed"].accuracy == STALE
    assert merged["a"].figures["completed"].source == "background depth"


def test_table_history_spreads_each_interval_over_the_seconds_it_covers() -> None:
    """table_history finds an interval's seconds by arithmetic; the same result as testing every
    second for every interval (the reference below: an interval is spread over all the seconds it
    covers, the window only shows some), on random polls: uneven intervals, fractional seconds,
    intervals before and across the window's edges, and first polls. Fed one poll at a time into one
    TableSeries (as the Monitor does), the same again. A second no interval rated, or a rate no queue
    had, is None (unknown), never 0."""
    import itertools
    import random
    from datetime import datetime, timedelta, timezone

    from pgq_tui.monitor import finished as finished_rates
    from pgq_tui.monitor.rates import Activity, ThroughputPoint, table_history, table_rates
    from pgq_tui.monitor.table_series import TableSeries

    def reference(polls, until, history_s):  # type: ignore[no-untyped-def]
        seconds = [until - timedelta(seconds=history_s - i) for i in range(history_s)]
        everything = [polls[0].at.replace(microsecond=0) + timedelta(seconds=i) for i in range(200)]
        names = ("enqueued", "completed", "failed", "dead")
        shares: list[dict[str, list[float]] | None] = [None] * history_s  # None: no interval rated it
        done: dict[str, list[float]] = {}
        for a, b in itertools.pairwise(polls):
            if b.first:
                continue
            rates = finished_rates.overlay(table_rates([a, b]), finished_rates.rates([a, b], frozenset()))
            idx = [i for i, s in enumerate(seconds) if a.at <= s < b.at]
            covered = [s for s in everything if a.at <= s < b.at]
            for q, r in rates.items():
                per = (b.at - a.at).total_seconds() / len(covered) if covered else 0.0
                for i in idx:
                    got = shares[i] = shares[i] or {n: [] for n in names}
                    for n in names:
                        if getattr(r, n) is not None:
                            got[n].append(getattr(r, n) * per)
                    done.setdefault(q, [0.0] * history_s)[i] += (r.completed or 0.0) * per

        def second(got: dict[str, list[float]] | None, n: str) -> int | None:
            if got is None or not got[n]:
                return None  # unknown, never 0
            return round(sum(got[n]) if n == "enqueued" else max(0.0, sum(got[n])))

        history = tuple(
            ThroughputPoint(s, *(second(shares[i], n) for n in names)) for i, s in enumerate(seconds)
        )
        return history, {q: tuple(round(max(0.0, x)) for x in v) for q, v in sorted(done.items())}

    rng = random.Random(35)
    t0 = datetime(2026, 12, 6, tzinfo=timezone.utc)
    for _ in range(50):
        at, max_id, polls = t0, 0, []
        depth = {q: rng.randint(0, 50) for q in "abc"}
        for n in range(rng.randint(2, 40)):
            at += timedelta(microseconds=rng.randint(50_000, 3_000_000))
            new = {q: rng.randint(0, 20) for q in "abc" if rng.random() < 0.8}
            depth = {q: max(0, depth[q] + new.get(q, 0) - rng.randint(0, 25)) for q in depth}
            max_id += sum(new.values())
            polls.append(
                Activity(at, max_id, new, 0, 0, (), depth=dict(depth), first=n == 0 or rng.random() < 0.05)
            )
        until = (at - timedelta(seconds=rng.uniform(-2, 10))).replace(microsecond=0)
        history_s = rng.randint(1, 60)
        expected = reference(polls, until, history_s)
        assert table_history(polls, until, history_s) == expected
        series = TableSeries()
        for n in range(2, len(polls) + 1):  # the Monitor's way: its window, a poll at a time
            shown = table_history(polls[max(0, n - 5) : n], until, history_s, series=series)
        assert shown == expected


def test_table_series_forgets_the_seconds_before_its_window_and_restarts_when_the_clock_goes_back() -> None:
    """The Monitor's TableSeries holds at most the window's seconds (a dashboard runs for days), and a
    server clock that goes back (a failover to a standby behind it) starts the series afresh rather
    than leaving the new intervals unseen."""
    from datetime import datetime, timedelta, timezone

    from pgq_tui.monitor.rates import Activity, table_history
    from pgq_tui.monitor.table_series import TableSeries

    t0 = datetime(2026, 12, 6, tzinfo=timezone.utc)
    series, polls = TableSeries(), []
    for n in range(400):
        at = t0 + timedelta(seconds=n, milliseconds=250)
        polls.append(Activity(at, n, {"q": 1}, 0, 0, (), depth={"q": 0}, first=n == 0))
        history, per = table_history(polls[-3:], at.replace(microsecond=0), 60, series=series)
    assert len(series._totals) <= 61 and all(len(s.values) <= 61 for s in series._queues.values())
    assert [p.enqueued for p in history][-3:] == [1, 1, 1] and per["q"][-3:] == (1, 1, 1)

    back = polls[-1].at - timedelta(hours=1)  # the clock went back an hour
    later = [
        Activity(back + timedelta(seconds=i), 400 + i, {"q": 2}, 0, 0, (), depth={"q": 0}) for i in range(3)
    ]
    history, per = table_history(
        later, later[-1].at.replace(microsecond=0) + timedelta(seconds=1), 5, series=series
    )
    assert [p.enqueued for p in history] == [None, None, None, 2, 2]  # unrated: unknown, never 0
