"""Building providers from model specs, sharing them, and keeping the SDKs out of start-up."""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
import textwrap

import pytest
from stub_server import StubServer

from dreamcontext_council.engine.providers.anthropic_provider import AnthropicProvider
from dreamcontext_council.engine.providers.base import Prompt, Provider
from dreamcontext_council.engine.providers.command_provider import CommandProvider
from dreamcontext_council.engine.providers.models import ModelSpec, parse_model
from dreamcontext_council.engine.providers.openai_provider import OpenAIProvider
from dreamcontext_council.engine.providers.registry import (
    ProviderSet,
    ProviderSettings,
    get_provider,
)
from dreamcontext_council.engine.providers.retry import RetryPolicy
from dreamcontext_council.errors import UsageError

from .conftest import TEST_KEY


def test_one_provider_per_kind_and_server_is_shared() -> None:
    providers = ProviderSet(env={"ANTHROPIC_API_KEY": TEST_KEY})

    sonnet = providers.get(parse_model("sonnet"))
    haiku = providers.get(parse_model("haiku"))
    gpt = providers.get(parse_model("openai:gpt-4o"))
    claude_cli = providers.get(parse_model("command:claude -p"))
    llm_cli = providers.get(parse_model("command:llm -m gpt-4o"))

    assert sonnet is haiku
    assert isinstance(sonnet, AnthropicProvider)
    assert isinstance(gpt, OpenAIProvider)
    assert isinstance(claude_cli, CommandProvider)
    assert claude_cli is llm_cli
    assert sonnet.limits is gpt.limits is claude_cli.limits is providers.limits


def test_base_urls_come_from_settings_before_the_environment() -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "ANTHROPIC_BASE_URL": "http://127.0.0.1:8"}
    from_env = ProviderSet(env=env)
    from_settings = ProviderSet(
        ProviderSettings(base_urls={"openai": "http://127.0.0.1:7/v1"}), env=env
    )

    assert from_env.base_url_for("openai") == "http://127.0.0.1:9/v1"
    assert from_env.base_url_for("anthropic") == "http://127.0.0.1:8"
    assert from_settings.base_url_for("openai") == "http://127.0.0.1:7/v1"
    assert from_env.base_url_for("command") is None
    openai = from_settings.get(ModelSpec("openai", "llama3.1"))
    assert isinstance(openai, OpenAIProvider)
    assert openai.base_url == "http://127.0.0.1:7/v1"


def test_settings_reach_the_providers() -> None:
    settings = ProviderSettings(timeout_s=12.0, max_retries=1, concurrency={"openai": 2})
    providers = ProviderSet(settings, env={})

    openai = providers.get(ModelSpec("openai", "gpt-4o"))

    assert isinstance(openai, OpenAIProvider)
    assert openai.timeout_s == 12.0
    assert openai.policy.max_retries == 1
    assert providers.limits.limit_for("openai") == 2


def test_get_provider_reuses_instances_for_equal_settings() -> None:
    settings = ProviderSettings(timeout_s=33.0, concurrency={"command": 1})
    spec = ModelSpec("command", "cat")

    first = get_provider(spec, settings)
    assert get_provider(spec, ProviderSettings(timeout_s=33.0, concurrency={"command": 1})) is first
    assert get_provider(spec, ProviderSettings(timeout_s=34.0)) is not first


def test_an_unknown_provider_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="Unknown provider 'gemini'"):
        ProviderSet(env={}).get(ModelSpec("gemini", "pro"))


@pytest.mark.skipif(
    importlib.util.find_spec("dreamcontext_council.engine.providers.scripted") is None,
    reason="the scripted provider is not in this tree yet",
)
def test_the_scripted_provider_is_found_by_name() -> None:
    provider = ProviderSet(env={}).get(parse_model("scripted"))
    assert isinstance(provider, Provider)
    assert provider.name == "scripted"


def test_a_whole_call_through_the_set(stub: StubServer) -> None:
    stub.enqueue("Through the set.")
    providers = ProviderSet(
        env={"OPENAI_BASE_URL": stub.openai_url},
        retry=RetryPolicy(base_delay_s=0.001),
    )

    async def call() -> str:
        try:
            completion = await providers.complete(
                parse_model("openai:qwen2.5"), Prompt(system="s", user="u")
            )
        finally:
            await providers.aclose()
        return completion.text

    assert asyncio.run(call()) == "Through the set."
    assert stub.requests[0].json["model"] == "qwen2.5"


def test_loading_the_provider_layer_does_not_import_the_sdks() -> None:
    script = textwrap.dedent(
        """
        import sys
        import dreamcontext_council.engine.providers
        import dreamcontext_council.engine.providers.registry
        import dreamcontext_council.engine.providers.models
        from dreamcontext_council.engine.providers.registry import ProviderSet
        from dreamcontext_council.engine.providers.models import parse_model
        ProviderSet(env={}).get(parse_model("command:cat"))
        loaded = sorted(name for name in ("anthropic", "openai") if name in sys.modules)
        print(",".join(loaded) or "none")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "none"
