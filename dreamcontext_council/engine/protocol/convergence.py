"""Whether to debate another round: what the check model reads, asking it once, the
exactly-CONTINUE rule and the opt-in early stop.

The check follows NiraNexus Council: after round 2 the orchestrator model reads every
persona's round-1 perspective and a summary of each round-2 cross-examination exchange,
and only an answer that is exactly CONTINUE runs another round. It also reads what is
still unanswered (the critiques their target has not answered yet, the questions the
latest answers leave open) and no convergence figure: the seed's orchestrator is "not a
quorum count", so the share of conviction on the leading option stays out of its prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.model_calls.accounting import ORCHESTRATOR_CALLER
from dreamcontext_council.engine.model_calls.caller import Caller
from dreamcontext_council.engine.model_calls.progress import Progress
from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.prompting.exchanges import exchanges_before
from dreamcontext_council.engine.prompting.prompts import CheckMaterial
from dreamcontext_council.engine.prompting.reviews import load_reviews
from dreamcontext_council.engine.providers.base import Prompt
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.rules import metrics
from dreamcontext_council.rules.debate import bounded_round
from dreamcontext_council.rules.reviews import review_score
from dreamcontext_council.rules.seats import is_person
from dreamcontext_council.rules.verdicts import recorded_order
from dreamcontext_council.views.failures import shorten_at_word

EARLY_STOP = 90
_LOGGED = re.compile(r"^## Convergence check after round (\d+) — (\S+)", re.M)
# The points of a cross-examination the check reads: at most this many lines, each cut.
EXCHANGE_POINTS = 5
POINT_CHARS = 240
_SCORE_LINE = re.compile(r"^\W*score\W*[0-9]+(?:\.[0-9]+)?\s*/\s*10\W*$", re.I)
_LIST_MARK = re.compile(r"^(?:[-*+]|[0-9]{1,9}[.)]|#{1,6})\s+")


def is_continue(answer: str) -> bool:
    """Only an answer that is exactly CONTINUE after trimming and upper-casing continues."""
    return answer.strip().upper() == "CONTINUE"


def early_stop(convergences: list[int]) -> bool:
    """Convergence at or above 90% in two rounds in a row ends the debating (opt-in)."""
    return len(convergences) >= 2 and all(c >= EARLY_STOP for c in convergences[-2:])


@dataclass(frozen=True)
class LoggedCheck:
    round: int
    answer: str


def logged_checks(log: str) -> dict[int, LoggedCheck]:
    """Convergence checks already recorded in round-log.md, by round."""
    found = ((bounded_round(m.group(1)), m.group(2)) for m in _LOGGED.finditer(log))
    return {n: LoggedCheck(n, answer) for n, answer in found if n is not None}


CHECK_REASONS = {
    "CONTINUE": "productive tension remained: open challenges, new evidence, positions still moving",
    "CONVERGED": "the personas agree, or their disagreement is settled and stated",
    "DEADLOCKED": "positions are fixed and another round would only repeat them",
    # Only an orchestrator answering by hand (`council check --answer STOP`) says this one.
    "STOP": "the orchestrator ended the debating for the reason it gave",
}


def check_decisions(log: str, last_round: int, rounds_planned: int) -> list[str]:
    """For the synthesizer: each check's decision with its reason, and why the debating ended."""
    lines = []
    for number, check in sorted(logged_checks(log).items()):
        word = check.answer.strip().upper()
        reason = CHECK_REASONS.get(word, "the answer was not CONTINUE")
        going = "another round" if is_continue(word) else "synthesis"
        lines.append(f"After round {number}: {check.answer} ({reason}) → {going}.")
    if last_round not in logged_checks(log):
        if last_round >= rounds_planned:
            lines.append(f"After round {last_round}: the {rounds_planned} planned rounds were run.")
        else:
            lines.append(
                f"After round {last_round}: the debate was sent to synthesis without a check."
            )
    return lines


EARLY_STOP_NOTE = "Early stop (--early-stop): 90% or more in two rounds in a row."


def check_prompt_after(files: DebateFiles, number: int) -> Prompt:
    """The check after round N as `run` asks it and `council check` prints it."""
    debate = files.debate()
    return prompts.check_prompt(
        debate.section("Question") or debate.topic,
        number,
        debate.rounds_planned,
        check_material(files, number),
    )


def record_check(files: DebateFiles, number: int, answer: str, notes: list[str]) -> list[str]:
    """Write the check after round N to round-log.md, whoever answered it: the answer in the
    heading (what the synthesizer is told), the numeric convergence, `notes` (who answered,
    and why), then the decision. Returns the bullets written."""
    verdicts = files.verdicts()
    lead = metrics.leading(verdicts.round(number))
    level = metrics.convergence(verdicts.round(number))
    bullets = [f"Numeric convergence: {level}%" + (f" → {lead}" if lead else ""), *notes]
    bullets.append("Decision: another round" if is_continue(answer) else "Decision: synthesis")
    files.append_log(check_heading(number, answer), bullets)
    return bullets


def check_heading(number: int, answer: str) -> str:
    """The round-log heading of a check; the answer is shown as one token."""
    token = "_".join(answer.strip().split())[:40] or "(empty)"
    return f"Convergence check after round {number} — {token}"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def exchange_points(critique: str) -> list[str]:
    """The errors, gaps and missing perspectives a cross-examination names, line by line.

    Its non-empty lines without the score line, list and heading marks and bold removed,
    each cut to POINT_CHARS; past EXCHANGE_POINTS lines the rest is counted, not shown.
    Fenced code is left out (the check judges positions, not code)."""
    points: list[str] = []
    fence = ""
    for raw in critique.split("\n"):
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fence = "" if fence and line.startswith(fence) else fence or line[:3]
            continue
        if fence or not line or _SCORE_LINE.match(line):
            continue
        line = " ".join(_LIST_MARK.sub("", line).replace("**", "").split())
        if line:
            points.append(_cut(line, POINT_CHARS))
    if len(points) > EXCHANGE_POINTS:
        more = len(points) - EXCHANGE_POINTS
        points = [*points[:EXCHANGE_POINTS], f"(and {more} more line{'s' * (more > 1)})"]
    return points


def check_material(files: DebateFiles, number: int) -> CheckMaterial:
    """Read round 1, the round-2 cross-examinations and round N from the debate folder."""
    verdicts = files.verdicts()
    debate = files.debate()
    entries = {slug: files.entries(slug) for slug in debate.personas}
    persons = {slug for slug in debate.personas if _person(files, slug)}

    def entry(slug: str, round_number: int) -> Any:
        return next((e for e in entries.get(slug, []) if e.round == round_number), None)

    # Who answered each round comes from the verdicts; what the check reads is their prose.
    perspectives = []
    for slug in recorded_order(verdicts.round(1)):
        opening = entry(slug, 1)
        perspectives.append(
            {
                "slug": slug,
                "person": slug in persons,
                "summary": (opening.executive_summary or "").strip() if opening else "",
            }
        )
    exchanges = []
    for critic, review in load_reviews(files)["rounds"].get("2", {}).items():
        critique = entry(critic, 2)
        text = (critique.section("Cross-examination") or "") if critique else ""
        score = review.get("score")
        if score is None and text:
            score = review_score(text)
        exchanges.append(
            {
                "critic": critic,
                "target": review.get("target", "?"),
                "score": f"{score:g}/10" if isinstance(score, int | float) else "no score",
                "points": exchange_points(text),
            }
        )
    positions = []
    open_questions = []
    for slug in recorded_order(verdicts.round(number)):
        latest = entry(slug, number)
        positions.append(
            {
                "slug": slug,
                "person": slug in persons,
                "summary": (latest.executive_summary or "").strip() if latest else "",
            }
        )
        points = exchange_points(latest.section("Open questions") or "") if latest else []
        if points:
            open_questions.append({"slug": slug, "points": points})
    # A critique is answered once its target's reactions take it up (accepted, partly
    # accepted or rejected); a critic that pressed the answer is owed another one.
    unanswered = []
    for exchange in exchanges_before(files, number + 1, entries):
        if exchange.owed_by == exchange.target:
            pressed = exchange.turns[-1].round if exchange.turns else None
            unanswered.append(
                {
                    "round": exchange.round,
                    "critic": exchange.critic,
                    "target": exchange.target,
                    "pressed": pressed,
                }
            )
    return CheckMaterial(perspectives, exchanges, positions, unanswered, open_questions)


def _person(files: DebateFiles, slug: str) -> bool:
    """Whether a person holds the seat (the check names it so, not as a model)."""
    try:
        return is_person(files.context(slug).model)
    except CouncilError:
        return False


async def ask_check(
    files: DebateFiles,
    caller: Caller,
    progress: Progress,
    number: int,
    *,
    check_model: str,
    allow_early_stop: bool,
) -> bool:
    """The convergence check after round N, asked once and read back from round-log.md.

    The check model is always asked; the numeric early stop applies only when
    `allow_early_stop` (`--early-stop`, a departure from the seed, off by default)."""
    logged = logged_checks(files.log()).get(number)
    if logged is not None:
        return is_continue(logged.answer)
    verdicts = files.verdicts()
    levels = [metrics.convergence(verdicts.round(r)) for r in range(1, number + 1)]
    line: str | None = None
    stopped_early = allow_early_stop and early_stop(levels)
    if stopped_early:
        answer, notes = "CONVERGED", [EARLY_STOP_NOTE]
    else:
        completion, line = await caller.ask(
            parse_model(check_model),
            check_prompt_after(files, number),
            persona=ORCHESTRATOR_CALLER,
            round=number,
            phase="check",
        )
        answer = completion.text.strip() or "(empty)"
        notes = [f"Answered by: {completion.provider}:{completion.model}"]
    going_on = is_continue(answer)
    bullets = record_check(files, number, answer, notes)
    if line:
        await caller.append(line)  # `ok` once the answer is in round-log.md
    # What the check said (an early stop: that it was one); the figure stays in round-log.md.
    said = shorten_at_word(answer, 40) + (" (--early-stop)" if stopped_early else "")
    progress.note(f"Convergence check after round {number}: {said}; {bullets[-1]}.")
    return going_on
