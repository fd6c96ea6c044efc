"""Model diversity: how many providers and model families sit on a council.

Agreement between copies of one model is weak evidence, so a council of a single
family says so on the board, the dashboard and the final report's Verdict.

The provider is what the model string picks (`anthropic:…`, `openai:…`, `command:…`,
`scripted`, or an alias such as `opus`). The family is the model line the string
names, wherever it is served: `openai:llama3.1` on a local server is a llama, and
`command:claude -p` is a claude. A model string that names no known family counts
as its own family (for a command, the program it runs). A persona with no model
recorded is left out of the counts and reported as such. A person's seat (`model: human`,
see `rules.seats`) is no provider and no family: the line names the people apart, and a
council of one family and a person is still one family.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePath
from typing import Any, NamedTuple

from dreamcontext_council.rules.seats import is_person

UNSPECIFIED = "unspecified"
_ALIASES = {"opus": "anthropic", "sonnet": "anthropic", "haiku": "anthropic"}
# Searched in order, each compiled on its first search (re keeps it): a council of claudes
# compiles one.
_FAMILIES = (
    (r"claude|opus|sonnet|haiku", "claude"),
    (r"\bgpt|(?:^|[\s/:])o[1-9](?:\b|-)|chatgpt", "gpt"),
    (r"gemini|gemma", "gemini"),
    (r"(?<!o)llama", "llama"),  # not the ollama server
    (r"qwen|qwq", "qwen"),
    (r"mistral|mixtral|codestral|ministral", "mistral"),
    (r"deepseek", "deepseek"),
    (r"grok", "grok"),
    (r"\bphi-?\d", "phi"),
    (r"command-r|cohere", "command-r"),
    (r"^scripted", "scripted"),
)
# Programs that run the real thing: the family is named by what comes after them.
_LAUNCHERS = {"python", "python3", "node", "bash", "sh", "uv", "uvx", "npx", "env", "ruby"}


def provider_of(model: str) -> str:
    """The provider a model string picks (`anthropic:…`, `openai:…`, `command:…`, `scripted`, alias)."""
    text = model.strip().lower()
    if not text or text == UNSPECIFIED:
        return UNSPECIFIED
    if text in _ALIASES:
        return _ALIASES[text]
    if ":" in text:
        return text.split(":", 1)[0]
    if text.startswith("claude"):
        return "anthropic"
    if text.startswith(("gpt", "o1", "o3", "o4", "chatgpt")):
        return "openai"
    return text


def _program(command: str) -> str:
    """The program a command line runs, past interpreters: `python3 x/echo.py` → `echo.py`."""
    import shlex  # only a `command:` model needs it

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words:
        if word.startswith("-") or "=" in word:
            continue
        name = PurePath(word).name
        if re.sub(r"[\d.]+$", "", name) not in _LAUNCHERS:
            return name
    return PurePath(words[0]).name if words else UNSPECIFIED


def family_of(model: str) -> str:
    """The model family: claude, gpt, llama, … (for a command, the model its command line names)."""
    text = model.strip().lower()
    provider = provider_of(text)
    if provider == UNSPECIFIED:
        return UNSPECIFIED
    body = text.split(":", 1)[1].strip() if ":" in text and provider != "scripted" else text
    for pattern, family in _FAMILIES:
        if re.search(pattern, body):
            return family
    if provider == "command":
        return _program(model.strip().split(":", 1)[1])
    return body.split()[0] if body else UNSPECIFIED


class Diversity(NamedTuple):
    """Distinct providers and families among the council's models."""

    providers: tuple[str, ...]
    families: tuple[str, ...]
    unknown: int = 0
    """Personas with no model recorded (left out of the counts)."""
    people: int = 0
    """Seats a person answers (left out of the counts, named apart)."""

    @property
    def single_family(self) -> bool:
        """Every persona is known and all share one model family."""
        return len(self.families) == 1 and not self.unknown

    def line(self) -> str:
        """One line for the board, the dashboard and the Verdict."""
        if not self.families and not self.people:
            return "no model recorded for any persona"
        p, f = len(self.providers), len(self.families)
        text = (
            f"{p} provider{'s' if p != 1 else ''} · {f} model famil{'ies' if f != 1 else 'y'} "
            f"({', '.join(self.families)})"
            if self.families
            else "no model on the council"
        )
        if self.unknown:
            text += (
                f"; {self.unknown} persona{'s' if self.unknown != 1 else ''} with no model recorded"
            )
        if self.people:
            text += f"; {self.people} {'person' if self.people == 1 else 'people'}"
        if self.single_family:
            text += "; one family, so agreement is weak evidence"
        return text

    def to_json(self) -> dict[str, Any]:
        """The board's and the dashboard's `models` object."""
        return {
            "providers": list(self.providers),
            "families": list(self.families),
            "provider_count": len(self.providers),
            "family_count": len(self.families),
            "unknown": self.unknown,
            "person_count": self.people,
            "single_family": self.single_family,
            "line": self.line(),
        }


def diversity(models: Iterable[str]) -> Diversity:
    """Distinct providers and families among the models, in first-seen order; a person's
    seat is counted apart."""
    providers: list[str] = []
    families: list[str] = []
    unknown = people = 0
    for model in models:
        if is_person(model):
            people += 1
            continue
        provider = provider_of(model)
        if provider == UNSPECIFIED:
            unknown += 1
            continue
        for value, seen in ((provider, providers), (family_of(model), families)):
            if value not in seen:
                seen.append(value)
    return Diversity(tuple(providers), tuple(families), unknown, people)
