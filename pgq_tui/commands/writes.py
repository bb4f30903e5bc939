"""The refusal every writing command gives under --read-only, before it opens a connection."""

from __future__ import annotations

import argparse

from pgq_tui.errors import EXIT_REFUSED, PgqError


def refuse_writes(args: argparse.Namespace, what: str) -> None:
    if args.read_only:
        raise PgqError(f"read-only: writes are disabled ({what})", EXIT_REFUSED)
