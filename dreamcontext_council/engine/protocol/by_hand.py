"""The hand-driven commands that run the engine's protocol: `synthesize` records what the
synthesizer reads as `run` does, `check` prints the convergence check `run` asks and records
the orchestrator's answer as `run` records its check model's, and `round end --early-stop`
is the numeric stop a user asked for.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from dreamcontext_council.actions import closing
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.rounds import RoundChange, end_round
from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.prompting.compression import find_fenced_blocks
from dreamcontext_council.engine.protocol import convergence as conv
from dreamcontext_council.engine.protocol.round_page import compression_of
from dreamcontext_council.engine.protocol.synthesis import (
    missing_required,
    parse_draft,
    synthesis_record,
    synthesis_values,
    write_report,
)
from dreamcontext_council.errors import StateError, UsageError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import atomic_write_text
from dreamcontext_council.resources import render
from dreamcontext_council.rules import metrics
from dreamcontext_council.rules.limits import check_length
from dreamcontext_council.rules.markdown import find_section

SYNTHESIS_INPUT = "synthesis-input.md"


def synthesize(root: Root, debate_id: str) -> closing.Manifest:
    """Move to synthesizing and write synthesis-input.md: the synthesizer's prompt as `run`
    would send it, its answers compressed over the gate (compressed.md, round-log.md).

    Written when synthesis begins, and again only when it is missing, so a record `run`
    left (with its repair request) is not replaced. The manifest lists it first."""
    began = closing.begin_synthesis(root, debate_id)
    files = DebateFiles(root, debate_id)
    with files.lock():
        debate = files.debate()
        if began.changed or not files.paths.synthesis_input.exists():
            values, task = synthesis_values(root, files, compression_of(debate))
            prompt = prompts.synthesis_prompt(values, task)
            record = synthesis_record(prompt)
            atomic_write_text(files.paths.synthesis_input, record, within=root.path)
        listing = closing.synthesis_files(files, debate)
    return closing.Manifest(debate_id, began.changed, [SYNTHESIS_INPUT, *listing])


@dataclass(frozen=True)
class RoundEnded:
    """`round end`: the change, and with `--early-stop` whether the debating ends."""

    change: RoundChange
    early_stop: bool | None = None
    """None without --early-stop; else whether 90% was reached in two rounds running."""


def close_round(
    root: Root, debate_id: str, number: int, *, excused: tuple[str, ...] = (), early_stop: bool
) -> RoundEnded:
    """End round N; with `early_stop` (the user's choice, as `run --early-stop`), when round
    N's and round N-1's convergence are both 90% or more, record the check's decision in
    round-log.md as `run` does, so `run` and the orchestrator both go to synthesis."""
    change = end_round(root, debate_id, number, excused=excused)
    if not early_stop:
        return RoundEnded(change)
    files = DebateFiles(root, debate_id)
    verdicts = files.verdicts()
    levels = [metrics.convergence(verdicts.round(r)) for r in range(1, number + 1)]
    if number < 2 or not conv.early_stop(levels):
        return RoundEnded(change, early_stop=False)
    with files.lock():
        if number not in conv.logged_checks(files.log()):
            conv.record_check(files, number, "CONVERGED", [conv.EARLY_STOP_NOTE])
    return RoundEnded(change, early_stop=True)


CHECK_ANSWERS = tuple(conv.CHECK_REASONS)
"""The words the check model is asked for (templates/prompts/check-system.md.j2), and STOP:
the orchestrator ends the debating for another reason, given with --reason."""
BY_HAND = "Answered by: the orchestrator (`council check --answer`)"
MAX_REASON_CHARS = 500


def _closed_round(files: DebateFiles, number: int) -> None:
    """Refuse, in one line, a check that `run` would not ask after round N."""
    debate = files.debate()
    status = debate.status
    if number < 2:
        raise UsageError(
            "The convergence check comes after round 2 and later rounds; after round 1, "
            f"start round 2 with `dreamcontext council round start {debate.id} 2`."
        )
    if status.phase != "round_complete" or status.round != number:
        raise StateError(
            f"Cannot check round {number} of {debate.id}: it is {status}; the check reads a "
            f"round once `round end` closed it and before the next one starts."
        )
    if number >= debate.rounds_planned:
        raise StateError(
            f"Round {number} is the last of the {debate.rounds_planned} planned for "
            f"{debate.id}: no check follows it; run `dreamcontext council synthesize "
            f"{debate.id}`, or `round extend {debate.id}` to debate on."
        )


def check_page(root: Root, debate_id: str, number: int) -> str:
    """`council check <id> <N>`: the check `run` asks after round N, its system prompt and
    its message as sent (built by the same function), and how to record the answer."""
    files = DebateFiles(root, debate_id)
    _closed_round(files, number)
    prompt = conv.check_prompt_after(files, number)
    logged = conv.logged_checks(files.log()).get(number)
    return render(
        "views/check-page.md.j2",
        debate_id=debate_id,
        round=number,
        system=prompt.system.strip("\n"),
        user=prompt.user.strip("\n"),
        answers=CHECK_ANSWERS,
        recorded=logged.answer if logged else None,
    )


@dataclass(frozen=True)
class CheckRecorded:
    """`council check --answer`: the answer after round N, recorded now or before."""

    round: int
    answer: str
    changed: bool
    another_round: bool


def record_check_answer(
    root: Root, debate_id: str, number: int, answer: str, reason: str | None = None
) -> CheckRecorded:
    """Record the orchestrator's check after round N in round-log.md as `run` records its
    check model's answer, so the synthesizer reads the same decision for both drivers.

    A check already recorded for the round stands (as `run` reads it back): the same
    answer again changes nothing, another one is refused."""
    word = answer.strip().upper()
    if word not in CHECK_ANSWERS:
        raise UsageError(f"The check's answer is one word: {', '.join(CHECK_ANSWERS)}.")
    notes = [BY_HAND]
    if reason is not None:
        text = " ".join(reason.split())
        check_length(text, MAX_REASON_CHARS, "The reason", "Say it in one line.")
        if any(unicodedata.category(c) in ("Cc", "Cf") for c in text):
            raise UsageError("The reason holds control characters; give it as plain text.")
        if text:
            notes.append(f"Reason: {text}")
    files = DebateFiles(root, debate_id)
    with files.lock():
        _closed_round(files, number)
        logged = conv.logged_checks(files.log()).get(number)
        if logged is not None:
            if logged.answer.strip().upper() != word:
                raise StateError(
                    f"The check after round {number} of {debate_id} is already recorded as "
                    f"{logged.answer} in round-log.md; it stands, as `run` keeps its check."
                )
            return CheckRecorded(number, logged.answer, False, conv.is_continue(logged.answer))
        conv.record_check(files, number, word, notes)
    return CheckRecorded(number, word, True, conv.is_continue(word))


SYNTHESIZED_BY_HAND = "by hand"
"""`synthesized_by` of a report a synthesizer sub-agent wrote and `complete` assembled."""


@dataclass(frozen=True)
class Completed:
    """`complete`: whether the status changed, whether the report was assembled, warnings."""

    changed: bool
    assembled: bool
    warnings: list[str]


def complete(root: Root, debate_id: str) -> Completed:
    """`complete` for a synthesizer driven by hand: a final-report.md that ends with the
    ```claims block synthesis-input.md asks for is the synthesizer's answer, and is first
    assembled as `run` assembles its synthesizer's (engine/protocol/synthesis.write_report:
    claims.json, the claims ledger, the dissent flags, the position timeline and the
    measures); then the debate is complete. A malformed block, or a report without its
    Verdict or Appendix, is refused with nothing changed."""
    files = DebateFiles(root, debate_id)
    assembled = False
    warnings: list[str] = []
    with files.lock():
        debate = files.debate()
        report = files.paths.final_report
        if debate.status.phase == "synthesizing" and report.exists():
            _, body = frontmatter_io.parse(files.read(report), report.name)
            if any(b.info.split()[:1] == ["claims"] for b in find_fenced_blocks(body)):
                _assemble(root, files, body)
                assembled = True
            elif find_section(body, 2, "Claims ledger") is None:
                warnings.append(
                    f"{report.name} ends with no ```claims block, so it has no claims ledger, "
                    "claims.json or dissent flag; synthesis-input.md asks the synthesizer for it."
                )
        changed = closing.complete_debate(root, debate_id)
    return Completed(changed, assembled, warnings)


def _assemble(root: Root, files: DebateFiles, answer: str) -> None:
    draft = parse_draft(files, answer)
    again = f"and run `dreamcontext council complete {files.id}` again"
    if draft.claims_problem:
        raise UsageError(
            f"Cannot complete {files.id}: in final-report.md {draft.claims_problem}; fix it {again}."
        )
    missing = missing_required(draft.sections)
    if missing:
        raise StateError(
            f"Cannot complete {files.id}: final-report.md lacks "
            + ", ".join(f"## {m}" for m in missing)
            + f"; the synthesizer writes it as synthesis-input.md asks, {again}."
        )
    write_report(root, files, draft, SYNTHESIZED_BY_HAND)
