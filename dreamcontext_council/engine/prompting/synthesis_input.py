"""What the synthesizer reads: every answer, compressed over the gate, recorded beside the originals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dreamcontext_council.actions.files import DebateFiles, today
from dreamcontext_council.actions.snapshot import DebateSnapshot
from dreamcontext_council.engine.prompting.reviews import answer_scores, load_reviews
from dreamcontext_council.engine.prompting.seating import (
    Answer,
    Decision,
    SynthesisInput,
    compress_for_synthesis,
)
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.storage import atomic_write_text
from dreamcontext_council.rules import metrics


@dataclass(frozen=True)
class CompressionSettings:
    """The gate: `gate_chars`, or `window_chars × gate_ratio` (60,000 by default)."""

    gate_chars: int | None = None
    window_chars: int = 100_000
    gate_ratio: float = 0.6
    keep_verbatim: int = 2

    def gate(self) -> int:
        """The gate in characters: what one call may read in all, its prompt included."""
        if self.gate_chars is not None:
            return self.gate_chars
        return int(self.window_chars * self.gate_ratio)


def answers_of(files: DebateFiles, snapshot: DebateSnapshot) -> list[Answer]:
    """Every round entry of every persona, roster order then round, each with the total
    score it received when it was reviewed and the conviction it was given with. Each
    persona's last answer is marked final, a final answer whose stance is not the final
    round's leading one as dissenting, and any answer for such a stance as minority."""
    scores = answer_scores(load_reviews(files))
    verdicts = snapshot.verdicts
    last_round = max((e.round for p in snapshot.personas for e in p.entries), default=0)
    lead = metrics.leading(verdicts.round(last_round))
    answers = []
    for priority, persona in enumerate(snapshot.personas):
        ordered = sorted(persona.entries, key=lambda e: e.round)
        for entry in ordered:
            final = entry is ordered[-1]
            verdict = verdicts.round(entry.round).get(persona.slug)
            minority = lead is not None and verdict is not None and verdict.stance != lead
            answers.append(
                Answer(
                    persona.slug,
                    entry.round,
                    entry.body,
                    priority,
                    scores.get((persona.slug, entry.round)),
                    final=final,
                    dissents=final and minority,
                    minority=minority,
                    conviction=verdict.conviction if verdict is not None else None,
                )
            )
    return answers


def write_compressed_views(files: DebateFiles, decided: SynthesisInput) -> None:
    """Store compressed views in each persona's compressed.md; report.md is never touched.

    A persona none of whose answers is compressed this time has no compressed.md: a
    view left by an earlier synthesis would no longer be what the synthesizer read.
    """
    by_persona: dict[str, list[str]] = {}
    for item in decided.answers:
        if item.compressed:
            a = item.answer
            by_persona.setdefault(a.persona, []).append(
                f"## Round {a.round} — compressed view\n\n{item.view_text.strip(chr(10))}\n"
            )
    for persona in dict.fromkeys(item.answer.persona for item in decided.answers):
        path = files.persona_paths(persona).compressed
        views = by_persona.get(persona)
        if not views:
            path.unlink(missing_ok=True)
            continue
        meta = {"persona": persona, "source": "report.md", "note": "compressed views for synthesis"}
        text = frontmatter_io.render(meta, "\n".join(reversed(views)))
        atomic_write_text(path, text, within=files.root.path)


def log_compression(
    files: DebateFiles, decided: SynthesisInput, gate: int | None = None, reserved: int = 0
) -> None:
    """The round-log entry: the gate, what the rest of the prompt took of it, and each seat."""
    whole_gate = decided.gate_chars if gate is None else gate
    bullets = [
        f"Gate: {whole_gate:,} characters; the rest of the prompt (instructions, question, "
        f"attachments, research notes, records) reads {reserved:,}, leaving "
        f"{decided.gate_chars:,} for the answers; answers: {decided.original_chars:,} → "
        f"{decided.view_chars:,}",
    ]
    if not decided.over_gate:
        bullets.append(f"All {len(decided.answers)} answers kept verbatim.")
        _log_once_per_synthesis(files, f"Synthesis input under the gate — {today()}", bullets)
        return
    for item in decided.seated:
        a = item.answer
        state = "compressed" if item.compressed else "kept verbatim"
        if item.decision is Decision.WHOLE:
            state = "kept whole"  # the seats below it brought the answers under the gate
        if item.compressed and item.lines_kept:
            head, tail = item.lines_kept
            tightened = "tightened: " if item.decision == Decision.TIGHTENED else ""
            state += f" ({tightened}first {head}, last {tail} lines)"
        bullets.append(
            f"seat {item.seat}: {a.persona} R{a.round} {state} ({item.original_chars:,} → {item.view_chars:,})"
        )
    if not decided.under_gate_after:
        bullets.append(
            "Still over the gate after compression: code is never cut, the verbatim seats stay "
            f"whole, and {_lines_kept(decided)}."
        )
    _log_once_per_synthesis(files, f"Compression before synthesis — {today()}", bullets)


def _lines_kept(decided: SynthesisInput) -> str:
    """What the compressed answers kept, as exactly as one clause can say it."""
    kept = sorted(
        {item.lines_kept for item in decided.answers if item.compressed and item.lines_kept}
    )
    if not kept:
        return "no answer could be made shorter"
    if len(kept) == 1:
        head, tail = kept[0]
        return f"every compressed answer keeps its first {head} and last {tail} lines"
    head, tail = kept[0]
    return (
        f"the compressed answers keep as few as their first {head} and last {tail} lines "
        "(each seat above says how many)"
    )


def _log_once_per_synthesis(files: DebateFiles, heading: str, bullets: list[str]) -> None:
    """Append the entry unless this synthesis logged it already (a run stopped mid-call)."""
    entry = "\n".join([f"## {heading}", *(f"- {b}" for b in bullets)]) + "\n"
    with files.lock():
        log = files.log()
        begun = max(log.rfind("\n## Synthesis started"), log.rfind("\n## Resynthesis"), 0)
        if entry not in log[begun:]:
            files.append_log(heading, bullets)


def decide_answers(
    answers: list[Answer], settings: CompressionSettings, room: int
) -> SynthesisInput:
    """Compression's decision for the answers within `room` characters (pure)."""
    return compress_for_synthesis(answers, gate_chars=room, keep_verbatim=settings.keep_verbatim)


def shown_answers(decided: SynthesisInput, *, texts: bool = True) -> list[dict[str, Any]]:
    """The answers as the synthesis prompt shows them; without `texts`, only their frame,
    every answer tagged as compressed so the frame is never shorter than what is sent."""
    return [
        {
            "persona": i.answer.persona,
            "round": i.answer.round,
            "text": i.view_text if texts else "",
            "compressed": i.compressed if texts else True,
            "final": i.answer.final,
        }
        for i in decided.answers
    ]


def record_decision(files: DebateFiles, decided: SynthesisInput, gate: int, reserved: int) -> None:
    """compressed.md beside each report.md, and the round-log entry."""
    write_compressed_views(files, decided)
    log_compression(files, decided, gate, reserved)
