"""What the folder records (seed 004, dreamcontext council debates): the round log names each
submission, context-and-persona.md shows what a persona received, `prompt` prints what a model
was sent, and debates of any roster size move between the Node tool and this one."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from debate_story import REFERENCE_ID, Chair, Reference, Runner, entry
from stub_server import StubServer

from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.rules.roundlog import round_participants

from .support import (
    OPTIONS,
    TEST_KEY,
    TOPIC,
    Council,
    h2_titles,
    openai_env,
    request_task,
    roster_file,
    scripted_responder,
    section,
)

SUBMITTED = re.compile(
    r"^## Report (submitted|replaced) — (\S+) in round (\d+) — "
    r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\n- Executive summary: (.*)$",
    re.MULTILINE,
)


def submissions(log: str) -> list[tuple[str, str, int, str]]:
    """(event, persona, round, summary) of every submission line in a round log."""
    return [(m[1], m[2], int(m[3]), m[5]) for m in SUBMITTED.finditer(log)]


# -- item 7: the round log names each submission ---------------------------------------


def test_report_append_logs_who_when_and_the_first_sentence(chair: Chair) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")
    log_path = chair.folder(debate_id) / "round-log.md"
    before = log_path.read_text(encoding="utf-8")
    summary = "Migrate, but only behind a flag. Cost drops by half.\nRollback stays cheap."
    chair.ok("report", "append", debate_id, "growth-cfo", "--round", "1", input=entry(summary))
    after = log_path.read_text(encoding="utf-8")
    assert after.startswith(before.rstrip("\n"))  # append-only
    assert submissions(after) == [
        ("submitted", "growth-cfo", 1, "Migrate, but only behind a flag.")
    ]
    chair.ok("report", "append", debate_id, "growth-cfo", "--round", "1", input=entry("Stay."))
    again = log_path.read_text(encoding="utf-8")
    assert again.startswith(after.rstrip("\n"))
    assert submissions(again)[-1] == ("replaced", "growth-cfo", 1, "Stay.")
    # the readers that look for round starts still find who took part
    assert round_participants(again, 1) == ["risk-auditor", "growth-cfo", "user-advocate"]


def test_a_long_summary_is_cut_to_one_short_line(chair: Chair) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")
    summary = " ".join(["word"] * 200) + ". Second sentence."
    chair.ok("report", "append", debate_id, "growth-cfo", "--round", "1", input=entry(summary))
    [(_, _, _, line)] = submissions((chair.folder(debate_id) / "round-log.md").read_text("utf-8"))
    assert line.endswith("…") and len(line) <= 240 and "Second" not in line


def test_a_run_logs_every_answer_with_its_time(council: Council, tmp_path: Path) -> None:
    slugs = ("risk-auditor", "growth-cfo", "platform-lead")
    roster = roster_file(tmp_path / "roster.json", dict.fromkeys(slugs, "scripted"))
    result = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--personas", roster, "--rounds", "2"
    )
    assert result.code == 0, result.err
    debate_id = council.only_id()
    found = submissions(council.log(debate_id))
    assert sorted((slug, number) for _, slug, number, _ in found) == sorted(
        (slug, number) for slug in slugs for number in (1, 2)
    )
    for _, slug, _number, summary in found:
        assert summary.startswith(f"{slug} backs "), summary
    # the Node tool's readers: `## Round N started` is still followed by its personas line
    for number in (1, 2):
        assert round_participants(council.log(debate_id), number) == list(slugs)
    assert council("summaries", debate_id, "2").code == 0


# -- item 10: Node debates of more than 10 personas -----------------------------------

EXTRA = [f"extra-voice-{n:02d}" for n in range(1, 10)]  # 3 + 9 = 12 personas


def node_debate_of_twelve(reference: Path) -> str:
    """The reference debate (Node-written) grown to 12 personas and reopened after round 2
    of 3, as the Node tool leaves a debate whose rounds are not all run."""
    folder = reference / "council" / REFERENCE_ID
    for slug in EXTRA:
        shutil.copytree(folder / "growth-cfo", folder / slug)
        for name in ("context-and-persona.md", "report.md"):
            path = folder / slug / name
            path.write_text(path.read_text("utf-8").replace("growth-cfo", slug), "utf-8")
    for context in folder.glob("*/context-and-persona.md"):
        context.write_text(
            context.read_text("utf-8").replace("model: sonnet", "model: scripted"), "utf-8"
        )
    debate = folder / "debate.md"
    text = debate.read_text("utf-8")
    text = text.replace(
        "  - user-advocate\n", "  - user-advocate\n" + "".join(f"  - {slug}\n" for slug in EXTRA)
    )
    text = text.replace("status: complete", "status: round_2_complete")
    text = text.replace("rounds_planned: 2", "rounds_planned: 3")
    text = re.sub(r"promoted_to_knowledge: >-\n  \S+\n", "promoted_to_knowledge: null\n", text)
    debate.write_text(text, "utf-8")
    (folder / "final-report.md").unlink()
    verdicts = json.loads((folder / "verdicts.json").read_text("utf-8"))
    for votes in verdicts["rounds"].values():
        for slug in EXTRA:
            votes[slug] = dict(votes["growth-cfo"], headline=f"{slug} backs A")
    (folder / "verdicts.json").write_text(json.dumps(verdicts, indent=2), "utf-8")
    return REFERENCE_ID


def test_a_node_debate_of_twelve_personas_is_read_continued_and_promoted(
    fixture_root: Reference, ref_cli: Runner
) -> None:
    debate_id = node_debate_of_twelve(fixture_root.root)
    roster = ["risk-auditor", "growth-cfo", "user-advocate", *EXTRA]
    shown = ref_cli("show", debate_id, "--json")
    assert shown.code == 0, shown.err
    assert shown.json()["personas"] == roster
    board = ref_cli("board", debate_id, "--json")
    assert board.code == 0, board.err
    assert {row["slug"] for row in board.json()["rows"]} == set(roster)
    assert ref_cli("round-context", debate_id, EXTRA[-1]).code == 0
    assert ref_cli("summaries", debate_id, "2").code == 0
    assert ref_cli("round", "start", debate_id, "3").code == 0  # panels for all twelve
    run = ref_cli("run", debate_id, "--model", "scripted", "--promote")
    assert run.code == 0, run.err
    folder = fixture_root.root / "council" / debate_id
    meta, _ = frontmatter_io.parse((folder / "debate.md").read_text("utf-8"), "debate.md")
    assert (meta["status"], meta["current_round"], meta["personas"]) == ("complete", 3, roster)
    for slug in roster:
        entries = (folder / slug / "report.md").read_text("utf-8")
        assert entries.index("## Round 3 — ") < entries.index("## Round 2 — ")
    report = (folder / "final-report.md").read_text("utf-8")
    assert "## Verdict" in report and all(slug in report for slug in roster)
    knowledge = fixture_root.root / str(meta["promoted_to_knowledge"])
    assert debate_id in knowledge.read_text("utf-8")
    final_board = ref_cli("board", debate_id, "--json").json()
    assert final_board["round"] == 3 and len(final_board["rows"]) == 12
    page = ref_cli("export", debate_id, "--format", "html", "-o", "-")
    assert page.code == 0, page.err
    assert all(f'id="persona-{slug}"' in page.out for slug in roster)


def test_creating_an_eleventh_persona_is_still_refused(chair: Chair) -> None:
    debate_id = chair.new(personas=[f"voice-{n:02d}" for n in range(10)])
    refused = chair.run("agent", "create", debate_id, "voice-10", "--body", "You are ten.")
    assert refused.code == 2 and "already has 10 personas" in refused.err


# -- item 8: what a persona received, and the exact prompt a model was sent ------------

RUN_SLUGS = ("risk-auditor", "growth-cfo", "platform-lead", "data-steward")


def continue_after_checks(request_json: dict[str, Any]) -> str:
    """Scripted answers, and CONTINUE to every convergence check: the run reaches round 3."""
    if request_task(request_json).get("phase") == "check":
        return "CONTINUE"
    return scripted_responder(request_json)


def messages(request_json: dict[str, Any]) -> tuple[str, str]:
    """(system, user) of an OpenAI chat request."""
    by_role = {m["role"]: m["content"] for m in request_json["messages"]}
    return by_role.get("system", ""), by_role["user"]


def three_round_run(council: Council, tmp_path: Path) -> tuple[str, list[Any]]:
    """A run of RUN_SLUGS on openai through a recording stub: the id and its requests."""
    models = dict.fromkeys(RUN_SLUGS, "openai:gpt-4o-mini")
    roster = roster_file(tmp_path / "roster.json", models)
    with StubServer(responder=continue_after_checks) as server:
        result = council(
            "run",
            *("--topic", TOPIC, "--options", OPTIONS, "--personas", roster, "--rounds", "3"),
            env=openai_env(server.openai_url),
        )
    assert result.code == 0, result.err
    return council.only_id(), list(server.requests)


def persona_requests(requests: list[Any]) -> dict[tuple[str, int], dict[str, Any]]:
    found = {}
    for request in requests:
        task = request_task(request.json)
        if task.get("phase") in ("opening", "cross-exam", "rebuttal"):
            found[(str(task["persona"]), int(task["round"]))] = request.json
    return found


def test_prompt_prints_byte_for_byte_what_the_model_was_sent(
    council: Council, tmp_path: Path
) -> None:
    debate_id, requests = three_round_run(council, tmp_path)
    sent = persona_requests(requests)
    assert {number for _, number in sent} == {1, 2, 3}
    for (slug, number), request_json in sent.items():
        shown = council("prompt", debate_id, slug, str(number), "--json")
        assert shown.code == 0, shown.err
        [call] = shown.json()["calls"]
        system, user = messages(request_json)
        assert call["system"].encode() == system.encode()
        assert call["user"].encode() == user.encode()
    # as a person runs it: the user message alone, to the last byte, from a real process
    system, user = messages(sent[("growth-cfo", 3)])
    printed = council.proc("prompt", debate_id, "growth-cfo", "3", "--part", "user")
    assert printed.code == 0, printed.err
    assert printed.out == user
    both = council.proc("prompt", debate_id, "growth-cfo", "3").out
    assert system in both and user in both and both.index(system) < both.index(user)
    # nothing of the environment's key reaches the record
    for path in council.folder(debate_id).glob("*/prompts/*.json"):
        assert TEST_KEY not in path.read_text("utf-8")


def test_context_and_persona_records_what_the_run_handed_each_persona(
    council: Council, tmp_path: Path
) -> None:
    debate_id, requests = three_round_run(council, tmp_path)
    sent = persona_requests(requests)
    reviews = council.json_file(debate_id, "reviews.json")["rounds"]["2"]
    for slug in RUN_SLUGS:
        context = council.text(debate_id, f"{slug}/context-and-persona.md")
        titles = h2_titles(context)
        # round 2: the panel as injected, and the cross-examination directive with its peer,
        # both what the model read
        _, user_2 = messages(sent[(slug, 2)])
        assert section(context, "Round 2 — Cross-context loaded") in user_2
        peer = reviews[slug]["target"]
        assert f"Cross-examine {peer}:" in section(context, "Round 2 — Directives")
        assert f"cross-examination assignment: {peer}" in user_2
        # round 3: every critique aimed at it, by critic, as the model read it
        _, user_3 = messages(sent[(slug, 3)])
        critics = sorted(c for c, review in reviews.items() if review["target"] == slug)
        assert critics, "every persona is critiqued once"
        assert "Round 3 — Critiques received" in titles
        received = section(context, "Round 3 — Critiques received")
        assert sorted(re.findall(r"^### From (\S+)", received, re.MULTILINE)) == critics
        for block in re.split(r"^### From .*$", received, flags=re.MULTILINE)[1:]:
            assert block.strip() and block.strip() in user_3
        assert titles.count("Round 3 — Critiques received") == 1


def test_a_debate_run_by_hand_has_no_prompt_to_print(chair: Chair) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")
    chair.submit(debate_id, "growth-cfo", 1)
    refused = chair.run("prompt", debate_id, "growth-cfo", "1")
    assert refused.code != 0 and "No prompt is recorded" in refused.err
    assert refused.err.count("\n") == 1


def test_a_repair_call_is_kept_after_the_call_it_repairs(council: Council, tmp_path: Path) -> None:
    broken = {"left": 1}

    def responder(request_json: dict[str, Any]) -> str:
        task = request_task(request_json)
        if task.get("persona") == "growth-cfo" and not task.get("repair") and broken["left"]:
            broken["left"] -= 1
            return "No sections and no verdict block."
        return scripted_responder(request_json)

    roster = roster_file(tmp_path / "roster.json", dict.fromkeys(RUN_SLUGS, "openai:gpt-4o"))
    with StubServer(responder=responder) as server:
        result = council(
            "run",
            *("--topic", TOPIC, "--options", OPTIONS, "--personas", roster, "--rounds", "1"),
            env=openai_env(server.openai_url),
        )
        assert result.code == 0, result.err
    asked = [
        messages(r.json)
        for r in server.requests
        if request_task(r.json).get("persona") == "growth-cfo"
    ]
    assert len(asked) == 2
    debate_id = council.only_id()
    calls = council("prompt", debate_id, "growth-cfo", "1", "--json").json()["calls"]
    assert [(c["phase"], c["system"], c["user"]) for c in calls] == [
        ("opening", *asked[0]),
        ("repair", *asked[1]),
    ]
    repair = council("prompt", debate_id, "growth-cfo", "1", "--part", "user", "--repair")
    assert repair.out == asked[1][1]


def test_a_prompts_folder_linked_out_of_the_debate_is_not_written(
    council: Council, tmp_path: Path
) -> None:
    debate_id = council.new_debate("--rounds", "1")
    for slug in ("risk-auditor", "growth-cfo"):
        council.add_persona(debate_id, slug, model="scripted")
    outside = tmp_path / "outside"
    outside.mkdir()
    (council.folder(debate_id) / "growth-cfo" / "prompts").symlink_to(outside)
    result = council("run", debate_id)
    assert list(outside.iterdir()) == []
    assert "is a link out of" in council.log(debate_id)
    assert result.code == 0, result.err  # the other persona's answer carries the round
    assert (council.folder(debate_id) / "risk-auditor" / "prompts" / "round-1.json").exists()
