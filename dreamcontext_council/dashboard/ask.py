"""Ask the council from the list page: the form's fields as `council run`'s options.

The form names `topic`, `options` (one `KEY=label` a line, or none), `personas` (a preset,
`auto`, or a roster file inside the project), `rounds` and `human` (take a seat as that
persona, as `run --human`). The page names no model and no server: a roster file that
names a `command:` program runs only when `serve --allow-command` allowed that program
(naming a roster on `run`'s command line is consent; a page is not the user), and the
server URL is `serve --base-url`'s, when given. Everything else, the plan, the keys,
council.toml, the pre-flight, consent and limits, is `council run`'s own, in its own
process (dashboard/run_process.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dreamcontext_council.council_mcp.agent_input import require_allowed, roster_commands
from dreamcontext_council.dashboard.write_path import WriteAccess, bounded
from dreamcontext_council.errors import CouncilError, UsageError
from dreamcontext_council.folder.names import check_slug
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules import limits
from dreamcontext_council.rules.roster import PRESETS

FIELDS = ("topic", "options", "personas", "rounds", "human")
DEFAULT_ROUNDS = "3"


@dataclass(frozen=True)
class AskForm:
    """The list page's form: what was typed, and why it did not start (kept on the page)."""

    token: str
    values: Mapping[str, str] = field(default_factory=dict)
    problem: str | None = None
    presets: tuple[str, ...] = (*PRESETS, "auto")

    def value(self, name: str) -> str:
        default = DEFAULT_ROUNDS if name == "rounds" else ""
        return self.values.get(name, default)


def read_form(form: Mapping[str, str]) -> dict[str, str]:
    """The ask fields, each bounded as the CLI bounds the option it becomes (413 past it)."""
    return {
        "topic": bounded(form, "topic", limits.MAX_TOPIC_CHARS, "The question"),
        "options": bounded(
            form, "options", limits.MAX_OPTIONS_CHARS + limits.MAX_OPTIONS, "The options"
        ),
        "personas": bounded(form, "personas", limits.MAX_PATH_CHARS, "The personas"),
        "rounds": bounded(form, "rounds", 2, "The rounds"),
        "human": bounded(form, "human", limits.MAX_NAME_CHARS, "The seat's name"),
    }


def run_arguments(root: Root, access: WriteAccess, values: Mapping[str, str]) -> list[str]:
    """`council run`'s arguments for the form; UsageError (or ConsentRequired) saying what
    to change, before anything starts."""
    topic = values.get("topic", "").strip()
    if not topic:
        raise UsageError("Type the question the council should debate.")
    args = ["--topic", topic]
    options = options_spec(values.get("options", ""))
    if options:
        args += ["--options", options]
    rounds = values.get("rounds", "").strip() or DEFAULT_ROUNDS
    if not rounds.isdigit() or not 1 <= int(rounds) <= limits.MAX_ROUNDS:
        raise UsageError(f"Rounds is a whole number from 1 to {limits.MAX_ROUNDS}.")
    args += ["--rounds", rounds]
    personas = values.get("personas", "").strip()
    if personas:
        roster = personas if personas in (*PRESETS, "auto") else roster_file(root, personas)
        require_allowed([], roster_commands(roster), set(access.allow_commands))
        args += ["--personas", roster]
    human = values.get("human", "").strip()
    if human:
        args += ["--human", check_slug(human, "The seat's name")]
    if access.base_url:
        args += ["--base-url", access.base_url]
    return args


def options_spec(text: str) -> str:
    """One `KEY=label` a line as `--options` takes them (`A=…,B=…`)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) > limits.MAX_OPTIONS:
        raise UsageError(f"Name at most {limits.MAX_OPTIONS} options, one a line.")
    for line in lines:
        if "," in line:
            raise UsageError(
                f"The option line {line[:60]!r} holds a comma; write one KEY=label a line "
                "with no comma in the label."
            )
    return ",".join(lines)


def roster_file(root: Root, given: str) -> str:
    """A roster file named from the page: a file inside the project (the folder holding
    `_dream_context/`), as an absolute path."""
    project = root.path.parent.resolve()
    path = Path(given).expanduser()
    resolved = (path if path.is_absolute() else project / path).resolve()
    if project not in resolved.parents or not resolved.is_file():
        raise UsageError(
            f"The roster file {given} is not a file inside the project {project}; name a "
            f"preset ({', '.join(PRESETS)}, auto) or a roster file there."
        )
    return str(resolved)


def refusal(problem: CouncilError | str) -> str:
    """A refusal as the form shows it."""
    return str(problem)
