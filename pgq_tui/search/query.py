"""The search language, parsed: pure, no database, no dialect (docs/search.md).

Terms are separated by spaces and all must hold (AND):

    id:123                      the job with this id
    queue:emails                jobs of this queue
    state:dead                  a canonical state (ready, scheduled, running, stuck, dead, done) or
                                a kind's own extra (cancelled, pending)
    error:~"connection refused" the last error contains this text, ignoring case (`~` may be left out)
    tags:billing                the job carries this tag (kinds with tags: River, Oban)
    args.customer.id:42         a JSON path of the job's arguments equals a value (also meta., output.
                                where the kind has them); a bare number, true, false or null is JSON,
                                anything else (or anything quoted) a string
    since:2h  before:02:30      the job's time (the kind's, see docs/search.md) is at or after / before:
                                an age (30s, 15m, 2h, 1d), a time of day (the latest one not in the
                                future) or an ISO timestamp

A bad term raises QueryError naming it, on one line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from pgq_tui.errors import EXIT_USAGE, PgqError

KEYS = ("id", "queue", "state", "error", "since", "before", "tags")
STATES = ("ready", "scheduled", "running", "stuck", "dead", "done")
# the JSON documents a term may name (`args.x`); each kind maps the ones it has onto its columns
DOCUMENTS = ("args", "meta", "output")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_AGE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")
_TOKEN = re.compile(r'(?:[^\s"]+|"(?:[^"\\]|\\.)*")+')
_PATH_PART = re.compile(r"^[A-Za-z0-9_-]+$")


class QueryError(PgqError):
    """A search that cannot be parsed or served: one line naming the term."""

    def __init__(self, message: str) -> None:
        super().__init__(message, EXIT_USAGE)


@dataclass(frozen=True)
class Term:
    """One condition. `key` is one of KEYS or "json" (then `path` is (document, key, ...)); `text` is
    the term as written, for errors."""

    key: str
    value: object
    text: str
    path: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """What the term is about, in the language's words: "args.customer.id", "error"."""
        return ".".join(self.path) if self.key == "json" else self.key


@dataclass(frozen=True)
class Query:
    terms: tuple[Term, ...]
    text: str

    def of(self, key: str) -> tuple[Term, ...]:
        return tuple(t for t in self.terms if t.key == key)


def _unquote(raw: str) -> tuple[str, bool]:
    """The value without its quotes, and whether it was quoted ("a b" -> a b).

    >>> _unquote('"a \\\\"b\\\\""'), _unquote("x")
    (('a "b"', True), ('x', False))
    """
    if len(raw) >= 2 and raw.startswith('"') and raw.endswith('"'):
        return re.sub(r"\\(.)", r"\1", raw[1:-1]), True
    if '"' in raw:
        raise ValueError("a quote must wrap the whole value")
    return raw, False


def _json_value(raw: str, quoted: bool) -> object:
    """A bare number, true, false or null as JSON; anything else a string.

    >>> _json_value("42", False), _json_value("42", True), _json_value("true", False), _json_value("x", False)
    (42, '42', True, 'x')
    """
    if quoted:
        return raw
    if raw in ("true", "false", "null") or re.fullmatch(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", raw):
        return json.loads(raw)
    return raw


def moment(raw: str, now: datetime) -> datetime:
    """An age, a time of day or an ISO timestamp, as an aware datetime (in `now`'s zone).

    >>> from datetime import timezone
    >>> now = datetime(2026, 12, 2, 5, 0, tzinfo=timezone.utc)
    >>> moment("2h", now).isoformat(), moment("02:30", now).isoformat(), moment("06:00", now).isoformat()
    ('2026-12-02T03:00:00+00:00', '2026-12-02T02:30:00+00:00', '2026-12-01T06:00:00+00:00')
    >>> moment("2026-12-01T23:00", now).isoformat()
    '2026-12-01T23:00:00+00:00'
    """
    if m := _AGE.match(raw):
        return now - timedelta(seconds=float(m[1]) * _UNITS[m[2]])
    if m := _CLOCK.match(raw):
        hour, minute, second = int(m[1]), int(m[2]), int(m[3] or 0)
        if hour > 23 or minute > 59 or second > 59:
            raise ValueError("not a time of day")
        at = now.replace(hour=hour, minute=minute, second=second, microsecond=0)
        return at - timedelta(days=1) if at > now else at  # the latest one not in the future
    try:
        at = datetime.fromisoformat(raw)
    except ValueError:
        raise ValueError("want an age (2h), a time of day (02:30) or an ISO timestamp") from None
    return at if at.tzinfo is not None else at.replace(tzinfo=now.tzinfo)


def _term(token: str, now: datetime) -> Term:
    key, sep, rest = token.partition(":")
    if not sep or not key:
        raise ValueError("want key:value, e.g. state:dead")
    contains = rest.startswith("~")
    raw, quoted = _unquote(rest[1:] if contains else rest)
    if raw == "":
        raise ValueError("no value")
    if "." in key:
        path = tuple(key.split("."))
        if path[0] not in DOCUMENTS:
            raise ValueError(f"unknown document {path[0]!r} (known: {', '.join(DOCUMENTS)})")
        if not all(_PATH_PART.match(p) for p in path[1:]):
            raise ValueError("a path is names joined by dots, e.g. args.customer.id")
        if contains:
            raise ValueError("a JSON path compares for equality (no ~)")
        return Term("json", _json_value(raw, quoted), token, path)
    if key in DOCUMENTS:
        raise ValueError(f"name a key in it, e.g. {key}.customer.id:42")
    if key not in KEYS:
        known = ", ".join((*KEYS, *(f"{d}.PATH" for d in DOCUMENTS)))
        raise ValueError(f"unknown key {key!r} (known: {known})")
    if contains and key != "error":
        raise ValueError("only error: takes ~ (a substring)")
    if key == "id":
        return Term("id", int(raw) if re.fullmatch(r"-?\d+", raw) else raw, token)
    if key == "state":  # a canonical word, or a kind's labelled extra (cancelled): the kind decides
        if not re.fullmatch(r"[a-z_]+", raw):
            raise ValueError(f"a state is a word, e.g. {', '.join(STATES)}")
        return Term("state", raw, token)
    if key in ("since", "before"):
        return Term(key, moment(raw, now), token)
    return Term(key, raw, token)


def parse(text: str, now: datetime) -> Query:
    """The query `text` as terms (`now`: an aware datetime, for ages and times of day).

    >>> from datetime import timezone
    >>> q = parse('state:dead error:~"connection refused" args.customer.id:42',
    ...           datetime(2026, 12, 2, tzinfo=timezone.utc))
    >>> [(t.name, t.value) for t in q.terms]
    [('state', 'dead'), ('error', 'connection refused'), ('args.customer.id', 42)]
    >>> parse("state:dead!", datetime(2026, 12, 2, tzinfo=timezone.utc))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pgq_tui.search.query.QueryError: bad search term 'state:dead!': a state is a word, e.g. ready, ...
    """
    stripped = text.strip()
    if not stripped:
        raise QueryError("empty search: give at least one term, e.g. state:dead")
    tokens, pos = [], 0
    for m in _TOKEN.finditer(stripped):
        rest = stripped[pos : m.start()].strip()
        if rest:
            raise QueryError(f"bad search term {rest!r}: unbalanced quote")
        tokens.append(m.group(0))
        pos = m.end()
    if stripped[pos:].strip():
        raise QueryError(f"bad search term {stripped[pos:].strip()!r}: unbalanced quote")
    terms = []
    for token in tokens:
        try:
            terms.append(_term(token, now))
        except ValueError as exc:
            raise QueryError(f"bad search term {token!r}: {exc}") from None
    return Query(tuple(terms), stripped)


def is_search(text: str) -> bool:
    """Whether the dashboard's `/` text is a search (runs on enter) rather than its live text filter:
    some word is `key:value` with a key of this language. A lone `queue:NAME` stays the dashboard's
    exact queue filter (the same meaning, without a database read).

    >>> is_search("state:dead"), is_search("mail"), is_search("queue:mail"), is_search("queue:a id:3")
    (True, False, False, True)
    >>> is_search("http://x"), is_search("args.customer.id:42"), is_search('error:~"refused"')
    (False, True, True)
    """
    words = [m.group(0) for m in _TOKEN.finditer(text.strip())]
    keyed = [w.partition(":")[0] for w in words if ":" in w]
    known = [k for k in keyed if k in KEYS or k.split(".")[0] in DOCUMENTS]
    return bool(known) and not (len(words) == 1 and known == ["queue"])
