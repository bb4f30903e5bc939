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
    delete = true                       # a TOML boolean (true/false), never a string
    [claim]                             # optional: your claim's ORDER BY (table columns), for the
    order = "priority DESC, id"         # claim-cost probe; absent: no probe
"""

from __future__ import annotations

import re
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pgq_tui.dialects.contract import OLDEST_READY, State
from pgq_tui.dialects.mapping.lines import key_lines, line_of

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROLES = ("id", "queue", "status", "run_at", "lease", "locked_at", "worker", "attempts", "max_attempts",
         "error", "finished_at", "payload")  # fmt: skip
STATE_KEYS = ("ready", "running", "dead", "done")
RULES = ("lease", "lock_age")
_INTERVAL = re.compile(r"^\s*\d+(\.\d+)?\s*(second|minute|hour|day)s?\s*$", re.IGNORECASE)
_KIND = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_LABEL = re.compile(r"^[a-z][a-z0-9_]*$")
# Names an extra state may not take: the counts row's queue column, the canonical states and the
# oldest-ready age (an extra labelled `queue` would replace the queue column).
RESERVED_LABELS = ("queue", *(s.value for s in State), OLDEST_READY)
KEYS = {  # every key the format has, per table
    (): ("kind", "title", "queue_name", "table", "columns", "states", "stuck", "requeue", "retry", "discard",
         "claim"),
    ("table",): ("schema", "name"),
    ("states",): (*STATE_KEYS, "extra"),
    ("stuck",): ("rule", "interval"),
    ("requeue",): ("status", "clear", "reset_attempts"),
    ("retry",): ("status", "clear", "reset_attempts"),
    ("discard",): ("delete",),
    ("claim",): ("order",),
}  # fmt: skip


# One ORDER BY term of the claim: a column name, then optionally ASC/DESC and NULLS FIRST/LAST.
_ORDER_TERM = re.compile(r"^\s*(\S+?)(?:\s+(asc|desc))?(?:\s+nulls\s+(first|last))?\s*$", re.IGNORECASE)


class MappingError(ValueError):
    """A mapping file that cannot be used: one line naming the file, the line and the key."""


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


def load(path: str | Path, reserved: Collection[str] = ()) -> MappingSpec:
    """A user's mapping file; `reserved`: kinds it may not take (the built-in ones)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MappingError(f"mapping {path}: cannot read it ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise MappingError(f"mapping {path}: not UTF-8 text") from None
    return loads(text, str(path), reserved)


_TOML_AT = re.compile(r"^(?P<msg>.*?) \(at line (?P<line>\d+), column \d+\)$")


def loads(text: str, source: str, reserved: Collection[str] = ()) -> MappingSpec:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _TOML_AT.match(str(exc))
        where = f"{source}:{m['line']}" if m else source
        raise MappingError(f"mapping {where}: not valid TOML ({m['msg'] if m else exc})") from None
    return parse(data, source, text, reserved)


class _Doc:
    """The file being checked: its errors name the file and the line of the key at fault."""

    def __init__(self, source: str, text: str | None = None) -> None:
        self.source = source
        self.lines = key_lines(text) if text is not None else None

    def fail(self, msg: str, *path: str) -> MappingError:
        if self.lines is None:
            return MappingError(f"mapping {self.source}: {msg}")
        return MappingError(f"mapping {self.source}:{line_of(self.lines, path)}: {msg}")


def _strings(value: Any, doc: _Doc, *path: str) -> tuple[str, ...]:
    """A non-empty list of status values (or one string)."""
    name = ".".join(path)
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if not value:
            raise doc.fail(f"{name} is empty: list at least one status value", *path)
        return tuple(value)
    raise doc.fail(f"{name}: expected a string or a list of strings", *path)


def _flag(data: Mapping[str, Any], key: str, doc: _Doc, *path: str) -> bool:
    """A TOML boolean; a string such as "no" or "false" is refused, never read as true."""
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise doc.fail(
            f"{'.'.join((*path, key))} must be true or false (a TOML boolean, unquoted), not {value!r}",
            *path,
            key,
        )
    return value


def _text(data: Mapping[str, Any], key: str, doc: _Doc, *path: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise doc.fail(f'{".".join((*path, key))} must be a string: {key} = "..."', *path, key)
    return value


def _known(data: Any, doc: _Doc, *path: str) -> None:
    """Refuse keys the format does not have (a typo would otherwise be silently ignored)."""
    known = KEYS[path]
    for key in data:
        if key not in known:
            where = f"[{'.'.join(path)}]" if path else "the top level"
            raise doc.fail(f"unknown key {key!r} in {where} (known: {', '.join(known)})", *path, key)


def _table(data: Mapping[str, Any], key: str, doc: _Doc, required: bool = False) -> dict[str, Any] | None:
    value = data.get(key)
    if value is None:
        if required:
            raise doc.fail(f"[{key}] is required", key)
        return None
    if not isinstance(value, dict):
        raise doc.fail(f"{key} must be a table ([{key}] with its keys below), not {value!r}", key)
    if (key,) in KEYS:
        _known(value, doc, key)
    return value


def claim_order(data: Any, doc: _Doc | None = None) -> tuple[OrderTerm, ...]:
    """[claim] order = "priority DESC, id" -> its terms.

    >>> [(t.column, t.descending, t.nulls) for t in claim_order({"order": "prio DESC, at nulls first"})]
    [('prio', True, None), ('at', False, 'FIRST')]
    >>> claim_order({"order": "priority DESC id"}, _Doc("m.toml"))
    Traceback (most recent call last):
    pgq_tui.dialects.mapping.spec.MappingError: mapping m.toml: [claim].order: 'priority DESC id' is not \
a column name, then ASC or DESC, then NULLS FIRST or LAST
    """
    doc = doc or _Doc("<mapping>")
    if data is None:
        return ()
    if not isinstance(data, dict) or not isinstance(data.get("order"), str):
        raise doc.fail('[claim]: needs order = "<column> [DESC], ..." (your claim\'s ORDER BY)', "claim")
    terms = []
    for part in data["order"].split(","):
        m = _ORDER_TERM.match(part)
        if m is None:
            raise doc.fail(
                f"[claim].order: {part.strip()!r} is not a column name, then ASC or DESC,"
                " then NULLS FIRST or LAST",
                "claim",
                "order",
            )
        terms.append(OrderTerm(m[1], (m[2] or "").lower() == "desc", m[3].upper() if m[3] else None))
    return tuple(terms)


def _handback(data: Any, key: str, doc: _Doc, columns: Mapping[str, str]) -> Handback | None:
    table = _table(data, key, doc)
    if table is None:
        return None
    if not isinstance(table.get("status"), str):
        raise doc.fail(f'[{key}]: needs status = "<value>"', key, "status")
    clear = tuple(table.get("clear", []))
    if not all(isinstance(c, str) for c in clear) or not isinstance(table.get("clear", []), list):
        raise doc.fail(f"[{key}].clear: expected a list of column names", key, "clear")
    reset = _flag(table, "reset_attempts", doc, key)
    if reset and "attempts" not in columns:
        raise doc.fail(f"[{key}].reset_attempts: the mapping names no attempts column", key, "reset_attempts")
    return Handback(table["status"], clear, reset)


def parse(
    data: Mapping[str, Any],
    source: str = "<mapping>",
    text: str | None = None,
    reserved: Collection[str] = (),
) -> MappingSpec:
    """Check a parsed TOML document (`text`: the file, for line numbers); raises MappingError naming
    the file, the line and the key at fault. `reserved`: kinds a user's mapping may not take."""
    doc = _Doc(source, text)
    fail = doc.fail
    _known(data, doc)
    kind = data.get("kind")
    if not isinstance(kind, str) or not _KIND.match(kind):
        raise fail('kind = "<name>" is required (lowercase letters, digits, - and _)', "kind")
    if kind in reserved:
        raise fail(
            f"kind {kind!r} is a built-in kind; give your mapping a kind of its own "
            f"(built-in: {', '.join(sorted(reserved))})",
            "kind",
        )
    title = _text(data, "title", doc) or kind
    queue_name = _text(data, "queue_name", doc) or "default"
    table = _table(data, "table", doc) or {}
    schema, name = _text(table, "schema", doc, "table"), _text(table, "name", doc, "table")
    columns = _table(data, "columns", doc, required=True) or {}
    for role, column in columns.items():
        if role not in ROLES:
            raise fail(f"[columns] has unknown roles {role} (known: {', '.join(ROLES)})", "columns", role)
        if not isinstance(column, str) or not column:
            raise fail(f'[columns].{role} must be a column name: {role} = "column"', "columns", role)
    for role in ("id", "status"):
        if role not in columns:
            raise fail(f"[columns].{role} is required", "columns")
    states_in = data.get("states")
    if not isinstance(states_in, dict):
        raise fail("[states] is required: ready = [...], running = [...]", "states")
    _known(states_in, doc, "states")
    states = {k: _strings(states_in[k], doc, "states", k) for k in STATE_KEYS if k in states_in}
    for key in ("ready", "running"):
        if key not in states:
            raise fail(f"states.{key} is required", "states")
    extra_in = states_in.get("extra", {})
    if not isinstance(extra_in, dict):
        raise fail("states.extra must be a table: label = [values]", "states", "extra")
    extra = {}
    for label, values in extra_in.items():
        if not _LABEL.match(label):
            raise fail(
                f"states.extra: label {label!r} must be lowercase letters, digits and _",
                "states",
                "extra",
                label,
            )
        if label in RESERVED_LABELS:
            raise fail(
                f"states.extra: label {label!r} is taken (not one of: {', '.join(RESERVED_LABELS)})",
                "states",
                "extra",
                label,
            )
        extra[label] = _strings(values, doc, "states", "extra", label)
    seen: dict[str, str] = {}
    for key, values in (*states.items(), *extra.items()):
        for v in values:
            if v in seen:
                path = ("states", key) if key in states else ("states", "extra", key)
                raise fail(f"status value {v!r} is listed under both {seen[v]} and {key}", *path)
            seen[v] = key
    stuck = _table(data, "stuck", doc) or {}
    rule, interval = _text(stuck, "rule", doc, "stuck"), _text(stuck, "interval", doc, "stuck")
    if rule is not None and rule not in RULES:
        raise fail(f"stuck.rule must be one of {', '.join(RULES)}", "stuck", "rule")
    if rule == "lease" and "lease" not in columns:
        raise fail('stuck.rule = "lease" needs columns.lease', "stuck", "rule")
    if rule == "lock_age":
        if "locked_at" not in columns:
            raise fail('stuck.rule = "lock_age" needs columns.locked_at', "stuck", "rule")
        if not isinstance(interval, str) or not _INTERVAL.match(interval):
            raise fail('stuck.rule = "lock_age" needs interval = "<n> minutes|hours|seconds|days"', "stuck")
    requeue = _handback(data, "requeue", doc, columns)
    if requeue is not None and rule is None:
        raise fail("[requeue] needs a [stuck] rule: only stuck jobs are handed back", "requeue")
    retry = _handback(data, "retry", doc, columns)
    if retry is not None and "dead" not in states:
        raise fail("[retry] needs states.dead", "retry")
    discard = _flag(_table(data, "discard", doc) or {}, "delete", doc, "discard")
    if discard and "dead" not in states:
        raise fail("[discard] needs states.dead", "discard", "delete")
    for key, hb in (("requeue", requeue), ("retry", retry)):
        if hb is not None:
            bad = sorted(set(hb.clear) - set(columns.values()))
            if bad:
                raise fail(f"clear names columns not mapped in [columns]: {', '.join(bad)}", key, "clear")
            if hb.status not in seen or seen[hb.status] != "ready":
                raise fail(
                    f"a handback status must be one of states.ready (got {hb.status!r})", key, "status"
                )
    order = claim_order(data.get("claim"), doc)
    if data.get("claim") is not None:
        _known(data["claim"], doc, "claim")
    return MappingSpec(
        kind=kind,
        title=title,
        columns=dict(columns),
        states=states,
        extra=extra,
        schema=schema,
        table=name,
        queue_name=queue_name,
        rule=rule,
        interval=interval,
        requeue=requeue,
        retry=retry,
        discard=discard,
        claim_order=order,
        source=source,
    )
