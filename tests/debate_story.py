"""Helpers for the story-style council tests: run commands, hold a debate, read the files."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import frontmatter
from click.testing import CliRunner

from dreamcontext_council.cli import cli as dreamcontext_cli

REPO = Path(__file__).resolve().parents[1]
# A real folder the Node dreamcontext CLI wrote, with its printed output under expected/.
REFERENCE = REPO / "tests" / "fixtures" / "reference-debate"
REFERENCE_ID = "council_lwVpZDlF"
LIVE_FILE = Path("tmp") / ".council-live.json"
LOCK_NAME = ".council.lock"

TOPIC = "Should we migrate the session store from Redis to Postgres?"
OPTIONS = "A=Migrate now,B=Stay on Redis"
# The final report's level-2 sections, in the synthesizer format's order.
FINAL_REPORT_SECTIONS = (
    "Verdict",
    "Decision card",
    "Why",
    "Position timeline",
    "What was debated",
    "Minority view & revisit conditions",
    "Open risks",
    "Appendix: per-agent per-round summaries",
)


class Result(NamedTuple):
    """What a command did: exit code, stdout, stderr."""

    code: int
    out: str
    err: str

    @property
    def last_line(self) -> str:
        return self.out.rstrip("\n").split("\n")[-1]

    @property
    def text(self) -> str:
        return self.out + self.err

    def json(self) -> Any:
        return json.loads(self.out)


@dataclass(frozen=True)
class Reference:
    """A private, writable copy of the Node tool's reference debate."""

    root: Path  # the copied _dream_context/
    expected: Path  # the Node tool's printed output
    id: str = REFERENCE_ID

    @property
    def folder(self) -> Path:
        return self.root / "council" / self.id

    def expected_text(self, name: str) -> str:
        return (self.expected / name).read_text(encoding="utf-8")


Runner = Callable[..., Result]


def council_argv(*args: str | bytes) -> list[str | bytes]:
    """`python -m dreamcontext_council council ARGS`, the argv of a real process."""
    return [sys.executable, "-m", "dreamcontext_council", "council", *args]


def council_environment(root: Path | None, extra: Mapping[str, str] | None) -> dict[str, str]:
    """This process's environment for a council process: UTF-8 output, `root` (or none)."""
    environment = {k: v for k, v in os.environ.items() if k != "DREAMCONTEXT_ROOT"}
    environment["PYTHONIOENCODING"] = "utf-8"
    if root is not None:
        environment["DREAMCONTEXT_ROOT"] = str(root)
    environment.update(extra or {})
    return environment


def run_process(
    args: Sequence[str | bytes],
    *,
    cwd: Path,
    env: Mapping[str, str],
    input: bytes | None = b"",
    timeout: float = 120,
    preexec_fn: Callable[[], None] | None = None,
) -> Result:
    """`python -m dreamcontext_council council ARGS` as a real process, waited for.

    `input` is what it reads on stdin; with None, stdin is /dev/null. `preexec_fn` runs in
    the child before the command starts (to set a resource limit, say).
    """
    stdin: dict[str, Any] = {"stdin": subprocess.DEVNULL} if input is None else {"input": input}
    done = subprocess.run(
        council_argv(*args),
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        preexec_fn=preexec_fn,
        **stdin,
    )
    return Result(
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


def as_from_a_terminal() -> None:
    """In a child, before exec: take SIGINT as a process started from a terminal does.

    A shell that runs jobs in the background starts them with SIGINT ignored, and an
    ignored signal stays ignored across fork and exec, so Ctrl-C tests would hang there.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_process(
    args: Sequence[str | bytes],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: int = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    """`python -m dreamcontext_council council ARGS` as a real process, not waited for;
    SIGINT reaches it as Ctrl-C would."""
    return subprocess.Popen(
        council_argv(*args),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        preexec_fn=as_from_a_terminal,
    )


def invoke(
    args: Sequence[str], *, env: Mapping[str, str | None], input: str | bytes = b""
) -> Result:
    """`dreamcontext council ARGS` in-process through click's CliRunner, which sets `env`
    (None unsets) for the call only."""
    result = CliRunner().invoke(
        dreamcontext_cli, ["council", *args], input=input, env=env, catch_exceptions=True
    )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # A traceback is never an acceptable answer to the user.
        raise result.exception
    return Result(result.exit_code, result.stdout, result.stderr)


def subprocess_runner(workdir: Path, root: Path | None) -> Runner:
    """`python -m dreamcontext_council council ...` as a real process."""

    def run(
        *args: str | bytes,
        input: str | bytes | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Result:
        stdin = input.encode("utf-8") if isinstance(input, str) else input
        return run_process(
            args,
            cwd=cwd or workdir,
            env=council_environment(root, env),
            input=stdin if stdin is not None else b"",
        )

    return run


def spawn(
    args: Sequence[str], root: Path, workdir: Path, input: bytes | None = None
) -> subprocess.Popen[bytes]:
    """Start a council command without waiting for it."""
    return start_process(
        args,
        cwd=workdir,
        env=council_environment(root, None),
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
    )


def inprocess_runner(root: Path) -> Runner:
    """The same commands through click's CliRunner: fast, for the many small cases."""

    def run(
        *args: str, input: str | bytes | None = None, env: Mapping[str, str] | None = None
    ) -> Result:
        return invoke(
            args,
            input=input if input is not None else b"",
            env={"DREAMCONTEXT_ROOT": str(root), **(env or {})},
        )

    return run


def entry(
    summary: str = "Migrating cuts ops cost; keep a rollback.",
    *,
    position: str = "Option A.",
    headings: Mapping[str, str] | None = None,
    heading_round: int | None = None,
    drop: Sequence[str] = (),
) -> str:
    """A round entry with every required section (names may be spelled as `headings` says)."""
    sections = {
        "Executive Summary": summary,
        "Position": position,
        "Reasoning": "- Ops cost drops.\n\n```sql\n-- ## Round 9 fake heading inside a fence\nSELECT 1;\n```",
        "Reactions to peers": "**growth-cfo**: underestimates cutover risk.",
        "Open questions": "What is the p99 latency budget?",
    }
    lines = [f"## Round {heading_round} — 2026-11-30", ""] if heading_round else []
    for title, body in sections.items():
        if title in drop:
            continue
        lines += [f"### {(headings or {}).get(title, title)}", body, ""]
    return "\n".join(lines)


class Chair:
    """Holds a debate through the CLI, as an orchestrating agent would."""

    def __init__(self, run: Runner, root: Path) -> None:
        self.run = run
        self.root = root

    def ok(self, *args: str, input: str | bytes | None = None) -> str:
        result = self.run(*args, input=input)
        assert result.code == 0, f"council {' '.join(args)} failed: {result.err}"
        return result.out

    def new(
        self,
        topic: str = TOPIC,
        *,
        personas: Sequence[str] = ("risk-auditor", "growth-cfo", "user-advocate"),
        options: str | None = OPTIONS,
        rounds: int = 2,
    ) -> str:
        extra = ["--options", options] if options else []
        debate_id = self.ok("new", topic, "--rounds", str(rounds), *extra).rstrip("\n")
        debate_id = debate_id.split("\n")[-1]
        for slug in personas:
            self.seat(debate_id, slug)
        return debate_id

    def seat(self, debate_id: str, slug: str, body: str | None = None) -> None:
        self.ok(
            "agent",
            "create",
            debate_id,
            slug,
            "--model",
            "sonnet",
            "--aspects",
            "cost,risk,latency",
            "--body",
            body or f"You are {slug}. You obsess over your aspects and push back hard.",
        )

    def submit(
        self, debate_id: str, slug: str, number: int, stance: str = "A", conviction: int = 60
    ) -> None:
        self.ok(
            "verdict",
            debate_id,
            slug,
            str(number),
            "--stance",
            stance,
            "--conviction",
            str(conviction),
            "--headline",
            f"{slug} says {stance} in R{number}",
            "--concession",
            f"peer point R{number}",
        )
        summary = f"{slug} thinks round {number} points to option {stance}."
        body = entry(summary)
        peer = self.assignment(debate_id, slug) if number == 2 else None
        if peer:  # round 2 with an assignment: the critique and its score, or it is refused
            body += f"### Cross-examination\n- {peer} ignores the cutover window.\n\nScore: 6/10\n"
        self.ok("report", "append", debate_id, slug, "--round", str(number), input=body)

    def assignment(self, debate_id: str, slug: str) -> str | None:
        """The peer `slug` cross-examines in round 2, as debate.md records it."""
        meta = frontmatter.loads((self.folder(debate_id) / "debate.md").read_text("utf-8"))
        pairs = meta.metadata.get("cross_examination") or {}
        return pairs.get(slug) if isinstance(pairs, dict) else None

    def play_round(self, debate_id: str, number: int, votes: Mapping[str, tuple[str, int]]) -> None:
        self.ok("round", "start", debate_id, str(number))
        for slug, (stance, conviction) in votes.items():
            self.submit(debate_id, slug, number, stance, conviction)
        self.ok("round", "end", debate_id, str(number))

    def reference_story(self) -> str:
        """The fixture's debate replayed through our commands (2 rounds, 3 personas)."""
        debate_id = self.new()
        self.play_round(
            debate_id,
            1,
            {"risk-auditor": ("A", 60), "growth-cfo": ("A", 60), "user-advocate": ("B", 55)},
        )
        self.ok("inject", debate_id, "Postgres is already run by the platform team")
        self.ok(
            "question", debate_id, "growth-cfo", "What does the migration cost in engineer-weeks?"
        )
        self.ok("question", debate_id, "growth-cfo", "Steelman option B for this round.")
        self.play_round(
            debate_id,
            2,
            {"risk-auditor": ("A", 70), "growth-cfo": ("A", 70), "user-advocate": ("B", 40)},
        )
        return debate_id

    def folder(self, debate_id: str) -> Path:
        return self.root / "council" / debate_id

    def write_final_report(self, debate_id: str, *, verdict: bool = True) -> None:
        heading = "## Verdict" if verdict else "## Summary"
        (self.folder(debate_id) / "final-report.md").write_text(
            FINAL_REPORT.replace("## Verdict", heading).replace("{id}", debate_id),
            encoding="utf-8",
        )

    def close(self, debate_id: str) -> None:
        """Synthesize, write the final report by hand, complete."""
        self.ok("synthesize", debate_id)
        self.write_final_report(debate_id)
        self.ok("complete", debate_id)


FINAL_REPORT = """---
debate_id: "{id}"
topic: "Should we migrate the session store from Redis to Postgres?"
personas: [risk-auditor, growth-cfo, user-advocate]
rounds: 2
---

## Verdict

Migrate now (A). Confidence: medium.

## Decision card

| Chosen | Runner-up | Deciding factors | Strongest dissent | Conditions to revisit |
|---|---|---|---|---|
| A | B | cost, ops | user-advocate | p99 > 20ms |

## Why

- **Ops cost** drops. *— risk-auditor R1, growth-cfo R2*

## Position timeline

(table)

## What was debated

Latency.

## Minority view & revisit conditions

user-advocate: stay on Redis if p99 > 20ms.

## Open risks

- Cutover.

## Appendix: per-agent per-round summaries

### risk-auditor — Round 1
x
"""


def writable_copy(source: Path, target: Path) -> Path:
    """Copy a read-only fixture tree and make the copy writable."""
    shutil.copytree(source, target)
    for folder, dirs, files in os.walk(target):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    target.chmod(target.stat().st_mode | stat.S_IWUSR)
    return target


def tree_bytes(root: Path, *, live_heartbeat: bool = False) -> dict[str, bytes]:
    """Every file under `root` by relative path (lock files are not content).

    With `live_heartbeat`, the live file's `updated` time is dropped: it is a heartbeat that
    any command that refreshes the chamber may move.
    """
    files: dict[str, bytes] = {}
    if not root.exists():
        return files
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name != LOCK_NAME:
            data = path.read_bytes()
            if live_heartbeat and path.relative_to(root) == LIVE_FILE:
                state = json.loads(data)
                state.pop("updated", None)
                data = json.dumps(state, sort_keys=True).encode()
            files[str(path.relative_to(root))] = data
    return files


def changed_files(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> list[str]:
    """Paths added, removed or rewritten with other bytes."""
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))


def read_frontmatter(path: Path) -> tuple[dict[str, Any], str]:
    post = frontmatter.loads(path.read_text(encoding="utf-8"))
    return dict(post.metadata), post.content
