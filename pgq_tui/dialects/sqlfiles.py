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


def has_sql_file(package: str, name: str) -> bool:
    """Whether `sql_file(package, name)` exists (a statement the framework may not have)."""
    folder = resources.files(package)
    return (
        folder.joinpath("sql").joinpath(f"{name}.sql").is_file() or folder.joinpath(f"{name}.sql").is_file()
    )


def body(text: str) -> str:
    """An SQL text without its leading comment lines (a file's documentation), for a Statement part.

    >>> body("-- a guard\\n-- on j\\nj.state = 'x'")
    "j.state = 'x'"
    """
    lines = text.splitlines()
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("--")):
        lines.pop(0)
    return "\n".join(lines)


def sql_part(package: str, name: str) -> str:
    """`sql_file(package, name)` without its leading comment lines: an SQL fragment bound as a
    Statement part (Statement.parts), composed by psycopg."""
    return body(sql_file(package, name))


def sql_parts(package: str, *names: str) -> tuple[tuple[str, str], ...]:
    """(name, sql_part(package, name)) for each name: parts to bind as `{name}`, in order."""
    return tuple((n, sql_part(package, n)) for n in names)
