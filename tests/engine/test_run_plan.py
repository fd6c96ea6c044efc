"""A run's settings are resolved once, into a plan nothing can change, and what debate.md
records of a run (`run:`) is read from that plan: a recorded setting cannot go around it."""

from __future__ import annotations

import dataclasses
from dataclasses import fields, is_dataclass
from typing import Any, get_type_hints

import pytest

from dreamcontext_council.engine.protocol.plan import RunPlan
from dreamcontext_council.engine.setup.plan import resolve
from dreamcontext_council.engine.setup.request import Launch
from dreamcontext_council.rules.run_settings import MODEL_FIELDS, RunSettings

USER_URL = "http://user:secret@127.0.0.1:9/v1"


def new_debate(**given: Any) -> Launch:
    return Launch(topic="Should we ship?", personas_spec="auto", env={}, **given)


def every_setting_recorded() -> RunSettings:
    """A record with every setting set, each to a value no default has."""
    hints = get_type_hints(RunSettings)
    values: dict[str, Any] = {}
    for number, f in enumerate(fields(RunSettings), start=1):
        kind = hints[f.name]
        if f.name in ("base_url_secret", "anthropic_base_url_secret"):
            continue  # true only with a URL given again (test below)
        if f.name in MODEL_FIELDS:
            values[f.name] = f"openai:recorded-{f.name}"
        elif kind is bool:
            values[f.name] = True
        elif f.name in ("base_url", "anthropic_base_url"):
            values[f.name] = "http://127.0.0.1:9/v1"
        elif str in getattr(kind, "__args__", ()):
            values[f.name] = f"recorded-{f.name}"
        else:
            values[f.name] = 1000 + number
    return RunSettings(**values)


def test_the_plan_and_every_part_of_it_is_frozen() -> None:
    plan = resolve(new_debate(model="openai:m"), None, None, RunSettings())

    def parts(value: object) -> list[object]:
        found = [value]
        for f in fields(value):  # type: ignore[arg-type]
            inner = getattr(value, f.name)
            if is_dataclass(inner) and not isinstance(inner, type):
                found += parts(inner)
        return found

    for part in parts(plan):
        assert type(part).__dataclass_params__.frozen, type(part).__name__  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.seats = plan.seats  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.limits.timeout = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        plan.env["OPENAI_API_KEY"] = "sk-later"  # type: ignore[index]


def test_every_recorded_setting_comes_back_through_the_plan() -> None:
    previous = every_setting_recorded()
    unset = RunSettings()
    assert all(
        getattr(previous, f.name) != getattr(unset, f.name)
        for f in fields(RunSettings)
        if f.name not in ("base_url_secret", "anthropic_base_url_secret")
    )

    # A resynthesis that names no tools file starts no tool server: nothing to read here.
    plan = resolve(new_debate(resynthesize=True), None, None, previous)

    assert isinstance(plan, RunPlan)
    assert plan.recorded() == previous
    assert plan.seats.models() == {name: getattr(previous, name) for name in MODEL_FIELDS}


def test_every_option_given_is_what_the_plan_records() -> None:
    given = Launch(
        topic="Should we ship?",
        personas_spec="auto",
        model="openai:run",
        check_model="openai:check",
        synth_model="openai:synth",
        baseline_model="openai:solo",
        baseline=True,
        compact=True,
        early_stop=True,
        base_url=USER_URL,
        anthropic_base_url="https://gate:secret@gateway.example/anthropic",
        timeout=33.0,
        retries=2,
        concurrency=3,
        max_cost=1.5,
        max_calls=40,
        gate=5000,
        window=9000,
        max_answer_kb=16,
        max_tool_calls=5,
        human_timeout=90.0,
        no_tools=True,
        env={},
    )

    recorded = resolve(given, None, None, every_setting_recorded()).recorded()

    assert recorded == RunSettings(
        model="openai:run",
        check_model="openai:check",
        synth_model="openai:synth",
        baseline_model="openai:solo",
        base_url="http://127.0.0.1:9/v1",
        base_url_secret=True,
        anthropic_base_url="https://gateway.example/anthropic",
        anthropic_base_url_secret=True,
        timeout=33.0,
        retries=2,
        concurrency=3,
        max_cost=1.5,
        max_calls=40,
        gate=5000,
        window=9000,
        max_answer_kb=16,
        compact=True,
        early_stop=True,
        baseline=True,
        tools=None,  # --no-tools drops the recorded tools file
        max_tool_calls=5,
        human_timeout=90.0,
    )
