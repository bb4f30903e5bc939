"""The built-in dialects: every subpackage of `pgq_tui.dialects` that exports `DIALECTS`.

Discovery instead of a hand-kept list, so adding a framework touches only its own folder.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

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


def by_kind(kind: str, extra: tuple[Dialect, ...] = ()) -> Dialect | None:
    return next((d for d in (*extra, *builtin()) if d.kind == kind), None)


def kinds() -> tuple[str, ...]:
    return tuple(d.kind for d in builtin())
