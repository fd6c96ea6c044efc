"""Helpers for the `council run` tests: run the CLI, read a debate folder back, build stubs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from click.testing import CliRunner
from offline import SCRUBBED_PREFIXES
from stub_server import StubResponse, prompt_text

from dreamcontext_council.cli import cli as dreamcontext_cli
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
from dreamcontext_council.folder import frontmatter_io

TOPIC = "Should we migrate the session store from Redis to Postgres?"
OPTIONS = "A=Migrate now,B=Stay on Redis"
REQUIRED_REPORT_ORDER = [
    "Verdict",
    "Decision card",
    "Why",
    "Position timeline",
    "What was debated",
    "Minority view & revisit conditions",
    "Open risks",
    "Appendix: per-agent per-round summaries",
]


class Result(NamedTuple):
    """What a command did: exit code, stdout, stderr."""

    code: int
    out: str
    err: str

    @property
    def last_line(self) -> str:
        return self.out.rstrip("\n").split("\n")[-1]

    def json(self) -> Any:
        return json.loads(self.out)


@dataclass
class Council:
    """The CLI against one workspace root, in-process (fast) or as a real process."""

    root: Path
    workdir: Path
    env: dict[str, str]
    stub_env: dict[str, str] = field(default_factory=dict)

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = dict(self.env)
        env["DREAMCONTEXT_ROOT"] = str(self.root)
        env.update(extra or {})
        return env

    def __call__(
        self, *args: str, env: Mapping[str, str] | None = None, input: str | None = None
    ) -> Result:
        """`dreamcontext council ARGS` in-process through click's CliRunner."""
        wanted = self.environment(env)
        # CliRunner only overrides what it is given: unset everything else that matters.
        overrides: dict[str, str | None] = {
            k: None for k in os.environ if k.startswith(SCRUBBED_PREFIXES) and k not in wanted
        }
        overrides.update(wanted)
        result = CliRunner().invoke(
            dreamcontext_cli,
            ["council", *args],
            input=input if input is not None else "",
            env=overrides,
            catch_exceptions=True,
        )
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception  # a traceback is never an answer to the user
        return Result(result.exit_code, result.stdout, result.stderr)

    def proc(
        self, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120
    ) -> Result:
        """`python -m dreamcontext_council council ARGS` as a real process."""
        done = subprocess.run(
            [sys.executable, "-m", "dreamcontext_council", "council", *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            cwd=self.workdir,
            env=self.environment(env),
            timeout=timeout,
        )
        return Result(
            done.returncode,
            done.stdout.decode("utf-8", "replace"),
            done.stderr.decode("utf-8", "replace"),
        )

    def spawn(self, *args: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start `council ARGS` as a process and return at once."""
        return subprocess.Popen(
            [sys.executable, "-m", "dreamcontext_council", "council", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.workdir,
            env=self.environment(env),
        )

    # -- reading a debate back -------------------------------------------------------

    def ids(self) -> list[str]:
        council = self.root / "council"
        return sorted(p.name for p in council.iterdir() if p.is_dir()) if council.is_dir() else []

    def only_id(self) -> str:
        [debate_id] = self.ids()
        return debate_id

    def folder(self, debate_id: str) -> Path:
        return self.root / "council" / debate_id

    def meta(self, debate_id: str) -> dict[str, Any]:
        meta, _ = frontmatter_io.parse(
            (self.folder(debate_id) / "debate.md").read_text(encoding="utf-8"), "debate.md"
        )
        return meta

    def status(self, debate_id: str) -> str:
        return str(self.meta(debate_id)["status"])

    def log(self, debate_id: str) -> str:
        path = self.folder(debate_id) / "round-log.md"
        return path.read_text(encoding="utf-8") if path.exists() else ""

    def usage(self, debate_id: str) -> list[dict[str, Any]]:
        path = self.folder(debate_id) / "usage.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def text(self, debate_id: str, name: str) -> str:
        return (self.folder(debate_id) / name).read_text(encoding="utf-8")

    def json_file(self, debate_id: str, name: str) -> Any:
        return json.loads(self.text(debate_id, name))

    def new_debate(self, *args: str) -> str:
        """`council new TOPIC ARGS` (no personas unless ARGS say so); returns the id."""
        result = self("new", TOPIC, "--options", OPTIONS, *args)
        assert result.code == 0, result.err
        return result.last_line

    def add_persona(
        self, debate_id: str, slug: str, model: str = "", aspects: str = "risk,cost"
    ) -> None:
        body = f"You are {slug}. You judge every option by its {aspects.replace(',', ' and ')}."
        result = self(
            "agent",
            "create",
            debate_id,
            slug,
            "--model",
            model,
            "--aspects",
            aspects,
            "--body",
            body,
        )
        assert result.code == 0, result.err


# -- what the files must look like -----------------------------------------------------


def h2_titles(markdown: str) -> list[str]:
    """Level-2 headings outside fenced code, in order."""
    titles, fence = [], None
    for line in markdown.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            fence = None if fence == marker else (fence or marker)
            continue
        if fence is None and line.startswith("## "):
            titles.append(line[3:].strip())
    return titles


def section(markdown: str, title: str) -> str:
    """The body of the `## title` section."""
    lines = markdown.split("\n")
    start = lines.index(f"## {title}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end]).strip("\n")


def ok_answers(records: Iterable[dict[str, Any]]) -> dict[tuple[str, int], int]:
    """Successful persona answers (first asks and repairs) per (persona, round)."""
    counts: dict[tuple[str, int], int] = {}
    for r in records:
        if r["outcome"] == "ok" and r["phase"] in ("opening", "cross-exam", "rebuttal"):
            key = (r["persona"], r["round"])
            counts[key] = counts.get(key, 0) + 1
    return counts


def wait_for(condition: Callable[[], bool], timeout: float = 60.0, step: float = 0.01) -> None:
    """Poll until `condition()` holds; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition never held")
        time.sleep(step)


# -- stub servers that answer like personas --------------------------------------------


def request_task(request_json: Mapping[str, Any]) -> dict[str, Any]:
    """The council-call task of a request to either API."""
    return task_from_text(prompt_text(request_json))


def scripted_responder(request_json: dict[str, Any]) -> str:
    """A stub responder that answers every council call as the scripted provider would."""
    return scripted_text(request_task(request_json))


def fail_model(model: str, response: StubResponse) -> Callable[[dict[str, Any]], Any]:
    """A responder that sends `response` to calls for `model` and scripted answers otherwise."""

    def responder(request_json: dict[str, Any]) -> Any:
        if request_json.get("model") == model:
            return response
        return scripted_responder(request_json)

    return responder


ECHO_SCRIPT = """\
import sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
print(scripted_text(task_from_text(sys.stdin.read())))
"""


TEST_KEY = "sk-test-engine-0123456789abcdef"


def roster_file(path: Path, personas: Mapping[str, str]) -> str:
    """A JSON roster: slug → model, each persona's body naming only itself."""
    data = [
        {
            "slug": slug,
            "model": model,
            "aspects": ["risk", "cost"],
            "body": f"You are {slug}. You judge every option by its risk and its cost.",
        }
        for slug, model in personas.items()
    ]
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def openai_env(server_url: str, key: str = TEST_KEY) -> dict[str, str]:
    """Environment that sends every default (openai) call to the stub server."""
    return {"OPENAI_API_KEY": key, "OPENAI_BASE_URL": server_url}


def calls_by(requests: Iterable[Any]) -> dict[tuple[str, int, str], list[str]]:
    """Prompt texts a stub received, by (persona, round, phase) from their council-call task."""
    found: dict[tuple[str, int, str], list[str]] = {}
    for request in requests:
        task = request_task(request.json)
        if not task:
            continue
        phase = "repair" if task.get("repair") else str(task.get("phase"))
        key = (str(task.get("persona", "orchestrator")), int(task.get("round", 0)), phase)
        found.setdefault(key, []).append(prompt_text(request.json))
    return found


def without_call_line(text: str) -> str:
    """Prompt text without the machine-readable council-call lines."""
    return "\n".join(line for line in text.split("\n") if "<!-- council-call" not in line)
