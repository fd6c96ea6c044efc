"""What the `council run` suites (engine, synthesis, grounding) share: the CLI against one
workspace, the debate folder read back, and personas that answer like the scripted provider.

`stub` and `echo_command` are fixtures: a suite's conftest imports them to use them.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from debate_story import OPTIONS, TOPIC, Result, invoke, run_process, start_process
from offline import SCRUBBED_PREFIXES
from stub_server import StubServer, prompt_text

from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.rules.usage import calls_of


@dataclass
class Council:
    """The CLI against one workspace root, in-process (fast) or as a real process.

    With `env`, commands get that environment (plus the root and what a call adds), and
    in-process any provider or council variable it does not name is unset for the call.
    Without, they get the test process's own environment as it is at each call.
    """

    root: Path
    workdir: Path
    env: Mapping[str, str] | None = None

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ if self.env is None else self.env)
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
        return invoke(args, input=input if input is not None else "", env=overrides)

    def proc(
        self, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120
    ) -> Result:
        """`python -m dreamcontext_council council ARGS` as a real process."""
        return run_process(
            args, cwd=self.workdir, env=self.environment(env), input=None, timeout=timeout
        )

    def spawn(self, *args: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start `council ARGS` as a process and return at once."""
        return start_process(args, cwd=self.workdir, env=self.environment(env))

    # -- making a debate -------------------------------------------------------------

    def new(self, topic: str, *args: str) -> str:
        """`council new TOPIC ARGS`; returns the id."""
        result = self("new", topic, *args)
        assert result.code == 0, result.err
        return result.last_line

    def new_debate(self, *args: str) -> str:
        """`council new TOPIC ARGS` (no personas unless ARGS say so); returns the id."""
        return self.new(TOPIC, "--options", OPTIONS, *args)

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
        meta, _ = frontmatter_io.parse(self.text(debate_id, "debate.md"), "debate.md")
        return meta

    def status(self, debate_id: str) -> str:
        return str(self.meta(debate_id)["status"])

    def log(self, debate_id: str) -> str:
        path = self.folder(debate_id) / "round-log.md"
        return path.read_text(encoding="utf-8") if path.exists() else ""

    def usage(self, debate_id: str) -> list[dict[str, Any]]:
        """usage.jsonl, one record per call (a call's `pending` line folded into its outcome)."""
        return calls_of(self.usage_lines(debate_id))

    def usage_lines(self, debate_id: str) -> list[dict[str, Any]]:
        """usage.jsonl line by line, as written."""
        path = self.folder(debate_id) / "usage.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def text(self, debate_id: str, name: str) -> str:
        return (self.folder(debate_id) / name).read_text(encoding="utf-8")

    def json_file(self, debate_id: str, name: str) -> Any:
        return json.loads(self.text(debate_id, name))

    def tree(self) -> dict[str, str]:
        """Every file under the root with the sha256 of its bytes (empty when there is no root)."""
        if not self.root.exists():
            return {}
        return {
            str(p.relative_to(self.root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(self.root.rglob("*"))
            if p.is_file()
        }


def roster_file(path: Path, models: Mapping[str, str]) -> str:
    """A JSON roster: slug → model, each persona's body naming only itself."""
    data = [
        {
            "slug": slug,
            "model": model,
            "aspects": ["risk", "cost"],
            "body": f"You are {slug}. You judge every option by its risk and its cost.",
        }
        for slug, model in models.items()
    ]
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


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


# -- personas that answer like the scripted provider ----------------------------------


def request_task(request_json: Mapping[str, Any]) -> dict[str, Any]:
    """The call a request to either API describes, read from its prompt text."""
    return task_from_text(prompt_text(request_json))


def scripted_responder(request_json: dict[str, Any]) -> str:
    """A stub responder that answers every council call as the scripted provider would."""
    return scripted_text(request_task(request_json))


ECHO_SCRIPT = """\
import sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
print(scripted_text(task_from_text(sys.stdin.read())))
"""


@pytest.fixture
def stub() -> Iterator[StubServer]:
    """A stub server (both APIs) that answers every council call like the scripted provider."""
    with StubServer(responder=scripted_responder) as server:
        yield server


@pytest.fixture
def echo_command(tmp_path: Path) -> str:
    """A `command:` model: a python script that prints the scripted answer to its stdin."""
    script = tmp_path / "echo_persona.py"
    script.write_text(ECHO_SCRIPT, encoding="utf-8")
    return f"command:{sys.executable} {script}"
