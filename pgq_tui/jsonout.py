"""The JSON every command prints (`snapshot --json`, the fleet's, `check --json`, `why --json`,
`jobs --json`, `advise --json`): one top-level object whose first key, `version`, is the version of
pgq-top that wrote it (the one `pgq-top --version` prints), so a reader knows which key names to
expect (CHANGELOG.md lists each change).

The version is added here, at the top of what is printed, not in `Snapshot.to_dict()`: a fleet
document's `targets[].snapshot` and a recording's polls carry none, the document around them does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from pgq_tui import __version__


def document(body: Mapping[str, Any]) -> dict[str, Any]:
    """`body` with `version` first.

    >>> list(document({"queues": []}))
    ['version', 'queues']
    """
    assert "version" not in body, "a document's version is pgq-top's own"
    return {"version": __version__, **body}


def emit(
    body: Mapping[str, Any],
    stream: TextIO,
    *,
    indent: int | None = 2,
    default: Callable[[Any], Any] | None = None,
) -> None:
    """Write `document(body)` and a newline to `stream`."""
    json.dump(document(body), stream, indent=indent, default=default)
    stream.write("\n")
