"""Docs that run: every recorded console example in README.md and docs/ (`<!-- recorded: NAME
scenario=S -->` before its block) is run again against the test server, seeded by its scenario
(tests/docs_scenarios.py), and must print what the doc shows, times, pids and sizes aside
(tests/docs_examples.py). `python scripts/record_examples.py` re-records them."""

from __future__ import annotations

import doctest
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import docs_examples as docs
import pytest

EXAMPLES = {e.name: e for e in docs.examples()}
_today: dict[str, str] = {}  # each example run once per module, shared by the tests below


@pytest.fixture(scope="module")
def stage(server_dsn: str) -> Iterator[docs.Stage]:
    """One database per scenario, seeded on first use, for the whole module."""
    stage = docs.Stage(server_dsn)
    yield stage
    stage.close()


def today(stage: docs.Stage, name: str) -> str:
    if name not in _today:
        _today[name] = stage.run(EXAMPLES[name])
    return _today[name]


def test_the_docs_have_recorded_examples() -> None:
    assert len(EXAMPLES) >= 10, sorted(EXAMPLES)
    assert doctest.testmod(docs).failed == 0


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_recorded_example_prints_what_the_doc_shows(stage: docs.Stage, name: str) -> None:
    example = EXAMPLES[name]
    different = docs.diff(example, example.text(), today(stage, name))
    assert not different, (
        f"{example.where}: the example {name!r} no longer shows what pgq-top prints"
        f" (re-record: python scripts/record_examples.py --only {name}):\n{different}"
    )


def _edited_copy(tmp_path: Path, example: docs.Example, edit: tuple[str, str]) -> docs.Example:
    """The example's doc copied, its block's first output line edited, read back as an example."""
    copy = tmp_path / example.path.name
    shutil.copy(example.path, copy)
    (found,) = [e for e in docs.examples([copy]) if e.name == example.name]
    steps = list(found.steps)
    old, new = edit
    first = steps[0]
    assert re.search(old, first.output), (old, first.output)
    steps[0] = docs.Step(first.command, re.sub(old, new, first.output, count=1))
    docs.rewrite(found, docs.render(tuple(steps)))
    (edited,) = [e for e in docs.examples([copy]) if e.name == example.name]
    return edited


def test_an_example_edited_by_hand_fails_and_a_new_time_or_pid_does_not(
    stage: docs.Stage, tmp_path: Path
) -> None:
    """The check is not vacuous: a count, a word or a verdict changed by hand is a mismatch (with
    a diff naming the line), while what varies between runs (an age, a pid) is not."""
    example = EXAMPLES["check-critical"]
    printed = today(stage, example.name)
    assert docs.diff(example, example.text(), printed) == ""
    for edit in [
        (r"'stuck'=60;", "'stuck'=6;"),
        (r"CRITICAL", "WARNING"),
        (r"60 stuck jobs", "60 stalled jobs"),
    ]:
        edited = _edited_copy(tmp_path, example, edit)
        different = docs.diff(edited, edited.text(), printed)
        assert different and f"-{docs.normalise(edited.steps[0].output.splitlines()[0])}" in different, edit
    for edit in [(r"waiting \w+", "waiting 11m07s"), (r"'poll_time'=[\d.]+s", "'poll_time'=1.5s")]:
        edited = _edited_copy(tmp_path, example, edit)
        assert docs.diff(edited, edited.text(), printed) == "", edit
    # the exit code is compared too
    *rest, status = example.steps
    assert (status.command, status.output) == ("echo $?", "2")
    assert docs.diff(example, docs.render((*rest, docs.Step(status.command, "1"))), printed)


BENCHMARK = re.compile(r"^<!-- benchmark: (benchmarks/results/[\w.-]+) -->$")
# what a benchmark's printout looks like: its PostgreSQL header, rates, percentiles, per-size costs
LOOKS_MEASURED = re.compile(r"PostgreSQL \d+\.\d+[;,]|jobs/s|rows/s|\bp50\b|collect\(\), ms")


def test_pasted_benchmark_output_is_a_result_kept_in_the_repository() -> None:
    """A benchmark's output quoted in the docs is marked `<!-- benchmark: benchmarks/results/FILE -->`
    and is that file's text (trailing blanks aside); an unmarked block that looks measured fails."""
    wrong, seen = [], 0
    for md in docs.FILES:
        lines = md.read_text().splitlines()
        fences = [i for i, line in enumerate(lines) if docs.FENCE.match(line)]
        for start, end in zip(fences[::2], fences[1::2], strict=False):
            body = "\n".join(line.rstrip() for line in lines[start + 1 : end])
            where = f"{md.relative_to(docs.ROOT)}:{start + 1}"
            m = BENCHMARK.match(lines[start - 1]) if start else None
            recorded = bool(start and docs.MARKER.match(lines[start - 1]))
            if m:
                seen += 1
                kept = docs.ROOT / m[1]
                text = (
                    "\n".join(line.rstrip() for line in kept.read_text().splitlines())
                    if kept.exists()
                    else ""
                )
                if body not in text:
                    wrong.append(f"{where}: not the text of {m[1]}")
            elif lines[start].strip() == "```" and LOOKS_MEASURED.search(body) and not recorded:
                wrong.append(f"{where}: benchmark output without a <!-- benchmark: ... --> result file")
    assert seen >= 10 and not wrong, wrong


def test_every_console_example_is_recorded() -> None:
    """A ```console block, or any block showing a `$ pgq-top` prompt, is a recorded example: new ones
    cannot be pasted by hand."""
    pasted = []
    for md in docs.FILES:
        lines = md.read_text().splitlines()
        fences = [i for i, line in enumerate(lines) if docs.FENCE.match(line)]
        for start, end in zip(fences[::2], fences[1::2], strict=False):
            shows_a_prompt = any(line.startswith("$ ") for line in lines[start + 1 : end])
            if (lines[start].strip() == "```console" or shows_a_prompt) and not (
                start and docs.MARKER.match(lines[start - 1])
            ):
                pasted.append(f"{md.relative_to(docs.ROOT)}:{start + 1}")
    assert not pasted, f"console examples without a <!-- recorded: ... --> marker: {pasted}"
