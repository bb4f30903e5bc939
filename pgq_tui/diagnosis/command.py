"""`pgq-top why`: poll every queue of the targets for a short window, then print each chain from the
symptom to its root cause and the fix (a dashboard key and the SQL or command), for a runbook or a
chat message. Exit 0 nothing wrong, 20 the worst chain warns, 21 it is critical; a target that could
not be read (and nothing found elsewhere): its failure's code (3 cannot connect, 4 no queue, ...:
pgq_tui/exitcodes.py). `--json` prints the same as JSON.

Thresholds come from the flags, else a targets file's `[diagnosis]` table, else the defaults
(docs/diagnosis.md); `check` and the dashboard read the same.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from typing import Any, TextIO

from pgq_tui.diagnosis.chains import diagnose, exit_code, worst_level
from pgq_tui.diagnosis.findings import DEFAULTS, Chain, Thresholds, one_line
from pgq_tui.diagnosis.watch import Watched, watch_targets
from pgq_tui.errors import EXIT_USAGE, PgqError
from pgq_tui.fleet.poll import outcome_name
from pgq_tui.jsonout import emit
from pgq_tui.targets import Target
from pgq_tui.untrusted import visible

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

# flag, Thresholds field, what it sets (for --help)
FLAGS = (
    ("--min-duration", "min_duration_s", "seconds undated evidence must hold before a chain shows"),
    ("--xmin-hold", "xmin_hold_s", "seconds an xmin horizon is held before it is a cause"),
    (
        "--stalled-after",
        "stalled_after_s",
        "seconds the oldest ready job waits, nothing claimed, before stalled",
    ),
    ("--lock-wait", "lock_wait_s", "seconds a session waits on a lock before its holder is a cause"),
    ("--backlog-growth", "backlog_growth_per_s", "jobs/s the ready backlog must grow by to be a finding"),
    ("--backlog-window", "backlog_window_s", "seconds of history the backlog growth and rates average"),
    ("--schedule-late", "schedule_late_s", "seconds past its due run before a schedule is late"),
)
assert {f for _, f, _ in FLAGS} == {f.name for f in fields(Thresholds)}
LEVEL_WORD = {"ok": "OK", "warn": "WARNING", "crit": "CRITICAL"}
MARK = {"warn": "!", "crit": "!!"}


def seconds(text: str, expected: str = "a number") -> float:
    """A flag's non-negative number of seconds (`expected`: what the error says it wants)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {expected}: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text!r}")
    return value


def add_threshold_arguments(p: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    g = p.add_argument_group("diagnosis thresholds (also a targets file's [diagnosis] table)")
    for flag, name, what in FLAGS:
        g.add_argument(
            flag,
            dest=f"why_{name}",
            type=seconds,
            default=argparse.SUPPRESS if suppress else None,
            metavar="N",
            help=f"{what} (default: {getattr(DEFAULTS, name):g})",
        )


def thresholds_from(args: argparse.Namespace) -> Thresholds:
    """Flags over the targets file's [diagnosis] table over the defaults."""
    values: dict[str, float] = {}
    path = getattr(args, "targets", None)
    if path:
        try:
            with open(path, "rb") as fh:
                table = tomllib.load(fh).get("diagnosis", {})
            values.update(Thresholds.from_mapping(table, f"{path}: [diagnosis]: ").__dict__)
        except (OSError, tomllib.TOMLDecodeError):
            pass  # the targets loader has already said what is wrong with the file
        except (ValueError, AttributeError) as exc:
            raise PgqError(str(exc), EXIT_USAGE) from None
    for _, name, _ in FLAGS:
        flag = getattr(args, f"why_{name}", None)
        if flag is not None:
            values[name] = flag
    return Thresholds(**values)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--window",
        type=seconds,
        default=10.0,
        metavar="SECONDS",
        help="poll this long before answering: undated evidence must hold --min-duration (default: 10)",
    )
    p.add_argument("--interval", type=seconds, default=2.0, help="seconds between polls (default: 2)")
    p.add_argument("--json", action="store_true", help="print the chains as JSON")
    p.add_argument(
        "--timeout", type=seconds, default=15.0, help="give up on a target this long after the window (15)"
    )
    p.add_argument(
        "--from", dest="recording", metavar="FILE", default=None, help="diagnose a recording, not a server"
    )
    p.add_argument("--at", metavar="TIME", default=None, help="with --from: the moment to explain (ISO 8601)")
    p.add_argument("--queue", default=None, help="with --from: which recorded queue (when several)")
    add_threshold_arguments(p)


def recorded(args: argparse.Namespace, t: Thresholds) -> list[list[Watched]]:
    """`why --from FILE --at TIME`: the recorded polls before TIME (the diagnosis window, or the
    backlog window when longer: the rules see what they would have seen live), as one watched queue."""
    from pgq_tui.fleet.poll import QueueOutcome
    from pgq_tui.history.replay import ReplaySource, choose_queue
    from pgq_tui.history.store import Recording, RecordingError

    if args.at is None:
        raise RecordingError("why from a recording takes both --from FILE and --at TIME")
    with Recording(args.recording) as recording:
        queue = choose_queue(recording, args.queue)
        history = ReplaySource(recording, queue, args.at).window_before(max(args.window, t.backlog_window_s))
    last = history[-1]
    target = Target(name=queue, dsn="", kind=last.kind)
    return [[Watched(QueueOutcome(target, None, last), tuple(history))]]


def chain_text(chain: Chain, width: int | None = None) -> list[str]:
    """One chain in full: the line, then each link with its evidence, then the fix (SQL or command).
    Untrusted text (application names, queries) has its control characters written out."""
    out = [f"{MARK.get(chain.level, '')} {visible(one_line(chain, width))}".strip()]
    for i, f in enumerate(chain.links):
        role = "symptom" if i == 0 and len(chain.links) > 1 else "because" if f is not chain.root else "root"
        out.append(f"   {role:<8} {visible(f.text)}")
        out += [f"            - {visible(e)}" for e in f.evidence]
    fix = chain.fix
    if fix is not None:
        key = f" (dashboard key {fix.key})" if fix.key else ""
        out.append(f"   fix      {visible(fix.what)}{key}")
        out += [f"            {visible(x)}" for x in (fix.sql, fix.command) if x]
    return out


def report(watched: list[list[Watched]], t: Thresholds, window_s: float) -> tuple[int, str, dict[str, Any]]:
    """The exit code, the text and the JSON of every queue's diagnosis."""
    several = len(watched) > 1
    lines: list[str] = []
    queues: list[dict[str, Any]] = []
    worst, unknown = 0, 0
    for group in watched:
        outcomes = [w.last for w in group]
        for w in group:
            name = outcome_name(w.last, outcomes, several)
            where = " ".join(p for p in (w.last.kind, w.last.table) if p)
            label = f"{name} ({where})" if where else name
            if isinstance(w.last.outcome, PgqError):
                unknown = unknown or w.last.outcome.exit_code
                lines.append(f"{label}: cannot diagnose: {w.last.outcome}")
                queues.append(
                    {
                        "name": name,
                        "kind": w.last.kind,
                        "table": w.last.table,
                        "error": str(w.last.outcome),
                        "status": "UNKNOWN",
                        "chains": [],
                    }
                )
                continue
            chains = diagnose(w.history, t)
            code = exit_code(chains)
            worst = max(worst, code)  # WHY_OK < WHY_WARNING < WHY_CRITICAL
            polls = f"{len(w.history)} polls over {window_s:g} s"
            if not chains:
                lines.append(f"{label}: nothing wrong ({polls})")
            else:
                word = LEVEL_WORD[chains[0].level]
                lines.append(f"{label}: {word}, {len(chains)} chain{'s' * (len(chains) > 1)} ({polls})")
                for chain in chains:
                    lines += chain_text(chain)
            queues.append(
                {
                    "name": name,
                    "kind": w.last.kind,
                    "table": w.last.table,
                    "error": None,
                    "status": LEVEL_WORD[worst_level(chains)],
                    "polls": len(w.history),
                    "chains": [c.to_dict() for c in chains],
                }
            )
    code = worst if worst else unknown
    doc = {"exit_code": code, "window_s": window_s, "thresholds": t.__dict__, "queues": queues}
    return code, "\n".join(lines), doc


def run_why(args: argparse.Namespace, targets: list[Target], out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    t = thresholds_from(args)
    if getattr(args, "recording", None) is not None:
        watched = recorded(args, t)
    else:
        watched = watch_targets(targets, args.window, max(args.interval, 0.1), args.timeout)
    code, text, doc = report(watched, t, args.window)
    if args.json:
        emit(doc, stream)
    else:
        stream.write(text + "\n")
    return code
