"""`run --human SLUG` in the run's plan: the seat calls no model, is neither checked nor
priced, is recorded as `model: human`, and a slug the council lacks adds a person's seat."""

from __future__ import annotations

import json
from dataclasses import replace

from dreamcontext_council.engine.setup.plan import resolve
from dreamcontext_council.engine.setup.request import Launch
from dreamcontext_council.rules.roster import load_roster
from dreamcontext_council.rules.run_settings import RunSettings

from .support import OPTIONS, TOPIC, Council


def test_a_person_seat_is_in_the_plan_without_a_model() -> None:
    request = Launch(topic=TOPIC, humans=["alice", "contrarian"], model="openai:m", env={})
    roster = load_roster("cognitive")

    plan = resolve(request, None, roster, RunSettings())

    persons = [seat.slug for seat in plan.seats.person_seats()]
    assert persons == ["contrarian", "alice"]  # an existing persona keeps its place
    assert [seat.slug for seat in plan.seats.model_seats()] == [
        "synthesizer",
        "epistemologist",
        "systems-thinker",
    ]
    assert {seat.model for seat in plan.seats.person_seats()} == {"human"}
    assert plan.new is not None and plan.new.roster is not None
    seated = {p.slug: p for p in plan.new.roster}
    assert seated["contrarian"].body.startswith("You are the Contrarian")
    assert seated["alice"].model == "human"
    assert "A person holds this seat" in seated["alice"].body


def test_a_roster_entry_with_model_human_is_a_person_seat() -> None:
    roster = load_roster("engineering")
    roster[0] = replace(roster[0], model="human")

    plan = resolve(Launch(topic=TOPIC, env={}), None, roster, RunSettings())

    assert [seat.slug for seat in plan.seats.person_seats()] == ["risk-auditor"]


def test_dry_run_plans_no_call_and_no_cost_for_the_person(council: Council) -> None:
    result = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--human", "alice", "--dry-run", "--json"
    )

    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert "alice" not in {call["persona"] for call in data["plan"]}
    assert [c["phase"] for c in data["plan"]].count("persona") == 4 * 3  # the preset's four
    assert "A person's seat: alice; no model is called for it" in data["message"]
    assert not council.root.exists()


def test_a_person_seat_is_not_checked_for_a_key(council: Council) -> None:
    """The pre-flight names the model personas that lack a key, never the person's seat."""
    args = ("run", "--topic", TOPIC, "--options", OPTIONS, "--model", "sonnet", "--dry-run")
    result = council(*args, "--human", "alice")

    assert result.code == 2
    [problem] = [line for line in result.out.splitlines() if line.startswith("Would fail:")]
    assert "personas synthesizer, epistemologist, contrarian, systems-thinker," in problem
    assert "alice" not in problem


def test_personas_auto_with_a_person_seat(council: Council) -> None:
    result = council.proc(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--personas",
        "auto",
        "--human",
        "alice",
        "--human-timeout",
        "0.5",
        "--rounds",
        "1",
    )

    assert result.code == 0, result.err
    debate_id = council.only_id()
    personas = council.meta(debate_id)["personas"]
    assert personas[-1] == "alice" and len(personas) == 5  # four written, then the person
    assert "model: human" in council.text(debate_id, "alice/context-and-persona.md")
    assert "## Persona failed — alice in round 1" in council.log(debate_id)
    assert not [u for u in council.usage(debate_id) if u["persona"] == "alice"]


def test_human_on_a_resume_seats_a_person_and_is_remembered(council: Council) -> None:
    debate_id = council.new_debate()
    for slug in ("risk-auditor", "growth-cfo"):
        council.add_persona(debate_id, slug, model="scripted")

    first = council.proc(
        "run", debate_id, "--human", "growth-cfo", "--human", "bob", "--human-timeout", "0.5"
    )

    assert first.code == 0, first.err
    assert council.meta(debate_id)["personas"] == ["risk-auditor", "growth-cfo", "bob"]
    for slug in ("growth-cfo", "bob"):
        assert "model: human" in council.text(debate_id, f"{slug}/context-and-persona.md")
    assert "model: scripted" in council.text(debate_id, "risk-auditor/context-and-persona.md")
    assert council.meta(debate_id)["run"]["human_timeout"] == 0.5
    asked = {u["persona"] for u in council.usage(debate_id)}
    assert "risk-auditor" in asked
    assert not asked & {"growth-cfo", "bob"}

    # The seats stay a person's on the next run, which --dry-run shows without --human.
    planned = council("run", debate_id, "--dry-run", "--json").json()
    assert "A person's seat: growth-cfo, bob;" in planned["message"]
    assert "up to 0.5 s a round (--human-timeout)" in planned["message"]
