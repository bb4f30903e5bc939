"""One vocabulary (issue 25): the Snapshot, its JSON and a recording say the dialect contract's stuck and
dead; a poll recorded by pgq-top 0.1 (expired, failed) still reads, under the new names."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest
from monitor_support import collect
from test_tui_app import seed_stuck

from pgq_tui.cli import main
from pgq_tui.history.replay import ReplaySource
from pgq_tui.history.store import Recorder, Recording, epoch, slim
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.queue import JobQueue

OLD = {"stuck": "expired", "dead": "failed"}  # today's count name -> 0.1's


def _old_keys(d: dict[str, Any]) -> dict[str, Any]:
    return {OLD.get(k, k): v for k, v in d.items()}


def as_recorded_by_0_1(doc: dict[str, Any]) -> dict[str, Any]:
    """A Snapshot document as 0.1 wrote it: `expired` for the stuck list and count, `failed` for dead
    (the `dead` list and the rates kept their names)."""
    out = dict(doc)
    out["expired"] = out.pop("stuck")
    out["unknown"] = _old_keys(out["unknown"])
    out["unsupported"] = _old_keys(out["unsupported"])
    out["queues"] = [{**_old_keys(q), "figures": _old_keys(q["figures"])} for q in out["queues"]]
    return out


@pytest.fixture
def stuck_and_dead(dsn: str, queue: JobQueue) -> str:
    """Queue "mail": 3 ready and 1 dead; queue "other": 2 stuck (their worker vanished)."""
    (doomed,) = queue.enqueue("mail", [{"doomed": True}], max_attempts=1)
    (job,) = queue.claim("mail", limit=1)
    assert job.id == doomed and queue.fail(job, "boom") == "failed"
    queue.enqueue("mail", [{"n": i} for i in range(3)])
    seed_stuck(dsn, "other", 2)
    return dsn


def test_the_json_says_stuck_and_dead(stuck_and_dead: str) -> None:
    doc = json.loads(json.dumps(collect(stuck_and_dead).to_dict()))
    assert "expired" not in doc and doc["stuck"]["total"] == 2 and len(doc["stuck"]["rows"]) == 2
    queues = {q["queue"]: q for q in doc["queues"]}
    assert (queues["mail"]["ready"], queues["mail"]["dead"]) == (3, 1), queues["mail"]
    assert (queues["other"]["stuck"], queues["other"]["dead"]) == (2, 0), queues["other"]
    for q in doc["queues"]:
        assert not {"expired", "failed"} & set(q) and not {"expired", "failed"} & set(q["figures"]), q
    assert {"stuck", "dead"} <= set(doc["queues"][0]["figures"])


def test_a_poll_recorded_by_0_1_reads_with_the_new_names(
    stuck_and_dead: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = collect(stuck_and_dead)
    path = tmp_path / "old.pgq"
    Recorder(path).close()  # the file and its meta (format version 1: unchanged by the rename)
    old = as_recorded_by_0_1(slim(snap))
    assert "expired" in old and "failed" in old["queues"][0] and "stuck" not in old
    with sqlite3.connect(path) as conn:  # a keyframe as 0.1's recorder stored it: zlib(compact JSON)
        body = zlib.compress(json.dumps(old, separators=(",", ":"), sort_keys=True).encode(), 9)
        conn.execute(
            "INSERT INTO polls (queue, at, base, body) VALUES (?, ?, NULL, ?)",
            ("mail", epoch(snap.server.now), body),
        )
    recording = Recording(path)
    (ref,) = recording.polls("mail")
    want = Snapshot.from_dict(slim(snap))  # the same poll, recorded today
    assert recording.snapshot(ref) == want
    replayed = ReplaySource(recording, "mail").collect()  # its charts rebuilt from the polls
    assert dataclasses.replace(replayed, throughput=want.throughput) == want
    assert want.stuck.total == 2 and {q.queue: (q.stuck, q.dead) for q in want.queues} == {
        "mail": (0, 1),
        "other": (2, 0),
    }
    recording.close()

    capsys.readouterr()
    assert main(["snapshot", "--from", str(path), "--at", snap.server.now.isoformat(), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["stuck"]["total"] == 2 and "expired" not in doc
    assert {q["queue"]: (q["stuck"], q["dead"]) for q in doc["queues"]} == {"mail": (0, 1), "other": (2, 0)}
