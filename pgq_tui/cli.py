"""Command line: `pgq-top [--dsn DSN] [--demo]` opens the dashboard; subcommands do the rest.

Every failure a user can cause (bad DSN, unreachable server, missing table, missing privilege) ends
as one line on stderr and a documented exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import psycopg

from pgq_tui import __version__
from pgq_tui.errors import (
    EXIT_ERROR,
    EXIT_USAGE,
    PgqError,
    describe,
    redact,
)


def _common(p: argparse.ArgumentParser, *, suppress: bool = False, many: bool = False) -> None:
    d = (lambda v: argparse.SUPPRESS) if suppress else (lambda v: v)
    p.add_argument(
        "--dsn",
        action="append",
        default=d(None),
        help="libpq connection string or URI (default: $DATABASE_URL, then PG* variables and ~/.pgpass)"
        + ("; repeat it to watch several databases" if many else ""),
    )
    if many:
        p.add_argument(
            "--targets",
            metavar="FILE",
            default=d(None),
            help="TOML file of named targets ([targets.NAME] with dsn, table, schema); see docs/fleet.md",
        )
    p.add_argument(
        "--table", default=d(None), help="the queue's table (default: detected; init/worker: jobs)"
    )
    p.add_argument(
        "--schema", default=d(None), help="the queue's schema (default: detected; init/worker: public)"
    )
    p.add_argument(
        "--kind",
        default=d(None),
        help="force a queue kind: pgq, seed-jobs, seed-job-queue, a framework, or your mapping's kind",
    )
    p.add_argument(
        "--mapping", default=d(None), metavar="FILE", help="a TOML file describing a home-grown jobs table"
    )
    p.add_argument(
        "--dead-reads",
        type=_at_least_one,
        default=d(None),
        metavar="N",
        help="pgq-top's dead rule for pgmq, which has no dead state: a message read N or more times "
        "(read_ct >= N) is dead (default: $PGQ_TOP_PGMQ_DEAD_READS, else 5)",
    )


def _at_least_one(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {value!r}")
    return int(value)


def _count_cap(value: str) -> int:
    try:
        cap = int(value)
    except ValueError:
        cap = 0
    if cap < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of rows >= 1, got {value!r}")
    return cap


def _counting(p: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    from pgq_tui.monitor.collect import DEFAULT_COUNT_CAP

    p.add_argument(
        "--count-cap",
        type=_count_cap,
        default=argparse.SUPPRESS if suppress else None,
        metavar="ROWS",
        help="count each queue and state exactly up to ROWS per poll; above, a background exact count "
        f"shown with its age (default: {DEFAULT_COUNT_CAP}, pg-boss 500, good_job and Que 250 without the "
        "advised index, less with many queues; the poll's cost grows with it)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pgq-top",
        description="top for PostgreSQL job queues: watch and fix a SKIP LOCKED jobs table.",
    )
    parser.add_argument("--version", action="version", version=f"pgq-top {__version__}")
    _common(parser, many=True)
    parser.add_argument(
        "--interval", type=float, default=2.0, help="refresh interval in seconds (default: 2)"
    )
    _read_only(parser)
    _counting(parser)
    from pgq_tui.diagnosis.command import add_threshold_arguments as add_dashboard_thresholds

    add_dashboard_thresholds(parser)
    parser.add_argument(
        "--probe-interval",
        type=float,
        default=10.0,
        help="seconds between claim-cost probes, a read-only EXPLAIN of one claim (default: 10; 0: off)",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="start a private PostgreSQL with live load and workers, and watch it",
    )
    parser.add_argument("--demo-dir", default=None, help="keep the demo's data in this directory")
    parser.add_argument(
        "--record", metavar="FILE", default=None, help="append every poll the dashboard makes to FILE"
    )
    parser.add_argument(
        "--crontab",
        metavar="FILE",
        default=None,
        help="Graphile Worker's crontab file: the schedules' expressions (docs/schedules.md)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    init = sub.add_parser(
        "init",
        help="only for pgq-top's own queue: create its jobs table, indexes and settings (idempotent); "
        "monitoring needs no init",
        description="Create or upgrade pgq-top's own jobs table (the queue library's). An existing table "
        "that is not pgq-top's is refused unchanged; monitoring any queue needs no init.",
    )
    _common(init, suppress=True)
    init.add_argument(
        "--adopt",
        action="store_true",
        help="turn an existing seed-shaped table holding only pgq-top's statuses into pgq-top's queue "
        "(adds columns, a status constraint, indexes and autovacuum settings)",
    )
    init.add_argument(
        "--dry-run", action="store_true", help="print every statement init would run, and change nothing"
    )
    init.add_argument(
        "--audit-log",
        metavar="FILE",
        default=None,
        help="append a record of the write here (default: $PGQ_TOP_AUDIT_LOG, else "
        "$XDG_STATE_HOME/pgq-top/audit.jsonl; 'off' for none; docs/actions.md)",
    )

    worker = sub.add_parser("worker", help="run a pool of worker processes on one or more queues")
    _common(worker, suppress=True)
    worker.add_argument("--queue", action="append", required=True, help="queue to work (repeatable)")
    worker.add_argument("--concurrency", type=int, default=2, help="worker processes (default: 2)")
    worker.add_argument(
        "--handler",
        default="pgq_tui.queue.handlers:sleep",
        help="module:function called with each Job (default: pgq_tui.queue.handlers:sleep)",
    )
    worker.add_argument("--batch", type=int, default=10, help="jobs claimed per round trip (default: 10)")
    worker.add_argument("--lease", type=float, default=30.0, help="lease in seconds (default: 30)")
    worker.add_argument(
        "--keep", action="store_true", help="keep finished jobs as 'done' instead of deleting"
    )
    worker.add_argument(
        "--reap-interval",
        type=float,
        default=5.0,
        help="the fewest seconds between reaper passes (0: off); idle, it waits for the next lease"
        " to expire, at most one lease",
    )
    worker.add_argument(
        "--poll",
        type=float,
        default=10.0,
        help="idle workers wake on NOTIFY; this is the safety poll in seconds (default: 10)",
    )
    worker.add_argument(
        "--max-crashes",
        type=int,
        default=5,
        help="give up (exit 1) when one worker crashes this many times within --crash-window (default: 5)",
    )
    worker.add_argument(
        "--crash-window", type=float, default=60.0, help="seconds, for --max-crashes (default: 60)"
    )

    snap = sub.add_parser("snapshot", help="print one snapshot of the queue and the server, and exit")
    _common(snap, suppress=True, many=True)
    _counting(snap, suppress=True)
    snap.add_argument("--json", action="store_true", help="print JSON (stable keys, see docs/snapshot.md)")
    snap.add_argument(
        "--from", dest="recording", metavar="FILE", default=None, help="read a recording instead of a server"
    )
    snap.add_argument(
        "--at", metavar="TIME", default=None, help="with --from: the last poll at or before TIME (ISO 8601)"
    )
    snap.add_argument("--queue", default=None, help="with --from: which recorded queue (when several)")
    from pgq_tui.monitor.settle import add_wait_argument

    add_wait_argument(snap)

    from pgq_tui.history.record import parse_span

    rec = sub.add_parser(
        "record", help="append every poll of the queues to a file, for replay and snapshot --from"
    )
    _common(rec, suppress=True, many=True)
    rec.add_argument("--out", required=True, metavar="FILE", help="the recording (created or appended to)")
    rec.add_argument("--interval", type=float, default=2.0, help="seconds between polls (default: 2)")
    rec.add_argument(
        "--duration", type=parse_span, default=None, metavar="SPAN", help="stop after SPAN (e.g. 90s, 8h)"
    )
    rec.add_argument(
        "--keep", type=parse_span, default=None, metavar="SPAN", help="delete polls older than SPAN (e.g. 7d)"
    )

    rep = sub.add_parser("replay", help="the dashboard over a recording, with a time cursor")
    rep.add_argument("file", metavar="FILE", help="a recording made by pgq-top record or --record")
    rep.add_argument("--queue", default=None, help="which recorded queue (when several)")
    rep.add_argument("--at", metavar="TIME", default=None, help="start at TIME (default: the last poll)")

    from pgq_tui.cli_actions import add_parsers

    add_parsers(sub, _common)

    from pgq_tui.commands.pause import add_parsers as add_pause_parsers

    add_pause_parsers(sub, _common)

    from pgq_tui.commands.jobs import add_parser as add_jobs_parser

    add_jobs_parser(sub, _common)
    from pgq_tui.commands.job import add_parser as add_job_parser

    add_job_parser(sub, _common)

    from pgq_tui.commands.schedules import add_parser as add_schedules_parser

    add_schedules_parser(sub, _common)

    from pgq_tui.check.command import add_arguments as add_check_arguments

    check = sub.add_parser(
        "check",
        help="a monitoring plugin (Nagios, Icinga): exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN",
        description="Detect the queues of each target (any dialect; --kind/--schema/--table/--mapping "
        "pin one), collect one snapshot per queue, compare it with the thresholds and print one "
        "monitoring-plugins status line with perfdata: each queue named when there are several, the "
        "worst decides. Rules a dialect cannot serve are reported as unsupported. "
        "Exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.",
    )
    _common(check, suppress=True, many=True)
    add_check_arguments(check)
    add_dashboard_thresholds(check)

    from pgq_tui.diagnosis.command import add_arguments as add_why_arguments

    why = sub.add_parser(
        "why",
        help="from the symptom to its root cause to the fix: exit 0 nothing wrong, 20 warning, 21 critical",
        description="Poll every queue of each target for --window seconds, then print each chain from "
        "the symptom to its root cause and the fix (the dashboard key, the SQL or command). Exit 0 "
        "nothing wrong, 20 the worst chain warns, 21 it is critical; a target that could not be read "
        "and nothing found elsewhere: its error's code (3 cannot connect, 4 no queue, 5 a privilege). "
        "See docs/exit-codes.md.",
    )
    _common(why, suppress=True, many=True)
    add_why_arguments(why)

    exporter = sub.add_parser(
        "exporter",
        help="serve Prometheus metrics of every queue detected (or the pinned one)",
    )
    _common(exporter, suppress=True)
    exporter.add_argument(
        "--listen", default="127.0.0.1:9187", help="HOST:PORT to serve /metrics on (default: 127.0.0.1:9187)"
    )
    exporter.add_argument(
        "--min-interval",
        type=float,
        default=5.0,
        help="seconds between two collects; closer scrapes get the last snapshot (default: 5)",
    )
    from pgq_tui.exporter.tls import add_arguments as add_tls_arguments

    add_tls_arguments(exporter)

    adv = sub.add_parser("advise", help="measure the queue's churn, then recommend autovacuum settings")
    _common(adv, suppress=True)
    adv.add_argument("--seconds", type=float, default=15.0, help="how long to measure (default: 15)")
    adv.add_argument("--json", action="store_true", help="print JSON")
    from pgq_tui.commands.completion import add_parser as add_completion_parser

    add_completion_parser(sub)
    for command in sub.choices.values():
        _read_only(command, suppress=True)
    return parser


def _read_only(p: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """--read-only before or after the subcommand: people type it where they think of it. After it,
    the default is suppressed so the flag given before the subcommand still counts."""
    p.add_argument(
        "--read-only",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="disable every write action (init and worker refuse to run)",
    )


def _cmd_init(args: argparse.Namespace) -> int:
    from pgq_tui.commands.init import run_init

    return run_init(args)


def _cmd_worker(args: argparse.Namespace) -> int:
    from pgq_tui.commands.worker import run_worker

    return run_worker(args)


def _cmd_snapshot(args: argparse.Namespace) -> int:
    if args.recording is not None or args.at is not None:
        from pgq_tui.commands.snapshot import run_snapshot_from

        return run_snapshot_from(args)
    if len(args.target_list) > 1:
        from pgq_tui.fleet.report import run_fleet_snapshot

        return run_fleet_snapshot(args.target_list, as_json=args.json, wait_s=args.wait)
    from pgq_tui.commands.snapshot import run_snapshot

    return run_snapshot(args)


def _cmd_advise(args: argparse.Namespace) -> int:
    from pgq_tui.commands.advise import run_advise

    return run_advise(args)


def _cmd_exporter(args: argparse.Namespace) -> int:
    from pgq_tui.exporter.server import run_exporter

    return run_exporter(args)


def _cmd_check(args: argparse.Namespace) -> int:
    from pgq_tui.check.command import run_check

    return run_check(args, args.target_list)


def _cmd_record(args: argparse.Namespace) -> int:
    from pgq_tui.history.record import run_record

    return run_record(args, args.target_list)


def _cmd_replay(args: argparse.Namespace) -> int:
    from pgq_tui.tui.launch import run_replay

    return run_replay(args)


def _cmd_why(args: argparse.Namespace) -> int:
    from pgq_tui.diagnosis.command import run_why

    return run_why(args, args.target_list)


def _cmd_dashboard(args: argparse.Namespace) -> int:
    from pgq_tui.diagnosis.command import thresholds_from
    from pgq_tui.tui.launch import run_dashboard

    return run_dashboard(args, thresholds_from(args))


def _cmd_jobs(args: argparse.Namespace) -> int:
    from pgq_tui.commands.jobs import run_jobs

    return run_jobs(args)


def _cmd_completion(args: argparse.Namespace) -> int:
    from pgq_tui.commands.completion import run_completion

    return run_completion(build_parser(), args.shell)


def _cmd_schedules(args: argparse.Namespace) -> int:
    from pgq_tui.commands.schedules import run_schedules

    return run_schedules(args)


def _cmd_pause(args: argparse.Namespace) -> int:
    from pgq_tui.commands.pause import run_pause

    return run_pause(args)


def _cmd_job(args: argparse.Namespace) -> int:
    from pgq_tui.commands.job import run_job

    return run_job(args)


def _cmd_action(args: argparse.Namespace) -> int:
    from pgq_tui.cli_actions import run_action

    return run_action(args)


COMMANDS = {
    "init": _cmd_init,
    "worker": _cmd_worker,
    "snapshot": _cmd_snapshot,
    "check": _cmd_check,
    "why": _cmd_why,
    "advise": _cmd_advise,
    "exporter": _cmd_exporter,
    "record": _cmd_record,
    "replay": _cmd_replay,
    "requeue": _cmd_action,
    "retry": _cmd_action,
    "discard": _cmd_action,
    "cancel": _cmd_action,
    "pause": _cmd_pause,
    "resume": _cmd_pause,
    "jobs": _cmd_jobs,
    "completion": _cmd_completion,
    "schedules": _cmd_schedules,
    "job": _cmd_job,
    None: _cmd_dashboard,
}
MULTI_TARGET = ("snapshot", "check", "why", "record", None)
OFFLINE = ("replay",)  # commands that read a file, never a server


def _resolve_targets(args: argparse.Namespace) -> None:
    """`--dsn` is repeatable (and `--targets FILE` exists) where several databases make sense; there
    `args.target_list` holds them and `args.dsn` the single DSN, else `args.dsn` is one DSN or None.
    Every target is detected (any dialect: pgq_tui.detection); --kind/--schema/--table/--mapping pin
    which of its queues to watch (a targets file's entries may pin their own)."""
    dsns = args.dsn or []
    if args.command in OFFLINE or getattr(args, "recording", None) is not None:
        if dsns:
            raise PgqError("a recording is read without a server: drop --dsn", EXIT_USAGE)
        args.target_list = []
        return
    if args.command not in (*MULTI_TARGET, "exporter"):
        if len(dsns) > 1:
            raise PgqError(f"pgq-top {args.command} takes one --dsn", EXIT_USAGE)
        args.dsn = dsns[0] if dsns else None
        return
    from pgq_tui.targets import Pins, resolve_targets

    pins = Pins.from_flags(args)
    if args.command == "exporter":  # one database per exporter, as Prometheus expects
        if len(dsns) > 1:
            raise PgqError("pgq-top exporter takes one --dsn (run one exporter per database)", EXIT_USAGE)
        args.target_list = resolve_targets(dsns, None, pins)
        return
    args.target_list = resolve_targets(dsns, args.targets, pins)
    args.dsn = args.target_list[0].dsn if len(args.target_list) == 1 else None
    if len(args.target_list) == 1 and args.targets:  # one target from a file: its own pins
        only = args.target_list[0]
        args.kind, args.schema, args.table, args.mapping = only.kind, only.schema, only.table, only.mapping
        args.dead_reads = only.dead_reads
        args.dialect_settings = dict(only.settings)


# The dashboard's own flags: before a subcommand that does not use them they would be dropped silently
# (or overridden by the subcommand's flag of the same name), so they are refused there.
_DASHBOARD_ONLY = (
    "--interval", "--count-cap", "--probe-interval", "--record", "--demo", "--demo-dir", "--crontab"
)  # fmt: skip


def _dropped_flags(parser: argparse.ArgumentParser, argv: Sequence[str], command: str) -> None:
    """Refuse (one line, exit 2) a dashboard flag written before a subcommand that does not read it
    there: `pgq-top --interval 5 record` would otherwise poll every 2 s."""
    from pgq_tui.diagnosis.command import FLAGS

    dashboard_only = {*_DASHBOARD_ONLY, *(flag for flag, _, _ in FLAGS)}
    if command == "snapshot":
        dashboard_only.discard("--count-cap")  # snapshot reads the one before it too
    options = parser._option_string_actions
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    words = iter(argv)
    for word in words:
        if word == command:
            return
        flag = word.split("=", 1)[0]
        if flag in dashboard_only:
            there = flag in sub._option_string_actions
            raise PgqError(
                f"{flag} before {command} is the dashboard's: "
                + (
                    f"write it after, pgq-top {command} {flag} ..."
                    if there
                    else f"pgq-top {command} has none"
                ),
                EXIT_USAGE,
            )
        action = options.get(flag)
        if action is not None and action.nargs != 0 and "=" not in word:
            next(words, None)  # the flag's value


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command is not None:
            _dropped_flags(parser, sys.argv[1:] if argv is None else argv, args.command)
        _resolve_targets(args)
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        return 130
    except (PgqError, psycopg.Error) as exc:
        schema, table = getattr(args, "schema", None) or "public", getattr(args, "table", None) or "jobs"
        err = describe(exc, table=f"{schema}.{table}")
        if args.command == "check":  # a plugin runner reads stdout, and any failure here is UNKNOWN
            from pgq_tui.check.command import unknown

            return unknown(str(err))
        print(f"pgq-top: error: {err}", file=sys.stderr)
        return err.exit_code
    except Exception as exc:  # last resort: still one line, and a hint where to look
        if args.command == "check":
            from pgq_tui.check.command import unknown

            return unknown(f"{type(exc).__name__}: {redact(str(exc))} (this is a bug; please report it)")
        print(
            f"pgq-top: error: {type(exc).__name__}: {redact(str(exc))} (this is a bug; please report it)",
            file=sys.stderr,
        )
        return EXIT_ERROR
