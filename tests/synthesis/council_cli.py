"""The CLI against one workspace, in-process, and the debate folder read back."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from click.testing import CliRunner
from offline import SCRUBBED_PREFIXES

from dreamcontext_council.cli import cli as dreamcontext_cli
from dreamcontext_council.folder import frontmatter_io

TEST_KEY = "sk-test-synthesis-0123456789"


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
    env: dict[str, str]

    def __call__(self, *args: str, env: Mapping[str, str] | None = None) -> Result:
        wanted = {**self.env, "DREAMCONTEXT_ROOT": str(self.root), **(env or {})}
        # CliRunner only overrides what it is given: unset everything else that matters.
        overrides: dict[str, str | None] = {
            k: None for k in os.environ if k.startswith(SCRUBBED_PREFIXES) and k not in wanted
        }
        overrides.update(wanted)
        result = CliRunner().invoke(
            dreamcontext_cli, ["council", *args], input="", env=overrides, catch_exceptions=True
        )
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception  # a traceback is never an answer to the user
        return Result(result.exit_code, result.stdout, result.stderr)

    def folder(self, debate_id: str) -> Path:
        return self.root / "council" / debate_id

    def ids(self) -> list[str]:
        council = self.root / "council"
        return sorted(p.name for p in council.iterdir() if p.is_dir()) if council.is_dir() else []

    def meta(self, debate_id: str) -> dict[str, Any]:
        meta, _ = frontmatter_io.parse(self.text(debate_id, "debate.md"), "debate.md")
        return meta

    def status(self, debate_id: str) -> str:
        return str(self.meta(debate_id)["status"])

    def text(self, debate_id: str, name: str) -> str:
        return (self.folder(debate_id) / name).read_text(encoding="utf-8")

    def json_file(self, debate_id: str, name: str) -> Any:
        return json.loads(self.text(debate_id, name))

    def usage(self, debate_id: str) -> list[dict[str, Any]]:
        path = self.folder(debate_id) / "usage.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def roster_file(path: Path, slugs: list[str], model: str) -> str:
    """A JSON roster file: every persona on `model`, in this priority order."""
    data = [
        {
            "slug": slug,
            "model": model,
            "aspects": ["risk", "cost"],
            "body": f"You are {slug}. You judge every option by its risk and its cost.",
        }
        for slug in slugs
    ]
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def openai_env(url: str) -> dict[str, str]:
    """Every default (openai) call goes to the stub server."""
    return {"OPENAI_API_KEY": TEST_KEY, "OPENAI_BASE_URL": url}


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
