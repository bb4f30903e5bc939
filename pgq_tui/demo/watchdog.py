"""`python -m pgq_tui.demo.watchdog PID DIR temporary|kept [BIN]`: stop an embedded server whose owner died.

EmbeddedPostgres starts one per server. It watches its parent, the owner; once the owner is gone
without having stopped the server (kill -9, OOM killer), it stops the server and removes a temporary
directory. A normal stop terminates the watchdog first.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from pgq_tui.demo.embedded import EmbeddedPostgres


def main(argv: list[str]) -> int:
    owner, base, mode = int(argv[0]), Path(argv[1]), argv[2]
    bin_path = Path(argv[3]) if len(argv) > 3 else None  # the server's own pg_ctl, when not the wheel's
    # We are the owner's child: once our parent is someone else, the owner is gone (even as a zombie).
    while os.getppid() == owner:
        time.sleep(0.5)
    server = EmbeddedPostgres.adopt(base, temporary=mode == "temporary", bin_path=bin_path)
    server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
