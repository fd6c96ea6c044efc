"""Closing a debate: synthesis manifest, completion, promotion to a knowledge doc."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dreamcontext_council import resources
from dreamcontext_council.actions.files import DebateFiles, today
from dreamcontext_council.actions.live_state import refresh_live
from dreamcontext_council.errors import FormatError, StateError, UsageError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.machine_local import keep_out_of_git
from dreamcontext_council.folder.names import check_slug, new_knowledge_id, slugify
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import atomic_write_text, read_text
from dreamcontext_council.rules.debate import Debate, Status
from dreamcontext_council.rules.final_report import APPENDIX, VERDICT, missing_sections
from dreamcontext_council.rules.logged_writes import weighed_bullets
from dreamcontext_council.rules.markdown import normalize_title, sections

KNOWLEDGE_SLUG_LIMIT = 80
NOT_PROMOTED = (
    "Position timeline",
    "Claims ledger",
    "Solo answer vs council verdict",
    "What was debated",
    "Appendix: per-agent per-round summaries",
)
"""Sections of the final report that stay in the debate folder: the record, not the decision.
Every other `##` section is load-bearing and promoted, the Verdict first."""


@dataclass(frozen=True)
class Manifest:
    """The files a synthesizer must read, relative to the debate folder."""

    debate_id: str
    changed: bool
    files: list[str]


def synthesis_files(files: DebateFiles, debate: Debate) -> list[str]:
    """What the synthesizer reads, relative to the debate folder: a persona's compressed.md
    (the views it was given) in place of its report.md when there is one; a report.md with
    no entry (a persona that never answered) is not listed."""
    listing = ["debate.md", "verdicts.json", "round-log.md"]
    for slug in debate.personas:
        paths = files.persona_paths(slug)
        if paths.compressed.exists():
            listing.append(f"{slug}/compressed.md")
        elif paths.report.exists() and _answered(files, slug):
            listing.append(f"{slug}/report.md")
        listing += [f"{slug}/researches/{e['slug']}.md" for e in files.research_index(slug)]
    if files.paths.attachments.is_dir():
        listing += [f"attachments/{p.name}" for p in sorted(files.paths.attachments.iterdir())]
    return listing


def _answered(files: DebateFiles, slug: str) -> bool:
    """Whether the persona's report.md holds an entry; one that does not parse (conflict
    markers, a hand edit) counts: the synthesizer reads it as it is, as before."""
    try:
        return bool(files.entries(slug))
    except (FormatError, UnicodeDecodeError):
        return True


def begin_synthesis(root: Root, debate_id: str) -> Manifest:
    """Status → synthesizing (needs the last started round complete); list what to read."""
    files = DebateFiles(root, debate_id)
    with files.lock():
        debate = files.debate()
        status = debate.status
        changed = status.phase != "synthesizing"
        # The manifest is read before the status changes, so a broken file changes nothing.
        listing = synthesis_files(files, debate)
        if changed:
            refusal = synthesis_refusal(debate_id, status, debate.current_round)
            if refusal is not None:
                raise StateError(refusal)
            debate.meta["status"] = "synthesizing"
            files.save_debate(debate)
            files.append_log(
                f"Synthesis started — {today()}", [f"Rounds debated: {debate.current_round}"]
            )
    refresh_live(root, debate_id, phase="synthesis")
    return Manifest(debate_id, changed, listing)


def synthesis_refusal(debate_id: str, status: Status, current_round: int) -> str | None:
    """Why a debate at `status` cannot start its synthesis; None when it can.

    The rule every path to synthesizing follows (`synthesize`, `run`, `doctor --repair`):
    the last round started is complete."""
    if status.phase == "round_complete" and status.round == current_round:
        return None
    if status.phase == "running":
        return (
            f"Cannot synthesize {debate_id}: it is {status}; finish the running round with "
            f"`dreamcontext council round end {debate_id} {current_round}` first."
        )
    if status.phase == "created":
        return f"Cannot synthesize {debate_id}: it is {status}; run at least one round first."
    return f"Cannot synthesize {debate_id}: it is already {status}."


def completion_refusal(files: DebateFiles, status: Status) -> str | None:
    """Why a debate at `status` cannot be complete; None when it can.

    The rule every path to complete follows (`complete`, `run`, `doctor --repair`): its rounds
    are over and final-report.md holds a `## Verdict` section and, last, a `## Appendix:
    per-agent per-round summaries` section."""
    if status.phase in ("created", "running"):
        by_hand = f"finish the rounds and run `dreamcontext council synthesize {files.id}` first"
        return f"Cannot complete {files.id}: it is {status}; {_how_to_go_on(files, by_hand)}."
    report = files.paths.final_report
    text = files.read(report) if report.exists() else ""
    missing = missing_sections(text)
    if not report.exists() or VERDICT in missing:
        return (
            f"Cannot complete {files.id}: {report.name} is missing or has no '## Verdict' "
            "section; the synthesizer must write it first."
        )
    if APPENDIX in missing:
        return (
            f"Cannot complete {files.id}: {report.name} has no '## {APPENDIX}' section; add it "
            "last, a few lines per persona per round (### <slug> — Round N), then run complete "
            "again."
        )
    return None


def complete_debate(root: Root, debate_id: str) -> bool:
    """Status → complete; needs final-report.md with its Verdict and Appendix sections.
    False if already complete."""
    files = DebateFiles(root, debate_id)
    with files.lock():
        debate = files.debate()
        if debate.status.phase == "complete":
            return False
        refusal = completion_refusal(files, debate.status)
        if refusal is not None:
            raise StateError(refusal)
        debate.meta["status"] = "complete"
        files.save_debate(debate)
        # The facts it closed on: one a merge brings in later is named by `doctor`.
        weighed = weighed_bullets(debate.facts())
        files.append_log(
            f"Debate complete — {today()}", ["Final report written.", *weighed], once=True
        )
    refresh_live(root, debate_id, phase="done")
    return True


def _how_to_go_on(files: DebateFiles, by_hand: str) -> str:
    """The next step for an unfinished debate: `run <id>` for one that `council run` drives
    (its calls are in usage.jsonl), else `by_hand`."""
    if files.paths.usage.exists():
        return f"run `dreamcontext council run {files.id}` to finish it"
    return by_hand


@dataclass(frozen=True)
class Promotion:
    path: str  # relative to the root, e.g. knowledge/decision-....md
    changed: bool


def promoted_sections(report_body: str) -> list[dict[str, str]]:
    """The Verdict, then every other load-bearing `##` section, in the report's order."""
    skipped = {normalize_title(t) for t in NOT_PROMOTED}
    found = [
        {"title": s.title, "body": s.body.strip("\n")}
        for s in sections(report_body, 2)
        if normalize_title(s.title) not in skipped and s.body.strip()
    ]
    return sorted(found, key=lambda s: normalize_title(s["title"]) != "verdict")


def promote(root: Root, debate_id: str, *, to: str | None = None, force: bool = False) -> Promotion:
    """Write a knowledge doc from the final report and record it in debate.md.

    Without ``to`` the doc is knowledge/decision-<topic slug>.md, as the Node tool
    writes it. With ``to`` it is knowledge/<to>.md, and a doc there that this debate
    did not promote (another debate's, or one written by hand) is overwritten only
    with ``force``."""
    if to is not None:
        check_slug(to, "knowledge slug")
    files = DebateFiles(root, debate_id)
    with files.lock():
        debate = files.debate()
        if debate.status.phase != "complete":
            by_hand = f"run `dreamcontext council complete {debate_id}` first"
            raise StateError(
                f"Cannot promote {debate_id}: it is {debate.status}; "
                f"{_how_to_go_on(files, by_hand)}."
            )
        if to is None:
            slug = slugify(debate.topic, KNOWLEDGE_SLUG_LIMIT) or debate_id
            relative = f"knowledge/decision-{slug}.md"
            if debate.promoted and not force:
                return Promotion(debate.promoted, False)
        else:
            relative = f"knowledge/{to}.md"
            if debate.promoted == relative and not force:
                return Promotion(relative, False)
        target = root.path / relative
        previous = _previous_doc(root, target, relative, strict=to is None)
        if to is not None and target.exists() and not force:
            owner = previous.get("source_debate") if previous is not None else None
            if owner != debate_id:
                whose = f"debate {owner}" if isinstance(owner, str) and owner else "no debate"
                raise StateError(
                    f"Cannot promote {debate_id} to {relative}: that doc was promoted from "
                    f"{whose}; pass --force to overwrite it, or choose another --to slug."
                )
        report = files.read(files.paths.final_report)
        _, report_body = frontmatter_io.parse(report, "final-report.md")
        date = today()
        meta = {
            "id": new_knowledge_id(),
            "name": f"Decision: {debate.topic}",
            "type": "decision",
            "source_debate": debate_id,
            "topic": debate.topic,
            "personas": debate.personas,
            "rounds": debate.current_round,
            "created_at": date,
            "updated_at": date,
            "tags": ["decision", "council"],
        }
        if previous is not None and (to is None or previous.get("source_debate") == debate_id):
            meta["id"] = previous.get("id", meta["id"])
            meta["created_at"] = previous.get("created_at", date)
        folder = f"{root.path.name}/council/{debate_id}"
        body = resources.render(
            "files/knowledge-doc.md.j2",
            sections=promoted_sections(report_body),
            debate_id=debate_id,
            date=date,
            report_path=f"{folder}/final-report.md",
            folder_link=(f"../council/{debate_id}/", f"{folder}/") if to is not None else None,
        )
        atomic_write_text(target, frontmatter_io.render(meta, body), within=root.path)
        keep_out_of_git(root, now=True)  # knowledge/ may be new: its ignore file with it
        debate.meta["promoted_to_knowledge"] = relative
        files.save_debate(debate)
    return Promotion(relative, True)


def promote_again(root: Root, debate_id: str) -> Promotion:
    """After a resynthesis: rewrite the knowledge doc the debate was promoted to, from the
    new report, at the path debate.md records (a `--to` slug keeps its slug)."""
    debate = DebateFiles(root, debate_id).debate()
    default = f"knowledge/decision-{slugify(debate.topic, KNOWLEDGE_SLUG_LIMIT) or debate_id}.md"
    recorded = debate.promoted
    if recorded and recorded != default:
        folder, _, name = recorded.partition("/")
        slug = name.removesuffix(".md")
        if folder == "knowledge" and name == f"{slug}.md" and _is_slug(slug):
            return promote(root, debate_id, to=slug, force=True)
    return promote(root, debate_id, force=True)


def _is_slug(value: str) -> bool:
    try:
        check_slug(value, "knowledge slug")
    except UsageError:
        return False
    return True


def _previous_doc(
    root: Root, target: Path, relative: str, *, strict: bool
) -> dict[str, Any] | None:
    """The frontmatter of the knowledge doc already at `target`; None when there is none.
    A doc that does not parse raises FormatError when `strict`, else reads as nobody's."""
    if not target.exists():
        return None
    try:
        meta, _ = frontmatter_io.parse(read_text(target, within=root.knowledge), relative)
    except FormatError:
        if strict:
            raise
        return None
    return meta
