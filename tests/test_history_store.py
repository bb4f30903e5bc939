"""Recordings and the in-memory history without a server: format, compactness, retention, bad files."""

from __future__ import annotations

import dataclasses
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from test_tui_sample import NOW, make_snapshot

from pgq_tui.history import store
from pgq_tui.history.replay import ReplaySource, choose_queue, snapshot_at
from pgq_tui.history.series import History
from pgq_tui.history.store import Recorder, Recording, RecordingError
from pgq_tui.monitor.snapshot import Snapshot


def at(seconds: float, **changes: object) -> Snapshot:
    snap = make_snapshot(**changes)
    return dataclasses.replace(
        snap, server=dataclasses.replace(snap.server, now=NOW + timedelta(seconds=seconds))
    )


def test_polls_come_back_equal_to_what_was_recorded(tmp_path: Path) -> None:
    path = tmp_path / "r.pgq"
    rec = Recorder(path)
    snaps = [at(2 * i) for i in range(store.KEYFRAME_EVERY + 5)]  # crosses a keyframe boundary
    for s in snaps:
        rec.append("q", s)
    rec.close()
    with Recording(path) as r:
        polls = r.polls("q")
        assert len(polls) == len(snaps)
        for ref, want in zip(polls, snaps, strict=True):
            assert r.snapshot(ref).to_dict() == store.slim(want)


def test_between_keyframes_a_poll_costs_a_fraction_of_a_whole_one(tmp_path: Path) -> None:
    rec = Recorder(tmp_path / "r.pgq")
    sizes = [rec.append("q", at(2 * i)) for i in range(10)]
    rec.close()
    assert sizes[1] * 4 < sizes[0], sizes


def test_snapshot_at_returns_the_last_poll_at_or_before_the_time(tmp_path: Path) -> None:
    path = tmp_path / "r.pgq"
    rec = Recorder(path)
    for i in range(5):
        rec.append("q", at(10 * i))
    rec.close()
    with Recording(path) as r:
        got = snapshot_at(r, "q", (NOW + timedelta(seconds=25)).isoformat())
        assert got.server.now == NOW + timedelta(seconds=20)
        with pytest.raises(RecordingError, match="before the recording starts"):
            snapshot_at(r, "q", (NOW - timedelta(seconds=1)).isoformat())


def test_retention_deletes_whole_old_groups_and_keeps_the_rest_readable(tmp_path: Path) -> None:
    path = tmp_path / "r.pgq"
    rec = Recorder(path)
    n = 3 * store.KEYFRAME_EVERY
    for i in range(n):
        rec.append("q", at(i))
    deleted = rec.prune((NOW + timedelta(seconds=2 * store.KEYFRAME_EVERY)).timestamp())
    rec.close()
    assert deleted == 2  # the first two groups; the current one stays
    with Recording(path) as r:
        polls = r.polls("q")
        assert len(polls) == store.KEYFRAME_EVERY
        assert r.snapshot(polls[0]).server.now == NOW + timedelta(seconds=2 * store.KEYFRAME_EVERY)
        assert r.snapshot(polls[-1]).server.now == NOW + timedelta(seconds=n - 1)


def test_bad_files_are_one_line_errors(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    with pytest.raises(RecordingError, match="not a pgq-top recording"):
        Recording(text)
    with pytest.raises(RecordingError, match="no such recording"):
        Recording(tmp_path / "missing.pgq")
    newer = tmp_path / "newer.pgq"
    Recorder(newer).close()
    with sqlite3.connect(newer) as conn:
        conn.execute("UPDATE meta SET value = '9' WHERE key = 'version'")
    with pytest.raises(RecordingError, match=r"format 9 is newer than this pgq-top reads \(format 1\)"):
        Recording(newer)
    with pytest.raises(RecordingError, match="format 9"):
        Recorder(newer)


def test_a_truncated_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "r.pgq"
    rec = Recorder(path)
    for i in range(200):
        rec.append("q", at(i))
    rec.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(RecordingError) as err, Recording(path) as r:
        for ref in r.polls("q"):
            r.snapshot(ref)
    assert "\n" not in str(err.value)


def test_several_queues_must_be_chosen(tmp_path: Path) -> None:
    path = tmp_path / "r.pgq"
    rec = Recorder(path)
    rec.append("orders: pgq · public.jobs", at(0))
    rec.append("billing: procrastinate · public.procrastinate_jobs", at(0))
    rec.close()
    with Recording(path) as r:
        with pytest.raises(RecordingError, match="holds 2 queues"):
            choose_queue(r, None)
        assert choose_queue(r, "billing") == "billing: procrastinate · public.procrastinate_jobs"


def test_replay_cursor_steps_jumps_and_goes_to_a_time(tmp_path: Path) -> None:
    path = tmp_path / "r.pgq"
    rec = Recorder(path)
    for i in range(100):
        rec.append("q", at(2 * i))
    rec.close()
    with Recording(path) as r:
        src = ReplaySource(r, "q")
        assert src.index == 99 and not src.step(1)
        assert src.step(-1) and src.index == 98
        assert src.jump(-60) and src.time == NOW + timedelta(seconds=2 * 98 - 60)
        src.go((NOW + timedelta(seconds=11)).isoformat())
        assert src.time == NOW + timedelta(seconds=10)
        assert src.jump(60) and src.time == NOW + timedelta(seconds=70)
        history = src.history()
        assert [s.at for s in history.samples][-1] == src.time and len(history.samples) == 36
        with pytest.raises(RecordingError, match="before the recording starts"):
            src.go((NOW - timedelta(hours=1)).isoformat())


def test_the_last_hour_in_memory_and_its_windows() -> None:
    history = History()
    for i in range(2000):  # 2 s apart: 66 min
        history.add(at(2 * i))
    assert (history.samples[-1].at - history.samples[0].at) <= timedelta(hours=1)
    assert len(history.window(60)) == 30 and len(history.window(600)) == 300
    last = history.samples[-1]
    assert last.queues["emails"].depth["ready"] == 1240 and last.queues["emails"].oldest_ready_s == 42.0
    assert last.dead_tuples is not None
