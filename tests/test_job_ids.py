"""Job ids of every type through the Snapshot's JSON (no server): JobId = int | str | UUID."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from datetime import timedelta

from test_tui_sample import NOW, make_snapshot

from pgq_tui.monitor.snapshot import DeadJob, DeadList, Lease, LeaseList, Snapshot


def _lease(job_id: int | str | uuid.UUID) -> Lease:
    return Lease(job_id, "emails", "w-1", 1, 5, NOW - timedelta(seconds=30), -30.0, False, None)


def test_uuid_bigint_and_text_ids_round_trip_through_json() -> None:
    # a mapped table's uuid id column arrives as a UUID (psycopg's loader); pg-boss's as text
    # (`id::text`); most frameworks' as a bigint. The JSON writes a UUID as its text.
    uid = uuid.UUID("0b7e3c52-1f5e-4c86-9d3a-2f1e8c4b6a10")
    base = make_snapshot()
    snap = replace(
        base,
        stuck=LeaseList((_lease(uid), _lease("a1b2"), _lease(42)), 3),
        dead=DeadList((DeadJob(uid, "emails", 5, 5, NOW, "boom"),), 1),
    )
    data = json.loads(json.dumps(snap.to_dict()))
    assert [row["id"] for row in data["stuck"]["rows"]] == [str(uid), "a1b2", 42]
    assert data["dead"]["rows"][0]["id"] == str(uid)
    back = Snapshot.from_dict(data)
    assert [lease.id for lease in back.stuck.rows] == [str(uid), "a1b2", 42]
