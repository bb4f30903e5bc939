"""Home-grown tables described by a TOML mapping file; the seed article's two shapes ship built in
(`seeds/*.toml`), and `--mapping FILE` adds the user's own."""

from __future__ import annotations

from collections.abc import Collection
from importlib import resources

from pgq_tui.dialects.mapping.dialect import MappingDialect
from pgq_tui.dialects.mapping.spec import MappingError, MappingSpec, load, loads, parse


def shipped() -> tuple[MappingDialect, ...]:
    folder = resources.files(__name__).joinpath("seeds")
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".toml")), key=lambda f: f.name)
    return tuple(MappingDialect(loads(f.read_text(encoding="utf-8"), f"built-in {f.name}")) for f in files)


def from_file(path: str, reserved: Collection[str] = ()) -> MappingDialect:
    """A user's mapping file as a dialect; MappingError (one line, with the file and line) when it is
    unusable, or when its kind is one of `reserved` (the built-in kinds: never silently replaced)."""
    return MappingDialect(load(path, reserved))


DIALECTS = shipped()

__all__ = [
    "DIALECTS",
    "MappingDialect",
    "MappingError",
    "MappingSpec",
    "from_file",
    "load",
    "loads",
    "parse",
    "shipped",
]
