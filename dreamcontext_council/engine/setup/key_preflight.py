"""The pre-flight's one request per server: is the key taken, is the server in reach?

After the checks that need no call (engine/setup/preflight.py), `refused_keys` asks each
anthropic and openai server the run will call for its models list, once per server and
key, all at once (engine/providers/key_check.py). A refused key (401, 403) or a server out
of reach stops the run before it makes a folder or a call, with one line that names the
variable holding the key (never its value), the seats that would have used it and the fix.
`command:` and scripted models make no request; a server that answers anything else lets
the run go on.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping

from dreamcontext_council.engine.providers import consent
from dreamcontext_council.engine.providers.key_check import KeyProblem, check_key, server_of
from dreamcontext_council.engine.providers.keys import answer_keys, hide_keys
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.engine.providers.registry import BASE_URL_ENVS, ProviderSet
from dreamcontext_council.engine.providers.sdk_provider import SdkProvider
from dreamcontext_council.engine.setup.preflight import ModelUse, anthropic_credentials, names_of
from dreamcontext_council.errors import UsageError

ASKED_PROVIDERS = ("anthropic", "openai")


async def refused_keys(uses: list[ModelUse], providers: ProviderSet) -> str | None:
    """The one line that says which key a server refused (or which server is out of reach)
    and for whom, or None when every server the run calls took its key."""
    groups: dict[int, tuple[SdkProvider, list[ModelUse]]] = {}
    for use in uses:
        try:
            spec = parse_model(use.model)
        except UsageError:
            continue  # refused with the accepted forms by the checks before
        if spec.provider not in ASKED_PROVIDERS:
            continue
        provider = providers.get(spec)
        if isinstance(provider, SdkProvider) and not provider.key_checked:
            groups.setdefault(id(provider), (provider, []))[1].append(use)
    if not groups:
        return None
    found = await asyncio.gather(*(check_key(provider) for provider, _ in groups.values()))
    parts = []
    for (provider, used), problem in zip(groups.values(), found, strict=True):
        if problem is None:
            provider.key_checked = True
            continue
        models = sorted({use.model for use in used})
        label = "model" if len(models) == 1 else "models"
        who = names_of([use.who for use in used])
        parts.append(
            f"{who} ({label} {', '.join(models)}): {_told(provider, problem, providers.env)}"
        )
    if not parts:
        return None
    line = consent.visible("Cannot run: " + " | ".join(parts) + ". Nothing was written.")
    urls = [provider.base_url for provider, _ in groups.values()]
    return hide_keys(line, answer_keys((providers.env, os.environ), urls))


def key_name(provider: SdkProvider, env: Mapping[str, str]) -> str | None:
    """Where the key `provider` sends comes from: a variable's name (or the Anthropic
    profile's), or None for the placeholder sent to a server URL without a key."""
    if provider.name == "anthropic":
        return anthropic_credentials(env)
    return provider.key_env if env.get(provider.key_env) else None


def _told(provider: SdkProvider, problem: KeyProblem, env: Mapping[str, str]) -> str:
    """The problem and its fix, for one server."""
    server = server_of(provider)
    if problem.status is None:
        setting = provider.base_url_from or BASE_URL_ENVS.get(provider.name, "")
        fix = f"fix {setting}" if provider.base_url else f"set {setting} to a server you reach"
        return (
            f"cannot reach {server} ({problem.detail}); check the network and proxy "
            f"settings, or {fix}"
        )
    said = f"{problem.status}: {problem.detail}" if problem.detail else str(problem.status)
    name = key_name(provider, env)
    if name is None:
        return f"{server} asks for a key ({said}); set {provider.key_env} to the key it takes"
    variable = name.isupper()  # else a profile or identity federation of the anthropic SDK
    holder = name if variable else f"the credentials of {name}"
    if problem.status == 401:
        fix = f"set {name} to a valid key" if variable else f"renew the credentials of {name}"
        return f"{server} refused the key in {holder} ({said}); {fix}"
    return (
        f"{server} denied the key in {holder} ({said}); check the account behind it, or use "
        "a key that may call the model"
    )
