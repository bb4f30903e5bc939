"""`pgq-top completion bash|zsh`: a shell completion script generated from pgq-top's own argparse
parser by shtab (docs/operations.md), so it can never list a subcommand or flag the CLI lacks.

shtab writes a static script: the shell completes from it without starting Python at each TAB
(argcomplete runs the program, importing pgq-top, at every TAB). Files are completed where a flag
takes a FILE, directories for --demo-dir, and --kind offers the built-in kinds.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

SHELLS = ("bash", "zsh")
DIRECTORY_FLAGS = {"--demo-dir"}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "completion",
        help="print a bash or zsh completion script (source it, or install it: docs/operations.md)",
        description="Print the completion script for SHELL on stdout, generated from this pgq-top's "
        "own parser. bash: `source <(pgq-top completion bash)`, or save it as "
        "~/.local/share/bash-completion/completions/pgq-top. zsh: save it as _pgq-top in a "
        "directory on $fpath.",
    )
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash or zsh")


def _actions(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):  # aliases share a parser
                yield from _actions(child)


def _kinds(kinds: list[str]) -> dict[str, object]:
    """shtab's completion spec for --kind: a bash function (in the script's preamble) and zsh's list."""
    words = " ".join(kinds)
    bash = f'_pgq_top_kinds() {{ compgen -W "{words}" -- "$1"; }}\n'
    return {"bash": "_pgq_top_kinds", "zsh": f"({words})", "preamble": {"bash": bash}}


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for `shell`: shtab's, with file, directory and kind completion hints."""
    import shtab

    from pgq_tui.dialects.registry import builtin

    kinds = sorted({d.kind for d in builtin()})
    for action in _actions(parser):
        flags = set(action.option_strings)
        if flags & DIRECTORY_FLAGS:
            action.complete = shtab.DIRECTORY  # type: ignore[attr-defined]
        elif action.metavar == "FILE":
            action.complete = shtab.FILE  # type: ignore[attr-defined]
        elif "--kind" in flags:
            action.complete = _kinds(kinds)  # type: ignore[attr-defined]
    return str(shtab.complete(parser, shell=shell))


def run_completion(parser: argparse.ArgumentParser, shell: str) -> int:
    sys.stdout.write(script(parser, shell))
    return 0
