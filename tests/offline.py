"""Keeping the developer's provider settings out of tests: no key, base URL, proxy, root or
scripted delay from the shell reaches a command a test runs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

# Variables that would let a test reach a real provider, another root, or a slow stand-in.
SCRUBBED_PREFIXES = ("ANTHROPIC_", "OPENAI_", "DREAMCONTEXT_")
# The user's config dir holds the trust file of `command:` models: tests keep theirs in HOME.
SCRUBBED_NAMES = ("XDG_CONFIG_HOME",)


def clean_environment(base: Mapping[str, str], home: Path) -> dict[str, str]:
    """`base` with no keys, base URLs, proxies or council settings, for a command's process."""
    env = {
        k: v
        for k, v in base.items()
        if not k.startswith(SCRUBBED_PREFIXES)
        and k not in SCRUBBED_NAMES
        and not k.lower().endswith("_proxy")
    }
    env.update(
        NO_PROXY="127.0.0.1,localhost",
        HOME=str(home),
        ANTHROPIC_CONFIG_DIR=str(home / "anthropic-config"),
        PYTHONIOENCODING="utf-8",
        TERM="dumb",
    )
    return env


def scrub_environment(
    monkeypatch: pytest.MonkeyPatch,
    home: Path,
    *,
    prefixes: tuple[str, ...] = SCRUBBED_PREFIXES,
    config_dir: Path | None = None,
) -> None:
    """Unset this process's variables that start with `prefixes` and its proxies; point HOME
    and the Anthropic SDK's profile directory (`home/anthropic-config` unless given) at
    private folders."""
    for name in list(os.environ):
        if name.startswith(prefixes) or name in SCRUBBED_NAMES or name.lower().endswith("_proxy"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(config_dir or home / "anthropic-config"))


@pytest.fixture(autouse=True)
def no_provider_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No developer key, base URL, proxy, root or scripted delay leaks into a test.

    Autouse where a conftest imports it: importing a fixture registers it for that folder.
    """
    scrub_environment(monkeypatch, tmp_path / "home")
