"""Recorded console examples in README.md and docs/*.md: found, run for real, normalised, compared.

Shared by `scripts/record_examples.py` (which rewrites the examples) and `tests/test_docs_examples.py`
(which fails when one no longer matches what the code prints). A recorded example is a fenced block
right after a marker naming it and its seed scenario (tests/docs_scenarios.py):

    <!-- recorded: check-critical scenario=expired-leases -->
    ```console
    $ pgq-top check --dsn postgresql://monitor@db/app
    PGQ CRITICAL: ...
    $ echo $?
    2
    ```

Each `$ ` line is a command, the lines up to the next one its output (stdout and stderr, as a
terminal shows them). A command runs in bash, in a directory holding the scenario's files, with
`pgq-top` from this checkout first on PATH. Every `--dsn WORD` is pointed at the scenario's database
(the doc keeps its own DSN text), a `127.0.0.1:PORT` at a free port, `$?` is the previous command's
status, and a command ending in `&` runs in the background: its output is its first line.

What differs from run to run is normalised away before comparing (`normalise`: durations, ages,
timestamps, pids, sizes, rates, xid ages, worker and socket names); anything else that differs
(a count, a word, an exit code, a line) is a mismatch. The recorder writes the output with only the
machine's own names (its socket directory, database names, ports) replaced by the doc's, and leaves an
example untouched when it still matches, so re-recording does not churn the docs.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"^<!-- recorded: (?P<name>[\w.-]+) scenario=(?P<scenario>[\w.-]+) -->\s*$")
FENCE = re.compile(r"^```")
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Step:
    command: str  # as the doc shows it, after `$ `
    output: str  # the lines after it, joined by newlines (no trailing newline)


@dataclass(frozen=True)
class Example:
    name: str
    scenario: str
    path: Path
    start: int  # index of the first line inside the fence
    end: int  # index of the closing fence
    steps: tuple[Step, ...]

    @property
    def where(self) -> str:
        shown = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{shown}:{self.start}"

    def text(self) -> str:
        return render(self.steps)


def parse_steps(lines: list[str]) -> tuple[Step, ...]:
    """A console block's lines as (command, output) steps.

    >>> parse_steps(["$ pgq-top check", "PGQ OK", "", "$ echo $?", "0"])
    (Step(command='pgq-top check', output='PGQ OK'), Step(command='echo $?', output='0'))
    """
    steps: list[Step] = []
    command: str | None = None
    out: list[str] = []
    for line in [*lines, "$ "]:
        if line.startswith("$ "):
            if command is not None:
                steps.append(Step(command, "\n".join(out).rstrip("\n")))
            command, out = line[2:], []
        elif command is None:
            raise ValueError(f"a recorded block must start with a `$ ` command line, not {line!r}")
        else:
            out.append(line.rstrip())
    return tuple(s for s in steps if s.command.strip())


def render(steps: tuple[Step, ...]) -> str:
    return "\n".join(f"$ {s.command}" + (f"\n{s.output}" if s.output else "") for s in steps)


def examples(files: list[Path] | None = None) -> list[Example]:
    """Every recorded example in the docs (a marker with no fence after it is an error)."""
    found: list[Example] = []
    for path in files or FILES:
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            m = MARKER.match(line)
            if not m:
                continue
            if i + 1 >= len(lines) or not FENCE.match(lines[i + 1]):
                raise ValueError(f"{path}:{i + 1}: a recorded marker must be followed by a ``` fence")
            end = next(j for j in range(i + 2, len(lines)) if lines[j].strip() == "```")
            steps = parse_steps(lines[i + 2 : end])
            found.append(Example(m["name"], m["scenario"], path, i + 2, end, steps))
    names = [e.name for e in found]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"recorded example names must be unique: {dup}")
    return found


# What varies from run to run, replaced by a placeholder before two outputs are compared. Counts, words,
# verdicts and exit codes are compared as they are.
_VARYING: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?"), "<TIME>"),
    (re.compile(r"\b\d\d:\d\d:\d\d(\.\d+)?\b"), "<TIME>"),
    (re.compile(r"\bpgq-w-[\w.-]+?-\d+-[0-9a-f]{4}\b"), "<WORKER>"),
    (re.compile(r"\bpgq-top-[\w]{8}\b"), "<SOCKET>"),
    (re.compile(r"\b(pid|backend|pids?) \d+"), r"\1 <PID>"),
    (re.compile(r"(pg_(?:terminate|cancel)_backend\(|xmin:backend:|lock:)\d+"), r"\1<PID>"),
    (re.compile(r"\b\d+(\.\d+)?k? transactions behind"), "<N> transactions behind"),
    (re.compile(r"\b\d+(\.\d+)? ?(B|kB|KB|MB|GB|KiB|MiB|GiB)\b"), "<SIZE>"),
    (re.compile(r"\b\d+(\.\d+)?(k|M)?( jobs| rows| claims| tuples)?/s\b"), "<RATE>"),
    # compact durations: 1h02m, 10m00s, 3.9s, 0.0496s, 12ms (a spaced "2 s" is a setting, kept)
    (re.compile(r"\b(\d+d)?(\d+h)?(\d+m)?\d+(\.\d+)?(ms|us|s)\b|\b\d+d\d+h\b|\b\d+h\d\dm\b"), "<DUR>"),
    # schedules' ages drop a zero second unit ("3h" for 3h00m, "2d" for 2d00h: schedules/words.py), so an
    # example run in the first minute of an hour reads them bare; a bare one after "every" is a period
    (re.compile(r"\b\d+[mhd](?= ago\b)|(?<=\bLATE )\d+[hd]\b|(?<=\bin )\d+[hd]\b"), "<DUR>"),
    (re.compile(r"\b\d+ polls? over \d+(\.\d+)? s\b"), "<N> polls over <N> s"),  # as many as the load allows
    (re.compile(r"(built index \S+ in )\d+(\.\d+)? s\b"), r"\1<DUR>"),
    (re.compile(r"[ \t]+$", re.M), ""),
    # a table's columns are as wide as their widest cell: a duration one character longer moves them
    (re.compile(r"(?<=\S) {2,}(?=\S)"), "  "),
]


def normalise(text: str) -> str:
    """The text with what varies between runs replaced by placeholders.

    >>> normalise("xmin held 1m33s by pid 24787; 'poll_time'=0.0496s;;;0 60 stuck")
    "xmin held <DUR> by pid <PID>; 'poll_time'=<DUR>;;;0 60 stuck"
    >>> normalise("at 2026-12-02T15:49:11.158873+00:00, 3.2k jobs/s, 1.5 MB")
    'at <TIME>, <RATE>, <SIZE>'
    >>> normalise("in 36s     5m") == normalise("in 4m32s   5m")
    True
    >>> on_the_hour = normalise("last ran 3h ago  in 1h  every 1h  LATE 2h")
    >>> on_the_hour == normalise("last ran 3h05m ago  in 55m10s  every 1h  LATE 2h05m")
    True
    >>> normalise("every 1h")
    'every 1h'
    """
    for pattern, placeholder in _VARYING:
        text = pattern.sub(placeholder, text)
    return text


def diff(example: Example, recorded: str, today: str) -> str:
    """'' when the two outputs agree after normalising, else a unified diff of the normalised texts."""
    a, b = normalise(recorded).splitlines(), normalise(today).splitlines()
    if a == b:
        return ""
    lines = difflib.unified_diff(a, b, f"{example.where} (recorded)", "today's output", lineterm="")
    return "\n".join(lines)


@dataclass(frozen=True)
class Place:
    """Where an example runs: the scenario's database and the directory holding its files."""

    dsn: str
    cwd: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _doc_dsn(command: str) -> str | None:
    """The DSN text a doc's command line passes to --dsn (None without one)."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    for i, word in enumerate(words[:-1]):
        if word == "--dsn":
            return words[i + 1]
    return None


def _display_names(doc_dsn: str | None) -> tuple[str, str]:
    """(database, host) a reader sees for the doc's DSN; `...` and friends mean app on host db."""
    from pgq_tui.targets import name_from_dsn

    if doc_dsn and "..." not in doc_dsn:
        name = name_from_dsn(doc_dsn)
        if "@" in name:
            db, host = name.split("@", 1)
            return db, host
    if doc_dsn:
        m = re.search(r"dbname=(\w+)", doc_dsn)
        if m:
            return m[1], "db"
    return "app", "db"


def _doc_user(doc_dsn: str | None) -> str | None:
    """The user a doc's DSN names (postgresql://monitor@db/app: monitor), if it names one."""
    m = re.match(r"postgres(?:ql)?://([^:@/]+)(?::[^@/]*)?@", doc_dsn or "")
    return m[1] if m else None


def _machine_to_doc(output: str, place: Place, doc_dsn: str | None, ports: dict[int, int]) -> str:
    """The machine's own names in the output (socket directory, database, ports) as the doc has them."""
    from pgq_tui.targets import name_from_dsn

    parts = conninfo_to_dict(place.dsn)
    db, host = _display_names(doc_dsn)
    user = _doc_user(doc_dsn)
    output = output.replace(name_from_dsn(place.dsn), f"{db}@{host}")
    output = output.replace(str(parts.get("host", "")), host)
    real_db, real_user = str(parts.get("dbname", "")), str(parts.get("user", ""))
    if real_user and user:
        output = output.replace(f"{real_user}@{real_db}", f"{user}@{db}")
    if real_db:
        output = re.sub(rf"\b{re.escape(real_db)}\b", db, output)
    for doc_port, real in ports.items():
        output = output.replace(f"127.0.0.1:{real}", f"127.0.0.1:{doc_port}")
    return output


def _bash(command: str, ports: dict[int, int]) -> str:
    """The command as bash runs it: --dsn WORD pointed at the scenario, ports swapped."""
    # the DSN word as written (quoted or not) becomes the scenario's, through the environment
    command = re.sub(r"--dsn\s+(\"[^\"]*\"|'[^']*'|\S+)", '--dsn "$PGQ_DOC_DSN"', command)
    for doc_port, real in ports.items():
        command = command.replace(f"127.0.0.1:{doc_port}", f"127.0.0.1:{real}")
    return command


def _environment(place: Place) -> dict[str, str]:
    """The caller's environment without what would change pgq-top's output (its PGQ_TOP_* settings,
    libpq's PG* defaults, the terminal's size and colours)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PGQ_TOP_", "PG", "COLUMNS", "LINES"))}
    env["PGQ_DOC_DSN"] = place.dsn
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["NO_COLOR"] = "1"
    env["TERM"] = "dumb"
    # writes (init) are audited into the tests' log, or the scenario's directory: never ~/.local/state
    env["PGQ_TOP_AUDIT_LOG"] = os.environ.get("PGQ_TOP_AUDIT_LOG") or str(place.cwd / "audit.jsonl")
    return env


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """A background command's first line of output (the exporter's start-up line)."""
    import selectors

    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            return ""
    return proc.stdout.readline().rstrip("\n")


def run(example: Example, place: Place) -> str:
    """Run the example's commands; the block's text as today's code prints it (machine names
    replaced by the doc's, nothing else changed)."""
    env = _environment(place)
    ports: dict[int, int] = {}
    for step in example.steps:
        for doc_port in re.findall(r"127\.0\.0\.1:(\d+)", step.command):
            ports.setdefault(int(doc_port), _free_port())
    doc_dsn = next((d for d in map(_doc_dsn, (s.command for s in example.steps)) if d), None)
    background: list[subprocess.Popen[str]] = []
    steps: list[Step] = []
    status = 0
    try:
        for step in example.steps:
            script = _bash(step.command, ports).rstrip()
            if script.endswith("&") and not script.endswith("&&"):
                proc = subprocess.Popen(
                    ["bash", "-c", script[:-1]],
                    start_new_session=True,  # stopped with its process group at the block's end
                    cwd=place.cwd,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    text=True,
                )
                background.append(proc)
                out = _first_line(proc, TIMEOUT_S)
                status = 0
            else:
                done = subprocess.run(
                    ["bash", "-c", f"(exit {status}); {script}"],  # $? is the previous command's
                    cwd=place.cwd,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    text=True,
                    timeout=TIMEOUT_S,
                )
                out, status = done.stdout, done.returncode
            out = "\n".join(line.rstrip() for line in out.rstrip("\n").splitlines())
            steps.append(Step(step.command, _machine_to_doc(out, place, doc_dsn, ports)))
    finally:
        for proc in background:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return render(tuple(steps))


def rewrite(example: Example, text: str) -> None:
    """Replace the example's block body in its file with `text` (the file re-read: earlier rewrites
    of the same file may have moved it, so the block is found again by its marker)."""
    lines = example.path.read_text().splitlines()
    marker = next(
        i for i, line in enumerate(lines) if (m := MARKER.match(line)) and m["name"] == example.name
    )
    end = next(j for j in range(marker + 2, len(lines)) if lines[j].strip() == "```")
    lines[marker + 2 : end] = text.splitlines()
    example.path.write_text("\n".join(lines) + "\n")


@contextlib.contextmanager
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="pgq-docs-") as d:
        yield Path(d)


class Stage:
    """One database per scenario on a server (made and seeded on first use, dropped on close), and a
    directory holding the scenario's files: where the examples run."""

    def __init__(self, server_dsn: str) -> None:
        self.server_dsn = server_dsn
        self._places: dict[str, Place] = {}
        self._dirs = contextlib.ExitStack()

    def place(self, scenario: str) -> Place:
        from docs_scenarios import SCENARIOS

        if scenario not in self._places:
            if scenario not in SCENARIOS:
                raise ValueError(f"no scenario {scenario!r} in tests/docs_scenarios.py")
            spec = SCENARIOS[scenario]
            name = f"pgq_doc_{re.sub(r'[^a-z0-9]', '_', scenario)}_{uuid.uuid4().hex[:6]}"
            with psycopg.connect(self.server_dsn, autocommit=True) as admin:
                admin.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(name)))
            dsn = make_conninfo(self.server_dsn, dbname=name)
            spec.seed(dsn)
            cwd = self._dirs.enter_context(workdir())
            for file, content in spec.files.items():
                (cwd / file).write_text(content)
            self._places[scenario] = Place(dsn, cwd)
        return self._places[scenario]

    def run(self, example: Example) -> str:
        from docs_scenarios import SCENARIOS

        place = self.place(example.scenario)
        live = SCENARIOS[example.scenario].live
        with live(place.dsn) if live else contextlib.nullcontext():
            return run(example, place)

    def close(self) -> None:
        with psycopg.connect(self.server_dsn, autocommit=True) as admin:
            for place in self._places.values():
                name = conninfo_to_dict(place.dsn)["dbname"]
                admin.execute(
                    psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                        psycopg.sql.Identifier(str(name))
                    )
                )
        self._places.clear()
        self._dirs.close()
