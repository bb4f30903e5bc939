"""The built-in dialects: every subpackage of `pgq_tui.dialects` that exports `DIALECTS`.

Discovery instead of a hand-kept list, so adding a framework touches only its own folder.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from functools import cache
from typing import Any

from pgq_tui import dialects as _package
from pgq_tui.dialects.contract import Dialect


@cache
def builtin() -> tuple[Dialect, ...]:
    found: list[Dialect] = []
    for info in sorted(pkgutil.iter_modules(_package.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{_package.__name__}.{info.name}")
        found.extend(getattr(module, "DIALECTS", ()))
    return tuple(found)


def configured(dialects: tuple[Dialect, ...], **settings: Any) -> tuple[Dialect, ...]:
    """The dialects with the user's settings applied where a dialect has a field of that name (e.g.
    `dead_reads`, pgq-top's dead rule for a framework without a dead state); None leaves it as is."""
    given = {k: v for k, v in settings.items() if v is not None}
    out = []
    for d in dialects:
        names: set[str] = {f.name for f in dataclasses.fields(d)} if dataclasses.is_dataclass(d) else set()
        fit = {k: v for k, v in given.items() if k in names}
        out.append(dataclasses.replace(d, **fit) if fit else d)  # type: ignore[type-var]
    return tuple(out)
