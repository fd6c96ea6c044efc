"""docs/engine.md's information-flow table against the prompts the engine renders.

The prompts of every phase are rendered for a copy of the reference debate (with an
attachment, a cross-examination seed and round-2 review scores added), from the same
builders `run` uses; the `##` sections of each user message (of a persona's, the part its
round appends) must be the table's, in the table's order, and a section the table does not
mark optional (`?`) must be there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import cast

from debate_story import Reference

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.model_calls.caller import Caller
from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.prompting.attachments import attachments_for_prompt
from dreamcontext_council.engine.prompting.reviews import record_reviews
from dreamcontext_council.engine.protocol.baseline import SoloBaseline
from dreamcontext_council.engine.protocol.convergence import check_material
from dreamcontext_council.engine.protocol.rounds import RoundRunner, cross_exam_pairs
from dreamcontext_council.engine.protocol.synthesis import Synthesizer
from dreamcontext_council.folder.paths import Root

DOC = Path(__file__).resolve().parents[2] / "docs" / "engine.md"
# What a persona quotes or is shown whole: never read for the prompt's own sections.
_QUOTED = re.compile(r"<(peer-answer|your-answer|attachment|answer)\b[^>]*>.*?</\1>", re.S)


def table() -> dict[str, list[tuple[str, bool]]]:
    """Phase → its sections in order, each with whether it may be absent."""
    text = DOC.read_text(encoding="utf-8")
    part = text[text.index("## Information flow") :]
    part = part[: part.index("\n## ", 1)]
    rows: dict[str, list[tuple[str, bool]]] = {}
    for line in part.split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("Phase", "---"):
            continue
        rows[cells[0]] = [
            (name, bool(optional)) for name, optional in re.findall(r"`([^`]+)`(\??)", cells[2])
        ]
    return rows


def sections(user: str) -> list[str]:
    """The `##` headings of a user message, outside everything it quotes whole."""
    return re.findall(r"^## (.+)$", _QUOTED.sub("", user), re.M)


def matches(documented: str, heading: str) -> bool:
    pattern = re.escape(documented).replace(re.escape("<n>"), r"\d+")
    pattern = pattern.replace(re.escape("<peer>"), r"\S+")
    return re.fullmatch(pattern, heading) is not None


def rendered(reference: Reference) -> dict[str, list[str]]:
    """Phase → the user messages the engine renders for the reference debate."""
    root = Root(reference.root)
    files = DebateFiles(root, reference.id)
    attachments = files.paths.attachments
    attachments.mkdir()
    (attachments / "design.md").write_text("# Design\n\nSessions move to Postgres.\n")
    debate = files.debate()
    # A seed, as this tool's round 1 records one: the Node tool's debate has none and
    # would keep its own protocol, with no cross-examination to render.
    debate.meta["seed"] = 7
    files.save_debate(debate)
    roster = debate.personas
    record_reviews(
        files, 2, {c: (p, 6.0) for c, p in cross_exam_pairs(files, debate, roster).items()}
    )
    runner = RoundRunner(root, files, cast(Caller, None), "scripted", attachments_for_prompt(files))
    verdicts = files.verdicts()
    found: dict[str, list[str]] = {}
    systems = found.setdefault("persona systems", [])
    for number in (1, 2, 3):
        for slug in roster:
            context = files.context(slug)
            material = runner.material(debate, slug, number, roster, context, verdicts)
            prompt = prompts.persona_prompt(slug, context.persona_text, context.aspects, material)
            # The message grows by appending: the table gives what each round adds.
            *earlier, added = prompts.round_parts(material)
            assert prompt.user == "".join(earlier) + added
            found.setdefault(prompts.phase_of(number), []).append(added)
            systems.append(prompt.system)
    question = debate.section("Question") or debate.topic
    check = prompts.check_prompt(question, 2, 3, check_material(files, 2))
    found["check"] = [check.user]
    values, task = Synthesizer(root, files, cast(Caller, None), "scripted").input_values()
    found["synthesis"] = [prompts.synthesis_prompt(values, task).user]
    solo = SoloBaseline(files, cast(Caller, None), "scripted", attachments_for_prompt(files))
    baseline = prompts.baseline_prompt(solo.material())
    found["baseline"] = [baseline.user]
    systems.append(baseline.system)
    return found


BRIEF = ["Question", "Constraints & Known Facts", "Options", "Attachments"]


def test_every_persona_and_the_baseline_read_the_same_brief_first(
    fixture_root: Reference,
) -> None:
    text = DOC.read_text(encoding="utf-8")
    documented = text[text.index("## Information flow") :]
    assert " → ".join(f"`{name}`" for name in BRIEF[:3]) + " → `Attachments`?" in documented
    systems = rendered(fixture_root)["persona systems"]
    briefs = {system[: system.index("\n## Your persona\n")] for system in systems[:-1]}
    briefs.add(systems[-1][: systems[-1].index("\nYou answer a decision question alone")])
    [brief] = briefs  # the same text for every persona, every round, and the baseline
    assert sections(brief) == BRIEF


def test_the_information_flow_table_is_what_the_engine_renders(
    fixture_root: Reference,
) -> None:
    documented = table()
    assert set(documented) == {
        "opening",
        "cross-exam",
        "rebuttal",
        "check",
        "synthesis",
        "baseline",
    }
    for phase, users in rendered(fixture_root).items():
        if phase == "persona systems":
            continue
        for user in users:
            headings = sections(user)
            expected = documented[phase]
            at = 0
            for heading in headings:
                # Each heading is the next documented section, skipping only optional ones.
                while at < len(expected) and not matches(expected[at][0], heading):
                    name, optional = expected[at]
                    assert optional, f"{phase}: `{name}` is missing before `## {heading}`"
                    at += 1
                assert at < len(expected), f"{phase}: `## {heading}` is not in the table"
                at += 1
            rest = [name for name, optional in expected[at:] if not optional]
            assert not rest, f"{phase}: the table lists {rest} the prompt does not have"


# docs/engine.md: no debater and no check reads who backs which option with what conviction.
_STANCE_LINE = re.compile(r"^\s*-\s*\*\*[a-z0-9-]+\*\*:\s*[A-Z]\s+\d{1,3}\b", re.M)
_STANCE_HEADING = re.compile(
    r"^#{2,4}\s+[a-z0-9-]+(?: \(a person\))?\s+—\s+[A-Z]\s+\d{1,3}\b", re.M
)


def test_only_the_synthesizer_reads_the_votes_and_last(fixture_root: Reference) -> None:
    text = DOC.read_text(encoding="utf-8")
    assert re.search(r"only the synthesizer\s+reads the votes, last", text)
    assert table()["synthesis"][-1] == ("Verdict record", False)
    for phase, users in rendered(fixture_root).items():
        for user in users:
            if phase == "synthesis":
                record = user.rindex("\n## Verdict record\n")
                assert re.search(r"^\| \S+ \| [A-Z] \d+ \|", user[record:], re.M)
                user = user[:record]
            assert "council-call" not in user
            assert not _STANCE_LINE.search(user), (phase, _STANCE_LINE.search(user))
            assert not _STANCE_HEADING.search(user), (phase, _STANCE_HEADING.search(user))
