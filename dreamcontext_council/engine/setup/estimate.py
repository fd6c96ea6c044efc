"""`run --dry-run`: the calls a run would make and what they would cost, calling nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
from dreamcontext_council.engine.protocol.plan import RunPlan
from dreamcontext_council.engine.providers.consent import visible
from dreamcontext_council.engine.providers.keys import url_without_credentials
from dreamcontext_council.engine.providers.models import ModelSpec, parse_model
from dreamcontext_council.engine.providers.registry import BASE_URL_ENVS
from dreamcontext_council.rules.run_settings import MODEL_FIELDS

# Rough prompt sizes in tokens: persona prompts grow with the round, synthesis with everything.
OPENING_INPUT = 1_500
PER_PEER_INPUT = 400
ANSWER_INPUT = 1_500  # one answer read whole, as the synthesis estimate counts it
# The providers whose servers cache prompt prefixes, and the shortest prefix they cache.
CACHING_PROVIDERS = ("anthropic", "openai")
MIN_CACHED_TOKENS = 1_024


def estimate_run(plan: RunPlan, files: DebateFiles | None) -> dict[str, Any]:
    """Upper-bound plan: every planned round runs, each check is asked, synthesis once.

    Each persona's model is its seat in the plan: a `--model` given now moves the
    personas that ran on the recorded one.
    """
    seats, flags = plan.seats, plan.flags
    fallback = seats.model
    # A person's seat costs nothing: its entries are read by the others, never asked of a model.
    personas = [(seat.slug, seat.model) for seat in seats.model_seats()]
    persons = [seat.slug for seat in seats.person_seats()]
    if files is not None:
        debate = files.debate()
        rounds = debate.rounds_planned
        done_round = (
            debate.current_round if debate.status.phase != "running" else debate.current_round - 1
        )
        first = done_round + 1
        if debate.status.phase in ("synthesizing", "complete"):
            first = rounds + 1
    else:
        if seats.auto:
            personas = [(f"auto-{i}", fallback) for i in range(1, 5)]
        rounds = convene.planned_rounds(
            plan.new.rounds if plan.new else None, grounded=plan.grounded()
        )
        first = 1
    if flags.compact:
        rounds = min(rounds, 2)
    attached = _attachment_tokens(plan, files)
    calls: list[dict[str, Any]] = []
    seated = len(personas) + len(persons)
    peers = max(0, seated - 1)
    if flags.baseline and not (
        files is not None
        and (files.paths.baseline.exists() or files.debate().status.phase == "complete")
    ):
        calls.append(
            {
                "round": 0,
                "persona": BASELINE_CALLER,
                "model": seats.baseline(),
                "phase": "baseline",
                "input_tokens": OPENING_INPUT + attached,
                "output_tokens": DEFAULT_EXPECTED_OUTPUT,
            }
        )
    tool_calls = (plan.limits.max_tool_calls or 0) if plan.research.tools else 0
    for number in range(first, rounds + 1):
        for slug, model in personas:
            tokens_in = OPENING_INPUT + attached + (PER_PEER_INPUT * peers if number > 1 else 0)
            if number > 2:  # the rebuttal transcript (prompting/transcript.py): the gate
                # counts the whole call, so the transcript gets what the rest leaves of it
                parts = 2 * seated + number - 2
                whole = tokens_in + parts * ANSWER_INPUT
                tokens_in = max(tokens_in, min(TRANSCRIPT_BUDGET_CHARS // 4, whole))
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
        if 2 <= number < rounds and not flags.compact:
            calls.append(
                {
                    "round": number,
                    "persona": ORCHESTRATOR_CALLER,
                    "model": seats.check(),
                    "phase": "check",
                    "input_tokens": 300 * seated,
                    "output_tokens": EXPECTED_OUTPUT["check"],
                }
            )
    if not (files is not None and files.debate().status.phase == "complete") or flags.resynthesize:
        answers = seated * rounds
        calls.append(
            {
                "round": rounds,
                "persona": SYNTHESIS_CALLER,
                "model": seats.synthesis(),
                "phase": "synthesis",
                "input_tokens": min(25_000, answers * ANSWER_INPUT) + attached,
                "output_tokens": EXPECTED_OUTPUT["synthesis"],
            }
        )
    _cache_reads(calls, OPENING_INPUT + attached, warm=plan.flags.warm)
    total = uncached = 0.0
    unpriced: set[str] = set()
    for call in calls:
        spec = parse_model(call["model"])
        if plan.limits.prices.price(spec) is None:
            unpriced.add(str(spec))
        call["cost_usd"] = round(cached_cost(plan.limits.prices, spec, call), 6)
        total += call["cost_usd"]
        uncached += plan.limits.prices.cost(spec, call["input_tokens"], call["output_tokens"])
    cached = f" with prompt caching (${uncached:.4f} uncached)" if uncached > total else ""
    lines = [
        f"Dry run: up to {len(calls)} calls, estimated ${total:.4f}{cached} "
        "(nothing was called or written)."
    ]
    by_phase: dict[str, int] = {}
    for call in calls:
        by_phase[call["phase"]] = by_phase.get(call["phase"], 0) + 1
    lines.append("  " + ", ".join(f"{n} {phase}" for phase, n in by_phase.items()))
    lines += _settings_lines(plan)
    if persons:
        wait = plan.limits.human_timeout
        waited = f"up to {wait:g} s a round (--human-timeout)" if wait else "as long as it takes"
        lines.append(
            f"  A person's seat: {', '.join(persons)}; no model is called for it, the run "
            f"waits for their entry each round, {waited}."
        )
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
        "uncached_cost_usd": round(uncached, 6),
        "plan": calls,
    }


def _cache_reads(calls: list[dict[str, Any]], shared: int, *, warm: bool) -> None:
    """How many input tokens of each persona call a prompt cache is likely to serve
    (`cache_read_tokens`): from round 2 what the persona's previous call read (its prompt
    grows by appending); in round 1 the part every persona shares (contract, question,
    attachments), for all but the first persona on a model when round 1 is warmed."""
    previous: dict[str, int] = {}
    warmed: set[str] = set()
    for call in calls:
        if call["phase"] != "persona":
            continue
        slug, model = call["persona"], call["model"]
        own = call["input_tokens"] // (call.get("tool_calls", 0) + 1)
        if slug in previous:
            read = min(previous[slug], own)
        elif warm and model in warmed:
            read = min(shared, own)
        else:
            read = 0
        warmed.add(model)
        previous[slug] = own
        call["cache_read_tokens"] = read


def cached_cost(prices: PriceTable, spec: ModelSpec, call: dict[str, Any]) -> float:
    """A planned call's cost with its `cache_read_tokens` at the cache price, the rest of
    its input written to the cache where the provider charges for writing (Anthropic);
    a provider without a prompt cache, or a prefix under its minimum, pays the input price."""
    read = call.get("cache_read_tokens", 0)
    if spec.provider not in CACHING_PROVIDERS or read < MIN_CACHED_TOKENS:
        read = 0
    fresh = call["input_tokens"] - read
    if spec.provider == "anthropic":
        return prices.cost(spec, 0, call["output_tokens"], fresh, read)
    return prices.cost(spec, fresh, call["output_tokens"], 0, read)


def _settings_lines(plan: RunPlan) -> list[str]:
    """The models set and the server URL, each with where it came from (a flag, the record,
    a default: `model: openai:gpt-4o (from _dream_context/council.toml)`)."""
    seats = plan.seats
    lines = [f"  {name}: {seats.described(name)}" for name in MODEL_FIELDS if getattr(seats, name)]
    endpoints = plan.endpoints
    url = endpoints.base_url or plan.env.get(BASE_URL_ENVS["openai"])
    if url and endpoints.source:
        shown = visible(url_without_credentials(url)[0])
        lines.append(f"  base_url: {shown} (from {endpoints.source})")
    gateway = endpoints.anthropic_base_url
    if gateway and endpoints.anthropic_source:
        shown = visible(url_without_credentials(gateway)[0])
        lines.append(f"  anthropic_base_url: {shown} (from {endpoints.anthropic_source})")
    return lines


def _attachment_tokens(plan: RunPlan, files: DebateFiles | None) -> int:
    """Tokens the attachments add to every persona and synthesis prompt (4 characters a token)."""
    attached = plan.new.attachments if plan.new else ()
    paths = attachment_paths(files) if files is not None else [Path(p) for p in attached]
    chars = sum(p.stat().st_size for p in paths if p.is_file())
    return min(chars, PROMPT_BUDGET_CHARS) // 4
