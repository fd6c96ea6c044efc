"""What the synthesizer reads of a long debate, with and without compression before synthesis.

An 8 personas × 3 rounds debate is held through the library with long technical answers
(5,000-12,000 characters each, seeded): paragraphs, bullets, level-4 headings and 1-3 code
blocks per answer in ``` and ~~~ fences, with backticks inside code, fences nested in longer
ones, and a fence that is never closed at the end of some round-1 answers. Round 2 carries
the cross-examination scores (reviews.json), so seating follows the reviews.

The synthesis input is then built twice through the engine's own path (`Synthesizer.input_values`
and the synthesis prompt), once with the defaults (a 60,000-character gate = 0.6 × 100,000) and
once with the gate out of reach. No model is called. It prints the characters of the answers the
synthesizer reads and of the whole prompt (what the gate measures: the answers get what the
rest of the prompt leaves of it), side by side, whether the prompt is under the gate and how
much of it it fills, and the share of code blocks that reach the synthesizer byte for byte.

Target: under the gate, with 100% of code preserved. `--strict` exits 1 when it is missed.
The prose of a compressed view is printed per view: the lowest seats give way first, and the
one that brings the prompt under the gate takes back the lines that still fit.

    python bench/synthesis_budget.py
    python bench/synthesis_budget.py --seed 7 --min-chars 5000 --max-chars 12000 --keep /tmp/budget
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dreamcontext_council import (
    PersonaSpec,
    Root,
    append_report,
    begin_synthesis,
    end_round,
    new_debate,
    record_verdict,
    start_round,
)
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.model_calls.accounting import Ledger, PriceTable
from dreamcontext_council.engine.model_calls.caller import Caller
from dreamcontext_council.engine.model_calls.progress import QuietProgress
from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.prompting.compression import find_fenced_blocks
from dreamcontext_council.engine.prompting.reviews import record_review
from dreamcontext_council.engine.prompting.synthesis_input import CompressionSettings
from dreamcontext_council.engine.protocol.synthesis import Synthesizer
from dreamcontext_council.engine.providers.registry import ProviderSet, ProviderSettings

TOPIC = "Should we migrate the session store from Redis to Postgres?"
OPTIONS = [{"key": "A", "label": "Migrate now"}, {"key": "B", "label": "Stay on Redis"}]
SLUGS = [
    "storage-engineer",
    "sre-lead",
    "security-reviewer",
    "cost-analyst",
    "contrarian",
    "product-owner",
    "data-architect",
    "systems-thinker",
]
ROUNDS = 3
SECTIONS = ("Executive Summary", "Position", "Reasoning", "Reactions to peers", "Open questions")

WORDS = " ".join(
    [
        "session writes latency p99 failover replica pgbouncer pool vacuum index TTL expiry",
        "dual-write cutover rollback runbook on-call region cost throughput jsonb partition",
        "lock contention autovacuum snapshot consistency cache eviction cluster quorum budget",
    ]
).split()


def sentence(rng: random.Random, low: int, high: int) -> str:
    """Prose of `low`-`high` characters, one line, as models write paragraphs."""
    size = rng.randint(low, high)
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < size:
        words.append(rng.choice(WORDS))
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def code_block(rng: random.Random, kind: int, body_lines: int) -> str:
    """One fenced block; the kinds cover both fence characters, nesting and backticks in code."""
    if kind == 0:
        body = [
            f'    key_{n} = f"`{{user}}:{n}`" + "``" + "```"  # backticks inside code'
            for n in range(body_lines)
        ]
        return "```python\ndef session_keys(user: str) -> list[str]:\n" + "\n".join(body) + "\n```"
    if kind == 1:
        body = [f'psql -c "select count(*) from sessions_{n}"' for n in range(body_lines)]
        return "~~~sh\n```\n" + "\n".join(body) + "\n```\n~~~"
    if kind == 2:
        body = [f"CREATE INDEX sessions_{n} ON sessions (expires_at);" for n in range(body_lines)]
        return "````markdown\n```sql\n" + "\n".join(body) + "\n```\n````"
    body = [f"  shard_{n}: {{replicas: 2, pool: 40}}" for n in range(body_lines)]
    return "```yaml\nsessions:\n" + "\n".join(body) + "\n```"


@dataclass(frozen=True)
class Shape:
    """How the answers are written: code blocks per answer and lines per block."""

    blocks: tuple[int, int] = (1, 2)
    block_lines: tuple[int, int] = (5, 15)


def reasoning(rng: random.Random, size: int, blocks: list[str]) -> list[str]:
    """Markdown as models write it: short paragraphs, bullet lists, sub-headings, code."""
    out: list[str] = []
    spots = sorted(rng.sample(range(2, 14), len(blocks)))
    part = 0
    while sum(len(line) + 1 for line in out) < size or blocks:
        if blocks and (part == spots[0] or sum(len(line) + 1 for line in out) >= size):
            out += [blocks.pop(0), ""]
            spots.pop(0)
        elif part % 5 == 3:
            out += [f"#### {sentence(rng, 20, 40)[:-1]}", ""]
        elif part % 2 == 0:
            out += [f"- **{rng.choice(WORDS)}**: {sentence(rng, 60, 160)}" for _ in range(3)]
            out.append("")
        else:
            out += [sentence(rng, 200, 450), ""]
        part += 1
    return out[:-1]


def answer(
    rng: random.Random, slug: str, number: int, peer: str | None, size: int, shape: Shape
) -> str:
    """A round entry of about `size` characters with every required section."""
    blocks = [
        code_block(rng, rng.randrange(4), rng.randint(*shape.block_lines))
        for _ in range(rng.randint(*shape.blocks))
    ]
    fixed = 1500  # summary, position, reactions, questions and headings
    lines = [
        "### Executive Summary",
        "",
        sentence(rng, 250, 400),
        "",
        "### Position",
        "",
        f"Option {'A' if number > 1 or slug != 'contrarian' else 'B'}: {sentence(rng, 80, 160)}",
        "",
        "### Reasoning",
        "",
        *reasoning(rng, max(0, size - fixed), blocks),
        "",
        "### Reactions to peers",
        "",
        *(f"- **{p}**: {sentence(rng, 80, 160)}" for p in rng.sample(SLUGS, 2) if p != slug),
    ]
    if peer:
        lines += [
            "",
            "### Cross-examination",
            "",
            f"**{peer}**: {sentence(rng, 150, 300)}",
            "",
            f"Score: {rng.randint(3, 9)}/10",
        ]
    lines += [
        "",
        "### Open questions",
        "",
        f"- {sentence(rng, 60, 140)}",
        f"- {sentence(rng, 60, 140)}",
    ]
    if number == 1 and rng.random() < 0.5:
        lines += ["", "~~~text", "trace left open by the model", "- a bullet inside code"]
    return "\n".join(lines)


def hold_debate(root: Root, seed: int, low: int, high: int, shape: Shape) -> str:
    """The 8 × 3 debate, held round by round through the library; returns its id."""
    rng = random.Random(seed)
    personas = [
        PersonaSpec(slug, f"You are {slug}; you judge the migration by its {slug} concerns.")
        for slug in SLUGS
    ]
    debate = new_debate(root, TOPIC, rounds=ROUNDS, options=OPTIONS, personas=personas)
    files = DebateFiles(root, debate.id)
    peers = {slug: SLUGS[(i + 1) % len(SLUGS)] for i, slug in enumerate(SLUGS)}
    for number in range(1, ROUNDS + 1):
        start_round(root, debate.id, number)
        for slug in SLUGS:
            peer = peers[slug] if number == 2 else None
            text = answer(rng, slug, number, peer, rng.randint(low, high), shape)
            stance = "B" if slug == "contrarian" and number == 1 else "A"
            record_verdict(
                root,
                debate.id,
                slug,
                number,
                stance=stance,
                conviction=rng.randint(50, 90),
                headline=f"{slug} backs {stance}",
            )
            append_report(root, debate.id, slug, text, number=number)
            if peer:
                score = float(text.rsplit("Score: ", 1)[1].split("/", 1)[0])
                record_review(files, 2, slug, peer, score)
        end_round(root, debate.id, number)
    begin_synthesis(root, debate.id)
    return debate.id


@dataclass
class Measure:
    answers_chars: int
    prompt_chars: int
    verbatim_chars: int
    compressed: int
    compressed_chars: int
    code_chars: int
    """Characters of fenced code in everything the synthesizer reads."""
    compressed_code_chars: int
    blocks: int
    preserved: int


def preserved_blocks(original: str, view: str) -> tuple[int, int]:
    """(code blocks in the original, how many reach the view byte for byte and in order)."""
    wanted = [original[b.start : b.end] for b in find_fenced_blocks(original)]
    found = [view[b.start : b.end] for b in find_fenced_blocks(view)]
    kept, at = 0, 0
    for block in wanted:
        if block in found[at:]:
            at = found.index(block, at) + 1
            kept += 1
    return len(wanted), kept


def measure(root: Root, debate_id: str, settings: CompressionSettings) -> Measure:
    """Build the synthesizer's input as the engine does, without calling it."""
    files = DebateFiles(root, debate_id)
    caller = Caller(
        ProviderSet(ProviderSettings(), env={}),
        Ledger(files.paths.usage, PriceTable(), None, None),
        QuietProgress(),
    )
    synthesizer = Synthesizer(root, files, caller, "scripted", settings)
    values, task = synthesizer.input_values()
    prompt = prompts.synthesis_prompt(values, task)
    originals = {(slug, entry.round): entry.body for slug in SLUGS for entry in files.entries(slug)}
    blocks = preserved = 0
    for item in values["answers"]:
        total, kept = preserved_blocks(originals[(item["persona"], item["round"])], item["text"])
        blocks, preserved = blocks + total, preserved + kept
    answers = values["answers"]
    return Measure(
        answers_chars=sum(len(item["text"]) for item in answers),
        prompt_chars=len(prompt.system) + len(prompt.user),
        verbatim_chars=sum(len(item["text"]) for item in answers if not item["compressed"]),
        compressed=sum(bool(item["compressed"]) for item in answers),
        compressed_chars=sum(len(item["text"]) for item in answers if item["compressed"]),
        code_chars=sum(
            b.end - b.start for item in answers for b in find_fenced_blocks(item["text"])
        ),
        compressed_code_chars=sum(
            b.end - b.start
            for item in answers
            if item["compressed"]
            for b in find_fenced_blocks(item["text"])
        ),
        blocks=blocks,
        preserved=preserved,
    )


def _range(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    return int(low), int(high or low)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--min-chars", type=int, default=5000)
    parser.add_argument("--max-chars", type=int, default=12000)
    parser.add_argument(
        "--blocks", type=_range, default=(1, 2), help="code blocks per answer, e.g. 1-2"
    )
    parser.add_argument(
        "--block-lines", type=_range, default=(5, 15), help="lines per code block, e.g. 5-15"
    )
    parser.add_argument("--keep", type=Path, help="keep the debate folder here")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the target is not met")
    args = parser.parse_args(argv)
    shape = Shape(args.blocks, args.block_lines)

    base = Path(tempfile.mkdtemp(prefix="synthesis-budget-"))
    try:
        root = Root(base / "_dream_context")
        root.council.mkdir(parents=True)
        debate_id = hold_debate(root, args.seed, args.min_chars, args.max_chars, shape)
        default = CompressionSettings()
        gate = default.gate_chars or int(default.window_chars * default.gate_ratio)
        without = measure(root, debate_id, CompressionSettings(gate_chars=sys.maxsize))
        with_ = measure(root, debate_id, default)
        if args.keep:
            shutil.copytree(base, args.keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)

    count = len(SLUGS) * ROUNDS
    print(
        f"Debate: {len(SLUGS)} personas × {ROUNDS} rounds = {count} answers of "
        f"{args.min_chars:,}-{args.max_chars:,} characters, {shape.blocks[0]}-{shape.blocks[1]} "
        f"code blocks of {shape.block_lines[0]}-{shape.block_lines[1]} lines each (seed {args.seed})"
    )
    print(f"Gate: {gate:,} characters (0.6 × {default.window_chars:,})")
    print()
    rows = [
        ("answers the synthesizer reads", without.answers_chars, with_.answers_chars),
        ("  verbatim answers", without.verbatim_chars, with_.verbatim_chars),
        ("  compressed views", without.compressed_chars, with_.compressed_chars),
        ("  of all that, fenced code", without.code_chars, with_.code_chars),
        ("whole prompt (system + user)", without.prompt_chars, with_.prompt_chars),
    ]
    print(f"{'characters':34}{'without':>12}{'with':>12}")
    for label, before, after in rows:
        print(f"{label:34}{before:>12,}{after:>12,}")
    print(f"{'answers compressed':34}{without.compressed:>12}{with_.compressed:>12}")
    if with_.compressed:
        prose = (with_.compressed_chars - with_.compressed_code_chars) // with_.compressed
        code = with_.compressed_code_chars // with_.compressed
        print(f"{'  per compressed view: prose kept':34}{'':>12}{prose:>12,}")
        print(f"{'  per compressed view: code':34}{'':>12}{code:>12,}")
    print(
        f"{'code blocks preserved':34}{f'{without.preserved}/{without.blocks}':>12}"
        f"{f'{with_.preserved}/{with_.blocks}':>12}"
    )
    under = with_.prompt_chars <= gate
    share = with_.preserved / with_.blocks if with_.blocks else 1.0
    print()
    print(
        f"Whole prompt under the gate with compression: {'yes' if under else 'no'} "
        f"({with_.prompt_chars:,} of {gate:,}, {with_.prompt_chars / gate:.0%} of it)"
    )
    print(f"Code blocks preserved byte for byte: {share:.0%}")
    met = under and share == 1.0
    print(f"Target (under the gate, 100% of code): {'met' if met else 'NOT met'}")
    return 1 if args.strict and not met else 0


if __name__ == "__main__":
    raise SystemExit(main())
