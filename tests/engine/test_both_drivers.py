"""Both drivers, one protocol: a debate held by `run` and the same debate held by hand
(`round start`, `round-context`, `verdict`, `report append`, `round end`, `synthesize`)
give every persona the same material, record the same reviews and hand the synthesizer
the same record. A debate the Node tool started keeps its own protocol when held here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.folder.paths import Root

from .support import OPTIONS, TOPIC, Council, entry

SLUGS = ("risk-auditor", "growth-cfo", "user-advocate")
HAND_ONLY = {"Your persona", "Facts new since round", "Attachment files", "What to submit"}
"""Sections a page has that no prompt has: who the persona is (run sends it as the system
prompt), the files to open, and the commands that submit."""


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


def test_round_context_gives_each_persona_what_run_sends_it(
    council: Council, tmp_path: Path
) -> None:
    debate_id = council.new(TOPIC, "--options", OPTIONS, "--rounds", "3")
    for slug in SLUGS:
        council.add_persona(debate_id, slug, model="scripted")
    assert council("round", "start", debate_id, "1").code == 0  # records the seed
    by_hand = Council(tmp_path / "hand" / "_dream_context", council.workdir, council.env)
    shutil.copytree(council.root, by_hand.root)

    ran = council("run", debate_id)
    assert ran.code == 0, ran.err
    by_run = council.folder(debate_id)
    run_files = DebateFiles(Root(council.root), debate_id)
    assert all(run_files.entries(s)[0].round == 3 for s in SLUGS)  # the check said CONTINUE

    pages: dict[tuple[str, int], str] = {}
    for number in (1, 2, 3):
        if number > 1:
            assert by_hand("round", "start", debate_id, str(number)).code == 0
        for slug in SLUGS:
            page = by_hand("round-context", debate_id, slug)
            assert page.code == 0, page.err
            pages[slug, number] = page.out
        # Each persona answers by hand what its model answered under `run`.
        verdicts = run_files.verdicts().round(number)
        for slug in SLUGS:
            v = verdicts[slug]
            args = [
                "--stance",
                v.stance,
                "--conviction",
                str(v.conviction),
                "--headline",
                v.headline,
            ]
            assert by_hand("verdict", debate_id, slug, str(number), *args).code == 0
            body = next(e.body for e in run_files.entries(slug) if e.round == number)
            appended = by_hand(
                "report", "append", debate_id, slug, "--round", str(number), input=body
            )
            assert appended.code == 0, appended.err
        assert by_hand("round", "end", debate_id, str(number)).code == 0

    for (slug, number), page in pages.items():
        sent = h2_sections(sent_user_message(by_run, slug, number))
        shown = [(t, b) for t, b in h2_sections(page) if not hand_only(t)]
        assert shown == sent, (slug, number)
    # Each phase's material is there, so the comparison above compares something.
    titles = {key: [t for t, _ in h2_sections(page)] for key, page in pages.items()}
    peer = council.meta(debate_id)["cross_examination"]["growth-cfo"]
    assert f"Your cross-examination assignment: {peer}" in titles["growth-cfo", 2]
    assert "Your round 1 answer" in titles["growth-cfo", 2]
    assert "Critiques aimed at you" in titles["growth-cfo", 3]
    assert "Cross-examinations: who critiqued whom" in titles["growth-cfo", 3]
    assert "The debate so far" in titles["growth-cfo", 3]
    assert not any("cross-examination" in t.lower() for t in titles["growth-cfo", 1])

    hand_folder = by_hand.folder(debate_id)
    assert by_hand.meta(debate_id)["seed"] == council.meta(debate_id)["seed"]
    assert (
        by_hand.meta(debate_id)["cross_examination"] == council.meta(debate_id)["cross_examination"]
    )
    assert json.loads((hand_folder / "reviews.json").read_text("utf-8")) == json.loads(
        (by_run / "reviews.json").read_text("utf-8")
    )
    synthesized = by_hand("synthesize", debate_id)
    assert synthesized.code == 0, synthesized.err
    assert "synthesis-input.md" in synthesized.out
    # The same record, but for the check decisions: `run` logged its check's CONTINUE after
    # round 2; by hand the orchestrator decided and only the end of the rounds is recorded.
    by_hand_input = dict(h2_sections((hand_folder / "synthesis-input.md").read_text("utf-8")))
    by_run_input = dict(h2_sections((by_run / "synthesis-input.md").read_text("utf-8")))
    ended = "How the debating ended"
    assert by_hand_input.pop(ended) == "- After round 3: the 3 planned rounds were run."
    assert by_run_input.pop(ended).startswith("- After round 2: CONTINUE")
    assert by_hand_input == by_run_input
    latest = run_files.entries("growth-cfo")[0].body  # round 3, under the gate: whole
    assert latest.strip() in "\n".join(by_hand_input.values())


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
