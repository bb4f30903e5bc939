"""The README is a front door (issue #25): short, the two commands near the top, and every relative
link in it and in docs/ points at a file (and a heading) that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DEMO = "pip install -e '.[demo]' && pgq-top --demo"
TESTS = "pip install -q -e '.[test]' && python -m pytest"


def anchors(path: Path) -> set[str]:
    """The heading anchors GitHub makes for a Markdown file (lowercase, punctuation dropped, spaces
    to dashes, `-1`, `-2` for repeats), headings inside code fences skipped.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
    ...     _ = f.write("# A: `b.py` (c)\\n```\\n# not a heading\\n```\\n## A: b.py (c)\\n")
    >>> sorted(anchors(Path(f.name))); os.unlink(f.name)
    ['a-bpy-c', 'a-bpy-c-1']
    """
    found: set[str] = set()
    seen: dict[str, int] = {}
    fence = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#{1,6} (.*)", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def relative_links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return [m for m in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", m)]


def test_the_readme_is_short_with_both_commands_in_its_first_40_lines() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 300, len(lines)
    head = "\n".join(lines[:40])
    assert DEMO in head and TESTS in head


def test_every_relative_link_in_the_readme_and_docs_resolves() -> None:
    broken = []
    files = [README, *sorted((ROOT / "docs").glob("*.md"))]
    for md in files:
        for link in relative_links(md):
            target_part, _, fragment = link.partition("#")
            target = (md.parent / target_part).resolve() if target_part else md
            if not target.exists():
                broken.append(f"{md.relative_to(ROOT)}: {link} (no such file)")
            elif fragment and target.suffix == ".md" and fragment not in anchors(target):
                broken.append(f"{md.relative_to(ROOT)}: {link} (no such heading)")
    assert len(files) > 10 and not broken, broken


def test_the_key_table_in_docs_is_the_one_the_bindings_generate() -> None:
    """docs/dashboard.md's key table is `keys_markdown`'s output verbatim, so the keys and their help
    cannot drift (regenerate it from that function when a binding changes)."""
    from textual.binding import Binding

    from pgq_tui.tui import keys
    from pgq_tui.tui.app import PgqTopApp
    from pgq_tui.tui.screens.help import keys_markdown
    from pgq_tui.tui.screens.search import SearchScreen

    search = ("Search results (`/` with a search)", Binding.make_bindings(SearchScreen.BINDINGS))
    table = keys_markdown(Binding.make_bindings(PgqTopApp.BINDINGS), keys.TABLE_KEYS, [search])
    assert table in (ROOT / "docs" / "dashboard.md").read_text()
