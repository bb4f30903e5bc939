"""Time from launching pgq-top to the first frame that shows data, on a real pseudo-terminal.

    python benchmarks/bench_startup.py [--runs 5] [--size 80x24]

Runs `pgq-top --demo` (embedded server, schema, load, workers, dashboard) and, for reference, the
dashboard alone on an already-running server (`pgq-top --dsn ...`), each --runs times, and prints the
median seconds until the screen shows a demo queue's row. Quits each run with `q` and checks it exits 0.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import statistics
import struct
import subprocess
import sys
import termios
import time

from pgq_tui.demo.embedded import EmbeddedPostgres
from pgq_tui.queue import JobQueue

# A queue row with numbers: the name, then at least one count column.
DATA = re.compile(rb"emails\s+\d+")
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]")


def time_to_data(args: list[str], cols: int, rows: int, timeout: float = 60) -> float:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pgq_tui", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**os.environ, "TERM": "xterm-256color"},
        start_new_session=True,
    )
    os.close(slave)
    screen = b""
    elapsed = None
    try:
        while time.perf_counter() - started < timeout:
            if select.select([master], [], [], 0.02)[0]:
                try:
                    screen += os.read(master, 65536)
                except OSError:  # EIO: the program exited and closed the terminal
                    break
                if elapsed is None and DATA.search(ANSI.sub(b" ", screen)):
                    elapsed = time.perf_counter() - started
                    os.write(master, b"q")
            if proc.poll() is not None:
                break
        if elapsed is None:
            raise SystemExit(f"no data on screen after {timeout}s: {ANSI.sub(b' ', screen)[-500:]!r}")
        if proc.wait(30) != 0:
            raise SystemExit(f"pgq-top exited {proc.returncode}")
        return elapsed
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size", default="80x24")
    args = ap.parse_args()
    cols, rows = (int(v) for v in args.size.split("x"))
    demo = [time_to_data(["--demo"], cols, rows) for _ in range(args.runs)]
    with EmbeddedPostgres() as server:
        with JobQueue(server.dsn()) as q:
            q.install()
            q.enqueue("emails", [{"n": i} for i in range(100)])
        plain = [time_to_data(["--dsn", server.dsn()], cols, rows) for _ in range(args.runs)]
    print(f"{args.size}, {args.runs} runs, seconds until the first frame with data (median, min-max):")
    print(
        f"  pgq-top --demo       {statistics.median(demo):.2f}  ({min(demo):.2f}-{max(demo):.2f})"
        "  embedded server + schema + load + workers + dashboard"
    )
    print(
        f"  pgq-top --dsn ...    {statistics.median(plain):.2f}  ({min(plain):.2f}-{max(plain):.2f})"
        "  dashboard on a running server"
    )


if __name__ == "__main__":
    main()
