"""Round starts and round-2 reviews, one protocol for `run` and the hand-driven commands.

NiraNexus Council (seed 002): in round 2 "models are paired. Each critiques a specific
peer's Round 1 output", by a shuffle drawn anew for every debate. Round 1 records the
debate's seed in debate.md; round 2 draws the pairs from it (engine/protocol/pairing.py), records
them under `cross_examination` and queues each critic's assignment, whoever drives the
debate. A debate with no seed, one the Node tool started, keeps its own protocol: no
assignment, no score.
"""

from __future__ import annotations

from dreamcontext_council.actions import submissions
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.rounds import RoundChange, participants, start_round
from dreamcontext_council.engine.prompting.reviews import record_reviews
from dreamcontext_council.engine.protocol.contract import (
    ContractError,
    has_verdict_block,
    parse_persona_answer,
)
from dreamcontext_council.engine.protocol.pairing import new_seed
from dreamcontext_council.engine.protocol.rounds import cross_exam_pairs, scored_reviews
from dreamcontext_council.errors import UsageError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.report import RoundEntry
from dreamcontext_council.rules.reviews import CROSS_EXAM_DIRECTIVE, review_score


def open_round(root: Root, debate_id: str, number: int) -> RoundChange:
    """Start round N as the protocol has it: round 1 records a seed (a debate that has one
    keeps it), round 2 assigns and records the cross-examination pairs and queues each
    critic's directive in the same write as its panel."""
    if number == 1:
        return start_round(root, debate_id, 1, seed=new_seed())
    files = DebateFiles(root, debate_id)
    debate = files.debate()
    if number != 2 or str(debate.status) != "round_1_complete":
        return start_round(root, debate_id, number)  # refuses, or already running
    pairs = cross_exam_pairs(files, debate, participants(files, debate, 2))
    directives = {critic: CROSS_EXAM_DIRECTIVE.format(peer=peer) for critic, peer in pairs.items()}
    return start_round(root, debate_id, 2, directives=directives, pairs=pairs)


def append_entry(
    root: Root, debate_id: str, slug: str, body: str, *, number: int | None = None
) -> submissions.ReportResult:
    """`report append`: the round entry, as `submissions.append_report` adds it, and for a
    round-2 critic its review in reviews.json, as `run` records it.

    An entry that ends with a ```verdict block is an answer as `run` asks for it: it is read
    by the contract a model's answer is read by (engine/protocol/contract.py), and its verdict
    and its entry are recorded together, or neither. A critic's round-2 entry without a
    `### Cross-examination` ending in `Score: N/10` is refused with nothing written, as
    `run` refuses such an answer, once the round and the files are checked as for any entry."""
    files = DebateFiles(root, debate_id)
    pairs: dict[str, str] = {}
    given = None
    if has_verdict_block(body):
        body, given = _answer_parts(files, body)

    def vet(entry: RoundEntry) -> None:
        if entry.round != 2:
            return
        debate = files.debate()
        pairs.update(cross_exam_pairs(files, debate, participants(files, debate, 2)))
        peer = pairs.get(slug)
        if peer is not None and review_score(entry.section("Cross-examination")) is None:
            raise UsageError(
                f"The round 2 entry of {slug} needs a `### Cross-examination` section on "
                f"{peer}'s round 1 answer ending in a line `Score: N/10`; add it and run "
                "`report append` again."
            )

    with files.lock():
        result = submissions.append_report(
            root, debate_id, slug, body, number=number, vet=vet, verdict=given
        )
        if slug in pairs:
            # Every critic's review so far, in the pairs' order: the record `run` writes
            # at once for the round, whatever order the entries came in.
            record_reviews(files, 2, scored_reviews(files, pairs), whole_round=True)
    return result


def _answer_parts(files: DebateFiles, answer: str) -> tuple[str, submissions.GivenVerdict]:
    """The entry and the verdict of an answer that ends with its ```verdict block; a broken
    one is refused in one line that says what to fix."""
    try:
        parsed = parse_persona_answer(answer, files.debate().options, files.verdicts().options)
    except ContractError as problem:
        raise UsageError(
            f"Nothing was recorded: {problem} Fix the answer and run `report append` again."
        ) from None
    verdict = parsed.verdict
    given = submissions.GivenVerdict(
        verdict.stance_text or verdict.stance,
        verdict.conviction,
        verdict.headline,
        verdict.concession,
    )
    return parsed.body, given
