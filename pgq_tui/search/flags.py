"""The search flags `pgq-top jobs` and the bulk actions (`retry --where`) share."""

from __future__ import annotations

import argparse

from pgq_tui.search.compile import DEFAULT_SCAN

WHERE_HELP = (
    'a search: id:N queue:Q state:dead error:~"text" args.path:value tags:T since:2h before:02:30 '
    "(terms ANDed; see docs/search.md)"
)


def limit_scan(value: str) -> int | None:
    """--limit-scan N: the newest N jobs; 0 means no bound (the whole table, within the timeout).

    >>> limit_scan("500"), limit_scan("0")
    (500, None)
    """
    if not value.isdigit():
        raise argparse.ArgumentTypeError(f"want a whole number of jobs (0: no bound), not {value!r}")
    return int(value) or None


def add_limit_scan(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--limit-scan",
        type=limit_scan,
        default=DEFAULT_SCAN,
        metavar="N",
        help=f"search at most N jobs: the newest N, or every job of a state:'s own index when it holds at"
        f" most N (default {DEFAULT_SCAN:,}; 0: every job, within the timeout)",
    )
