"""`council doctor`: what the round entries and round-log.md say was written, checked
against the files a hand-resolved merge kept.

- reviews.json against the round-2 entries' `Score:` lines (a kept side drops the other
  side's critics, and round 3 then reads fewer critiques): rebuilt from the entries;
- a persona's context-and-persona.md against round-log.md: the cross-context panel of each
  round the log says started with the persona seated, round 2's cross-examination
  directive debate.md pairs it with, and each directive the log says `question` queued
  (a kept side drops them): restored where they belong;
- facts in a complete debate that its final report never weighed (a fact injected on a
  branch that had not seen the debate complete): named, for a person to decide.
"""

from __future__ import annotations

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.findings import Finding
from dreamcontext_council.actions.reviews import load_reviews, record_reviews
from dreamcontext_council.actions.rounds import panel_heading, panel_text, round_summaries
from dreamcontext_council.rules import roundlog
from dreamcontext_council.rules.debate import Debate
from dreamcontext_council.rules.logged_writes import (
    fact_digest,
    queued_directives,
    started_rounds,
    weighed_digests,
)
from dreamcontext_council.rules.markdown import normalize_title, sections
from dreamcontext_council.rules.persona import PersonaContext
from dreamcontext_council.rules.reviews import (
    CROSS_EXAM_DIRECTIVE,
    REVIEW_ROUND,
    Review,
    entry_reviews,
    recorded_pairs,
)


def logged_findings(
    files: DebateFiles, debate: Debate, slugs: list[str], *, repair: bool
) -> list[Finding]:
    """Every finding of reviews.json, the context files of `slugs` and the facts against
    what the entries and the log record; repaired when asked (the facts only named)."""
    log = files.log()
    return [
        *_reviews(files, debate, repair=repair),
        *_context_writes(files, debate, log, slugs, repair=repair),
        *_late_facts(files, debate, log),
    ]


# -- reviews.json ----------------------------------------------------------------------------


def _reviews(files: DebateFiles, debate: Debate, *, repair: bool) -> list[Finding]:
    pairs = recorded_pairs(debate.meta)
    if not pairs:
        return []
    round_two = {
        critic: next((e for e in files.entries(critic) if e.round == REVIEW_ROUND), None)
        for critic in pairs
    }
    wanted = entry_reviews(pairs, round_two)
    recorded = load_reviews(files)["rounds"].get(str(REVIEW_ROUND), {})
    wrong = [c for c in wanted if _recorded(recorded.get(c)) != wanted[c]]
    if not wrong:
        return []
    named = ", ".join(f"{c} ({_shown(wanted[c])})" for c in wrong)
    found = Finding(
        files.id,
        f"reviews.json does not hold the round-2 scores the entries give: {named}",
        "reviews.json round 2 rebuilt from the critics' `Score:` lines",
        repairable=True,
    )
    if not repair:
        return [found]
    record_reviews(files, REVIEW_ROUND, wanted, whole_round=True)
    return [Finding(files.id, found.problem, found.fix, True, repaired=True)]


def _recorded(review: object) -> Review | None:
    if not isinstance(review, dict):
        return None
    score = review.get("score")
    number = (
        float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None
    )
    return str(review.get("target")), number


def _shown(review: Review) -> str:
    peer, score = review
    return f"on {peer}, " + (f"{score:g}/10" if score is not None else "no score")


# -- context-and-persona.md ------------------------------------------------------------------


def _context_writes(
    files: DebateFiles, debate: Debate, log: str, slugs: list[str], *, repair: bool
) -> list[Finding]:
    """Panels, round 2's directives and queued directives the file lacks, per persona."""
    missing: dict[str, list[tuple[str, int, str]]] = {}
    # Rounds from 2 on start with a panel each: those the log or debate.md says started,
    # for the personas the log seats then (without that, those that answered the round before).
    begun = set(started_rounds(log)) | set(range(1, debate.current_round + 1))
    for number in sorted(n for n in begun if n >= 2):
        seated = roundlog.round_participants(log, number)
        if seated is None:
            seated = [s for s in slugs if any(e.round == number - 1 for e in files.entries(s))]
        for slug in seated:
            if slug in slugs and number not in files.context(slug).panel_rounds():
                missing.setdefault(slug, []).append(("panel", number, ""))
    for critic, peer in recorded_pairs(debate.meta).items():
        text = CROSS_EXAM_DIRECTIVE.format(peer=peer)
        held = files.context(critic).directives(REVIEW_ROUND) if critic in slugs else [text]
        # Any wording of the assignment counts: an older version may have queued another.
        if not any(d.startswith(f"Cross-examine {peer}:") for d in held):
            missing.setdefault(critic, []).append(("directive", REVIEW_ROUND, text))
    for queued in queued_directives(log):
        if queued.slug in slugs:
            held = files.context(queued.slug).directives(queued.round)
            wanted = ("directive", queued.round, queued.text)
            if queued.text not in held and wanted not in missing.get(queued.slug, []):
                missing.setdefault(queued.slug, []).append(wanted)
    findings = []
    for slug, lost in missing.items():
        path = files.relative(files.persona_paths(slug).context)
        shown = "; ".join(
            f"its round {n} cross-context panel"
            if kind == "panel"
            else f"its round {n} directive {text[:80]!r}"
            for kind, n, text in lost
        )
        found = Finding(
            files.id,
            f"{path} lacks what round-log.md and debate.md record as written to it: {shown}",
            "restored in its place in the file",
            repairable=True,
        )
        if repair:
            _restore(files, debate, slug, lost)
            found = Finding(files.id, found.problem, found.fix, True, repaired=True)
        findings.append(found)
    return findings


def _restore(
    files: DebateFiles, debate: Debate, slug: str, lost: list[tuple[str, int, str]]
) -> None:
    with files.lock():
        context = files.context(slug)
        for kind, number, text in sorted(lost, key=lambda item: (item[1], item[0] == "panel")):
            if kind == "directive":
                if text not in context.directives(number):
                    _insert_directive(context, number, text)
            elif number not in context.panel_rounds():
                summaries = round_summaries(files, debate.personas, number - 1)
                _insert_section(
                    context, panel_heading(number), panel_text(summaries, slug, number), number
                )
        files.save_context(slug, context)


def _insert_directive(context: PersonaContext, number: int, text: str) -> None:
    """Queue `text` for round `number`; a new Directives section goes before that round's panel,
    where `round start` writes it."""
    if context.directives(number) or number not in context.panel_rounds():
        context.add_directive(number, text)
        return
    _insert_section(context, f"Round {number} — Directives", f"- {text}", number, panel=True)


def _insert_section(
    context: PersonaContext, heading: str, text: str, number: int, *, panel: bool = False
) -> None:
    """Put a `## heading` section before the first section of a later round (with `panel`,
    before the round's own panel too), or at the end."""
    lines = context.body.split("\n")
    at = None
    for section in sections(context.body, 2):
        title = normalize_title(section.title)
        later = _round_of(title)
        if later is not None and (
            later > number or (panel and later == number and "cross context" in title)
        ):
            at = section.start
            break
    if at is None:
        context.append_section(heading, text)
        return
    block = [f"## {heading}", "", text.strip("\n"), ""]
    context.body = "\n".join([*lines[:at], *block, *lines[at:]])


def _round_of(title: str) -> int | None:
    words = title.split()
    if len(words) >= 2 and words[0] == "round" and words[1].isdigit():
        return int(words[1])
    return None


# -- facts -----------------------------------------------------------------------------------


def _late_facts(files: DebateFiles, debate: Debate, log: str) -> list[Finding]:
    if debate.status.phase != "complete":
        return []
    weighed = weighed_digests(log)
    if weighed is None:
        return []
    late = [fact for fact in debate.facts() if fact_digest(fact) not in weighed]
    if not late:
        return []
    shown = "; ".join(repr(fact[:100]) for fact in late)
    return [
        Finding(
            files.id,
            f"debate.md holds {len(late)} fact(s) written after the final report, which does "
            f"not weigh them: {shown}",
            "a merge brought them in from a branch that had not seen the debate complete; "
            "remove them from debate.md, or weigh them in a new debate "
            "(`dreamcontext council new`) that cites this one",
            repairable=False,
        )
    ]
