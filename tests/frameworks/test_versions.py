"""Releases pgq-top does not read are detected and named, with the reason, never read with another
release's rules: pg-boss 11 installed by its own client (Node 22)."""

from __future__ import annotations

import json

import pytest

from pgq_tui.cli import main
from pgq_tui.detection import single_queue
from pgq_tui.dialects.contract import Capability
from pgq_tui.errors import EXIT_OK

from .pgboss_client import PgBoss11


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
