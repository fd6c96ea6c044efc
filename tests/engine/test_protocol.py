"""The debate protocol as `run` drives it: blind opening, failures, pairs, checks, interludes."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from stub_server import StubResponse, StubServer

from dreamcontext_council.engine.protocol.pairing import derangement
from dreamcontext_council.errors import EXIT_STOPPED
from dreamcontext_council.folder import frontmatter_io

from .support import (
    OPTIONS,
    TOPIC,
    Council,
    Result,
    calls_by,
    fail_model,
    openai_env,
    request_task,
    roster_file,
    scripted_responder,
)

SLUGS = ("risk-auditor", "growth-cfo", "platform-lead", "data-steward")


def roster(tmp_path: Path, models: dict[str, str] | None = None) -> str:
    return roster_file(tmp_path / "roster.json", models or dict.fromkeys(SLUGS, ""))


def run_with_a_revoked_key(
    council: Council, tmp_path: Path, rounds: int
) -> tuple[Result, StubServer]:
    """`council run` of SLUGS on openai, data-steward's calls refused (401): the result and
    the stopped stub."""
    models = {slug: "openai:gpt-4o-mini" for slug in SLUGS}
    models["data-steward"] = "openai:revoked-model"
    with StubServer(
        responder=fail_model("revoked-model", StubResponse.error(401, "bad key"))
    ) as stub:
        result = council(
            "run",
            "--topic",
            TOPIC,
            "--options",
            OPTIONS,
            "--personas",
            roster(tmp_path, models),
            "--rounds",
            str(rounds),
            env=openai_env(stub.openai_url),
        )
    return result, stub


def check_answers(answer: str) -> Callable[[dict[str, Any]], Any]:
    """Scripted personas; the convergence check always answers `answer`."""

    def responder(request_json: dict[str, Any]) -> Any:
        if request_task(request_json).get("phase") == "check":
            return answer
        return scripted_responder(request_json)

    return responder


# -- opening -------------------------------------------------------------------------


def test_the_opening_round_is_blind(council: Council, stub: StubServer, tmp_path: Path) -> None:
    result = council(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--personas",
        roster(tmp_path),
        "--rounds",
        "2",
        env=openai_env(stub.openai_url),
    )

    assert result.code == 0, result.err
    calls = calls_by(stub.requests)
    for slug in SLUGS:
        [opening] = calls[(slug, 1, "opening")]
        assert f"You are {slug}." in opening
        assert "blind opening round" in opening
        # The peers' names are on the council's roster and nowhere else: no peer's words.
        council_line = re.search(r"\(debate `[^`]+`; the council: [^\n]*?\)\.", opening)
        assert council_line is not None
        assert all(f"`{peer}`" in council_line.group(0) for peer in SLUGS)
        seen = opening.replace(council_line.group(0), "")
        assert not [peer for peer in SLUGS if peer != slug and peer in seen]
        # Round 2 shows the peers: the check above could see them if they were there.
        [cross_exam] = calls[(slug, 2, "cross-exam")]
        assert all(
            peer in cross_exam.replace(council_line.group(0), "") for peer in SLUGS if peer != slug
        )


def test_one_failing_persona_does_not_stop_the_rest(council: Council, tmp_path: Path) -> None:
    result, stub = run_with_a_revoked_key(council, tmp_path, rounds=1)

    assert result.code == 0, result.err
    debate_id = result.last_line
    assert council.status(debate_id) == "complete"
    log = council.log(debate_id)
    assert "## Persona failed — data-steward in round 1" in log
    assert "- 3 personas submitted reports.\n- Missing: data-steward" in log
    failed = [r for r in council.usage(debate_id) if r["outcome"] == "failed"]
    assert [(r["persona"], r["round"], r["phase"]) for r in failed] == [
        ("data-steward", 1, "opening")
    ]
    assert "OPENAI_API_KEY" in failed[0]["error"]
    assert "data-steward: failed" in result.err
    verdicts = council.json_file(debate_id, "verdicts.json")
    assert sorted(verdicts["rounds"]["1"]) == sorted(s for s in SLUGS if s != "data-steward")
    # Exactly one request for the 401: it is not retried.
    revoked = [r for r in stub.requests if r.json.get("model") == "revoked-model"]
    assert len(revoked) == 1


def test_a_failing_command_persona_is_excused(
    council: Council, tmp_path: Path, echo_command: str
) -> None:
    failing = tmp_path / "fail.py"
    failing.write_text("import sys\nsys.stderr.write('model crashed')\nsys.exit(1)\n")
    models = {"risk-auditor": echo_command, "growth-cfo": "scripted"}
    models["platform-lead"] = f"command:{__import__('sys').executable} {failing}"

    result = council(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--personas",
        roster(tmp_path, models),
        "--rounds",
        "1",
    )

    assert result.code == 0, result.err
    debate_id = result.last_line
    log = council.log(debate_id)
    assert "## Persona failed — platform-lead in round 1" in log
    assert "exit code 1: model crashed" in log
    assert "Missing: platform-lead" in log
    assert council.status(debate_id) == "complete"


def test_when_every_persona_fails_the_run_halts_and_resumes_after_the_fix(
    council: Council, tmp_path: Path
) -> None:
    answers: dict[str, Any] = {"mode": "down"}

    def responder(request_json: dict[str, Any]) -> Any:
        if answers["mode"] == "down":
            return StubResponse.error(401, "invalid x-api-key")
        return scripted_responder(request_json)

    with StubServer(responder=responder) as stub:
        env = openai_env(stub.openai_url)
        failed = council(
            "run", "--topic", TOPIC, "--options", OPTIONS, "--personas", roster(tmp_path), env=env
        )

        assert failed.code == EXIT_STOPPED
        assert "Every persona failed in round 1" in failed.err
        assert "OPENAI_API_KEY" in failed.err
        assert "Traceback" not in failed.err
        [debate_id] = council.ids()
        assert f"dreamcontext council run {debate_id}" in failed.err
        assert council.status(debate_id) == "round_1_running"
        assert len(stub.requests) == len(SLUGS)

        answers["mode"] = "up"
        resumed = council("run", debate_id, env=env)

    assert resumed.code == 0, resumed.err
    assert council.status(debate_id) == "complete"
    assert council.log(debate_id).count("## Round 1 started") == 1


# -- cross-examination pairs ----------------------------------------------------------


def seeded_debate(council: Council, seed: int) -> str:
    debate_id = council.new_debate("--rounds", "2")
    for slug in SLUGS:
        council.add_persona(debate_id, slug)
    path = council.folder(debate_id) / "debate.md"
    meta, body = frontmatter_io.parse(path.read_text(encoding="utf-8"), "debate.md")
    meta["seed"] = seed
    path.write_text(frontmatter_io.render(meta, body), encoding="utf-8")
    return debate_id


def pairs(council: Council, debate_id: str) -> dict[str, str]:
    reviews = council.json_file(debate_id, "reviews.json")["rounds"]["2"]
    return {critic: review["target"] for critic, review in reviews.items()}


def test_cross_examination_pairs_are_a_derangement_from_the_recorded_seed(
    council: Council, stub: StubServer
) -> None:
    first, second = seeded_debate(council, 4242), seeded_debate(council, 4242)
    for debate_id in (first, second):
        assert council("run", debate_id, env=openai_env(stub.openai_url)).code == 0

    chosen = pairs(council, first)
    assert chosen == pairs(council, second)  # same seed, same pairs
    assert chosen == derangement(list(SLUGS), 4242)
    assert sorted(chosen) == sorted(SLUGS)
    assert sorted(chosen.values()) == sorted(SLUGS)  # each critiqued once
    assert all(critic != peer for critic, peer in chosen.items())
    reviews = council.json_file(first, "reviews.json")["rounds"]["2"]
    assert all(1 <= review["score"] <= 10 for review in reviews.values())

    calls = calls_by(stub.requests)
    for critic, peer in chosen.items():
        context = council.text(first, f"{critic}/context-and-persona.md")
        assert f"## Round 2 — Directives\n\n- Cross-examine {peer}:" in context
        [prompt] = [p for p in calls[(critic, 2, "cross-exam")] if council.meta(first)["id"] in p]
        assert f'<peer-answer persona="{peer}" round="1">' in prompt
        assert f"Your cross-examination assignment: {peer}" in prompt
        report = council.text(first, f"{critic}/report.md")
        assert "### Cross-examination" in report


def test_a_new_debate_records_its_seed_before_round_1(council: Council) -> None:
    debate_id = council("run", "--topic", TOPIC, "--rounds", "1").last_line

    assert isinstance(council.meta(debate_id)["seed"], int)


# -- convergence check ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "another_round"),
    [
        ("CONTINUE", True),
        ("continue", True),
        (" CONTINUE\n", True),
        ("CONTINUE.", False),
        ("Continue please", False),
        ("CONVERGED", False),
        ("DEADLOCKED", False),
    ],
)
def test_only_exactly_continue_runs_another_round(
    council: Council, tmp_path: Path, answer: str, another_round: bool
) -> None:
    with StubServer(responder=check_answers(answer)) as stub:
        result = council(
            "run",
            "--topic",
            TOPIC,
            "--options",
            OPTIONS,
            "--rounds",
            "3",
            "--model",
            "scripted",
            "--check-model",
            "openai:check-model",
            "--base-url",
            stub.openai_url,
            env={"OPENAI_API_KEY": "sk-check-0000000000"},
        )
        checks = [r for r in stub.requests if request_task(r.json).get("phase") == "check"]

    assert result.code == 0, result.err
    debate_id = result.last_line
    assert len(checks) == 1
    assert checks[0].json["model"] == "check-model"
    log = council.log(debate_id)
    assert log.count("## Convergence check after round 2 — ") == 1
    assert ("## Round 3 started" in log) is another_round
    assert council.meta(debate_id)["current_round"] == (3 if another_round else 2)
    decision = "Decision: another round" if another_round else "Decision: synthesis"
    assert decision in log
    assert "Answered by: openai:check-model" in log


def test_no_check_after_the_last_planned_round(council: Council, stub: StubServer) -> None:
    result = council(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--rounds",
        "2",
        env=openai_env(stub.openai_url),
    )

    assert result.code == 0, result.err
    assert "Convergence check" not in council.log(result.last_line)
    assert not [r for r in stub.requests if request_task(r.json).get("phase") == "check"]


def test_early_stop_ends_at_ninety_percent_twice_without_asking(
    council: Council, tmp_path: Path
) -> None:
    # Two scripted personas never dissent: 100% convergence in rounds 1 and 2. Without
    # --early-stop the check model decides (tests/engine/test_seed_protocol.py).
    with StubServer(responder=check_answers("CONTINUE")) as stub:
        result = council(
            "run",
            "--topic",
            TOPIC,
            "--options",
            OPTIONS,
            "--personas",
            roster(tmp_path, {"risk-auditor": "scripted", "growth-cfo": "scripted"}),
            "--rounds",
            "4",
            "--early-stop",
            "--check-model",
            "openai:check-model",
            "--base-url",
            stub.openai_url,
            env={"OPENAI_API_KEY": "sk-check-0000000000"},
        )
        asked = [r for r in stub.requests if request_task(r.json).get("phase") == "check"]

    assert result.code == 0, result.err
    debate_id = result.last_line
    assert asked == []
    log = council.log(debate_id)
    assert "## Convergence check after round 2 — CONVERGED" in log
    assert "Early stop (--early-stop): 90% or more in two rounds in a row." in log
    assert "Round 3 started" not in log
    assert "check" not in {r["phase"] for r in council.usage(debate_id)}
    assert council.status(debate_id) == "complete"


# -- interludes ----------------------------------------------------------------------


def test_interludes_pause_between_rounds_and_resume(council: Council) -> None:
    first = council("run", "--topic", TOPIC, "--options", OPTIONS, "--interrupt", "--json")

    assert first.code == 0, first.err
    data = first.json()
    debate_id = data["id"]
    assert data["stopped"] == "interlude"
    for command in ("inject", "question", "agent create", "round extend", "run"):
        assert f"dreamcontext council {command} {debate_id}" in data["message"]
    assert council.status(debate_id) == "round_1_complete"

    assert council("inject", debate_id, "The Redis licence changes in March.").code == 0
    second = council("run", debate_id)

    assert second.code == 0, second.err
    assert "Paused after round 2" in second.out
    assert council.status(debate_id) == "round_2_complete"

    third = council("run", debate_id)

    assert third.code == 0, third.err
    assert council.status(debate_id) == "complete"
    log = council.log(debate_id)
    assert log.count("## Interlude after round 1") == 1
    assert log.count("## Interlude after round 2") == 1
    assert log.count("## Convergence check after round 2") == 1
    assert log.count("## Round 3 started") == 1


def test_interludes_set_by_new_are_honoured(council: Council) -> None:
    debate_id = council.new_debate("--interrupt", "--rounds", "2")
    for slug in ("risk-auditor", "growth-cfo"):
        council.add_persona(debate_id, slug)

    paused = council("run", debate_id)
    assert paused.code == 0, paused.err
    assert "Paused after round 1" in paused.out
    assert council.status(debate_id) == "round_1_complete"

    done = council("run", debate_id)

    assert done.code == 0, done.err
    assert council.status(debate_id) == "complete"  # round 2 was the last: no pause after it
    assert council.log(debate_id).count("## Interlude after round") == 1


def test_a_persona_without_a_round_1_answer_is_left_out_of_the_pairs(
    council: Council, tmp_path: Path
) -> None:
    result, _ = run_with_a_revoked_key(council, tmp_path, rounds=2)

    assert result.code == 0, result.err
    debate_id = result.last_line
    chosen = pairs(council, debate_id)
    answered = [s for s in SLUGS if s != "data-steward"]
    assert sorted(chosen) == sorted(chosen.values()) == sorted(answered)
    assert all(critic != peer for critic, peer in chosen.items())
    reviews = council.json_file(debate_id, "reviews.json")["rounds"]["2"]
    assert all(review["score"] is not None for review in reviews.values())
    for slug in SLUGS:
        assert "Cross-examine data-steward" not in council.text(
            debate_id, f"{slug}/context-and-persona.md"
        )


def test_a_persona_seated_at_the_interlude_joins_without_a_cross_examination(
    council: Council,
) -> None:
    debate_id = council("run", "--topic", TOPIC, "--options", OPTIONS, "--interrupt").last_line
    council.add_persona(debate_id, "late-joiner")

    result = council("run", debate_id)

    assert result.code == 0, result.err
    chosen = pairs(council, debate_id)
    assert "late-joiner" not in chosen and "late-joiner" not in chosen.values()
    assert len(chosen) == 4
    report = council.text(debate_id, "late-joiner/report.md")
    assert "## Round 2" in report
