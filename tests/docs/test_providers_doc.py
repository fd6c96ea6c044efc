"""docs/providers.md states the names and numbers the provider code uses."""

from __future__ import annotations

from pathlib import Path

import click

from dreamcontext_council.cli import cli
from dreamcontext_council.engine.model_calls import accounting
from dreamcontext_council.engine.providers import (
    anthropic_provider,
    limits,
    models,
    openai_provider,
    retry,
    scripted,
    sdk_provider,
    tool_turn,
)
from dreamcontext_council.engine.setup import defaults
from dreamcontext_council.rules.run_settings import DEFAULT_RETRIES, DEFAULT_TIMEOUT

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "providers.md").read_text(encoding="utf-8")


def _number(value: float) -> str:
    """Dollars as the page gives them: two decimals, a third where a price has one."""
    shown = f"{value:.3f}"
    return shown[:-1] if shown.endswith("0") else shown


def _is_price(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_every_alias_is_listed_with_its_model() -> None:
    for alias, target in models.ALIASES.items():
        assert f"| `{alias}` | `{target}` |" in PAGE


def test_every_provider_and_the_defaults_are_named() -> None:
    for provider in models.PROVIDERS:
        assert f"`{provider}`" in PAGE
    assert f"`{models.DEFAULT_ANTHROPIC}`" in PAGE
    assert f"`{models.DEFAULT_OPENAI}`" in PAGE


def test_every_variable_is_documented() -> None:
    for name in (
        anthropic_provider.KEY_ENV,
        anthropic_provider.BASE_URL_ENV,
        openai_provider.KEY_ENV,
        openai_provider.BASE_URL_ENV,
        accounting.PRICES_ENV,
        scripted.DELAY_ENV,
        sdk_provider.HTTP_ENV,
    ):
        assert f"`{name}`" in PAGE, name


def test_the_http_stacks_are_named() -> None:
    row = next(
        line for line in PAGE.splitlines() if line.startswith(f"| `{sdk_provider.HTTP_ENV}`")
    )
    for stack in sdk_provider.HTTP_STACKS:
        assert f"`{stack}`" in row


def test_the_price_table_matches_the_built_in_one() -> None:
    for model, prices in accounting.DEFAULT_PRICES.items():
        row = " | ".join(_number(price) for price in prices)
        assert f"| `{model}` | {row} |" in PAGE, model
    listed = set()
    for line in PAGE.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`") and all(_is_price(c) for c in cells[1:]):
            listed.add(cells[0].strip("`"))
    assert listed == set(accounting.DEFAULT_PRICES)


def test_retry_and_concurrency_numbers() -> None:
    policy = retry.RetryPolicy()
    assert f"{policy.max_delay_s:.0f} s" in PAGE
    assert f"up to {policy.base_delay_s:.0f} s" in PAGE
    assert {"2": "twice"}[str(policy.no_text_retries)] in PAGE
    for provider, limit in limits.DEFAULT_CONCURRENCY.items():
        assert f"`{provider}` {limit}" in PAGE
    assert f"others {limits.FALLBACK_CONCURRENCY}" in PAGE


def test_run_options_and_their_defaults() -> None:
    run = cli.commands["council"].commands["run"]  # type: ignore[attr-defined]
    options = {p.opts[0]: p for p in run.params if isinstance(p, click.Option)}
    for name in (
        "--model",
        "--check-model",
        "--synth-model",
        "--base-url",
        "--timeout",
        "--retries",
        "--concurrency",
        "--prices",
        "--dry-run",
        "--max-cost",
        "--max-calls",
    ):
        assert name in options, f"run has no {name}"
        assert f"`{name}" in PAGE, name
    # No click default: a resume takes the recorded value, else these.
    assert not options["--timeout"].show_default and not options["--retries"].show_default
    assert f"| `--timeout SECONDS` | recorded, else {DEFAULT_TIMEOUT:.0f} |" in PAGE
    assert f"| `--retries N` | recorded, else {DEFAULT_RETRIES} |" in PAGE


def test_the_tools_section_quotes_the_budget_answer() -> None:
    assert "## Tools (MCP) and providers" in PAGE
    assert f"`{tool_turn.BUDGET_SPENT}`" in PAGE


def test_every_defaults_setting_and_variable_is_documented() -> None:
    section = PAGE[PAGE.index("### Defaults you set once") :]
    section = section[: section.index("\n### ")]
    for key in defaults.KEYS:
        assert f"`{key}`" in section, key
    for variable in defaults.ENV_NAMES.values():
        assert f"`{variable}`" in section, variable
    assert f"`_dream_context/{defaults.FILE_NAME}`" in section
    assert f"{defaults.MAX_FILE_BYTES // 1024} KiB" in section
