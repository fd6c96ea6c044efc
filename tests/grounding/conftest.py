"""Fixtures for grounded debates: a clean workspace, the CLI, a stub server answering like
the scripted provider, a command persona, and a way to prove nothing was written."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from click.testing import CliRunner
from offline import no_provider_environment as no_provider_environment  # autouse here
from stub_server import StubServer, prompt_text

from dreamcontext_council.cli import cli as dreamcontext_cli
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
from dreamcontext_council.folder import frontmatter_io

TEST_KEY = "sk-test-grounding-0123456789abcdef"
ECHO_SCRIPT = """\
import sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
print(scripted_text(task_from_text(sys.stdin.read())))
"""


class Result(NamedTuple):
    """What a command did: exit code, stdout, stderr."""

    code: int
    out: str
    err: str

    @property
    def last_line(self) -> str:
        return self.out.rstrip("\n").split("\n")[-1]


@dataclass
class Council:
    """`dreamcontext council …` in-process against one workspace root."""

    root: Path
    workdir: Path

    def __call__(self, *args: str, env: Mapping[str, str] | None = None) -> Result:
        result = CliRunner().invoke(
            dreamcontext_cli,
            ["council", *args],
            input="",
            env={"DREAMCONTEXT_ROOT": str(self.root), **(env or {})},
            catch_exceptions=True,
        )
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception  # a traceback is never an answer to the user
        return Result(result.exit_code, result.stdout, result.stderr)

    def ids(self) -> list[str]:
        council = self.root / "council"
        return sorted(p.name for p in council.iterdir() if p.is_dir()) if council.is_dir() else []

    def folder(self, debate_id: str) -> Path:
        return self.root / "council" / debate_id

    def meta(self, debate_id: str) -> dict[str, Any]:
        text = (self.folder(debate_id) / "debate.md").read_text(encoding="utf-8")
        meta, _ = frontmatter_io.parse(text, "debate.md")
        return meta

    def text(self, debate_id: str, name: str) -> str:
        return (self.folder(debate_id) / name).read_text(encoding="utf-8")

    def usage(self, debate_id: str) -> list[dict[str, Any]]:
        path = self.folder(debate_id) / "usage.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def tree(self) -> dict[str, str]:
        """Every file under the root with the sha256 of its bytes (empty when there is no root)."""
        if not self.root.exists():
            return {}
        return {
            str(p.relative_to(self.root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(self.root.rglob("*"))
            if p.is_file()
        }

    def new(self, topic: str, *args: str) -> str:
        result = self("new", topic, *args)
        assert result.code == 0, result.err
        return result.last_line


@pytest.fixture
def council(tmp_path: Path) -> Council:
    """The CLI against a fresh workspace (`_dream_context/` not created yet)."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    return Council(workdir / "_dream_context", workdir)


def scripted_responder(request_json: dict[str, Any]) -> str:
    """Answer every council call as the scripted provider would."""
    return scripted_text(task_from_text(prompt_text(request_json)))


@pytest.fixture
def stub() -> Iterator[StubServer]:
    """A local server for the real openai SDK that answers like the scripted provider."""
    with StubServer(responder=scripted_responder) as server:
        yield server


def stub_args(server: StubServer, model: str = "openai:stub-model") -> list[str]:
    """`run` options that send every default call to the stub."""
    return ["--model", model, "--base-url", server.openai_url]


STUB_ENV = {"OPENAI_API_KEY": TEST_KEY}


def calls(server: StubServer) -> list[tuple[dict[str, Any], str]]:
    """(council-call task, full prompt text) of every request the stub received."""
    found = []
    for request in server.requests:
        text = prompt_text(request.json)
        found.append((task_from_text(text), text))
    return found


@pytest.fixture
def echo_command(tmp_path: Path) -> str:
    """A `command:` model: a python script printing the scripted answer to its stdin."""
    script = tmp_path / "echo_persona.py"
    script.write_text(ECHO_SCRIPT, encoding="utf-8")
    return f"command:{sys.executable} {script}"


def roster_file(path: Path, models: Mapping[str, str]) -> str:
    """A JSON roster, slug → model, each persona's body naming only itself."""
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


@pytest.fixture
def small_roster(tmp_path: Path) -> str:
    """Two personas on the default model: enough for a debate, quick to run."""
    return roster_file(tmp_path / "roster.json", {"risk-auditor": "", "platform-lead": ""})
