"""Soak: the dashboard on the demo under load for a long time; its memory must stay flat.

    python benchmarks/soak.py [--minutes 10] [--interval 1] [--load-steps 3]

Runs `pgq-top --demo --interval 1` on a real pseudo-terminal at 160x48, raises the demo load with `l`
--load-steps times, and every 10 s samples the pgq-top process's resident memory (RSS, from /proc) and
CPU time. Prints the samples, the growth after a one-minute warm-up, and pgq-top's CPU share of one core.
The workers, load generator and server are separate processes and not counted. Exits non-zero if
memory grew by more than --max-growth-mb after warm-up.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--load-steps", type=int, default=3)
    ap.add_argument("--max-growth-mb", type=float, default=5.0)
    args = ap.parse_args()
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 48, 160, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pgq_tui", "--demo", "--interval", str(args.interval)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        env={**os.environ, "TERM": "xterm-256color"},
    )
    os.close(slave)

    def drain(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    os.read(master, 1 << 16)
                except OSError:
                    return

    samples: list[tuple[float, float, float]] = []
    try:
        drain(5)
        for _ in range(args.load_steps):
            os.write(master, b"l")
            drain(1)
        started, cpu0 = time.monotonic(), cpu_s(proc.pid)
        end = started + args.minutes * 60
        while time.monotonic() < end:
            drain(10)
            if proc.poll() is not None:
                print(f"pgq-top exited early with {proc.returncode}")
                return 1
            samples.append((time.monotonic() - started, rss_mb(proc.pid), cpu_s(proc.pid) - cpu0))
            t, rss, cpu = samples[-1]
            print(f"{t:6.0f} s  rss {rss:7.1f} MB  cpu {cpu:6.1f} s", flush=True)
        os.write(master, b"q")
        drain(5)
        code = proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    warm = [s for s in samples if s[0] >= 60] or samples
    growth = warm[-1][1] - warm[0][1]
    peak = max(s[1] for s in warm)
    share = samples[-1][2] / samples[-1][0]
    print(
        f"\n{args.minutes:g} min at a {args.interval:g} s refresh: rss after warm-up {warm[0][1]:.1f} MB, "
        f"at the end {warm[-1][1]:.1f} MB (growth {growth:+.1f} MB, peak {peak:.1f} MB); "
        f"pgq-top CPU {share:.1%} of one core; exit code {code}"
    )
    return 0 if growth <= args.max_growth_mb and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
