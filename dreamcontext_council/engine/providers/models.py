"""Model specs: which provider a persona's `model` string picks, and the default."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dreamcontext_council.errors import UsageError
from dreamcontext_council.rules.limits import MAX_MODEL_CHARS, check_length

PROVIDERS = ("anthropic", "openai", "command", "scripted")

# Short names a user may write instead of a full `anthropic:<model>` spec: the newest
# model of each family. Keep in step with Anthropic's model deprecations.
ALIASES: dict[str, str] = {
    "opus": "anthropic:claude-opus-5-5",
    "sonnet": "anthropic:claude-sonnet-5-5",
    "haiku": "anthropic:claude-haiku-5-5",
}

DEFAULT_ANTHROPIC = "sonnet"
DEFAULT_OPENAI = "openai:gpt-4o-mini"
DEFAULT_OFFLINE = "scripted"

OPENAI_PREFIXES = ("gpt", "o1", "o3", "o4")

ACCEPTED_FORMS = (
    "anthropic:<model>, openai:<model>, command:<command line>, scripted, "
    f"an alias ({', '.join(ALIASES)}), or a bare claude-*/gpt-*/o1/o3/o4 model name"
)


@dataclass(frozen=True)
class ModelSpec:
    """A provider name and what to pass it as the model.

    For `command` the model is the command line; for `scripted` it is the optional
    label after the colon (empty when none was given).
    """

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}" if self.model else self.provider


def parse_model(spec: str) -> ModelSpec:
    """Parse a model string such as `anthropic:claude-sonnet-5-5`, `sonnet` or `scripted`.

    Raises `UsageError` naming the accepted forms when the string fits none of them.
    """
    check_length(spec, MAX_MODEL_CHARS, "The model", f"Use {ACCEPTED_FORMS}.")
    text = spec.strip()
    if not text:
        raise UsageError(f"Empty model. Use {ACCEPTED_FORMS}.")
    lowered = text.lower()
    if lowered in ALIASES:
        return parse_model(ALIASES[lowered])
    if lowered == "scripted":
        return ModelSpec("scripted", "")
    if ":" not in text:
        if lowered.startswith("claude"):
            return ModelSpec("anthropic", text)
        if lowered.startswith(OPENAI_PREFIXES):
            return ModelSpec("openai", text)
        raise UsageError(f"Unknown model {text!r}. Use {ACCEPTED_FORMS}.")
    provider, _, model = text.partition(":")
    provider = provider.strip().lower()
    model = model.strip()
    if provider not in PROVIDERS:
        raise UsageError(f"Unknown provider {provider!r} in model {text!r}. Use {ACCEPTED_FORMS}.")
    if provider == "scripted":
        return ModelSpec("scripted", model)
    if not model:
        what = "a command line" if provider == "command" else "a model name"
        raise UsageError(f"Model {text!r} needs {what} after {provider}:. Use {ACCEPTED_FORMS}.")
    if provider == "anthropic" and model.lower() in ALIASES:
        return parse_model(model)
    return ModelSpec(provider, model)


def default_model(env: Mapping[str, str]) -> str:
    """The model to use when none is given: Anthropic, then OpenAI, then offline scripted."""
    if env.get("ANTHROPIC_API_KEY"):
        return DEFAULT_ANTHROPIC
    if env.get("OPENAI_API_KEY"):
        return DEFAULT_OPENAI
    return DEFAULT_OFFLINE
