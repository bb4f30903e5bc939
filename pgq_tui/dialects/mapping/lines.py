"""Where a key sits in a TOML file, for error messages (tomllib gives values, not positions). Pure.

A line scan, enough for the files a person writes: `[table]` headers (dotted, quoted), `key = value`
lines (dotted keys too) and one level of inline table (`extra = { cancelled = [...] }`). A key that
is not found (a required one that is missing) is placed at the closest enclosing table's header, or
at line 1.
"""

from __future__ import annotations

import re

_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
_DOTTED = rf"{_PART}(?:\s*\.\s*{_PART})*"
_HEADER = re.compile(rf"^\s*\[\[?\s*({_DOTTED})\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(rf"^\s*({_DOTTED})\s*=\s*(.*)$")
_INLINE_KEY = re.compile(rf"(?:^|[{{,])\s*({_DOTTED})\s*=")
_PIECE = re.compile(_PART)


def _path(dotted: str) -> tuple[str, ...]:
    return tuple(p.strip("\"'") for p in _PIECE.findall(dotted))


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Every table header and key of the text -> the line (1-based) where it first appears.

    >>> lines = key_lines('kind = "x"\\n[states]\\nready = []\\nextra = { queue = ["q"] }\\n')
    >>> lines[("kind",)], lines[("states",)], lines[("states", "ready")], lines[("states", "extra", "queue")]
    (1, 2, 3, 4)
    """
    out: dict[tuple[str, ...], int] = {}
    section: tuple[str, ...] = ()
    for n, line in enumerate(text.splitlines(), 1):
        if m := _HEADER.match(line):
            section = _path(m[1])
            out.setdefault(section, n)
            continue
        if m := _KEY.match(line):
            path = section + _path(m[1])
            out.setdefault(path, n)
            rest = m[2].strip()
            if rest.startswith("{"):
                for k in _INLINE_KEY.finditer(rest):
                    out.setdefault(path + _path(k[1]), n)
    return out


def line_of(lines: dict[tuple[str, ...], int], path: tuple[str, ...]) -> int:
    """The line of `path`, or of its closest enclosing table that is in the file, or 1."""
    for i in range(len(path), 0, -1):
        if path[:i] in lines:
            return lines[path[:i]]
    return 1
