"""A home-grown table described by a TOML mapping file, parsed and checked (pure).

The format (README "Mapping file"), every key but `kind`, `columns.id`, `columns.status` and
`states.ready`/`states.running` optional:

    kind = "seed-jobs"                  # name for --kind, the header and JSON
    title = "Seed article jobs table"
    [table]                             # without it: any table that has every mapped column
    schema = "public"
    name = "jobs"
    [columns]                           # role = column name in your table
    id = "id"
    queue = "queue"                     # absent: one queue, named by `queue_name` (default "default")
    status = "status"
    run_at = "run_at"                   # ready = run_at <= now(), scheduled = run_at > now()
    lease = "locked_until"              # lease end (stuck rule "lease"), or
    locked_at = "locked_at"             # lock time (stuck rule "lock_age")
    worker = "locked_by"
    attempts = "attempts"
    max_attempts = "max_attempts"
    error = "last_error"
    finished_at = "finished_at"
    payload = "payload"
    [states]                            # status values of each state
    ready = ["pending"]                 # waiting: ready or scheduled by run_at
    running = ["running"]               # claimed: running or stuck by the stuck rule
    dead = ["failed"]
    done = ["done"]
    extra = { cancelled = ["cancelled"] }
    [stuck]
    rule = "lease"                      # running and <lease> < now(); or
    # rule = "lock_age"; interval = "15 minutes"   running and <locked_at> < now() - interval
    [requeue]                           # how a stuck job is handed back; absent: no write actions
    status = "pending"
    clear = ["locked_until"]            # columns set to NULL
    [retry]                             # optional: a dead job back to work
    status = "pending"
    clear = []
    reset_attempts = true
    [discard]                           # optional: dead jobs may be deleted
    delete = true
    [claim]                             # optional: your claim's ORDER BY (table columns), for the
    order = "priority DESC, id"         # claim-cost probe; absent: no probe
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROLES = (
    "id",
    "queue",
    "status",
    "run_at",
    "lease",
    "locked_at",
    "worker",
    "attempts",
    "max_attempts",
    "error",
    "finished_at",
    "payload",
)
STATE_KEYS = ("ready", "running", "dead", "done")
RULES = ("lease", "lock_age")
_INTERVAL = re.compile(r"^\s*\d+(\.\d+)?\s*(second|minute|hour|day)s?\s*$", re.IGNORECASE)
_KIND = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


# One ORDER BY term of the claim: a column name, then optionally ASC/DESC and NULLS FIRST/LAST.
_ORDER_TERM = re.compile(r"^\s*(\S+?)(?:\s+(asc|desc))?(?:\s+nulls\s+(first|last))?\s*$", re.IGNORECASE)


class MappingError(ValueError):
    """A mapping file that cannot be used: one line naming the file and the key."""


@dataclass(frozen=True)
class Handback:
    """A transition a write action makes: the new status and the columns cleared."""

    status: str
    clear: tuple[str, ...] = ()
    reset_attempts: bool = False


@dataclass(frozen=True)
class OrderTerm:
    """One key of the claim's ORDER BY."""

    column: str  # a column of the table (not a role: e.g. priority, which has no role)
    descending: bool = False
    nulls: str | None = None  # "FIRST" | "LAST"; None: PostgreSQL's default for the direction


@dataclass(frozen=True)
class MappingSpec:
    kind: str
    title: str
    columns: Mapping[str, str]  # role -> column name
    states: Mapping[str, tuple[str, ...]]  # ready/running/dead/done -> status values
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # label -> status values
    schema: str | None = None
    table: str | None = None
    queue_name: str = "default"
    rule: str | None = None  # "lease" | "lock_age" | None (no stuck rule: stuck not knowable)
    interval: str | None = None
    requeue: Handback | None = None
    retry: Handback | None = None
    discard: bool = False
    claim_order: tuple[OrderTerm, ...] = ()  # the claim's ORDER BY ([claim] order); () = not given
    source: str = ""  # the file it came from

    def col(self, role: str) -> str | None:
        return self.columns.get(role)

    @property
    def shape(self) -> tuple[str, ...]:
        """Every column the table must have: the mapped ones and the claim order's."""
        return tuple(dict.fromkeys((*self.columns.values(), *(t.column for t in self.claim_order))))

    @property
    def stuck_rule(self) -> str:
        status = self.columns["status"]
        running = ", ".join(repr(v) for v in self.states.get("running", ()))
        if self.rule == "lease":
            return f"{status} in ({running}) and {self.columns['lease']} < now() (the lease has expired)"
        if self.rule == "lock_age":
            return (
                f"{status} in ({running}) and {self.columns['locked_at']} < now() - interval "
                f"'{self.interval}' (locked longer than the mapping allows)"
            )
        return "not knowable: the mapping names no lease or lock column"


def load(path: str | Path) -> MappingSpec:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MappingError(f"mapping {path}: cannot read it ({exc.strerror})") from None
    return loads(text, str(path))


def loads(text: str, source: str) -> MappingSpec:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MappingError(f"mapping {source}: not valid TOML ({exc})") from None
    return parse(data, source)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise MappingError(f"{where}: expected a string or a list of strings")


def claim_order(data: Any, where: str) -> tuple[OrderTerm, ...]:
    """[claim] order = "priority DESC, id" -> its terms.

    >>> [(t.column, t.descending, t.nulls) for t in claim_order({"order": "prio DESC, at nulls first"}, "")]
    [('prio', True, None), ('at', False, 'FIRST')]
    >>> claim_order({"order": "priority DESC id"}, "[claim]")
    Traceback (most recent call last):
    pgq_tui.dialects.mapping.spec.MappingError: [claim].order: 'priority DESC id' is not a column name, \
then ASC or DESC, then NULLS FIRST or LAST
    """
    if data is None:
        return ()
    if not isinstance(data, dict) or not isinstance(data.get("order"), str):
        raise MappingError(f'{where}: needs order = "<column> [DESC], ..." (your claim\'s ORDER BY)')
    terms = []
    for part in data["order"].split(","):
        m = _ORDER_TERM.match(part)
        if m is None:
            raise MappingError(
                f"{where}.order: {part.strip()!r} is not a column name, then ASC or DESC,"
                " then NULLS FIRST or LAST"
            )
        terms.append(OrderTerm(m[1], (m[2] or "").lower() == "desc", m[3].upper() if m[3] else None))
    return tuple(terms)


def _handback(data: Any, where: str, columns: Mapping[str, str]) -> Handback | None:
    if data is None:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("status"), str):
        raise MappingError(f'{where}: needs status = "<value>"')
    clear = _strings(data.get("clear", []), f"{where}.clear")
    reset = bool(data.get("reset_attempts", False))
    if reset and "attempts" not in columns:
        raise MappingError(f"{where}.reset_attempts: the mapping names no attempts column")
    return Handback(data["status"], clear, reset)


def parse(data: Mapping[str, Any], source: str = "<mapping>") -> MappingSpec:
    """Check a parsed TOML document; raises MappingError with the file and the key at fault."""

    def fail(msg: str) -> MappingError:
        return MappingError(f"mapping {source}: {msg}")

    kind = data.get("kind")
    if not isinstance(kind, str) or not _KIND.match(kind):
        raise fail('kind = "<name>" is required (lowercase letters, digits, - and _)')
    columns = data.get("columns")
    if not isinstance(columns, dict) or not all(isinstance(v, str) for v in columns.values()):
        raise fail('[columns] is required: role = "column name"')
    unknown = sorted(set(columns) - set(ROLES))
    if unknown:
        raise fail(f"[columns] has unknown roles {', '.join(unknown)} (known: {', '.join(ROLES)})")
    for role in ("id", "status"):
        if role not in columns:
            raise fail(f"[columns].{role} is required")
    states_in = data.get("states")
    if not isinstance(states_in, dict):
        raise fail("[states] is required: ready = [...], running = [...]")
    states = {
        k: _strings(states_in[k], f"mapping {source}: states.{k}") for k in STATE_KEYS if k in states_in
    }
    for key in ("ready", "running"):
        if key not in states:
            raise fail(f"states.{key} is required")
    extra_in = states_in.get("extra", {})
    if not isinstance(extra_in, dict):
        raise fail("states.extra must be a table: label = [values]")
    extra = {k: _strings(v, f"mapping {source}: states.extra.{k}") for k, v in extra_in.items()}
    seen: dict[str, str] = {}
    for key, values in (*states.items(), *extra.items()):
        for v in values:
            if v in seen:
                raise fail(f"status value {v!r} is listed under both {seen[v]} and {key}")
            seen[v] = key
    stuck = data.get("stuck", {})
    rule = stuck.get("rule") if isinstance(stuck, dict) else None
    interval = stuck.get("interval") if isinstance(stuck, dict) else None
    if rule is not None and rule not in RULES:
        raise fail(f"stuck.rule must be one of {', '.join(RULES)}")
    if rule == "lease" and "lease" not in columns:
        raise fail('stuck.rule = "lease" needs columns.lease')
    if rule == "lock_age":
        if "locked_at" not in columns:
            raise fail('stuck.rule = "lock_age" needs columns.locked_at')
        if not isinstance(interval, str) or not _INTERVAL.match(interval):
            raise fail('stuck.rule = "lock_age" needs interval = "<n> minutes|hours|seconds|days"')
    requeue = _handback(data.get("requeue"), f"mapping {source}: [requeue]", columns)
    if requeue is not None and rule is None:
        raise fail("[requeue] needs a [stuck] rule: only stuck jobs are handed back")
    retry = _handback(data.get("retry"), f"mapping {source}: [retry]", columns)
    if retry is not None and "dead" not in states:
        raise fail("[retry] needs states.dead")
    discard_in = data.get("discard", {})
    discard = bool(discard_in.get("delete", False)) if isinstance(discard_in, dict) else False
    if discard and "dead" not in states:
        raise fail("[discard] needs states.dead")
    for hb in (requeue, retry):
        if hb is not None:
            bad = sorted(set(hb.clear) - set(columns.values()))
            if bad:
                raise fail(f"clear names columns not mapped in [columns]: {', '.join(bad)}")
            if hb.status not in seen or seen[hb.status] != "ready":
                raise fail(f"a handback status must be one of states.ready (got {hb.status!r})")
    order = claim_order(data.get("claim"), f"mapping {source}: [claim]")
    table = data.get("table", {})
    return MappingSpec(
        kind=kind,
        title=str(data.get("title", kind)),
        columns=dict(columns),
        states=states,
        extra=extra,
        schema=table.get("schema") if isinstance(table, dict) else None,
        table=table.get("name") if isinstance(table, dict) else None,
        queue_name=str(data.get("queue_name", "default")),
        rule=rule,
        interval=interval,
        requeue=requeue,
        retry=retry,
        discard=discard,
        claim_order=order,
        source=source,
    )
