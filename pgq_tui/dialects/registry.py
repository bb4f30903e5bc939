"""The built-in dialects: every subpackage of `pgq_tui.dialects` that exports `DIALECTS`.

Discovery instead of a hand-kept list, so adding a framework touches only its own folder.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Mapping
from functools import cache

from pgq_tui import dialects as _package
from pgq_tui.dialects.contract import Dialect
from pgq_tui.dialects.kit import Number, Setting, declared


@cache
def builtin() -> tuple[Dialect, ...]:
    found: list[Dialect] = []
    for info in sorted(pkgutil.iter_modules(_package.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{_package.__name__}.{info.name}")
        found.extend(getattr(module, "DIALECTS", ()))
    return tuple(found)


def settings(dialects: tuple[Dialect, ...]) -> tuple[Setting, ...]:
    """Every setting the dialects declare (kit.Setting), each key once."""
    found = {s.key: s for d in dialects for s in declared(d)}
    return tuple(found.values())


def configured(dialects: tuple[Dialect, ...], values: Mapping[str, Number | None]) -> tuple[Dialect, ...]:
    """The dialects with the user's values of their declared settings (by key, e.g. `dead_reads`,
    `river_rescue_after`) set on the settings' fields; a value None or absent leaves a field as is."""
    out = []
    for d in dialects:
        fit = {s.field: values[s.key] for s in declared(d) if values.get(s.key) is not None}
        out.append(dataclasses.replace(d, **fit) if fit else d)  # type: ignore[type-var]
    return tuple(out)
