"""Start the dashboard (or the demo) from parsed command-line arguments."""

from __future__ import annotations

import argparse
import sys

from pgq_tui.errors import EXIT_ERROR


def run_dashboard(args: argparse.Namespace) -> int:
    what = "the demo" if args.demo else "the dashboard"
    print(f"pgq-top: {what} is not built yet", file=sys.stderr)
    return EXIT_ERROR
