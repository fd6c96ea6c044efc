"""What the synthesizer reads: every answer, compressed over the gate, recorded beside the originals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dreamcontext_council.actions.files import DebateFiles, today
from dreamcontext_council.actions.snapshot import DebateSnapshot
from dreamcontext_council.engine.compression import Answer, SynthesisInput, compress_for_synthesis
from dreamcontext_council.engine.reviews import load_reviews, review_totals
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import atomic_write_text


@dataclass(frozen=True)
class CompressionSettings:
    """The gate: `gate_chars`, or `window_chars × gate_ratio` (60,000 by default)."""

    gate_chars: int | None = None
    window_chars: int = 100_000
    gate_ratio: float = 0.6
    keep_verbatim: int = 2


def answers_of(files: DebateFiles, snapshot: DebateSnapshot) -> list[Answer]:
    """Every round entry of every persona, roster order then round, with review totals."""
    totals = review_totals(load_reviews(files))
    answers = []
    for priority, persona in enumerate(snapshot.personas):
        for entry in sorted(persona.entries, key=lambda e: e.round):
            answers.append(
                Answer(
                    persona.slug,
                    entry.round,
                    entry.body,
                    priority,
                    totals.get(persona.slug) if totals else None,
                )
            )
    return answers


def write_compressed_views(files: DebateFiles, decided: SynthesisInput) -> None:
    """Store compressed views in each persona's compressed.md; report.md is never touched."""
    by_persona: dict[str, list[str]] = {}
    for item in decided.answers:
        if item.compressed:
            a = item.answer
            by_persona.setdefault(a.persona, []).append(
                f"## Round {a.round} — compressed view\n\n{item.view_text.strip(chr(10))}\n"
            )
    for persona, views in by_persona.items():
        meta = {"persona": persona, "source": "report.md", "note": "compressed views for synthesis"}
        body = "\n".join(reversed(views))
        atomic_write_text(
            files.persona_paths(persona).compressed, frontmatter_io.render(meta, body)
        )


def log_compression(files: DebateFiles, decided: SynthesisInput) -> None:
    bullets = [
        f"Gate: {decided.gate_chars:,} characters; answers: {decided.original_chars:,} → "
        f"{decided.view_chars:,}",
    ]
    for item in decided.seated:
        a = item.answer
        state = "compressed" if item.compressed else "kept verbatim"
        bullets.append(
            f"seat {item.seat}: {a.persona} R{a.round} {state} ({item.original_chars:,} → {item.view_chars:,})"
        )
    heading = (
        "Compression before synthesis" if decided.over_gate else "Synthesis input under the gate"
    )
    files.append_log(f"{heading} — {today()}", bullets)


def build_answers(
    root: Root,
    files: DebateFiles,
    snapshot: DebateSnapshot,
    settings: CompressionSettings | None = None,
) -> list[dict[str, Any]]:
    """The answers as the synthesizer reads them (compressed views where over the gate)."""
    settings = settings or CompressionSettings()
    decided = compress_for_synthesis(
        answers_of(files, snapshot),
        gate_chars=settings.gate_chars,
        window_chars=settings.window_chars,
        gate_ratio=settings.gate_ratio,
        keep_verbatim=settings.keep_verbatim,
    )
    if decided.over_gate:
        write_compressed_views(files, decided)
    log_compression(files, decided)
    return [
        {
            "persona": i.answer.persona,
            "round": i.answer.round,
            "text": i.view_text,
            "compressed": i.compressed,
        }
        for i in decided.answers
    ]
