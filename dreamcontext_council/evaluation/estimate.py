"""`council eval --dry-run`: what an eval would cost, calling nothing and writing nothing.

The council's part is `council run --dry-run`'s estimate of one question's debate (the
same roster, rounds and models, every planned round run), counted once per question; the
solo answer and each self-consistency sample are one call of the solo model at the size a
persona's round-1 call is estimated at. With `--samples match` the number of samples is
the one the council's estimated spend affords, by the rule the eval itself follows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dreamcontext_council.engine.model_calls.accounting import load_prices
from dreamcontext_council.engine.model_calls.caller import DEFAULT_EXPECTED_OUTPUT
from dreamcontext_council.engine.providers.models import default_model, parse_model
from dreamcontext_council.engine.setup.estimate import OPENING_INPUT
from dreamcontext_council.engine.setup.launch import launch
from dreamcontext_council.engine.setup.request import Launch
from dreamcontext_council.evaluation.folder import EvalSettings
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.eval_set import EvalQuestion
from dreamcontext_council.rules.eval_stats import matched_samples


async def estimate_eval(
    root: Root,
    questions: list[EvalQuestion],
    settings: EvalSettings,
    echo: Callable[[str], None],
) -> dict[str, Any]:
    """The estimated calls and cost of the whole eval, per method and in all."""
    council = await launch(
        Launch(
            topic=questions[0].question,
            personas_spec=settings.personas_spec,
            rounds=settings.rounds,
            model=settings.model,
            synth_model=settings.synth_model,
            base_url=settings.base_url,
            allow_commands=list(settings.allow_commands),
            dry_run=True,
            yes=True,
            quiet=True,
            root=str(root.path),
            env=settings.env,
        ),
        echo=lambda _line: None,
    )
    prices = load_prices(None)
    solo_model = parse_model(settings.synth_model or settings.model or default_model(settings.env))
    solo_cost = prices.cost(solo_model, OPENING_INPUT, DEFAULT_EXPECTED_OUTPUT)
    n = len(questions)
    council_cost = float(council.get("cost_usd") or 0)
    council_calls = int(council.get("calls") or 0)
    if settings.matched:
        planned = council.get("plan") or []
        tokens = sum(int(c["input_tokens"]) + int(c["output_tokens"]) for c in planned)
        both_priced = council_cost > 0 and solo_cost > 0
        sample_calls = (
            matched_samples(council_cost, solo_cost)
            if both_priced
            else matched_samples(tokens, OPENING_INPUT + DEFAULT_EXPECTED_OUTPUT)
        )
        samples_said = f"about {sample_calls} samples (--samples match)"
    else:
        sample_calls = settings.samples
        samples_said = f"{settings.samples} self-consistency samples"
    sample_cost = solo_cost * sample_calls
    methods = {
        "council": (council_calls * n, council_cost * n),
        "solo": (n, solo_cost * n),
        "self-consistency": (sample_calls * n, sample_cost * n),
    }
    if not settings.matched and not settings.samples:
        del methods["self-consistency"]
    calls = sum(c for c, _ in methods.values())
    cost = sum(c for _, c in methods.values())
    lines = [
        f"Dry run: {n} questions, up to {calls} calls, estimated ${cost:.4f} "
        "(nothing was called or written).",
        f"  each question: the council (up to {council_calls} calls, ${council_cost:.4f}), "
        f"one solo answer of {solo_model} (${solo_cost:.4f})"
        + (f", {samples_said}" if "self-consistency" in methods else "")
        + ".",
    ]
    lines += [line for line in str(council.get("message") or "").splitlines()[2:] if line]
    echo("\n".join(lines))
    return {
        "stopped": "dry-run",
        "questions": n,
        "calls": calls,
        "cost_usd": round(cost, 6),
        "methods": {m: {"calls": c, "cost_usd": round(v, 6)} for m, (c, v) in methods.items()},
        "message": "\n".join(lines),
    }
