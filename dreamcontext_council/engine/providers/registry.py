"""From a model spec to a provider instance, built once and shared by every persona using it."""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from dreamcontext_council.engine.providers.answer_read import DEFAULT_MAX_ANSWER_KB
from dreamcontext_council.engine.providers.base import (
    Completion,
    Prompt,
    Provider,
    RetryNotice,
    tools_refused,
)
from dreamcontext_council.engine.providers.keys import StreamedKeyHider, answer_keys, hide_keys
from dreamcontext_council.engine.providers.limits import CallLimits
from dreamcontext_council.engine.providers.models import PROVIDERS, ModelSpec
from dreamcontext_council.engine.providers.retry import RetryPolicy
from dreamcontext_council.engine.providers.sdk_provider import chosen_http_stack
from dreamcontext_council.errors import UsageError

SCRIPTED_PROVIDER = "dreamcontext_council.engine.providers.scripted:ScriptedProvider"

BASE_URL_ENVS = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
# The `run` flag that names each provider's server, and wins over its variable.
URL_FLAGS = {"anthropic": "--anthropic-base-url", "openai": "--base-url"}


@dataclass(frozen=True)
class ProviderSettings:
    """Options shared by all providers of a run.

    `concurrency` maps a provider name to the most calls it may have in flight
    (defaults in `limits.DEFAULT_CONCURRENCY`); `base_urls` maps a provider name to
    a server URL that wins over `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`;
    `max_answer_kb` is the answer cap, within whose budget every answer is read
    (`answer_read.read_limit`).
    """

    timeout_s: float = 120.0
    max_retries: int = 4
    concurrency: Mapping[str, int] = field(default_factory=dict)
    base_urls: Mapping[str, str] = field(default_factory=dict)
    max_answer_kb: int = DEFAULT_MAX_ANSWER_KB

    @classmethod
    def for_run(
        cls,
        timeout: float,
        retries: int,
        concurrency: int | None,
        base_url: str | None,
        max_answer_kb: int = DEFAULT_MAX_ANSWER_KB,
        anthropic_base_url: str | None = None,
    ) -> ProviderSettings:
        """A run's settings: one concurrency limit for every provider, `base_url` for
        openai and `anthropic_base_url` for anthropic."""
        urls = {"openai": base_url, "anthropic": anthropic_base_url}
        return cls(
            timeout_s=timeout,
            max_retries=retries,
            concurrency=dict.fromkeys(PROVIDERS, concurrency) if concurrency else {},
            base_urls={name: url for name, url in urls.items() if url},
            max_answer_kb=max_answer_kb,
        )

    def key(self) -> tuple[Any, ...]:
        """A hashable summary, for caching provider sets per settings."""
        return (
            self.timeout_s,
            self.max_retries,
            tuple(sorted(self.concurrency.items())),
            tuple(sorted(self.base_urls.items())),
            self.max_answer_kb,
        )


class ProviderSet:
    """Builds providers on demand and keeps one per (provider, base URL).

    All providers of a set share one `CallLimits`, so the concurrency limit holds per
    provider name across every persona of a debate. `env` replaces `os.environ` for
    key and URL lookup; `retry` sets backoff timing (its `max_retries` is replaced
    by the settings').
    """

    def __init__(
        self,
        settings: ProviderSettings | None = None,
        *,
        env: Mapping[str, str] | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.settings = settings or ProviderSettings()
        self.env: Mapping[str, str] = os.environ if env is None else env
        chosen_http_stack(self.env)  # a misspelt stack stops the run before its first call
        self.retry = retry or RetryPolicy()
        self.limits = CallLimits(self.settings.concurrency)
        self._providers: dict[tuple[str, str | None], Provider] = {}
        self._answer_keys: tuple[str, ...] | None = None

    def base_url_for(self, provider: str) -> str | None:
        """The server URL `provider` will call, or None for the provider's default."""
        if provider in self.settings.base_urls:
            return self.settings.base_urls[provider] or None
        env_name = BASE_URL_ENVS.get(provider)
        return (self.env.get(env_name) or None) if env_name else None

    def get(self, spec: ModelSpec) -> Provider:
        """The provider for `spec`, built on first use."""
        base_url = self.base_url_for(spec.provider)
        key = (spec.provider, base_url)
        if key not in self._providers:
            self._providers[key] = self._build(spec.provider, base_url)
        return self._providers[key]

    def supports_tools(self, spec: ModelSpec) -> bool:
        """Whether the provider of `spec` can call MCP tools (checked before any request)."""
        return bool(getattr(self.get(spec), "supports_tools", False))

    def refuse_tools(self, spec: ModelSpec) -> None:
        """Raise the provider's one-line `ProviderError` if `spec` cannot call tools."""
        if not self.supports_tools(spec):
            raise tools_refused(
                f"{spec.provider}:" if spec.provider == "command" else spec.provider
            )

    async def complete(self, spec: ModelSpec, prompt: Prompt) -> Completion:
        """Ask the model of `spec` for an answer to `prompt`, with any key it echoed hidden
        (in the pieces its `on_text` hears too)."""
        keys = self.answer_keys()
        if prompt.on_text is None or not keys:
            completion = await self.get(spec).complete(prompt, spec.model)
        else:
            hider = StreamedKeyHider(prompt.on_text, keys)
            told_retry = prompt.on_retry

            def retrying(notice: RetryNotice) -> None:
                hider.restart()
                if told_retry is not None:
                    told_retry(notice)

            hidden = replace(prompt, on_text=hider.text, on_retry=retrying)
            completion = await self.get(spec).complete(hidden, spec.model)
            hider.finish()
        return replace(
            completion,
            text=hide_keys(completion.text, keys),
            model=hide_keys(completion.model, keys),
        )

    def answer_keys(self) -> tuple[str, ...]:
        """The keys no answer may carry: `*_API_KEY` values and base-URL credentials.

        Read from the environment once, at the first answer: providers read their keys
        when they are built, and every answer of a run would otherwise scan the whole
        environment again."""
        if self._answer_keys is None:
            urls = [
                *self.settings.base_urls.values(),
                *(self.env.get(n) for n in BASE_URL_ENVS.values()),
            ]
            self._answer_keys = answer_keys((self.env, os.environ), urls)
        return self._answer_keys

    async def aclose(self) -> None:
        """Close the HTTP clients the providers opened in the running event loop."""
        for provider in self._providers.values():
            close = getattr(provider, "aclose", None)
            if close is not None:
                await close()

    def _build(self, name: str, base_url: str | None) -> Provider:
        common: dict[str, Any] = {
            "timeout_s": self.settings.timeout_s,
            "max_retries": self.settings.max_retries,
            "limits": self.limits,
            "retry": self.retry,
            "env": self.env,
            "max_answer_kb": self.settings.max_answer_kb,
        }
        if name in self.settings.base_urls:
            common["base_url_from"] = URL_FLAGS[name]
        if name == "anthropic":
            from dreamcontext_council.engine.providers.anthropic_provider import (
                AnthropicProvider,
            )

            return AnthropicProvider(base_url=base_url, **common)
        if name == "openai":
            from dreamcontext_council.engine.providers.openai_provider import OpenAIProvider

            return OpenAIProvider(base_url=base_url, **common)
        if name == "command":
            from dreamcontext_council.engine.providers.command_provider import CommandProvider

            return CommandProvider(**common)
        if name == "scripted":
            module_name, _, class_name = SCRIPTED_PROVIDER.partition(":")
            provider: Provider = getattr(importlib.import_module(module_name), class_name)()
            return provider
        raise UsageError(f"Unknown provider {name!r}.")


_default_sets: dict[tuple[Any, ...], ProviderSet] = {}


def get_provider(spec: ModelSpec, settings: ProviderSettings | None = None) -> Provider:
    """The shared provider for `spec` under `settings` (one instance per provider and URL)."""
    settings = settings or ProviderSettings()
    key = settings.key()
    if key not in _default_sets:
        _default_sets[key] = ProviderSet(settings)
    return _default_sets[key].get(spec)
