"""The one alarm thread every deadline shares (pgq_tui/db/alarms.py): order, cancel, a failing
callback, a forked child, and no thread per deadline."""

from __future__ import annotations

import os
import threading
import time

import pytest

from pgq_tui.db import alarms


def wait_for(done: threading.Event, seconds: float = 5.0) -> None:
    assert done.wait(seconds), "the alarm never rang"


def test_alarms_ring_in_time_order_and_a_cancelled_one_never() -> None:
    rang: list[str] = []
    last = threading.Event()
    alarms.after(0.15, lambda: (rang.append("late"), last.set()))
    alarms.after(0.05, rang.append, "soon")
    alarms.after(0.10, rang.append, "cancelled").cancel()
    alarms.after(0.0, rang.append, "now")
    wait_for(last)
    assert rang == ["now", "soon", "late"]


def test_an_alarm_sooner_than_the_one_waited_for_wakes_the_thread() -> None:
    far = alarms.after(30.0, lambda: None)
    rang = threading.Event()
    started = time.monotonic()
    alarms.after(0.05, rang.set)
    wait_for(rang)
    assert time.monotonic() - started < 5.0  # not after the 30 s one
    far.cancel()


def test_a_callback_that_raises_does_not_stop_the_others() -> None:
    def boom() -> None:
        raise RuntimeError("boom")

    rang = threading.Event()
    alarms.after(0.01, boom)
    alarms.after(0.02, rang.set)
    wait_for(rang)


def test_deadlines_do_not_start_a_thread_each() -> None:
    alarms.after(0.0, lambda: None)  # the alarm thread is up
    before = threading.active_count()
    pending = [alarms.after(60.0, lambda: None) for _ in range(200)]
    assert threading.active_count() == before
    for alarm in pending:
        alarm.cancel()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_its_own_alarm_thread() -> None:
    alarms.after(0.0, lambda: None)  # the parent's thread is up (it is not in the child)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its alarm must ring though the parent's thread did not come along
        try:
            rang = threading.Event()
            alarms.after(0.01, rang.set)
            os.write(write, b"1" if rang.wait(5.0) else b"0")
        finally:
            os._exit(0)
    os.close(write)
    try:
        assert os.read(read, 1) == b"1"
    finally:
        os.close(read)
        os.waitpid(pid, 0)
