"""`pgq-top completion bash|zsh` (docs/operations.md): the generated script, loaded into a real bash
(and zsh where installed), completes every subcommand and each one's own flags as the parser has
them, the kinds for --kind, and files where a flag takes a FILE."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pgq_tui.cli import build_parser, main


def generated(capsys: pytest.CaptureFixture[str], shell: str) -> str:
    assert main(["completion", shell]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.strip()
    return out


def subcommands() -> dict[str, argparse.ArgumentParser]:
    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


BASH_DRIVER = r"""
source "$1"
complete -p pgq-top
fn=$(complete -p pgq-top | sed -E 's/.* -F ([^ ]+) .*/\1/')
comp() {  # the words typed, the last one being completed: what TAB offers, one line
    COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    COMPREPLY=(); "$fn"; echo "$*|${COMPREPLY[*]}"
}
"""


def bash_complete(script: Path, lines: list[list[str]]) -> tuple[str, dict[str, set[str]]]:
    calls = "\n".join("comp " + " ".join(f"'{w}'" for w in words) for words in lines)
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", BASH_DRIVER + calls, "bash", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    first, *rest = done.stdout.splitlines()
    return first, {typed: set(offered.split()) for typed, _, offered in (r.partition("|") for r in rest)}


def test_bash_completes_subcommands_their_flags_kinds_and_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = tmp_path / "pgq-top.bash"
    script.write_text(generated(capsys, "bash"))
    (tmp_path / "orders.pgq").write_text("")
    commands = subcommands()
    lines = [["pgq-top", "sn"], ["pgq-top", ""], ["pgq-top", "check", "--stuck-"],
             ["pgq-top", "exporter", "--kind", "pr"], ["pgq-top", "--kind", "ri"],
             ["pgq-top", "replay", f"{tmp_path}/ord"], ["pgq-top", "completion", ""]]  # fmt: skip
    lines += [["pgq-top", name, "--"] for name in commands] + [["pgq-top", "--"]]
    registered, got = bash_complete(script, lines)
    assert registered.startswith("complete ") and registered.endswith(" pgq-top")
    assert got["pgq-top sn"] == {"snapshot"}
    assert got["pgq-top "] == set(commands) and {"check", "exporter", "record", "completion"} <= set(commands)
    assert got["pgq-top check --stuck-"] == {"--stuck-warn", "--stuck-crit"}
    assert got["pgq-top exporter --kind pr"] == {"procrastinate"}
    assert got["pgq-top --kind ri"] == {"river"}
    assert got[f"pgq-top replay {tmp_path}/ord"] == {f"{tmp_path}/orders.pgq"}
    assert got["pgq-top completion "] == {"bash", "zsh"}
    for name, parser in [
        *commands.items(),
        ("", build_parser()),
    ]:  # each subcommand's long flags, exactly as its parser has them
        flags = {o for a in parser._actions for o in a.option_strings if o.startswith("--")}
        assert got[" ".join(filter(None, ("pgq-top", name, "--")))] == flags, name


ZSH_DRIVER = r"""
zmodload zsh/zpty
zpty -b z 'zsh -f -i'
zpty -w z "fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D; pgq-top() { :; }"
zpty -w -n z "$2"$'\t'
out=""
# read until the completion shows ($3), up to 30 s: compinit's time depends on the machine's load
for i in {1..300}; do
  while zpty -r -t z chunk; do out+=$chunk; done
  [[ "${out//$'\e'\[[0-9;?]#[a-zA-Z]/}" == *"$3"* ]] && break
  sleep 0.1
done
zpty -d z
print -r -- "${out//$'\e'\[[0-9;?]#[a-zA-Z]/}"
"""


ZSH_CASES = [("pgq-top sn", "pgq-top snapshot"), ("pgq-top check --stuck-w", "pgq-top check --stuck-warn")]


@pytest.mark.parametrize(("typed", "completed"), ZSH_CASES)
def test_zsh_completes_from_the_generated_function(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, typed: str, completed: str
) -> None:
    zsh = shutil.which("zsh")
    if zsh is None:
        reason = "zsh is not installed (apt-get install -y zsh)"
        if os.environ.get("PGQ_REQUIRE_FRAMEWORKS") == "1":
            pytest.fail(f"{reason} (PGQ_REQUIRE_FRAMEWORKS=1: the completion tests must run)", pytrace=False)
        pytest.skip(reason)
    (tmp_path / "_pgq-top").write_text(generated(capsys, "zsh"))
    assert subprocess.run([zsh, "-n", str(tmp_path / "_pgq-top")], timeout=30).returncode == 0
    done = subprocess.run(
        [zsh, "-f", "-c", ZSH_DRIVER, "zsh", str(tmp_path), typed, completed],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert completed in done.stdout, done.stdout[-500:]


def test_an_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["completion", "fish"])
    assert exit_.value.code == 2
    assert "invalid choice: 'fish'" in capsys.readouterr().err
