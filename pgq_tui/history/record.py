"""`pgq-top record`: poll every queue of the targets at an interval and append each poll to a file.

Runs until `--duration` has passed, or SIGINT/SIGTERM (exit 0 either way; the signal handler only
sets a flag, so a poll in progress is finished and committed first). A target that cannot be polled
is said on stderr, once per change of its error, and polled again at the next interval.
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import TextIO

from pgq_tui.errors import EXIT_OK, EXIT_USAGE, PgqError
from pgq_tui.fleet.poll import QueueOutcome, TargetWatch
from pgq_tui.history.store import Recorder
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.targets import Target

_SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_span(text: str) -> float:
    """`--keep 7d`, `--duration 90m`: a number of seconds, or with a unit s/m/h/d/w.

    >>> parse_span("7d"), parse_span("90m"), parse_span("30")
    (604800.0, 5400.0, 30.0)
    """
    m = _SPAN.match(text)
    if m is None or float(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 30, 90s, 15m, 12h, 7d)")
    return float(m.group(1)) * _UNIT[m.group(2)]


def queue_label(o: QueueOutcome, several_targets: bool) -> str:
    """What the recording calls one queue: its label (kind, version, schema.table), after the
    target's name when several targets are recorded."""
    assert o.queue is not None
    return f"{o.target.name}: {o.queue.label}" if several_targets else o.queue.label


def record(
    targets: Sequence[Target],
    recorder: Recorder,
    *,
    interval_s: float,
    duration_s: float | None,
    stop: threading.Event,
    log: TextIO,
) -> tuple[int, int]:
    """Record until `duration_s` or `stop`, then close the recorder; returns (polls stored, bytes
    their bodies took)."""
    watches = [TargetWatch(t) for t in targets]
    said: dict[str, str] = {}
    polls = size = 0
    started = time.monotonic()
    try:
        while not stop.is_set():
            tick = time.monotonic()
            for watch in watches:
                for o in watch.collect():
                    key = o.key
                    if isinstance(o.outcome, Snapshot):
                        size += recorder.append(queue_label(o, len(targets) > 1), o.outcome)
                        polls += 1
                        if said.pop(key, None) is not None:
                            print(f"pgq-top record: {o.target.name}: polling again", file=log, flush=True)
                    elif said.get(key) != str(o.outcome):
                        said[key] = str(o.outcome)
                        print(f"pgq-top record: {o.target.name}: {o.outcome}", file=log, flush=True)
            if duration_s is not None and time.monotonic() - started >= duration_s:
                break
            wait = interval_s - (time.monotonic() - tick)
            if duration_s is not None:
                wait = min(wait, duration_s - (time.monotonic() - started))
            stop.wait(max(0.0, wait))
    finally:
        for watch in watches:
            watch.close()
        recorder.close()
    return polls, size


def run_record(args: argparse.Namespace, targets: Sequence[Target]) -> int:
    if args.interval <= 0:
        raise PgqError("--interval must be more than 0 seconds", EXIT_USAGE)
    recorder = Recorder(args.out, keep_s=args.keep)  # a file that is no recording fails here, first
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(
        f"pgq-top record: {len(targets)} target(s) every {args.interval:g}s into {args.out}"
        + (f" for {args.duration:g}s" if args.duration else "; Ctrl-C stops"),
        file=sys.stderr,
        flush=True,
    )
    polls, size = record(
        targets,
        recorder,
        interval_s=args.interval,
        duration_s=args.duration,
        stop=stop,
        log=sys.stderr,
    )
    per = f", {size / polls:.0f} bytes per poll" if polls else ""
    print(f"pgq-top record: stopped; {polls} polls recorded{per}", file=sys.stderr, flush=True)
    return EXIT_OK
