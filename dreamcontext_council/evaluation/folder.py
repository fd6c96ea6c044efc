"""An eval's folder, `_dream_context/evals/<eval-id>/`: its set, settings, answers and
the debate of each question; what running an eval writes and reading it back reads."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.errors import UsageError
from dreamcontext_council.folder.paths import EVAL_ANSWERS_FOLDER, Root
from dreamcontext_council.folder.safe_write import make_folder
from dreamcontext_council.folder.storage import atomic_write_json, atomic_write_text, read_text
from dreamcontext_council.rules.eval_set import EvalQuestion, parse_set, render_set
from dreamcontext_council.rules.eval_stats import MAX_MATCHED_SAMPLES

METHODS = ("council", "solo", "vote", "weighted", "self-consistency")
MATCH = "match"  # eval.json's `samples` for --samples match


@dataclass
class EvalSettings:
    """How to run the eval; recorded in eval.json."""

    answer_type: str
    personas_spec: str = "cognitive"
    rounds: int = 2
    model: str | None = None
    synth_model: str | None = None
    base_url: str | None = None
    timeout: float | None = None
    retries: int | None = None
    concurrency: int | None = None
    parallel: int = 8
    samples: int = 0  # self-consistency samples; 0 leaves the method out
    matched: bool = False  # --samples match: per question, as many as the council's spend
    max_cost: float | None = None  # for the whole eval, in this run
    max_calls: int | None = None
    allow_commands: list[str] = field(default_factory=list)
    env: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "answer_type": self.answer_type,
            "personas": self.personas_spec,
            "rounds": self.rounds,
            "model": self.model,
            "synth_model": self.synth_model,
            "samples": MATCH if self.matched else self.samples,
        }


def eval_id_for(set_text: str, name: str) -> str:
    """The same id for the same set: `eval-<name>-<8 hex of the set>`."""
    digest = hashlib.sha256(set_text.encode("utf-8")).hexdigest()[:8]
    stem = "".join(c if c.isalnum() or c in "-_" else "-" for c in name)[:40].strip("-")
    return f"eval-{stem or 'set'}-{digest}"


class EvalFolder:
    """`_dream_context/evals/<eval-id>/`: set.jsonl, eval.json, debates.json, answers/, results."""

    def __init__(self, root: Root, eval_id: str) -> None:
        self.root = root
        self.id = eval_id
        self.path = root.evals / eval_id

    @property
    def answers(self) -> Path:
        return self.path / EVAL_ANSWERS_FOLDER

    def solo_answer(self, qid: str) -> Path:
        return self.answers / f"{qid}.solo.md"

    def sample_answer(self, qid: str, number: int) -> Path:
        return self.answers / f"{qid}.sample-{number}.md"

    def budget(self, qid: str) -> Path:
        """How many samples the council's spend on `qid` affords (--samples match)."""
        return self.answers / f"{qid}.budget.json"

    def matched_budget(self, qid: str) -> dict[str, Any]:
        """The budget file of `qid`: samples, council and sample spend, and their measure;
        empty before it is written or when it does not read as one."""
        path = self.budget(qid)
        if not path.is_file():
            return {}
        data = json.loads(read_text(path, within=self.path))
        if not isinstance(data, dict):
            return {}
        samples = data.get("samples")
        if isinstance(samples, bool) or not isinstance(samples, int):
            return {}
        return {**data, "samples": max(0, min(MAX_MATCHED_SAMPLES, samples))}

    def sample_count(self, qid: str, setting: object) -> int:
        """How many self-consistency samples question `qid` has: the eval's `samples`, or
        with `match` the number its budget file gives (0 before it is written)."""
        if setting == MATCH:
            return int(self.matched_budget(qid).get("samples", 0))
        if isinstance(setting, int) and not isinstance(setting, bool):
            return max(0, min(1000, setting))
        return 0

    def timing(self, qid: str) -> Path:
        return self.answers / f"{qid}.timing.json"

    def debates(self) -> dict[str, str]:
        path = self.path / "debates.json"
        if not path.is_file():
            return {}
        data = json.loads(read_text(path, within=self.path))
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def record_debate(self, qid: str, debate_id: str) -> None:
        atomic_write_json(
            self.path / "debates.json",
            {**self.debates(), qid: debate_id},
            within=self.root.path,
        )

    def questions(self) -> list[EvalQuestion]:
        return parse_set(read_text(self.path / "set.jsonl", within=self.path), "set.jsonl")

    def settings(self) -> dict[str, Any]:
        data = json.loads(read_text(self.path / "eval.json", within=self.path))
        return data if isinstance(data, dict) else {}

    def timings(self, qid: str) -> dict[str, float]:
        """Seconds each method has spent on question `qid` so far."""
        path = self.timing(qid)
        if not path.is_file():
            return {}
        data = json.loads(read_text(path, within=self.path))
        return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def open(self, questions: list[EvalQuestion], settings: EvalSettings) -> bool:
        """Create the folder, or check that it holds the same set; True when it is new."""
        text = render_set(questions)
        set_file = self.path / "set.jsonl"
        if set_file.is_file():
            if read_text(set_file, within=self.path) != text:
                raise UsageError(
                    f"{self.path} holds another set; pass --id with a new name to start a new eval."
                )
            return False
        make_folder(self.answers, self.root.path)
        eval_json = {"id": self.id, **settings.to_json()}
        atomic_write_json(self.path / "eval.json", eval_json, within=self.root.path)
        atomic_write_text(set_file, text, within=self.root.path)
        return True


def debate_usage(files: DebateFiles) -> list[dict[str, Any]]:
    """usage.jsonl of a question's debate, line by line; a line cut by a kill is skipped."""
    if not files.paths.usage.is_file():
        return []
    lines = []
    for line in files.read(files.paths.usage).splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            lines.append(record)
    return lines
