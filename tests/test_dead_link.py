"""A link that dies silently (issue 22, item 2): a proxy on loopback swallows the traffic of
established connections without closing them, as a NAT or an SSH tunnel that lost its state does.
The dashboard abandons the hung poll at its deadline, says so, and shows fresh data as soon as new
connections pass; `snapshot` and `check` end within 30 s.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from monitor_support import pgq_monitor
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from pgq_tui.db.connect import connect_kwargs
from pgq_tui.queue import JobQueue
from pgq_tui.tui.app import PgqTopApp
from pgq_tui.tui.widgets.status import banner_text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from delay_proxy import DelayProxy


@pytest.fixture
def proxied(dsn: str) -> Iterator[tuple[str, DelayProxy]]:
    with JobQueue(dsn) as q:
        q.enqueue("emails", [{}] * 3)
    proxy = DelayProxy({k: str(v) for k, v in conninfo_to_dict(dsn).items()})
    yield make_conninfo(dsn, host="127.0.0.1", port=str(proxy.port)), proxy


def test_keepalives_and_tcp_user_timeout_by_default_and_the_dsn_wins() -> None:
    kw = connect_kwargs("host=db.example", application_name="x")
    assert (kw["keepalives"], kw["tcp_user_timeout"]) == ("1", "30000")
    kw = connect_kwargs("host=db.example tcp_user_timeout=5000 keepalives_idle=7", application_name="x")
    assert "tcp_user_timeout" not in kw and "keepalives_idle" not in kw and kw["keepalives_count"] == "3"


async def test_the_dashboard_recovers_by_itself(proxied: tuple[str, DelayProxy]) -> None:
    via, proxy = proxied
    monitor = pgq_monitor(via, poll_deadline_s=5.0)
    app = PgqTopApp(monitor, interval=0.5)
    seen: list[str] = []
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            while app.received < 2:
                await pilot.pause(0.1)
            proxy.black_hole(new_too=True)  # the link dies; reconnecting does not work yet either
            hole = time.monotonic()
            while app.connected is not False:
                assert time.monotonic() - hole < 20, "the hung poll was never abandoned"
                await pilot.pause(0.2)
            state = app.banner_state()
            assert state is not None
            seen.append(banner_text(state).plain)
            await pilot.pause(3)
            proxy.open_new()  # new connections pass from now on
            opened, before = time.monotonic(), app.received
            while app.received == before:
                assert time.monotonic() - opened < 30, f"no fresh data 30 s after: {app.error}"
                await pilot.pause(0.2)
            assert app.connected is True
    finally:
        monitor.close()
    assert "abandoned" in seen[0] and "no answer from the server within 5 s" in seen[0], seen


@pytest.mark.parametrize("command", ["snapshot", "check"])
def test_snapshot_and_check_end_within_30_s(proxied: tuple[str, DelayProxy], command: str) -> None:
    via, proxy = proxied
    proxy.hole_after = 2  # each connection passes its start-up and one query, then goes silent
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pgq_tui", command, "--dsn", via], capture_output=True, text=True, timeout=60
    )
    took = time.monotonic() - started
    assert took < 30, took
    if command == "check":
        assert proc.returncode == 3 and proc.stdout.startswith("PGQ UNKNOWN"), proc.stdout
        assert "no answer" in proc.stdout
    else:
        assert proc.returncode == 3 and "no answer from the server" in proc.stderr, proc.stderr
