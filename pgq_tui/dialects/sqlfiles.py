"""Reading a dialect's `.sql` files from its package (a dialect's SQL lives in one readable place)."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def sql_file(package: str, name: str) -> str:
    """The text of `<package>/sql/<name>.sql` (or `<package>/<name>.sql` when `package` is a folder
    of SQL files itself), without its trailing semicolon and whitespace."""
    folder = resources.files(package)
    path = folder.joinpath("sql").joinpath(f"{name}.sql")
    if not path.is_file():
        path = folder.joinpath(f"{name}.sql")
    return path.read_text(encoding="utf-8").strip().rstrip(";")
