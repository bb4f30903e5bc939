"""Timestamps as PostgreSQL's JSON prints them (the job detail's jsonb details) parse on every Python
pgq-top supports: 3.10's fromisoformat refuses 1-5 fraction digits and hour-only offsets."""

from __future__ import annotations

import doctest

import psycopg
import pytest

from pgq_tui import timestamps
from pgq_tui.actions.detail import detail_row
from pgq_tui.dialects.contract import Match, QueueModel
from pgq_tui.timestamps import parse_timestamp


def test_doctests() -> None:
    result = doctest.testmod(timestamps)
    assert result.attempted >= 5 and result.failed == 0


@pytest.mark.parametrize(
    "zone", ["UTC", "Asia/Kolkata", "America/St_Johns", "America/New_York", "Asia/Kathmandu"]
)
def test_every_json_timestamp_the_server_prints_parses_to_the_same_instant(empty_dsn: str, zone: str) -> None:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute("SELECT set_config('TimeZone', %s, false)", (zone,))
        rows = conn.execute(
            """SELECT t, to_jsonb(t) #>> '{}', to_jsonb(t::timestamp) #>> '{}', t::timestamp
               FROM unnest(ARRAY['2026-12-01 14:27:05+00', '2026-12-01 14:27:05.1+00',
                                 '2026-12-01 14:27:05.12+00', '2026-12-01 14:27:05.123+00',
                                 '2026-12-01 14:27:05.1234+00', '2026-12-01 14:27:05.12345+00',
                                 '2026-12-01 14:27:05.123456+00',
                                 '1890-06-01 12:00:00.5+00']::timestamptz[]) t"""
        ).fetchall()
    for aware, text, naive_text, naive in rows:
        assert parse_timestamp(text) == aware, text
        assert parse_timestamp(naive_text) == naive, naive_text


def test_the_detail_reads_a_shortened_fraction_and_keeps_infinity_as_text() -> None:
    model = QueueModel(Match("k", "s", "t"), "K", "lease < now()", (), ())
    base = dict.fromkeys(
        (
            "attempts",
            "max_attempts",
            "holder",
            "run_at",
            "created_at",
            "started_at",
            "finished_at",
            "error",
            "payload",
        )
    )
    row = {**base, "id": 1, "queue": "q", "state": "running", "native_state": "running"}
    d = detail_row({**row, "details": {"locked_until": "2026-12-01T14:27:05.12345+00:00"}}, model)
    assert d["locked_until"].microsecond == 123450
    d = detail_row({**row, "details": {"heartbeat_at": "infinity"}}, model)
    assert d["heartbeat_at"] == "infinity"
