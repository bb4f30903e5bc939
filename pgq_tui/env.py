"""Every environment variable pgq-top reads, and the one function that reads them (docs/environment.md
is this table; tests/test_reference_docs.py holds the code, the table and the page together).

pgq-top's own variables are named `PGQ_TOP_*`. Until 0.1 three were not (`PGQ_POOLER`,
`PGQ_EMBEDDED_USER`, `PGQ_RUNTIME_DIR`): their old names are still read when the new one is unset,
and say so once, as a DeprecationWarning. The dialects' settings (`PGQ_TOP_RIVER_RESCUE_AFTER`, ...)
are declared by each dialect (`dialects.kit.Setting`) and read through `environ()` below.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Variable:
    name: str
    old: tuple[str, ...] = ()  # names accepted until they are removed (deprecated)


# What each sets, and its default: docs/environment.md.
VARIABLES: tuple[Variable, ...] = (
    Variable("DATABASE_URL"),  # the DSN without --dsn (then libpq reads its PG* variables itself)
    Variable("PGQ_TOP_POOLER", ("PGQ_POOLER",)),
    Variable("PGQ_TOP_AUDIT_LOG"),
    Variable("XDG_STATE_HOME"),  # the audit log's default place
    Variable("HOME"),
    Variable("PGQ_TOP_EMBEDDED_USER", ("PGQ_EMBEDDED_USER",)),
    Variable("PGQ_TOP_RUNTIME_DIR", ("PGQ_RUNTIME_DIR",)),
    Variable("PGQ_TOP_DEMO_CONTROL"),  # internal: the demo hands its workers the control file
)
BY_NAME = {v.name: v for v in VARIABLES}
_warned: set[str] = set()


def get(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The value of variable `name` (one of VARIABLES), else of its first old name that is set (with a
    DeprecationWarning, once per name), else None. An empty value counts as unset.

    >>> get("PGQ_TOP_POOLER", {"PGQ_TOP_POOLER": "none", "PGQ_POOLER": "session"})
    'none'
    """
    var = BY_NAME[name]  # a KeyError here: a variable read but missing from the table
    source = os.environ if environ is None else environ
    value = source.get(name)
    if value:
        return value
    for old in var.old:
        value = source.get(old)
        if value:
            if old not in _warned:
                _warned.add(old)
                warnings.warn(f"{old} is deprecated: set {name}", DeprecationWarning, stacklevel=2)
            return value
    return None


def environ(source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment with each variable of the table under its current name (an old name's value
    copied when the new one is unset), for code that reads a mapping (`audit.location`, the dialects'
    settings)."""
    out = dict(os.environ if source is None else source)
    for var in VARIABLES:
        value = get(var.name, out)
        if value is not None:
            out[var.name] = value
    return out


def set_for_children(name: str, value: str | None) -> None:
    """Set (or, with None, unset) variable `name` in this process's environment, for the processes it
    starts (the demo's workers find their control file so)."""
    BY_NAME[name]
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
