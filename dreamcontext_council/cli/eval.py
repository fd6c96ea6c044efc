"""`council eval`: questions with known answers through the council, a solo answer and votes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import click

from dreamcontext_council.cli.base import echo, emit, explicit_root, json_option, root_option
from dreamcontext_council.cli.ranges import flag_range


class SamplesType(click.ParamType):
    """`--samples`: a whole number from 0 to 50, or `match`."""

    name = "N|match"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int) or str(value).strip().lower() == "match":
            return value if isinstance(value, int) else "match"
        try:
            number = int(str(value).strip())
        except ValueError:
            self.fail(f"{value!r} is neither a number from 0 to 50 nor `match`.", param, ctx)
        if not 0 <= number <= 50:
            self.fail(f"{number} is not from 0 to 50; use `match` for equal budgets.", param, ctx)
        return number


def register(cli: click.Group, council: click.Group) -> None:
    """Add `eval` to the council group."""
    council.add_command(eval_command)


@click.command("eval")
@click.argument("set_path", metavar="SET.jsonl", type=click.Path(dir_okay=False))
@click.option(
    "--generate",
    nargs=2,
    type=(click.Choice(["arithmetic"]), click.IntRange(min=1)),
    metavar="TASK N",
    help="Write N questions of TASK (arithmetic: a+b*c+d-e*f) to SET.jsonl and stop.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --generate.")
@click.option(
    "--answer-type",
    type=click.Choice(["option", "number", "exact"]),
    help="How answers compare (default: option when every line has options, else exact).",
)
@click.option(
    "--id", "eval_id", help="Name of the eval folder (default: from the set's name and content)."
)
@click.option(
    "--personas",
    "personas_spec",
    default="cognitive",
    show_default=True,
    help="Preset or roster file for every question's council.",
)
@click.option(
    "--rounds", type=click.IntRange(1, 10), default=2, show_default=True, help="Rounds per debate."
)
@click.option(
    "--model", help="Model for personas that name none (default: from the keys set, else scripted)."
)
@click.option(
    "--synth-model", help="Model for the synthesizer and the solo answer (default: --model)."
)
@click.option(
    "--samples",
    type=SamplesType(),
    default="0",
    show_default=True,
    help="Self-consistency: this many solo samples per question, majority-voted (0: off); "
    "`match`: per question, as many as the council's spend on it affords.",
)
@click.option(
    "--parallel",
    type=click.IntRange(1, 256),
    default=8,
    show_default=True,
    help="Questions in flight at once (calls stay within each provider's --concurrency).",
)
@click.option(
    "--concurrency", type=flag_range("concurrency"), help="Most calls in flight per provider."
)
@click.option("--base-url", help="Server URL for the openai provider.")
@click.option("--timeout", type=flag_range("timeout"), help="Seconds per call.")
@click.option("--retries", type=flag_range("retries"), help="Retries per call.")
@click.option(
    "--max-cost",
    type=flag_range("max_cost"),
    help="Stop before the whole eval spends more than this many dollars in this run.",
)
@click.option(
    "--max-calls",
    type=flag_range("max_calls"),
    help="Stop before the whole eval makes more than this many calls in this run.",
)
@click.option(
    "--allow-command",
    "allow_commands",
    multiple=True,
    metavar="COMMAND",
    help="Let the debates run a persona's `command:` program (repeatable).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the calls the eval would make and an estimated cost; call nothing.",
)
@root_option
@json_option
def eval_command(
    set_path: str,
    generate: tuple[str, int] | None,
    seed: int,
    answer_type: str | None,
    eval_id: str | None,
    personas_spec: str,
    rounds: int,
    model: str | None,
    synth_model: str | None,
    samples: int | str,
    parallel: int,
    concurrency: int | None,
    base_url: str | None,
    timeout: float | None,
    retries: int | None,
    max_cost: float | None,
    max_calls: int | None,
    allow_commands: tuple[str, ...],
    dry_run: bool,
    as_json: bool,
) -> None:
    """Score the council against one model on questions with known answers.

    Each line of SET.jsonl is {"id", "question", "options": {"A": …}, "answer": "A"}
    or a free answer ("answer": "42") compared by --answer-type. GSM8K's JSONL
    ("answer" ending "#### N") and a multiple-choice CSV (question, A, B, C, D,
    answer) are read as published. Every question becomes
    an ordinary debate; beside the full council it scores a solo answer of the synthesis
    model, the majority vote of the round-1 answers, a confidence-weighted vote of the
    last round and, with --samples K (or `match`: as many samples as the council's
    spend affords), self-consistency; then the council against each method on the
    same questions, paired. Results go to _dream_context/evals/<id>/ (results.json,
    results.md, accuracy-cost.svg). Run the same command again to resume after a stop:
    no saved answer is asked again.

    \b
    Examples:
      dreamcontext council eval arith.jsonl --generate arithmetic 50 --seed 1
      dreamcontext council eval arith.jsonl --answer-type number --samples 3
      dreamcontext council eval gsm8k-50.jsonl --samples match --dry-run
      dreamcontext council eval gsm8k-50.jsonl --samples match --max-cost 5
    """
    from dreamcontext_council.evaluation.folder import EvalSettings, eval_id_for
    from dreamcontext_council.evaluation.run import run_eval
    from dreamcontext_council.folder.paths import root_for_new
    from dreamcontext_council.folder.storage import atomic_write_text
    from dreamcontext_council.rules.eval_formats import read_any_set
    from dreamcontext_council.rules.eval_set import (
        answer_type_of,
        generate_arithmetic,
        render_set,
    )

    path = Path(set_path)
    if generate:
        questions = generate_arithmetic(generate[1], seed)
        atomic_write_text(path, render_set(questions), within=None)  # the user named it
        emit(
            {"set": str(path), "questions": len(questions)},
            as_json,
            f"Wrote {len(questions)} {generate[0]} questions to {path}; run "
            f"`dreamcontext council eval {path} --answer-type number`.",
        )
        return
    from dreamcontext_council.errors import UsageError

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"Cannot read {path}: {exc.strerror or exc}; pass an eval set file."
        ) from None
    questions, implied = read_any_set(text, str(path))
    settings = EvalSettings(
        answer_type=answer_type_of(questions, answer_type or implied),
        personas_spec=personas_spec,
        rounds=rounds,
        model=model,
        synth_model=synth_model,
        base_url=base_url,
        timeout=timeout,
        retries=retries,
        concurrency=concurrency,
        parallel=parallel,
        samples=samples if isinstance(samples, int) else 0,
        matched=samples == "match",
        max_cost=max_cost,
        max_calls=max_calls,
        allow_commands=list(allow_commands),
        env=dict(os.environ),
    )
    if dry_run:
        from dreamcontext_council.evaluation.estimate import estimate_eval
        from dreamcontext_council.folder.paths import ROOT_NAME, Root, find_root

        # Nothing is written: not even the root a real eval would make here.
        where = find_root(explicit_root()) or Root((Path.cwd() / ROOT_NAME).resolve())
        estimate = asyncio.run(estimate_eval(where, questions, settings, lambda _line: None))
        emit(estimate, as_json, estimate["message"])
        return
    root, _ = root_for_new(explicit_root())
    chosen = eval_id or eval_id_for(render_set(questions), path.stem)
    results = asyncio.run(
        run_eval(root, questions, settings, chosen, lambda line: echo(line, err=True))
    )
    folder = root.path / "evals" / chosen
    lines = [f"Eval {chosen}: {results['questions']} questions"]
    for method, s in results["methods"].items():
        low, high = s["interval_95"]
        lines.append(
            f"  {method}: {s['right']}/{s['questions']} right ({s['accuracy']:.0%}, 95% "
            f"{low:.0%}–{high:.0%}) · {s['calls']} calls · {s['tokens']:,} tokens · "
            f"${s['cost_usd']:.4f}"
        )
    for method, c in results["comparisons"]["methods"].items():
        lines.append(f"  vs {method}: {c['conclusion']}")
    lines.append(f"Results: {folder / 'results.md'}")
    summary = {k: v for k, v in results.items() if k != "rows"} | {"folder": str(folder)}
    emit(summary, as_json, "\n".join(lines))
