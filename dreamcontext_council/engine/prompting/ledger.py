"""The claims ledger in the final report: the engine labels, the model only reports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.prompting import claims as claim_rules
from dreamcontext_council.engine.prompting.claims_section import render_claims_ledger
from dreamcontext_council.engine.prompting.compression import find_fenced_blocks
from dreamcontext_council.errors import CouncilError, FormatError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import atomic_write_json
from dreamcontext_council.rules import tool_note


@dataclass
class LedgerResult:
    section: str
    flag_lines: list[str] = field(default_factory=list)


def parse_claims(text: str, roster: list[str]) -> tuple[str, Any, str | None]:
    """(report text without the claims block, claims or None, why there are none).

    The reason is None when the claims parsed; otherwise it says the block is absent
    or quotes what is malformed, for the one repair request.
    """
    try:
        body, claims = claim_rules.parse_claims_block(text, roster=roster)
    except FormatError as problem:
        # A malformed block counts as missing (one repair request); its text never reaches the report.
        blocks = [b for b in find_fenced_blocks(text) if b.info.split()[:1] == ["claims"]]
        for block in reversed(blocks):
            text = text[: block.start] + text[block.end :]
        return text, None, f"the ```claims block is malformed: {problem}"
    if claims is None:
        return body, None, "the report has no ```claims block at the end"
    return body, claims, None


def research_note_ids(files: DebateFiles, roster: list[str]) -> list[str]:
    """The debate's research notes that can back a claim, as ``<persona>/<slug>``.

    Every note in the personas' indexes whose file is there, except the notes of tool
    calls that gave no result (an error, a timeout, a denied call)."""
    found = []
    for persona in roster:
        for entry in files.research_index(persona):
            slug = entry["slug"]
            path = files.persona_paths(persona).researches / f"{slug}.md"
            try:
                text = files.read(path)
            except (OSError, CouncilError):
                continue  # a missing or unsafe note backs nothing
            if not tool_note.failed_call(text):
                found.append(f"{persona}/{slug}")
    return found


def apply_claims(
    root: Root, files: DebateFiles, claims: Any, families: Mapping[str, str] | None = None
) -> LedgerResult:
    """Label the claims, write claims.json, raise dissent flags into debate.md.

    A claim counts as backed by research or an attachment only through notes and files
    that exist in the debate. `families` (persona → model family) lets a VERIFIED label
    say when its agreement is within one model family.
    """
    from dreamcontext_council.engine.prompting.attachments import attachment_paths

    roster = files.debate().personas
    checked = claim_rules.resolve_research(claims or [], research_note_ids(files, roster))
    checked = claim_rules.resolve_attachments(checked, [p.name for p in attachment_paths(files)])
    labeled = claim_rules.label_claims(checked)
    flags = claim_rules.dissent_flags(labeled, roster)
    atomic_write_json(
        files.paths.claims,
        claim_rules.claims_to_json(labeled, flags, families),
        within=files.root.path,
    )
    flag_texts = [f"dissent: {f.message}" for f in flags]
    with files.lock():
        debate = files.debate()
        kept = [f for f in debate.flags if not f.startswith("dissent: ")]
        if kept + flag_texts != debate.flags:
            debate.meta["flags"] = kept + flag_texts
            files.save_debate(debate)
    section = render_claims_ledger(labeled, flags, families)
    if claims is None:
        section = "## Claims ledger\n\n_The synthesizer returned no claims block._\n"
    return LedgerResult(section, [f"> **Flag:** {t}" for t in flag_texts])
