"""Both drivers, one protocol: a debate held by `run` and the same debate held by hand
(`round start`, `round-context`, `report append`, `round end`, `check`, `synthesize`,
`complete`) give every persona the same page, ask the same check, hand the synthesizer the
same record and render the same claims ledger. A debate the Node tool started keeps its own
protocol when held here.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.protocol.round_page import round_context
from dreamcontext_council.folder.paths import Root

from .support import OPTIONS, TOPIC, Council, entry

SLUGS = ("risk-auditor", "growth-cfo", "user-advocate")
HAND_ONLY = {"Facts new since round", "Attachment files", "What to submit"}
"""Sections a page has that no prompt has: the new facts, the files to open, and the
command that submits."""


def h2_sections(text: str) -> list[tuple[str, str]]:
    """(title, body) of every `## ` section outside fenced code, in order."""
    found: list[tuple[str, list[str]]] = []
    fence: str | None = None
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            fence = None if fence == marker else (fence or marker)
        elif fence is None and line.startswith("## "):
            found.append((line[3:].strip(), []))
            continue
        elif fence is None and line.startswith("# "):
            continue  # the title of the prompt or of the page
        if found:
            found[-1][1].append(line)
    return [(title, "\n".join(body).strip("\n")) for title, body in found]


def hand_only(title: str) -> bool:
    return any(title.startswith(name) for name in HAND_ONLY)


def sent_user_message(folder: Path, slug: str, number: int) -> str:
    record = json.loads((folder / slug / "prompts" / f"round-{number}.json").read_text("utf-8"))
    return str(record["calls"][0]["user"])


def sent_system_prompt(folder: Path, slug: str, number: int) -> str:
    record = json.loads((folder / slug / "prompts" / f"round-{number}.json").read_text("utf-8"))
    return str(record["calls"][0]["system"])


# The check model and the synthesizer of `run`: a program that keeps the prompt it reads on
# stdin and the answer it gives (the scripted stand-in's), one file per call.
LOGGING_MODEL = """\
import json, os, sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
prompt = sys.stdin.read()
task = task_from_text(prompt)
answer = scripted_text(task)
name = "{}-{}-{}.json".format(task.get("phase"), task.get("round", 0), os.getpid())
with open(os.path.join(sys.argv[1], name), "w", encoding="utf-8") as log:
    json.dump({"phase": task.get("phase"), "round": task.get("round"), "prompt": prompt,
               "answer": answer}, log)
print(answer)
"""


def logged_calls(folder: Path, phase: str) -> list[dict[str, object]]:
    calls = [json.loads(p.read_text("utf-8")) for p in sorted(folder.iterdir())]
    return [c for c in calls if c["phase"] == phase]


def answer_with_verdict(
    body: str, stance: str, conviction: int, headline: str, concession: str | None
) -> str:
    """A persona's answer as `run` asks for it: the entry, then its verdict block."""
    return (
        f"{body.rstrip()}\n\n```verdict\nstance: {stance}\nconviction: {conviction}\n"
        f"headline: {headline}\nconcession: {concession or 'none'}\n```\n"
    )


def page_part(page: str, title: str, next_title: str) -> str:
    """The text of a check page between `## title` and `## next_title`."""
    return page.split(f"\n## {title}\n\n", 1)[1].split(f"\n\n## {next_title}\n", 1)[0]


def h2_section(text: str, title: str) -> str:
    return dict(h2_sections(text))[title]


def test_both_drivers_give_the_same_pages_and_decide_alike(
    council: Council, tmp_path: Path
) -> None:
    """One debate by hand and the same with `run`: each persona's page is the prompt `run`
    sends it (its system prompt, the answer contract, included), the check page is the check
    prompt, the recorded check reads the same to the synthesizer, and a report finished by
    hand with its claims block gives the claims.json, ledger and dissent flag `run` gives."""
    logs = tmp_path / "calls"
    logs.mkdir()
    script = tmp_path / "logging_model.py"
    script.write_text(LOGGING_MODEL, encoding="utf-8")
    model = f"command:{sys.executable} {script} {logs}"
    debate_id = council.new(TOPIC, "--options", OPTIONS, "--rounds", "3")
    for slug in SLUGS:
        council.add_persona(debate_id, slug, model="scripted")
    assert council("round", "start", debate_id, "1").code == 0  # records the seed
    by_hand = Council(tmp_path / "hand" / "_dream_context", council.workdir, council.env)
    shutil.copytree(council.root, by_hand.root)

    ran = council("run", debate_id, "--check-model", model, "--synth-model", model)
    assert ran.code == 0, ran.err
    by_run = council.folder(debate_id)
    run_files = DebateFiles(Root(council.root), debate_id)
    assert all(run_files.entries(s)[0].round == 3 for s in SLUGS)  # the check said CONTINUE
    [run_check] = logged_calls(logs, "check")
    assert run_check["round"] == 2 and run_check["answer"] == "CONTINUE"

    pages: dict[tuple[str, int], str] = {}
    check_page = ""
    for number in (1, 2, 3):
        if number > 1:
            assert by_hand("round", "start", debate_id, str(number)).code == 0
        for slug in SLUGS:
            page = by_hand("round-context", debate_id, slug)
            assert page.code == 0, page.err
            pages[slug, number] = page.out
            # A person's seat (editor, dashboard) is shown only what this round adds.
            seat = round_context(Root(by_hand.root), debate_id, slug, this_round=True)
            titles = re.findall(r"^# Round (\d+) of 3 — ", seat, re.M)
            assert titles == [str(number)]
            if number > 1:
                assert f"## Your round {number - 1} answer" in seat
                assert f"# Round {number - 1} of 3" in page.out
        # Each persona answers by hand, in one command, what its model answered under `run`.
        verdicts = run_files.verdicts().round(number)
        for slug in SLUGS:
            v = verdicts[slug]
            body = next(e.body for e in run_files.entries(slug) if e.round == number)
            answer = answer_with_verdict(body, v.stance, v.conviction, v.headline, v.concession)
            appended = by_hand(
                "report", "append", debate_id, slug, "--round", str(number), input=answer
            )
            assert appended.code == 0, appended.err
            assert appended.err == ""  # entry and verdict recorded together
        assert by_hand("round", "end", debate_id, str(number)).code == 0
        if number == 2:
            shown = by_hand("check", debate_id, "2")
            assert shown.code == 0, shown.err
            check_page = shown.out
            recorded = by_hand(
                "check", debate_id, "2", "--answer", str(run_check["answer"]),
                "--reason", "the round-2 critiques are not answered yet",
            )  # fmt: skip
            assert recorded.code == 0, recorded.err

    # The check page is the check prompt `run` sent, system prompt and message.
    system = page_part(check_page, "System prompt", "User message")
    user = page_part(check_page, "User message", "What to record")
    assert "## Round 2 critiques revealed" in user and "## Still unanswered" in user
    sent = str(run_check["prompt"]).strip("\n")  # system, blank line(s), user
    assert sent.startswith(system + "\n\n")
    assert sent[len(system) :].lstrip("\n") == user

    for (slug, number), page in pages.items():
        # The system prompt `run` sends (the brief, the persona, the answer contract), whole,
        # then the sections of its user message.
        contract = sent_system_prompt(by_run, slug, number).strip("\n")
        assert "\n\n" + contract + "\n\n" in page
        assert "```verdict" in h2_section(page, "How you answer")
        sent = h2_sections(contract) + h2_sections(sent_user_message(by_run, slug, number))
        shown_sections = [(t, b) for t, b in h2_sections(page) if not hand_only(t)]
        assert shown_sections == sent, (slug, number)
        # The whole message, byte for byte: every round the persona took part in.
        message = sent_user_message(by_run, slug, number).strip("\n")
        assert "\n\n" + contract + "\n\n" + message + "\n" in page
        if number > 1:
            # It opens with the message of the round before, as `run` sent it then.
            before = sent_user_message(by_run, slug, number - 1)
            assert message.startswith(before) and len(message) > len(before)
    # Each phase's material is there, so the comparison above compares something.
    titles = {key: [t for t, _ in h2_sections(page)] for key, page in pages.items()}
    peer = council.meta(debate_id)["cross_examination"]["growth-cfo"]
    assert f"Your cross-examination assignment: {peer}" in titles["growth-cfo", 2]
    assert "Your round 1 answer" in titles["growth-cfo", 2]
    assert "Critiques aimed at you" in titles["growth-cfo", 3]
    assert "Cross-examinations: who critiqued whom" in titles["growth-cfo", 3]
    assert "What the other personas answered" in titles["growth-cfo", 3]
    assert not any("cross-examination" in t.lower() for t in titles["growth-cfo", 1])

    hand_folder = by_hand.folder(debate_id)
    assert by_hand.meta(debate_id)["seed"] == council.meta(debate_id)["seed"]
    assert (
        by_hand.meta(debate_id)["cross_examination"] == council.meta(debate_id)["cross_examination"]
    )
    assert json.loads((hand_folder / "reviews.json").read_text("utf-8")) == json.loads(
        (by_run / "reviews.json").read_text("utf-8")
    )
    assert json.loads((hand_folder / "verdicts.json").read_text("utf-8"))["rounds"].keys() == {
        "1", "2", "3"
    }  # fmt: skip
    synthesized = by_hand("synthesize", debate_id)
    assert synthesized.code == 0, synthesized.err
    assert "synthesis-input.md" in synthesized.out
    # The same record, the check decisions included: the recorded check reads the same.
    by_hand_record = (hand_folder / "synthesis-input.md").read_text("utf-8")
    by_run_record = (by_run / "synthesis-input.md").read_text("utf-8")
    ended = "How the debating ended"
    assert (
        h2_section(by_hand_record, ended)
        == h2_section(by_run_record, ended)
        == (
            "- After round 2: CONTINUE (productive tension remained: open challenges, new "
            "evidence, positions still moving) → another round.\n"
            "- After round 3: the 3 planned rounds were run."
        )
    )
    assert by_hand_record == by_run_record
    latest = run_files.entries("growth-cfo")[0].body  # round 3, under the gate: whole
    assert latest.strip() in by_hand_record

    # The synthesizer by hand answers what `run`'s did to the same prompt; `complete` then
    # renders what `run` renders.
    [run_synthesis] = logged_calls(logs, "synthesis")
    assert "```claims" in str(run_synthesis["answer"])
    (hand_folder / "final-report.md").write_text(str(run_synthesis["answer"]), "utf-8")
    completed = by_hand("complete", debate_id)
    assert completed.code == 0, completed.err
    resynthesized = council("run", debate_id, "--resynthesize")
    assert resynthesized.code == 0, resynthesized.err

    run_claims = json.loads((by_run / "claims.json").read_text("utf-8"))
    assert run_claims["claims"] and run_claims["flags"]  # the comparison compares something
    assert json.loads((hand_folder / "claims.json").read_text("utf-8")) == run_claims
    hand_report = (hand_folder / "final-report.md").read_text("utf-8")
    run_report = (by_run / "final-report.md").read_text("utf-8")
    for title in (
        "Claims ledger",
        "Position timeline",
        "Why",
        "Appendix: per-agent per-round summaries",
    ):
        assert h2_section(hand_report, title) == h2_section(run_report, title), title
    assert h2_section(hand_report, "Verdict") == h2_section(run_report, "Verdict")
    assert "```claims" not in hand_report
    dissent = [f for f in by_hand.meta(debate_id)["flags"] if f.startswith("dissent: ")]
    assert dissent and dissent == [
        f for f in council.meta(debate_id)["flags"] if f.startswith("dissent: ")
    ]
    assert by_hand.status(debate_id) == "complete"


def test_a_round_two_critique_without_its_score_is_refused_with_what_to_add(
    council: Council,
) -> None:
    debate_id = council.new(TOPIC, "--options", OPTIONS)
    for slug in SLUGS:
        council.add_persona(debate_id, slug, model="scripted")
    assert council("round", "start", debate_id, "1").code == 0
    assert council("run", debate_id, "--only", ",".join(SLUGS)).code == 0
    assert council("round", "end", debate_id, "1").code == 0
    assert council("round", "start", debate_id, "2").code == 0
    peer = council.meta(debate_id)["cross_examination"]["risk-auditor"]
    files = DebateFiles(Root(council.root), debate_id)
    entry = files.entries("risk-auditor")[0].body
    before = (council.folder(debate_id) / "risk-auditor" / "report.md").read_bytes()

    unscored = entry + f"\n\n### Cross-examination\n- {peer} never prices the cutover.\n"
    refused = council("report", "append", debate_id, "risk-auditor", "--round", "2", input=unscored)

    assert refused.code != 0
    assert refused.err.strip().count("\n") == 0
    assert "### Cross-examination" in refused.err and "Score: N/10" in refused.err
    assert peer in refused.err
    assert (council.folder(debate_id) / "risk-auditor" / "report.md").read_bytes() == before
    assert not (council.folder(debate_id) / "reviews.json").exists()

    scored = unscored + "\nScore: 4/10\n"
    assert (
        council("report", "append", debate_id, "risk-auditor", "--round", "2", input=scored).code
        == 0
    )
    reviews = json.loads((council.folder(debate_id) / "reviews.json").read_text("utf-8"))
    assert reviews == {"rounds": {"2": {"risk-auditor": {"target": peer, "score": 4.0}}}}


def test_a_debate_started_without_a_seed_keeps_the_protocol_it_began_with(
    council: Council,
) -> None:
    debate_id = council.new(TOPIC, "--options", OPTIONS, "--rounds", "2")
    for slug in SLUGS:
        council.add_persona(debate_id, slug, model="scripted")
    assert council("round", "start", debate_id, "1").code == 0
    # As the Node tool leaves a debate: no cross-examination seed in debate.md.
    debate_md = council.folder(debate_id) / "debate.md"
    text = debate_md.read_text("utf-8")
    debate_md.write_text(
        "".join(line for line in text.splitlines(True) if not line.startswith("seed:"))
    )
    files = DebateFiles(Root(council.root), debate_id)
    assert council("run", debate_id, "--only", ",".join(SLUGS)).code == 0
    assert council("round", "end", debate_id, "1").code == 0
    assert council("round", "start", debate_id, "2").code == 0

    assert "cross_examination" not in council.meta(debate_id)
    page = council("round-context", debate_id, "growth-cfo").out
    assert "cross-examination assignment" not in page
    assert "Score: N/10" not in page
    first = files.entries("growth-cfo")[0].body
    assert (
        council("report", "append", debate_id, "growth-cfo", "--round", "2", input=first).code == 0
    )
    assert council("verdict", debate_id, "growth-cfo", "2", "--stance", "A", "--conviction", "60", "--headline", "h").code == 0  # fmt: skip

    ran = council("run", debate_id)  # `run` finishes it the same way
    assert ran.code == 0, ran.err
    assert council.status(debate_id) == "complete"
    assert not (council.folder(debate_id) / "reviews.json").exists()
    sent = sent_user_message(council.folder(debate_id), "risk-auditor", 2)
    assert "cross-examination assignment" not in sent


def hold_round_by_hand(council: Council, debate_id: str, number: int, stances: list[str]) -> None:
    """Round N by hand: each persona's verdict and entry (a scored critique in round 2)."""
    assert council("round", "start", debate_id, str(number)).code == 0
    pairs = council.meta(debate_id).get("cross_examination") or {}
    for slug, stance in zip(SLUGS, stances, strict=True):
        args = ["--stance", stance, "--conviction", "80", "--headline", f"{slug} backs {stance}"]
        assert council("verdict", debate_id, slug, str(number), *args).code == 0
        body = entry(f"{slug} backs {stance} in round {number}.")
        if number == 2 and slug in pairs:
            body += f"### Cross-examination\n- {pairs[slug]} skips the rollback.\n\nScore: 7/10\n"
        appended = council("report", "append", debate_id, slug, "--round", str(number), input=body)
        assert appended.code == 0, appended.err


def test_round_end_early_stop_is_the_numeric_stop_run_early_stop_uses(council: Council) -> None:
    debate_id = council.new(TOPIC, "--options", OPTIONS, "--rounds", "3")
    for slug in SLUGS:
        council.add_persona(debate_id, slug, model="scripted")
    hold_round_by_hand(council, debate_id, 1, ["A", "A", "A"])
    first = council("round", "end", debate_id, "1", "--early-stop")
    assert first.code == 0 and "No early stop" in first.out  # one round is not two
    hold_round_by_hand(council, debate_id, 2, ["A", "A", "A"])

    ended = council("round", "end", debate_id, "2", "--early-stop", "--json")

    assert ended.code == 0, ended.err
    assert ended.json()["early_stop"] is True
    assert "## Convergence check after round 2 — CONVERGED" in council.log(debate_id)
    assert "Early stop (--early-stop): 90% or more in two rounds in a row." in council.log(
        debate_id
    )
    ran = council("run", debate_id)  # `run` reads the stop as its own check: no check call
    assert ran.code == 0, ran.err
    assert council.status(debate_id) == "complete"
    assert not [c for c in council.usage(debate_id) if c["phase"] == "check"]
    assert not any(
        e.round == 3 for e in DebateFiles(Root(council.root), debate_id).entries("growth-cfo")
    )


def test_without_early_stop_a_unanimous_round_is_not_a_stop(council: Council) -> None:
    debate_id = council.new(TOPIC, "--options", OPTIONS, "--rounds", "3")
    for slug in SLUGS:
        council.add_persona(debate_id, slug, model="scripted")
    for number in (1, 2):
        hold_round_by_hand(council, debate_id, number, ["A", "A", "A"])
        ended = council("round", "end", debate_id, str(number))
        assert ended.code == 0 and "early stop" not in ended.out.lower()
    assert "Convergence check" not in council.log(debate_id)
    assert council("round", "start", debate_id, "3").code == 0  # the orchestrator decides
