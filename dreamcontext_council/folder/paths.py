"""Where things live: the `_dream_context/` root and every path inside a debate."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from dreamcontext_council.errors import NotFoundError
from dreamcontext_council.folder.names import check_debate_id, check_slug

EVALS_FOLDER = "evals"  # beside council/ and knowledge/ in the root
# In an eval's folder: its solo and sample answers, and each question's timing.
EVAL_ANSWERS_FOLDER = "answers"

ROOT_NAME = "_dream_context"
ROOT_ENV = "DREAMCONTEXT_ROOT"


@dataclass(frozen=True)
class Root:
    """A `_dream_context/` folder."""

    path: Path

    @property
    def council(self) -> Path:
        return self.path / "council"

    @property
    def index(self) -> Path:
        return self.council / "index.json"

    @property
    def knowledge(self) -> Path:
        return self.path / "knowledge"

    @property
    def evals(self) -> Path:
        """`council eval`'s folders, one per eval."""
        return self.path / EVALS_FOLDER

    @property
    def live_file(self) -> Path:
        return self.path / "tmp" / ".council-live.json"

    def debate(self, debate_id: str) -> DebatePaths:
        """Paths of one debate; the id is validated first."""
        return DebatePaths(self.council / check_debate_id(debate_id))

    def existing_debate(self, debate_id: str) -> DebatePaths:
        """Paths of a debate that must exist."""
        paths = self.debate(debate_id)
        if not paths.debate_md.is_file():
            raise NotFoundError(
                f"No debate {debate_id} under {self.council}; "
                "run `dreamcontext council list --all` to see the debates."
            )
        return paths


class DebatePaths(NamedTuple):
    """Every file of one debate folder."""

    folder: Path

    @property
    def id(self) -> str:
        return self.folder.name

    @property
    def debate_md(self) -> Path:
        return self.folder / "debate.md"

    @property
    def round_log(self) -> Path:
        return self.folder / "round-log.md"

    @property
    def verdicts(self) -> Path:
        return self.folder / "verdicts.json"

    @property
    def final_report(self) -> Path:
        return self.folder / "final-report.md"

    @property
    def usage(self) -> Path:
        return self.folder / "usage.jsonl"

    @property
    def claims(self) -> Path:
        return self.folder / "claims.json"

    @property
    def baseline(self) -> Path:
        return self.folder / "baseline.md"

    @property
    def reviews(self) -> Path:
        return self.folder / "reviews.json"

    @property
    def synthesis_input(self) -> Path:
        return self.folder / "synthesis-input.md"

    @property
    def attachments(self) -> Path:
        return self.folder / "attachments"

    @property
    def synthesis_raw(self) -> Path:
        """The synthesizer's whole answer, kept when it was over the size cap."""
        return self.folder / "synthesis-raw.md"

    def persona(self, slug: str) -> PersonaPaths:
        """Paths of one persona; the slug is validated first."""
        return PersonaPaths(self.folder / check_slug(slug))


class PersonaPaths(NamedTuple):
    """The files of one persona inside a debate."""

    folder: Path

    @property
    def slug(self) -> str:
        return self.folder.name

    @property
    def context(self) -> Path:
        return self.folder / "context-and-persona.md"

    @property
    def report(self) -> Path:
        return self.folder / "report.md"

    @property
    def compressed(self) -> Path:
        return self.folder / "compressed.md"

    @property
    def researches(self) -> Path:
        return self.folder / "researches"

    @property
    def research_index(self) -> Path:
        return self.researches / "index.json"

    @property
    def raw(self) -> Path:
        return self.folder / "raw"

    def raw_answer(self, number: int) -> Path:
        """The persona's whole answer for round N, kept when it was over the size cap."""
        return self.raw / f"round-{number}.md"

    def sent_prompt(self, number: int) -> Path:
        """The prompts `council run` sent the persona's model in round N."""
        return self.folder / "prompts" / f"round-{number}.json"


def find_root(
    explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None
) -> Root | None:
    """The root named by `--root`, then `DREAMCONTEXT_ROOT`, then the nearest `_dream_context/`.

    Returns None when there is none; an explicit or env root is returned even if missing.
    """
    chosen = explicit or os.environ.get(ROOT_ENV)
    if chosen:
        path = Path(chosen).expanduser()
        # Accept both the root itself and the folder that holds it.
        if path.name != ROOT_NAME and (path / ROOT_NAME).is_dir():
            path = path / ROOT_NAME
        return Root(path.resolve())
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / ROOT_NAME
        if candidate.is_dir():
            return Root(candidate)
    return None


def require_root(explicit: str | os.PathLike[str] | None = None) -> Root:
    """The root for a read or update command; a clear error when there is none."""
    root = find_root(explicit)
    if root is None or not root.path.is_dir():
        where = root.path if root else Path.cwd()
        raise NotFoundError(
            f"No {ROOT_NAME}/ folder at or above {where}; run `dreamcontext council new "
            '"<topic>"` to start one, or pass --root PATH.'
        )
    return root


def root_for_new(explicit: str | os.PathLike[str] | None = None) -> tuple[Root, bool]:
    """The root for `new`: the existing one, or `_dream_context/` here. Bool: it was created."""
    from dreamcontext_council.folder.safe_write import make_folder  # paths is imported first

    root = find_root(explicit) or Root((Path.cwd() / ROOT_NAME).resolve())
    created = not root.path.is_dir()
    make_folder(root.council, root.path)  # a `council` link out of the root is refused
    return root, created
