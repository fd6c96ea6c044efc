"""Synthesis: a clean call that writes final-report.md; the engine renders what must be exact."""

from __future__ import annotations

import datetime as dt
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamcontext_council.actions.files import DebateFiles, today
from dreamcontext_council.actions.rounds import absences
from dreamcontext_council.actions.snapshot import DebateSnapshot, load_snapshot
from dreamcontext_council.engine.model_calls.accounting import (
    BROKEN,
    SYNTHESIS_CALLER,
    with_outcome,
)
from dreamcontext_council.engine.model_calls.caller import Caller
from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.prompting.reviews import load_reviews
from dreamcontext_council.engine.prompting.synthesis_input import (
    CompressionSettings,
    answers_of,
    decide_answers,
    record_decision,
    shown_answers,
)
from dreamcontext_council.engine.protocol.answer_cap import (
    DEFAULT_MAX_ANSWER_KB,
    CappedAnswer,
    cap_answer,
)
from dreamcontext_council.engine.protocol.convergence import check_decisions
from dreamcontext_council.engine.providers.base import Completion, Prompt
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.errors import CouncilError, StateError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import atomic_write_text, read_text
from dreamcontext_council.resources import render
from dreamcontext_council.rules import metrics
from dreamcontext_council.rules.diversity import diversity, family_of
from dreamcontext_council.rules.markdown import normalize_title, sections
from dreamcontext_council.rules.seats import is_person
from dreamcontext_council.views.failures import short_council_sentence
from dreamcontext_council.views.timeline import render_timeline

VERDICT = "Verdict"
APPENDIX = "Appendix: per-agent per-round summaries"
REQUIRED = (VERDICT, APPENDIX)
"""The only sections the synthesizer must write: the Verdict first, the Appendix last."""
SUGGESTED = (
    "Decision card",
    "Why",
    "What was debated",
    "Minority view & revisit conditions",
    "Open risks",
)
"""Middle sections the prompt suggests; the synthesizer writes those that bear on the call."""
SOLO_SECTION = "Solo answer vs council verdict"
ENGINE_SECTIONS = ("Claims ledger", "Position timeline", SOLO_SECTION)
"""Rendered by the engine from the record, never taken from the model, placed after Why."""
NOT_WRITTEN = "_The synthesizer did not write this section._"


def tally_line(files: DebateFiles, number: int) -> str:
    """`Final tally (round N): A Migrate now 2 · 140 — B Stay on Redis 1 · 40`."""
    verdicts = files.verdicts()
    parts = [
        f"{t.key} {t.label} {t.count} · {t.conviction}" for t in metrics.tally(verdicts, number)
    ]
    lead = metrics.leading(verdicts.round(number))
    level = metrics.convergence(verdicts.round(number))
    summary = f" — convergence {level}% → {lead}" if lead else ""
    return (
        f"**Final tally (round {number}):** " + " — ".join(parts) + summary
        if parts
        else "No verdicts were recorded."
    )


def _score(value: object) -> str:
    return f"{value:g}/10" if isinstance(value, int | float) else "no score"


def split_sections(text: str) -> dict[str, str]:
    """The model's `##` sections by their normalized title."""
    return {normalize_title(s.title): s.body.strip("\n") for s in sections(text, 2)}


def missing_required(found: dict[str, str]) -> list[str]:
    return [t for t in REQUIRED if not found.get(normalize_title(t), "").strip()]


def synthesis_values(
    root: Root, files: DebateFiles, compression: CompressionSettings
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Prompt values and the structured task for the synthesis call: what the synthesizer
    reads, whether `run` calls it or `synthesize` records it for a synthesizer by hand.
    The gate counts the whole prompt: the answers get what the instructions, question,
    attachments, research notes and records leave of it, and over that they are
    compressed (compressed.md, round-log.md)."""
    snapshot = load_snapshot(root, files.id)
    debate = snapshot.debate
    number = debate.current_round

    def note(persona: str, slug: str) -> str:
        path = files.persona_paths(persona).researches / f"{slug}.md"
        return files.read(path) if path.exists() else ""

    research = [
        {
            "persona": p.slug,
            "id": f"{p.slug}/{item.get('slug')}",
            "topic": item.get("topic", ""),
            "text": note(p.slug, str(item.get("slug"))),
        }
        for p in snapshot.personas
        for item in p.research
    ]
    from dreamcontext_council.engine.prompting.attachments import attachments_for_prompt

    reviews = [
        {
            "round": int(key),
            "critic": critic,
            "target": review.get("target", "?"),
            "score": _score(review.get("score")),
        }
        for key, by_critic in load_reviews(files)["rounds"].items()
        for critic, review in by_critic.items()
    ]
    values = {
        "debate_id": debate.id,
        "question": debate.section("Question") or debate.topic,
        "facts": debate.facts(),
        "options": snapshot.verdicts.options or debate.options,
        "timeline": render_timeline(snapshot),
        "tally": tally_line(files, number),
        "attachments": attachments_for_prompt(files),
        "research": research,
        "answers": [],
        "persons": [p.slug for p in snapshot.personas if p.context and is_person(p.context.model)],
        "reviews": reviews,
        "decisions": check_decisions(files.log(), number, debate.rounds_planned),
    }
    final = snapshot.verdicts.round(number)
    task = {
        "phase": "synthesis",
        "debate": debate.id,
        "topic": debate.topic,
        "round": number,
        "personas": debate.personas,
        "options": values["options"],
        "verdicts": {s: {"stance": v.stance, "conviction": v.conviction} for s, v in final.items()},
    }
    values["answers"] = fit_answers(files, snapshot, compression, values, task)
    return values, task


def fit_answers(
    files: DebateFiles,
    snapshot: DebateSnapshot,
    compression: CompressionSettings,
    values: dict[str, Any],
    task: dict[str, Any],
) -> list[dict[str, Any]]:
    """The answers as the synthesizer reads them: within what the rest of the prompt leaves
    of the gate, compressed over it; the decision is recorded beside the originals."""
    answers = answers_of(files, snapshot)
    gate = compression.gate()

    whole = decide_answers(answers, compression, sys.maxsize)
    frame = prompts.synthesis_prompt({**values, "answers": shown_answers(whole, texts=False)}, task)
    reserved = len(frame.system) + len(frame.user)
    decided = decide_answers(answers, compression, max(0, gate - reserved))
    record_decision(files, decided, gate, reserved)
    return shown_answers(decided)


@dataclass
class SynthesisDraft:
    """The synthesizer's answer, parsed."""

    sections: dict[str, str]
    middle: list[tuple[str, str]] = field(default_factory=list)
    """The sections between Verdict and Appendix, as titled and ordered by the synthesizer."""
    claims: Any = None
    claims_problem: str | None = None
    """Why the claims block was not accepted (absent or malformed), or None."""


@dataclass
class Synthesizer:
    """Builds the synthesizer's input, calls it once (plus one repair), writes the report."""

    root: Root
    files: DebateFiles
    caller: Caller
    model: str
    compression: CompressionSettings = field(default_factory=CompressionSettings)
    max_answer_kb: int = DEFAULT_MAX_ANSWER_KB

    def reopen(self) -> None:
        """For --resynthesize: keep the previous report under a dated name and go back to synthesizing."""
        with self.files.lock():
            debate = self.files.debate()
            if debate.status.phase not in ("complete", "synthesizing"):
                raise StateError(
                    f"Cannot resynthesize {debate.id}: it is {debate.status}; only a debate that "
                    "reached synthesis can be synthesized again."
                )
            report = self.files.paths.final_report
            if report.exists():
                kept = keep_previous_report(report, within=self.root.path)
                self.files.append_log(
                    f"Resynthesis — {today()}", [f"Previous report kept as {kept.name}"]
                )
            debate.meta["status"] = "synthesizing"
            self.files.save_debate(debate)

    def input_values(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Prompt values and the structured task for the synthesis call."""
        return synthesis_values(self.root, self.files, self.compression)

    async def run(self) -> None:
        """Call the synthesizer, repair once if sections or claims are missing, write the report."""
        values, task = self.input_values()
        prompt = prompts.synthesis_prompt(values, task)
        atomic_write_text(
            self.files.paths.synthesis_input, synthesis_record(prompt), within=self.root.path
        )
        spec = parse_model(self.model)
        number = self.files.debate().current_round
        completion, line = await self.caller.ask(
            spec, prompt, persona=SYNTHESIS_CALLER, round=number, phase="synthesis"
        )
        capped = self._cap(completion)
        draft = self.parse(capped.text)
        problems = draft_problems(draft)
        if problems:
            # Paid for, but only quoted in the repair request: a rerun asks again.
            await self.caller.append(with_outcome(line, BROKEN))
            repair = repair_prompt(prompt, capped.text, "; ".join(problems) + ".")
            record = synthesis_record(prompt, repair)
            atomic_write_text(self.files.paths.synthesis_input, record, within=self.root.path)
            completion, line = await self.caller.ask(
                spec, repair, persona=SYNTHESIS_CALLER, round=number, phase="repair"
            )
            capped = self._cap(completion)
            draft = self.parse(capped.text)
        if not draft.sections.get(normalize_title("Verdict"), "").strip():
            await self.caller.append(with_outcome(line, BROKEN))
            raise CouncilError(
                f"The synthesizer wrote no ## Verdict section, even after a repair request; run "
                f"`dreamcontext council run {self.files.id}` again, perhaps with --synth-model."
            )
        used = (
            completion.provider
            if completion.model == completion.provider
            else f"{completion.provider}:{completion.model}"
        )
        try:
            if capped.truncated:
                atomic_write_text(
                    self.files.paths.synthesis_raw, completion.text, within=self.root.path
                )
            self.write(draft, used)
        except Exception as exc:
            await self.caller.append(
                with_outcome(line, "failed", f"the report could not be saved: {exc}")
            )
            raise
        await self.caller.append(line)  # `ok` only now that final-report.md is on disk

    def _cap(self, completion: Completion) -> CappedAnswer:
        """The answer cut to --max-answer-kb; the whole one (what was read of it, when
        reading stopped at its budget) goes to synthesis-raw.md."""
        kept_at = self.files.paths.synthesis_raw.name
        return cap_answer(
            completion.text,
            self.max_answer_kb,
            keep_block="claims",
            kept_at=kept_at,
            read_whole=not completion.cut,
        )

    def parse(self, text: str) -> SynthesisDraft:
        return parse_draft(self.files, text)

    def write(self, draft: SynthesisDraft, model: str) -> None:
        write_report(self.root, self.files, draft, model)


def parse_draft(files: DebateFiles, text: str) -> SynthesisDraft:
    """The synthesizer's answer, whichever driver asked for it: its sections, the middle
    ones in its order, and its claims block (or why there is none)."""
    from dreamcontext_council.engine.prompting.ledger import parse_claims

    body, claims, problem = parse_claims(text, files.debate().personas)
    found = split_sections(body)
    not_middle = {normalize_title(t) for t in (*REQUIRED, *ENGINE_SECTIONS)}
    middle = [
        (s.title, s.body.strip("\n"))
        for s in sections(body, 2)
        if normalize_title(s.title) not in not_middle and s.body.strip()
    ]
    return SynthesisDraft(found, middle, claims, problem)


def write_report(root: Root, files: DebateFiles, draft: SynthesisDraft, model: str) -> None:
    """Assemble final-report.md, whichever driver synthesized: the Verdict, the synthesizer's
    middle sections in its own order with the claims ledger and position timeline after
    Why, then the Appendix; claims.json and the dissent flags in debate.md beside it."""
    from dreamcontext_council.engine.prompting.ledger import apply_claims

    snapshot = load_snapshot(root, files.id)
    debate = snapshot.debate
    number = debate.current_round
    models = snapshot.persona_models()
    # A person's seat has no model family: agreement with it is never "one family".
    families = {slug: family_of(m) for slug, m in models.items() if not is_person(m)}
    ledger = apply_claims(root, files, draft.claims, families)
    verdict = draft.sections.get(normalize_title(VERDICT), "").strip("\n")
    mix = diversity(models.values())
    verdict += f"\n\nModel diversity: {mix.line()}."
    short = short_council_sentence(absences(files, debate))
    if short:
        verdict += f"\n\n{short}"
    if ledger.flag_lines:
        verdict += "\n\n" + "\n".join(ledger.flag_lines)
    verdict += "\n\nDebate measures (from the record, no model call):\n" + "\n".join(
        f"- {line}." for line in snapshot.measures().lines()
    )
    timeline = render_timeline(snapshot).rstrip("\n") + "\n\n" + tally_line(files, number)
    rendered = [ledger.section.rstrip("\n"), f"## Position timeline\n\n{timeline}"]
    solo = solo_section(snapshot)
    if solo:
        rendered.append(solo)
    middle = [f"## {title}\n\n{body}" for title, body in draft.middle]
    why = next((i for i, (t, _) in enumerate(draft.middle) if normalize_title(t) == "why"), None)
    at = 0 if why is None else why + 1
    middle[at:at] = rendered
    appendix = draft.sections.get(normalize_title(APPENDIX), "").strip("\n") or NOT_WRITTEN
    parts = [f"## {VERDICT}\n\n{verdict}", *middle, f"## {APPENDIX}\n\n{appendix}"]
    meta = {
        "debate_id": debate.id,
        "topic": debate.topic,
        "synthesized_at": dt.datetime.now(dt.UTC)
        .isoformat(timespec="seconds")
        .replace("+00:00", "Z"),
        "synthesized_by": model,
        "personas": debate.personas,
        "rounds": number,
    }
    atomic_write_text(
        files.paths.final_report,
        frontmatter_io.render(meta, "\n\n".join(parts)),
        within=root.path,
    )
    files.append_log(f"Synthesis written — {today()}", [f"Synthesizer: {model}"])


def solo_section(snapshot: DebateSnapshot) -> str | None:
    """`## Solo answer vs council verdict`, rendered from baseline.md and the ledger."""
    solo = snapshot.solo_answer()
    comparison = snapshot.solo_comparison()
    if solo is None or comparison is None:
        return None
    lines = [
        f'- Solo answer ({solo.model}): **{solo.stance}** ({solo.conviction}) — "{solo.headline}"',
        f"- Council verdict: **{comparison.council_stance}** — "
        + ("same stance" if comparison.same else "a different stance"),
    ]
    if not comparison.claims:
        lines.append("- The ledger holds no claims to compare.")
    elif comparison.lacking:
        lines.append(
            f"- What the council added: {len(comparison.lacking)} of {comparison.claims} "
            "ledger claims the solo answer lacks:"
        )
        lines += [f"  - {' '.join(claim.split())}" for claim in comparison.lacking]
    else:
        lines.append(f"- The solo answer already holds all {comparison.claims} ledger claims.")
    return f"## {SOLO_SECTION}\n\n" + "\n".join(lines)


def keep_previous_report(report: Path, *, within: Path) -> Path:
    """Copy final-report.md to final-report.<UTC stamp>.md; never over an earlier copy.

    When an earlier copy already holds the same bytes (a resynthesis that failed and
    is asked again), that copy is the one kept and nothing is written.
    """
    text = read_text(report, within=report.parent)
    for earlier in sorted(report.parent.glob("final-report.*.md")):
        if read_text(earlier, within=report.parent) == text:
            return earlier
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    kept = report.with_name(f"final-report.{stamp}.md")
    number = 1
    while kept.exists():  # two resyntheses within one second
        number += 1
        kept = report.with_name(f"final-report.{stamp}-{number}.md")
    atomic_write_text(kept, text, within=within)
    return kept


def draft_problems(draft: SynthesisDraft) -> list[str]:
    """What a repair request must name: missing sections, a missing or malformed claims block."""
    problems = []
    missing = missing_required(draft.sections)
    if missing:
        problems.append("the report lacks the section(s) " + ", ".join(f"## {m}" for m in missing))
    if draft.claims_problem:
        problems.append(draft.claims_problem)
    return problems


def repair_prompt(original: Prompt, previous: str, problem: str) -> Prompt:
    """The one repair request to the synthesizer, quoting what was wrong."""
    task = dict(original.task) | {"repair": True}
    user = render("prompts/synthesis-repair.md.j2", problem=problem, previous=previous)
    return Prompt(original.system, original.user + "\n\n" + user, original.max_tokens, task)


def synthesis_record(prompt: Prompt, repair: Prompt | None = None) -> str:
    """synthesis-input.md: the system prompt and user message verbatim, then any repair request."""

    def verbatim(text: str) -> str:
        return text if text.endswith("\n") else text + "\n"

    record = (
        "# Synthesis input\n\n## System prompt\n\n"
        + verbatim(prompt.system)
        + "\n## User message\n\n"
        + verbatim(prompt.user)
    )
    if repair is not None:
        # The repair prompt is the first user message, a blank line, then this request.
        added = repair.user.removeprefix(prompt.user + "\n\n")
        record += (
            "\n## Repair request\n\nSent with the same system prompt, after the user message "
            "above and a blank line:\n\n" + verbatim(added)
        )
    return record
