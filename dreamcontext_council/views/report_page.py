"""The outcome on the debate page: final report cards, the claims ledger, the knowledge doc."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from dreamcontext_council.actions.snapshot import DebateSnapshot
from dreamcontext_council.errors import FormatError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.names import slugify
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.dissent import DissentFlag
from dreamcontext_council.rules.final_report import report_sections, too_many_sections
from dreamcontext_council.rules.markdown import TooManySections, normalize_title
from dreamcontext_council.views.contained import is_inside
from dreamcontext_council.views.safe_markdown import LinkTargets, render_markdown

_KNOWLEDGE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,200}\.md")


@dataclass(frozen=True)
class ReportCard:
    title: str
    anchor: str
    html: Markup
    lead: bool
    collapsed: bool
    notes: Markup | None = (
        None  # the Verdict's lines after the decision the page shows nowhere else
    )

    @property
    def wide(self) -> bool:
        """Tables need the full width of the page."""
        return "<table" in self.html

    @property
    def decision(self) -> bool:
        """The synthesizer's decision card, shown beside the Verdict when present."""
        return normalize_title(self.title) == "decision card"

    @property
    def ledger(self) -> bool:
        """The report's own claims ledger, which claims.json shows in full when it is there."""
        return normalize_title(self.title) == "claims ledger"


@dataclass(frozen=True)
class Claim:
    id: str
    html: Markup
    proposer: str | None
    round: str | None
    supporters: list[str]
    challengers: list[str]
    label: str | None
    research: list[str]


@dataclass(frozen=True)
class ClaimsLedger:
    claims: list[Claim]
    dropped: list[Markup]
    flags: list[Markup]
    problem: str | None = None  # why claims.json was refused, shown instead of the ledger


# The lines the engine appends to the synthesizer's Verdict (synthesis.py): the model mix,
# the dissent flags and the debate measures. The debate page shows each of them elsewhere.
_DIVERSITY = re.compile(r"Model diversity: ")
_MEASURES = re.compile(r"Debate measures \(")
_DISSENT = re.compile(r"\S+ dissents on \d+ of \d+ claims")


@dataclass(frozen=True)
class Elsewhere:
    """What the debate page shows outside the report, so the Verdict card leaves it out."""

    diversity: bool = False
    measures: bool = False
    flags: bool = False

    def shows(self, paragraph: str) -> bool:
        return bool(
            (self.diversity and _DIVERSITY.match(paragraph))
            or (self.measures and _MEASURES.match(paragraph))
            or (
                self.flags
                and all(_DISSENT.match(line) for line in paragraph.split("\n") if line.strip())
            )
        )


def split_verdict(body: str, elsewhere: Elsewhere) -> tuple[str, str]:
    """The Verdict section as its decision (the synthesizer's sentence and confidence) and
    the rest, less what the page shows elsewhere. The decision ends where the engine's
    lines begin (its model diversity line); a hand-written Verdict is all decision."""
    paragraphs = [p for p in re.split(r"\n\s*\n", body.strip("\n")) if p.strip()]
    cut = next(
        (i for i, p in enumerate(paragraphs) if _DIVERSITY.match(p.lstrip())), len(paragraphs)
    )
    rest = [p for p in paragraphs[cut:] if not elsewhere.shows(p.lstrip())]
    return "\n\n".join(paragraphs[:cut]), "\n\n".join(rest)


def report_cards(
    snapshot: DebateSnapshot, targets: LinkTargets, elsewhere: Elsewhere | None = None
) -> list[ReportCard]:
    """final-report.md as cards: the Verdict first, the Appendix folded. The Verdict card
    holds the decision; its other lines are notes, less those `elsewhere` shows."""
    text = snapshot.final_report()
    if text is None:
        return []
    try:
        _, body = frontmatter_io.parse(text, "final-report.md")
    except FormatError:
        body = text
    more: Markup | None = None
    try:
        found = report_sections(body)
    except TooManySections as stopped:  # the first ones are shown, and the page says so
        found = list(stopped.read)
        more = render_markdown(too_many_sections(snapshot.debate.id), targets)
    cards = []
    preamble = "\n".join(body.split("\n")[: found[0].start]) if found else body
    if preamble.strip():
        cards.append(
            ReportCard(
                "Report", "report-preamble", render_markdown(preamble, targets), False, False
            )
        )
    used: set[str] = set()
    for section in found:
        title = normalize_title(section.title)
        anchor = "report-" + (slugify(section.title, 60) or "section")
        while anchor in used:
            anchor += "-x"
        used.add(anchor)
        lead = title == "verdict"
        body, notes = section.body, ""
        if lead:
            body, notes = split_verdict(section.body, elsewhere or Elsewhere())
        cards.append(
            ReportCard(
                section.title,
                anchor,
                render_markdown(body, targets),
                lead=lead,
                collapsed=title.startswith("appendix"),
                notes=render_markdown(notes, targets) if notes.strip() else None,
            )
        )
    if more is not None:
        cards.append(ReportCard("More sections", "report-more-sections", more, False, False))
    # The Verdict leads, whatever order the synthesizer wrote.
    return sorted(cards, key=lambda c: not c.lead)


def _names(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int | float)]
    if isinstance(value, str) and value:
        return [value]
    return []


def _text_of(value: Any) -> str:
    if isinstance(value, dict) and "persona" in value and "claim" not in value:
        return _flag_line(value)
    if isinstance(value, dict):
        main = value.get("claim") or value.get("text") or value.get("id") or ""
        reason = value.get("reason") or value.get("why")
        return f"{main} — {reason}" if reason else str(main)
    return str(value)


def _flag_line(flag: dict[str, Any]) -> str:
    """A dissent flag as the report words it: `slug dissents on 2 of 3 claims (66.7%)`."""
    try:
        return DissentFlag(
            str(flag["persona"]),
            float(flag.get("share", 0)),
            int(flag.get("claims_challenged", 0)),
            int(flag.get("total", 0)),
        ).message
    except (TypeError, ValueError):
        return f"{flag['persona']} dissents"


def claims_ledger(snapshot: DebateSnapshot, targets: LinkTargets) -> ClaimsLedger | None:
    """claims.json as plain values and safe HTML; None when absent, its problem when refused."""
    if snapshot.ledger_problem is not None:
        return ClaimsLedger([], [], [], snapshot.ledger_problem)
    data = snapshot.ledger
    if data is None:
        return None
    claims = []
    raw_claims = data.get("claims")
    for i, item in enumerate(raw_claims if isinstance(raw_claims, list) else []):
        if not isinstance(item, dict):
            continue
        number = item.get("round")
        claims.append(
            Claim(
                id=str(item.get("id", i + 1)),
                html=render_markdown(str(item.get("claim", "")), targets),
                proposer=str(item["proposer"]) if item.get("proposer") else None,
                round=str(number) if number is not None else None,
                supporters=_names(item.get("supporters")),
                challengers=_names(item.get("challengers")),
                label=str(item["label"]) if item.get("label") else None,
                # The engine's claims.json names the backing notes in `notes`.
                research=_names(item["notes"] if "notes" in item else item.get("research")),
            )
        )

    def texts(key: str) -> list[Markup]:
        values = data.get(key)
        items = values if isinstance(values, list) else []
        return [render_markdown(_text_of(v), targets) for v in items]

    return ClaimsLedger(claims, texts("dropped"), texts("flags"))


def knowledge_file(snapshot: DebateSnapshot) -> Path | None:
    """The promoted knowledge doc, when recorded as knowledge/<name>.md inside the root."""
    recorded = snapshot.debate.promoted
    if not recorded:
        return None
    folder, _, name = recorded.replace("\\", "/").rpartition("/")
    if folder != "knowledge" or not _KNOWLEDGE_NAME.fullmatch(name):
        return None
    root = Root(snapshot.paths.folder.parent.parent)
    path = root.knowledge / name
    return path if path.is_file() and is_inside(path, root.knowledge) else None
