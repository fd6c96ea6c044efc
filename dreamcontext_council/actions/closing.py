"""Closing a debate: synthesis manifest, completion, promotion to a knowledge doc."""

from __future__ import annotations

from dataclasses import dataclass

from dreamcontext_council import resources
from dreamcontext_council.actions.files import DebateFiles, today
from dreamcontext_council.actions.live_state import refresh_live
from dreamcontext_council.errors import StateError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.names import new_knowledge_id, slugify
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import atomic_write_text, read_text
from dreamcontext_council.rules.markdown import find_section

KNOWLEDGE_SLUG_LIMIT = 80
PROMOTED_SECTIONS = (
    "Verdict",
    "Decision card",
    "Why",
    "Minority view & revisit conditions",
    "Open risks",
)


@dataclass(frozen=True)
class Manifest:
    """The files a synthesizer must read, relative to the debate folder."""

    debate_id: str
    changed: bool
    files: list[str]


def begin_synthesis(root: Root, debate_id: str) -> Manifest:
    """Status → synthesizing (needs the last started round complete); list what to read."""
    files = DebateFiles(root, debate_id)
    with files.lock():
        debate = files.debate()
        status = debate.status
        changed = status.phase != "synthesizing"
        # The manifest is read before the status changes, so a broken file changes nothing.
        listing = ["debate.md", "verdicts.json", "round-log.md"]
        for slug in debate.personas:
            paths = files.persona_paths(slug)
            if paths.compressed.exists():
                listing.append(f"{slug}/compressed.md")
            elif paths.report.exists():
                listing.append(f"{slug}/report.md")
            listing += [f"{slug}/researches/{e['slug']}.md" for e in files.research_index(slug)]
        if files.paths.attachments.is_dir():
            listing += [f"attachments/{p.name}" for p in sorted(files.paths.attachments.iterdir())]
        if changed:
            if status.phase != "round_complete" or status.round != debate.current_round:
                raise StateError(
                    f"Cannot synthesize {debate_id}: it is {status}; finish the running round with "
                    f"`dreamcontext council round end {debate_id} {debate.current_round}` first."
                    if status.phase == "running"
                    else f"Cannot synthesize {debate_id}: it is {status}; run at least one round first."
                    if status.phase == "created"
                    else f"Cannot synthesize {debate_id}: it is already {status}."
                )
            debate.meta["status"] = "synthesizing"
            files.save_debate(debate)
            files.append_log(
                f"Synthesis started — {today()}", [f"Rounds debated: {debate.current_round}"]
            )
    refresh_live(root, debate_id, phase="synthesis")
    return Manifest(debate_id, changed, listing)


def complete_debate(root: Root, debate_id: str) -> bool:
    """Status → complete; needs final-report.md with a Verdict section. False if already complete."""
    files = DebateFiles(root, debate_id)
    with files.lock():
        debate = files.debate()
        if debate.status.phase == "complete":
            return False
        if debate.status.phase in ("created", "running"):
            by_hand = (
                f"finish the rounds and run `dreamcontext council synthesize {debate_id}` first"
            )
            raise StateError(
                f"Cannot complete {debate_id}: it is {debate.status}; "
                f"{_how_to_go_on(files, by_hand)}."
            )
        report = files.paths.final_report
        if not report.exists() or find_section(files.read(report), 2, "Verdict") is None:
            raise StateError(
                f"Cannot complete {debate_id}: {report.name} is missing or has no '## Verdict' "
                "section; the synthesizer must write it first."
            )
        debate.meta["status"] = "complete"
        files.save_debate(debate)
        files.append_log(f"Debate complete — {today()}", ["Final report written."], once=True)
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


def promote(root: Root, debate_id: str, *, force: bool = False) -> Promotion:
    """Write knowledge/decision-<slug>.md from the final report and record it in debate.md."""
    files = DebateFiles(root, debate_id)
    with files.lock():
        debate = files.debate()
        if debate.status.phase != "complete":
            by_hand = f"run `dreamcontext council complete {debate_id}` first"
            raise StateError(
                f"Cannot promote {debate_id}: it is {debate.status}; "
                f"{_how_to_go_on(files, by_hand)}."
            )
        if debate.promoted and not force:
            return Promotion(debate.promoted, False)
        slug = slugify(debate.topic, KNOWLEDGE_SLUG_LIMIT) or debate_id
        relative = f"knowledge/decision-{slug}.md"
        report = files.read(files.paths.final_report)
        _, report_body = frontmatter_io.parse(report, "final-report.md")
        sections = [
            {"title": found.title, "body": found.body.strip("\n")}
            for title in PROMOTED_SECTIONS
            if (found := find_section(report_body, 2, title)) is not None
        ]
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
        target = root.path / relative
        if target.exists():
            previous, _ = frontmatter_io.parse(read_text(target, within=root.knowledge), relative)
            meta["id"] = previous.get("id", meta["id"])
            meta["created_at"] = previous.get("created_at", date)
        body = resources.render(
            "files/knowledge-doc.md.j2",
            sections=sections,
            debate_id=debate_id,
            date=date,
            report_path=f"{root.path.name}/council/{debate_id}/final-report.md",
        )
        atomic_write_text(target, frontmatter_io.render(meta, body))
        debate.meta["promoted_to_knowledge"] = relative
        files.save_debate(debate)
    return Promotion(relative, True)
