"""Model diversity: how many providers and model families sit on a council.

Agreement between copies of one model is weak evidence, so a council of a single
family says so on the board, the dashboard and the final report's Verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_ALIASES = {"opus": "anthropic", "sonnet": "anthropic", "haiku": "anthropic"}
_FAMILIES = (
    (re.compile(r"claude|opus|sonnet|haiku"), "claude"),
    (re.compile(r"\bgpt|^o[1-9]\b|\bo[1-9]-|chatgpt"), "gpt"),
    (re.compile(r"gemini|gemma"), "gemini"),
    (re.compile(r"llama"), "llama"),
    (re.compile(r"qwen"), "qwen"),
    (re.compile(r"mistral|mixtral|codestral"), "mistral"),
    (re.compile(r"deepseek"), "deepseek"),
    (re.compile(r"grok"), "grok"),
    (re.compile(r"phi-?\d"), "phi"),
    (re.compile(r"^scripted"), "scripted"),
)


def provider_of(model: str) -> str:
    """The provider a model string picks (`anthropic:…`, `openai:…`, `command:…`, `scripted`, alias)."""
    text = model.strip().lower()
    if text in _ALIASES:
        return _ALIASES[text]
    if ":" in text:
        return text.split(":", 1)[0]
    if text.startswith("claude"):
        return "anthropic"
    if text.startswith(("gpt", "o1", "o3", "o4")):
        return "openai"
    return text or "unspecified"


def family_of(model: str) -> str:
    """The model family: claude, gpt, llama, … (for a command, the model its command line names)."""
    text = model.strip().lower()
    body = text.split(":", 1)[1] if ":" in text and provider_of(text) != "scripted" else text
    for pattern, family in _FAMILIES:
        if pattern.search(body):
            return family
    return body.split()[0] if body else "unspecified"


@dataclass(frozen=True)
class Diversity:
    providers: tuple[str, ...]
    families: tuple[str, ...]

    @property
    def single_family(self) -> bool:
        return len(self.families) == 1

    def line(self) -> str:
        """One line for the board, the dashboard and the Verdict."""
        p, f = len(self.providers), len(self.families)
        text = (
            f"{p} provider{'s' if p != 1 else ''} · {f} model famil{'ies' if f != 1 else 'y'} "
            f"({', '.join(self.families)})"
        )
        if self.single_family:
            text += "; one family, so agreement is weak evidence"
        return text


def diversity(models: Iterable[str]) -> Diversity:
    """Distinct providers and families among the models, in first-seen order."""
    providers: list[str] = []
    families: list[str] = []
    for model in models:
        for value, seen in ((provider_of(model), providers), (family_of(model), families)):
            if value not in seen:
                seen.append(value)
    return Diversity(tuple(providers), tuple(families))
