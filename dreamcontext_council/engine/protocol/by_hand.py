"""The hand-driven commands that run the engine's protocol: `synthesize` records what the
synthesizer reads as `run` does, and `round end --early-stop` is the numeric stop a user
asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

from dreamcontext_council.actions import closing
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.rounds import RoundChange, end_round
from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.protocol import convergence as conv
from dreamcontext_council.engine.protocol.round_page import compression_of
from dreamcontext_council.engine.protocol.synthesis import synthesis_record, synthesis_values
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import atomic_write_text
from dreamcontext_council.rules import metrics

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
            lead = metrics.leading(verdicts.round(number))
            files.append_log(
                conv.check_heading(number, "CONVERGED"),
                [
                    f"Numeric convergence: {levels[-1]}%" + (f" → {lead}" if lead else ""),
                    "Early stop (--early-stop): 90% or more in two rounds in a row.",
                    "Decision: synthesis",
                ],
            )
    return RoundEnded(change, early_stop=True)
