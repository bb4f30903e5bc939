"""Docs that cannot name what the CLI lacks (#31): every `pgq-top` command line quoted in the README
and docs/ (code blocks and inline code) uses only subcommands and flags the argument parser has, and
the exit codes the README lists are the ones pgq_tui.errors defines."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from pgq_tui import errors
from pgq_tui.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A quoted command ends at a pipe, a `;`, `&&`, a shell comment or the next pgq-top.
_END = re.compile(r"\s(?:\||;|&&|#)\s|$")


def code_segments(text: str) -> list[str]:
    """The lines of fenced code blocks and the inline code spans of the prose.

    >>> code_segments("run `pgq-top x --y` then\\n```sh\\npgq-top z\\n```\\n")
    ['pgq-top z', 'pgq-top x --y']
    """
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    lines = [line for block in fenced for line in block.splitlines()]
    return lines + re.findall(r"`([^`\n]+)`", prose)


def command_lines(segment: str) -> list[list[str]]:
    """Each `pgq-top ...` invocation in a segment, as its words (output lines such as
    `pgq-top: error: ...` are not invocations).

    >>> command_lines("$ pgq-top check --dsn ... | head; pgq-top: error: x")
    [['check', '--dsn', '...']]
    """
    out = []
    for m in re.finditer(r"(?:^|[\s$(])pgq-top(?=\s|$)", segment):
        rest = segment[m.end() :]
        rest = rest[: _END.search(rest).start()]  # type: ignore[union-attr]
        out.append(rest.split("pgq-top")[0].split())
    return out


def _options(p: argparse.ArgumentParser) -> set[str]:
    return {s for action in p._actions for s in action.option_strings}


def test_every_documented_command_line_names_real_subcommands_and_flags() -> None:
    parser = build_parser()
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    commands: dict[str, argparse.ArgumentParser] = dict(sub.choices)
    top = _options(parser)
    wrong, seen = [], 0
    for md in FILES:
        for segment in code_segments(md.read_text()):
            for words in command_lines(segment):
                seen += 1
                command = None
                for word in words:
                    flag = re.match(r"\[?(--[a-z][a-z0-9-]*)", word)
                    if flag:
                        known = _options(commands[command]) if command else top
                        if flag.group(1) not in known:
                            where = f"pgq-top {command}" if command else "pgq-top"
                            wrong.append(f"{md.relative_to(ROOT)}: {where} has no {flag.group(1)}")
                    elif command is None and re.fullmatch(r"[a-z]+", word) and word in commands:
                        command = word
    assert seen > 50, seen  # the extraction finds the docs' command lines at all
    assert not wrong, sorted(set(wrong))


def test_the_readme_exit_codes_are_the_ones_the_code_defines() -> None:
    text = " ".join((ROOT / "README.md").read_text().split())
    line = re.search(r"Exit codes: (.*?)(?:, and the rest| \()", text, flags=re.S)
    assert line is not None
    listed = {int(n): words.strip() for n, words in re.findall(r"(\d+) ([a-z ]+)", line.group(1))}
    defined = {
        "success": errors.EXIT_OK,
        "bad usage": errors.EXIT_USAGE,
        "cannot connect": errors.EXIT_CONNECT,
        "no queue found": errors.EXIT_SCHEMA,
        "a privilege missing": errors.EXIT_PRIVILEGE,
        "an action refused": errors.EXIT_REFUSED,
    }
    assert {words: n for n, words in listed.items()} == defined, listed


def test_reference_pages_carry_no_internal_history_or_outside_citations() -> None:
    """Reference pages say what is, citing only what the repository holds: no issue numbers or branch
    names (the CHANGELOG and the development notes hold the history), no notes kept elsewhere."""
    history = ("development.md", "contributing.md")
    found = []
    for md in FILES:
        text = md.read_text()
        if "PERF_NOTES" in text:
            found.append(f"{md.relative_to(ROOT)}: cites PERF_NOTES, which is not in the repository")
        if md.name not in history:
            found += [
                f"{md.relative_to(ROOT)}: {m}"
                for m in re.findall(r"issue #\d+|\(#\d+\)|branch [\w-]+-\w+", text)
            ]
    assert not found, found
