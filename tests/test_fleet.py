"""The fleet view on three real servers (and a wedged TCP port): each target is polled on its own
clock, so while one server is stopped and another never answers the others keep refreshing on time;
the stopped one shows down, then up again after its restart. Also: enter/escape between the fleet and
a dashboard, targets files, and `snapshot --json` / `check` over the same targets."""

from __future__ import annotations

import asyncio
import doctest
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from monitor_support import pgq_monitor

import pgq_tui.dialects.mapping as seed_mappings
from pgq_tui.cli import main
from pgq_tui.demo.embedded import FAST_UNSAFE_SETTINGS, EmbeddedPostgres
from pgq_tui.errors import EXIT_CONNECT, EXIT_USAGE, PgqError
from pgq_tui.fleet import rows as fleet_rows
from pgq_tui.fleet.poller import FleetPoller
from pgq_tui.queue import JobQueue
from pgq_tui.targets import Pins, Target, load_targets_file, resolve_targets
from pgq_tui.tui.app import BACK, PgqTopApp
from pgq_tui.tui.fleet import FleetApp

INTERVAL = 0.5


def test_doctests() -> None:
    import pgq_tui.fleet.poll
    import pgq_tui.fleet.support
    import pgq_tui.targets

    for module in (fleet_rows, pgq_tui.targets, pgq_tui.fleet.poll, pgq_tui.fleet.support):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0


@pytest.fixture(scope="module")
def servers() -> Iterator[list[EmbeddedPostgres]]:
    """Three servers of their own (one gets stopped), started side by side, each with a queue."""
    started = [EmbeddedPostgres(settings=FAST_UNSAFE_SETTINGS) for _ in range(3)]
    threads = [threading.Thread(target=s.start) for s in started]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for i, server in enumerate(started):
        with JobQueue(server.dsn()) as q:
            q.install()
            q.enqueue("emails", [{}] * (i + 1))
    yield started
    for server in started:
        server.stop()


@pytest.fixture
def hung_port() -> Iterator[int]:
    """A TCP port that accepts connections and never answers (a wedged server or a dropped link)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield listener.getsockname()[1]
    listener.close()


def targets_of(servers: list[EmbeddedPostgres]) -> list[Target]:
    return [Target(name, s.dsn()) for name, s in zip(("orders", "billing", "reports"), servers, strict=False)]


class RecordingPoller(FleetPoller):
    """Records when each of its targets' polls finished: every one, not what a sampler happens to see."""

    def __init__(self, targets: list[Target], *, interval: float) -> None:
        super().__init__(targets, interval=interval)
        self.finished: dict[str, list[float]] = {t.name: [] for t in targets}

    def _finished(self, target, watch, outcomes) -> None:  # type: ignore[no-untyped-def]
        super()._finished(target, watch, outcomes)
        self.finished[target.name].append(self.clock())


def hung_3s(shown: set[str]) -> bool:
    """A poll in flight was shown waiting 3 s or more ("… 3s", "… 4s"...)."""
    waits = [int(m[1]) for s in shown if (m := re.fullmatch(r"… (\d+)s", s))]
    return any(w >= 3 for w in waits)


def cell(app: FleetApp, name: str, column: str) -> str:
    from textual.widgets import DataTable

    return str(app.query_one(DataTable).get_cell(name, column))


async def test_one_server_stopped_midway_the_others_keep_refreshing(
    servers: list[EmbeddedPostgres], hung_port: int
) -> None:
    wedged = Target("wedged", f"host=127.0.0.1 port={hung_port} dbname=x user=x")
    poller = RecordingPoller([*targets_of(servers), wedged], interval=INTERVAL).start()
    app = FleetApp(poller, interval=INTERVAL)
    polled = poller.finished
    seen: dict[str, set[str]] = {"reports": set(), "wedged": set()}

    async def watch(pilot, until) -> None:  # type: ignore[no-untyped-def]
        """Sample the states shown, five times per interval (the poll times are the poller's own)."""
        while not until():
            await pilot.pause(0.1)
            for name in seen:
                seen[name].add(cell(app, name, "state"))

    try:
        async with app.run_test(size=(160, 20)) as pilot:
            deadline = time.monotonic() + 20
            await watch(
                pilot, lambda: all(r.state == "up" for r in app.rows[:3]) or time.monotonic() > deadline
            )
            assert [r.state for r in app.rows[:3]] == ["up", "up", "up"], app.rows
            assert [r.ready for r in app.rows[:3]] == [1, 2, 3] and app.rows[0].version
            assert "● up" in cell(app, "orders", "state") and "healthy" in cell(app, "orders", "health")

            # stop "reports" for 4 s while "wedged" hangs its poller's connect, and keep it down until the
            # screen has shown both (however busy the machine)
            def shown() -> bool:
                return "✗ down" in seen["reports"] and hung_3s(seen["wedged"]) and "✗ down" in seen["wedged"]

            loop = asyncio.get_running_loop()
            restart = loop.run_in_executor(None, lambda: servers[2].restart(down_for_s=4.0, down_until=shown))
            t0 = time.monotonic()
            await watch(pilot, restart.done)
            await restart
            outage = time.monotonic() - t0
            deadline = time.monotonic() + 15
            await watch(pilot, lambda: app.rows[2].state == "up" or time.monotonic() > deadline)
    finally:
        poller.stop()

    assert "✗ down" in seen["reports"], seen  # shown down while stopped...
    assert app.rows[2].state == "up" and app.rows[2].ready == 3  # ...and up again after the restart
    # the wedged port: its connect hangs for the whole connect timeout (3 s: its seconds shown, one
    # sample a second or slower on a busy machine), then down
    assert hung_3s(seen["wedged"]) and "✗ down" in seen["wedged"], seen
    for name in ("orders", "billing"):  # on time all along: no gap much over the interval
        gaps = [b - a for a, b in zip(polled[name], polled[name][1:], strict=False)]
        assert len(gaps) >= outage / INTERVAL - 2, (name, len(gaps), outage)
        assert max(gaps) < 3 * INTERVAL, (name, max(gaps))


async def test_enter_opens_a_target_and_escape_comes_back(servers: list[EmbeddedPostgres]) -> None:
    poller = FleetPoller(targets_of(servers), interval=INTERVAL).start()
    try:
        app = FleetApp(poller, interval=INTERVAL)
        async with app.run_test(size=(80, 24)) as pilot:
            while not all(r.state == "up" for r in app.rows):
                await pilot.pause(0.1)
            await pilot.press("down", "enter")
        assert app.return_value == "billing"
    finally:
        poller.stop()
    with pgq_monitor(servers[1].dsn()) as monitor:
        dashboard = PgqTopApp(monitor, back=True, poll=False, initial=monitor.collect())
        async with dashboard.run_test(size=(80, 24)) as pilot:
            await pilot.press("slash", "e", "m", "enter")  # a filter: the first escape clears it
            await pilot.press("escape")
            assert dashboard.is_running and dashboard.filter_text == ""
            await pilot.press("escape")
        assert dashboard.return_value == BACK
        alone = PgqTopApp(monitor, poll=False, initial=monitor.collect())
        async with alone.run_test(size=(80, 24)) as pilot:
            await pilot.press("escape")
            assert alone.is_running  # not opened from a fleet: escape never quits


def test_targets_file(tmp_path: Path) -> None:
    path = tmp_path / "targets.toml"
    path.write_text('[targets.a]\ndsn = "host=/tmp dbname=a"\n[targets.b]\ndsn = "dbname=b"\ntable = "q"\n')
    assert load_targets_file(str(path)) == [
        Target("a", "host=/tmp dbname=a"),
        Target("b", "dbname=b", table="q"),
    ]
    assert [t.name for t in resolve_targets(["dbname=x host=h", "dbname=x host=h"], str(path))] == [
        "x@h", "x@h#2", "a", "b",
    ]  # fmt: skip
    for text, words in (
        ("[targets.a]\n", "dsn is missing"),
        ('[targets.a]\ndsn = "x"\ncolour = 1\n', "unknown key 'colour'"),
        ('[targets.a]\ndsn = "bogus_option=1"\n', "bad DSN"),
        ("[targets]\n", "no targets"),
        ("[targets.a\n", "not valid TOML"),
    ):
        path.write_text(text)
        with pytest.raises(PgqError, match=words) as info:
            load_targets_file(str(path))
        assert info.value.exit_code == EXIT_USAGE
    with pytest.raises(PgqError, match="cannot read targets file"):
        load_targets_file(str(tmp_path / "missing.toml"))
    # pins: a mapping path is relative to the targets file; the command line's pins are defaults
    shipped = Path(seed_mappings.__file__).parent / "seeds" / "seed_jobs.toml"
    (tmp_path / "mine.toml").write_text(shipped.read_text().replace('"seed-jobs"', '"mine"'))
    path.write_text(
        '[targets.a]\ndsn = "dbname=a"\nmapping = "mine.toml"\nkind = "mine"\n[targets.b]\ndsn = "dbname=b"\n'
    )
    assert load_targets_file(str(path), Pins(kind="pgq", schema="app")) == [
        Target("a", "dbname=a", schema="app", kind="mine", mapping=str(tmp_path / "mine.toml")),
        Target("b", "dbname=b", schema="app", kind="pgq"),
    ]
    for text, words in (
        ('[targets.a]\ndsn = "dbname=a"\nkind = "mine"\n', "targets.a: unknown kind 'mine'"),
        ('[targets.a]\ndsn = "dbname=a"\nmapping = "nope.toml"\n', "targets.a: .*nope.toml"),
        ('[targets.a]\ndsn = "dbname=a"\nkind = 1\n', "kind must be a string"),
    ):
        path.write_text(text)
        with pytest.raises(PgqError, match=words) as info:
            load_targets_file(str(path))
        assert info.value.exit_code == EXIT_USAGE


def test_snapshot_and_check_over_the_same_targets(
    servers: list[EmbeddedPostgres], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "targets.toml"
    path.write_text(
        "".join(f"[targets.{t.name}]\ndsn = {json.dumps(t.dsn)}\n" for t in targets_of(servers[:2]))
        + f'[targets.gone]\ndsn = "host={tmp_path} dbname=x"\n'
    )
    assert main(["snapshot", "--targets", str(path), "--json"]) == EXIT_CONNECT
    doc = json.loads(capsys.readouterr().out)
    assert [(t["name"], t["up"]) for t in doc["targets"]] == [
        ("orders", True),
        ("billing", True),
        ("gone", False),
    ]
    assert doc["targets"][1]["snapshot"]["queues"][0]["ready"] == 2
    assert doc["targets"][2]["snapshot"] is None and "cannot connect" in doc["targets"][2]["error"]
    # The module's jobs were enqueued when its servers started: how long they have waited depends on
    # which tests ran before on this worker, so the rules on that age (the ready age, WARNING past
    # 30 s, and the diagnosis's "nothing claimed" after 30 s) are set out of its reach.
    ageless = ["--ready-age-warn", "off", "--ready-age-crit", "off", "--stalled-after", "86400"]
    assert main(["check", *ageless, "--targets", str(path)]) == 3  # UNKNOWN: one target is unreachable
    assert capsys.readouterr().out.startswith("PGQ UNKNOWN: gone: cannot connect")
    dsns = [a for s in servers[:2] for a in ("--dsn", s.dsn())]
    assert main(["check", *ageless, *dsns]) == 0
    assert capsys.readouterr().out.startswith("PGQ OK: 2 queues healthy: postgres@pgq-top-")
