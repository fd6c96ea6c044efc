"""Which provider and model a persona's `model` string picks."""

from __future__ import annotations

import pytest

from dreamcontext_council.engine.providers.models import (
    ALIASES,
    ModelSpec,
    default_model,
    parse_model,
)
from dreamcontext_council.errors import UsageError


@pytest.mark.parametrize(
    ("text", "provider", "model"),
    [
        ("anthropic:claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
        ("openai:gpt-4o-mini", "openai", "gpt-4o-mini"),
        ("openai:llama3.1:8b", "openai", "llama3.1:8b"),
        ("command:claude -p", "command", "claude -p"),
        ("command:llm -m 'gpt 4o'", "command", "llm -m 'gpt 4o'"),
        ("scripted", "scripted", ""),
        ("scripted:stubborn", "scripted", "stubborn"),
        ("opus", "anthropic", "claude-opus-5-5"),
        ("sonnet", "anthropic", "claude-sonnet-5-5"),
        ("haiku", "anthropic", "claude-haiku-5-5"),
        ("Sonnet", "anthropic", "claude-sonnet-5-5"),
        ("anthropic:haiku", "anthropic", "claude-haiku-5-5"),
        ("claude-3-5-haiku-latest", "anthropic", "claude-3-5-haiku-latest"),
        ("gpt-4.1", "openai", "gpt-4.1"),
        ("o1", "openai", "o1"),
        ("o3-mini", "openai", "o3-mini"),
        ("o4-mini", "openai", "o4-mini"),
        ("  openai:gpt-4o  ", "openai", "gpt-4o"),
    ],
)
def test_accepted_model_strings(text: str, provider: str, model: str) -> None:
    assert parse_model(text) == ModelSpec(provider, model)


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("", "Empty model"),
        ("llama3", "Unknown model 'llama3'"),
        ("mistral-large", "Unknown model 'mistral-large'"),
        ("gemini:pro", "Unknown provider 'gemini'"),
        ("anthropic:", "needs a model name after anthropic:"),
        ("command:", "needs a command line after command:"),
        ("openai:   ", "needs a model name after openai:"),
    ],
)
def test_rejected_model_strings_say_which_forms_work(text: str, complaint: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_model(text)
    message = str(caught.value)
    assert complaint in message
    for form in ("anthropic:<model>", "openai:<model>", "command:<command line>", "scripted"):
        assert form in message
    assert "opus" in message


def test_every_alias_resolves_to_an_anthropic_model() -> None:
    for alias in ALIASES:
        spec = parse_model(alias)
        assert spec.provider == "anthropic"
        assert spec.model.startswith("claude-")


def test_spec_prints_back_as_a_model_string() -> None:
    assert str(parse_model("sonnet")) == "anthropic:claude-sonnet-5-5"
    assert str(parse_model("scripted")) == "scripted"
    assert parse_model(str(parse_model("command:claude -p"))) == ModelSpec("command", "claude -p")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}, "sonnet"),
        ({"OPENAI_API_KEY": "k"}, "openai:gpt-4o-mini"),
        ({"ANTHROPIC_API_KEY": ""}, "scripted"),
        ({}, "scripted"),
    ],
)
def test_default_model_follows_the_keys_in_the_environment(
    env: dict[str, str], expected: str
) -> None:
    assert default_model(env) == expected
    parse_model(default_model(env))
