"""Does a partial index serve a query? A strict reading of its predicate as PostgreSQL prints it. Pure.

`pg_get_expr(indpred, indrelid)` prints a predicate fully parenthesized: `(status = 'pending'::text)`,
`(status = ANY (ARRAY['a'::text, 'b'::text]))`, `((status = 'doing'::text) AND (worker_id IS NULL))`.
The predicate is split into its top-level AND terms; the planner can use the index for a query only
when the query's WHERE implies every term. `implied_by` decides that for a query made of
`column IN (values)` equalities and a few other conditions, by structure: a term `col = 'x'` or
`col = ANY (...)` is implied when the query's values for that column are all among the term's; any
other term (`status <> 'done'`, an OR, a function call) only when the query has that same condition.
A predicate outside this grammar never serves: the caller then advises an index instead of trusting
one it cannot read.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass

_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
_TYPE = r"""(?:[A-Za-z_"][A-Za-z0-9_$". ]*?(?:\[\])?)"""
_COLUMN = rf"(?:\((?P<cc>{_IDENT})\)::{_TYPE}|(?P<c>{_IDENT}))"
_LIT = rf"'(?:[^']|'')*'(?:::{_TYPE})?"
_EQ = re.compile(rf"^{_COLUMN} = (?P<lit>{_LIT})$")
_LITS = rf"{_LIT}(?:, {_LIT})*"
# `ANY (ARRAY[...])`, or `ANY ((ARRAY[...])::text[])` when the elements are cast (varchar columns)
_ANY_ARRAY = re.compile(
    rf"^{_COLUMN} = ANY \((?:ARRAY\[(?P<lits>{_LITS})\]|\(ARRAY\[(?P<cast_lits>{_LITS})\]\)::{_TYPE})\)$"
)
_ANY_TEXT = re.compile(rf"^{_COLUMN} = ANY \('\{{(?P<elems>[^']*)\}}'::{_TYPE}\)$")
_NOT_NULL = re.compile(rf"^{_COLUMN} IS NOT NULL$")
_ONE_LIT = re.compile(r"'((?:[^']|'')*)'")
_ELEM = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([^,"]*))\s*(?:,|$)')


@dataclass(frozen=True)
class Term:
    """One AND term: `column IN values` ("in"), `column IS NOT NULL` ("not_null"), or any other
    condition kept as its normalized text ("other")."""

    op: str
    column: str = ""
    values: frozenset[str] = frozenset()
    text: str = ""


def _unparen(text: str) -> str:
    """Drop parentheses that wrap the whole text, as often as they do."""
    text = text.strip()
    while text.startswith("(") and _closing(text, 0) == len(text) - 1:
        text = text[1:-1].strip()
    return text


def _outside_quotes(text: str, start: int = 0) -> Iterator[tuple[int, int]]:
    """(index, parenthesis depth once that character is read) of each character from `start` that
    is outside quotes (the quotes themselves are skipped)."""
    depth, quote = 0, ""
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        else:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            yield i, depth


def _closing(text: str, start: int) -> int:
    """Index of the parenthesis closing the one at `start` (quotes respected); -1 if none."""
    return next((i for i, depth in _outside_quotes(text, start) if text[i] == ")" and depth == 0), -1)


def _split_and(text: str) -> list[str]:
    """Top-level ` AND ` terms (not inside parentheses or quotes)."""
    parts, last = [], 0
    for i, depth in _outside_quotes(text):
        if i >= last and depth == 0 and text.startswith(" AND ", i):
            parts.append(text[last:i])
            last = i + 5
    parts.append(text[last:])
    return parts


def _name(m: re.Match[str]) -> str:
    name = m["cc"] or m["c"]
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


def _normal(text: str) -> str:
    return " ".join(_unparen(text).split())


def term(text: str) -> Term:
    """One AND term, read.

    >>> term("(status = 'pending'::text)")
    Term(op='in', column='status', values=frozenset({'pending'}), text="status = 'pending'::text")
    >>> sorted(term("(state = ANY (ARRAY['a'::pgboss.job_state, 'b''c'::pgboss.job_state]))").values)
    ['a', "b'c"]
    >>> sorted(term("((status)::text = ANY ('{new,\\"x y\\"}'::text[]))").values)
    ['new', 'x y']
    >>> term("(locked_at IS NOT NULL)").op, term("(status <> 'done'::text)").op
    ('not_null', 'other')
    """
    text = _normal(text)
    if m := _EQ.match(text):
        return Term("in", _name(m), frozenset(_literals(m["lit"])), text)
    if m := _ANY_ARRAY.match(text):
        return Term("in", _name(m), frozenset(_literals(m["lits"] or m["cast_lits"])), text)
    if (m := _ANY_TEXT.match(text)) and (elems := _elements(m["elems"])) is not None:
        return Term("in", _name(m), frozenset(elems), text)
    if m := _NOT_NULL.match(text):
        return Term("not_null", _name(m), text=text)
    return Term("other", text=text)


def _literals(text: str) -> list[str]:
    return [v.replace("''", "'") for v in _ONE_LIT.findall(text)]


def _elements(body: str) -> list[str] | None:
    """The elements of an array literal's `{...}` body; None when it is not a plain list."""
    out, pos = [], 0
    while pos < len(body):
        m = _ELEM.match(body, pos)
        if m is None or m.end() == pos:
            return None
        out.append(re.sub(r"\\(.)", r"\1", m[1]) if m[1] is not None else m[2].strip())
        pos = m.end()
    return out


def terms(predicate: str) -> tuple[Term, ...]:
    return tuple(term(t) for t in _split_and(_unparen(predicate)))


def restricts_to(predicate: str | None, conditions: Collection[str]) -> bool:
    """Whether this partial index holds only rows meeting every one of `conditions` (each written as
    PostgreSQL prints it, parentheses optional): each is one of the predicate's AND terms. Where
    implied_by asks "can a query with these conditions use it", this asks "is it that narrow".

    >>> restricts_to("((finished_at IS NULL) AND (performed_at IS NULL))", ["performed_at IS NULL"])
    True
    >>> restricts_to("(finished_at IS NULL)", ["finished_at IS NULL", "performed_at IS NULL"])
    False
    >>> restricts_to(None, ["performed_at IS NULL"])
    False
    """
    if not predicate:
        return False
    have = {t.text for t in terms(predicate)}
    return all(_normal(c) in have for c in conditions)


def implied_by(
    predicate: str | None,
    equal: Mapping[str, Collection[str]] | None = None,
    also: Collection[str] = (),
) -> bool:
    """Whether a query whose WHERE has `column IN (values)` for each entry of `equal`, and each
    condition of `also` (written as PostgreSQL prints it, parentheses optional), implies this
    partial index's predicate. No predicate: False (the caller asked for a partial index).

    >>> implied_by("(status = 'done'::text)", {"status": ["done"]})
    True
    >>> implied_by("(status <> 'done'::text)", {"status": ["done"]})
    False
    >>> implied_by("(status = ANY (ARRAY['a'::text, 'b'::text]))", {"status": ["a"]})
    True
    >>> implied_by("(status = 'a'::text)", {"status": ["a", "b"]})
    False
    >>> implied_by("((status = 'doing'::text) AND (worker_id IS NULL))", {"status": ["doing"]})
    False
    >>> implied_by("((status = 'doing'::text) AND (worker_id IS NULL))", {"status": ["doing"]},
    ...            ["worker_id IS NULL"])
    True
    >>> implied_by("((status = 'x'::text) OR (status = 'y'::text))", {"status": ["x"]})
    False
    """
    if not predicate:
        return False
    sets = {k: frozenset(v) for k, v in (equal or {}).items()}
    known = {_normal(a) for a in also}
    for t in terms(predicate):
        if t.op == "in":
            ok = t.column in sets and bool(sets[t.column]) and sets[t.column] <= t.values
        elif t.op == "not_null":
            ok = t.column in sets or t.text in known
        else:
            ok = t.text in known
        if not ok:
            return False
    return True
