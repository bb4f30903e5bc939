"""Untrusted text (payloads, queries, application names, server messages) made safe to print on a
terminal: every control or invisible character written out. Used by the dashboard (`tui/format.py`
wraps it in rich Text) and by the plain-text commands (`check`, `why`). Imports nothing from pgq_tui.
"""

from __future__ import annotations

import re

# C0/C1 controls and DEL, plus the invisible and bidirectional-override code points that can make a
# payload look like something it is not (trojan-source style).
_HOSTILE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\x1b": "\\e"}


def _visible(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """`text` with every control or invisible character written out (`\\e`, `\\x07`, `\\u202e`).

    >>> visible("a\\x1b[31mred\\n")
    'a\\\\e[31mred\\\\n'
    """
    return _HOSTILE.sub(_visible, str(text))
