"""`run --dry-run`: the calls a run would make and what they would cost, calling nothing."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreamcontext_council.actions import convene
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.model_calls.accounting import (
    BASELINE_CALLER,
    ORCHESTRATOR_CALLER,
    SYNTHESIS_CALLER,
    PriceTable,
)
from dreamcontext_council.engine.model_calls.caller import DEFAULT_EXPECTED_OUTPUT, EXPECTED_OUTPUT
from dreamcontext_council.engine.prompting.attachments import PROMPT_BUDGET_CHARS, attachment_paths
from dreamcontext_council.engine.prompting.transcript import (
    DEFAULT_BUDGET_CHARS as TRANSCRIPT_BUDGET_CHARS,
)
from dreamcontext_council.engine.providers.models import default_model, parse_model
from dreamcontext_council.engine.setup.remembered import persona_model
from dreamcontext_council.rules.roster import PersonaSpec
from dreamcontext_council.rules.run_settings import RunSettings

if TYPE_CHECKING:
    from dreamcontext_council.engine.setup.request import Launch

# Rough prompt sizes in tokens: persona prompts grow with the round, synthesis with everything.
OPENING_INPUT = 1_500
PER_PEER_INPUT = 400
ANSWER_INPUT = 1_500  # one answer read whole, as the synthesis estimate counts it


def estimate_run(
    request: Launch,
    files: DebateFiles | None,
    roster: list[PersonaSpec] | None,
    prices: PriceTable,
    previous: RunSettings | None = None,
) -> dict[str, Any]:
    """Upper-bound plan: every planned round runs, each check is asked, synthesis once.

    `previous` is what the debate recorded of its last run: a `--model` given now moves
    the personas that ran on the recorded one.
    """
    fallback = request.model or default_model(request.env)
    if files is not None:
        debate = files.debate()
        recorded = previous or RunSettings()
        personas = [
            (s, persona_model(files.context(s).model, recorded, fallback)[0])
            for s in debate.personas
        ]
        rounds = debate.rounds_planned
        done_round = (
            debate.current_round if debate.status.phase != "running" else debate.current_round - 1
        )
        first = done_round + 1
        if debate.status.phase in ("synthesizing", "complete"):
            first = rounds + 1
    else:
        personas = [(p.slug, p.model or fallback) for p in roster or []]
        if request.personas_spec == "auto":
            personas = [(f"auto-{i}", fallback) for i in range(1, 5)]
        rounds = convene.planned_rounds(
            request.rounds, grounded=bool(request.attach or request.tools)
        )
        first = 1
    if request.compact:
        rounds = min(rounds, 2)
    attached = _attachment_tokens(request, files)
    calls: list[dict[str, Any]] = []
    peers = max(0, len(personas) - 1)
    if request.baseline and not (
        files is not None
        and (files.paths.baseline.exists() or files.debate().status.phase == "complete")
    ):
        calls.append(
            {
                "round": 0,
                "persona": BASELINE_CALLER,
                "model": request.baseline_model or request.synth_model or fallback,
                "phase": "baseline",
                "input_tokens": OPENING_INPUT + attached,
                "output_tokens": DEFAULT_EXPECTED_OUTPUT,
            }
        )
    tool_calls = (request.max_tool_calls or 0) if request.tools else 0
    for number in range(first, rounds + 1):
        for slug, model in personas:
            tokens_in = OPENING_INPUT + attached + (PER_PEER_INPUT * peers if number > 1 else 0)
            if number > 2:  # the rebuttal transcript (prompting/transcript.py), up to its budget
                parts = 2 * len(personas) + number - 2
                tokens_in += min(TRANSCRIPT_BUDGET_CHARS // 4, parts * ANSWER_INPUT)
            call: dict[str, Any] = {
                "round": number,
                "persona": slug,
                "model": model,
                "phase": "persona",
                "input_tokens": tokens_in,
                "output_tokens": DEFAULT_EXPECTED_OUTPUT,
            }
            if tool_calls:
                # At its worst a turn sends the conversation once per allowed tool call.
                call["tool_calls"] = tool_calls
                call["input_tokens"] = tokens_in * (tool_calls + 1)
            calls.append(call)
        if 2 <= number < rounds and not request.compact:
            calls.append(
                {
                    "round": number,
                    "persona": ORCHESTRATOR_CALLER,
                    "model": request.check_model or fallback,
                    "phase": "check",
                    "input_tokens": 300 * len(personas),
                    "output_tokens": EXPECTED_OUTPUT["check"],
                }
            )
    if (
        not (files is not None and files.debate().status.phase == "complete")
        or request.resynthesize
    ):
        answers = len(personas) * rounds
        calls.append(
            {
                "round": rounds,
                "persona": SYNTHESIS_CALLER,
                "model": request.synth_model or fallback,
                "phase": "synthesis",
                "input_tokens": min(25_000, answers * ANSWER_INPUT) + attached,
                "output_tokens": EXPECTED_OUTPUT["synthesis"],
            }
        )
    total = 0.0
    unpriced: set[str] = set()
    for call in calls:
        spec = parse_model(call["model"])
        if prices.price(spec) is None:
            unpriced.add(str(spec))
        call["cost_usd"] = round(prices.cost(spec, call["input_tokens"], call["output_tokens"]), 6)
        total += call["cost_usd"]
    lines = [
        f"Dry run: up to {len(calls)} calls, estimated ${total:.4f} (nothing was called or written)."
    ]
    by_phase: dict[str, int] = {}
    for call in calls:
        by_phase[call["phase"]] = by_phase.get(call["phase"], 0) + 1
    lines.append("  " + ", ".join(f"{n} {phase}" for phase, n in by_phase.items()))
    if tool_calls:
        lines.append(
            f"  Each persona turn may make up to {tool_calls} tool calls (--tools); its cost is "
            "counted at its worst, the conversation sent once per call."
        )
    if unpriced:
        lines.append(
            f"  No price known for {', '.join(sorted(unpriced))}; counted as $0 (pass --prices FILE)."
        )
    return {
        "id": files.id if files else None,
        "stopped": "dry-run",
        "message": "\n".join(lines),
        "calls": len(calls),
        "cost_usd": round(total, 6),
        "plan": calls,
    }


def _attachment_tokens(request: Launch, files: DebateFiles | None) -> int:
    """Tokens the attachments add to every persona and synthesis prompt (4 characters a token)."""
    paths = attachment_paths(files) if files is not None else [Path(p) for p in request.attach]
    chars = sum(p.stat().st_size for p in paths if p.is_file())
    return min(chars, PROMPT_BUDGET_CHARS) // 4
