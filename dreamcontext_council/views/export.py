"""`export`: the whole debate as one self-contained HTML, JSON or markdown file.

The JSON follows docs/export-schema.json (`format` and `version` name the schema).
"""

from __future__ import annotations

import json
from typing import Any

from dreamcontext_council.actions.snapshot import DebateSnapshot, PersonaSnapshot
from dreamcontext_council.errors import FormatError, UsageError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.storage import read_text
from dreamcontext_council.rules.markdown import fenced, headings, sections
from dreamcontext_council.rules.report import as_stored
from dreamcontext_council.rules.usage import usage_totals
from dreamcontext_council.views.board import board_figures, render_board
from dreamcontext_council.views.board_extras import board_extra_lines
from dreamcontext_council.views.debate_page import build_debate_page
from dreamcontext_council.views.export_target import FORMATS
from dreamcontext_council.views.html import debate_html
from dreamcontext_council.views.persona_page import research_notes
from dreamcontext_council.views.report_page import knowledge_file
from dreamcontext_council.views.terminal import printable, printable_json
from dreamcontext_council.views.timeline import render_timeline, timeline_data

EXPORT_FORMAT = "dreamcontext-council-export"
EXPORT_VERSION = 1


def export_debate(snapshot: DebateSnapshot, fmt: str) -> str:
    """The export of a debate in `fmt` (html, json or md), as text ending in a newline.

    Whether it goes to a terminal or to a file someone may `cat` later, no export carries
    a raw control character: html and md show them as escapes (`\\x1b`), json escapes them
    losslessly (`\\u001b`).
    """
    if fmt == "html":
        return printable(export_html(snapshot))
    if fmt == "json":
        return (
            printable_json(json.dumps(export_json(snapshot), indent=2, ensure_ascii=False)) + "\n"
        )
    if fmt == "md":
        return printable(export_markdown(snapshot))
    raise UsageError(f"'{fmt}' is not an export format; use one of {', '.join(FORMATS)}.")


def export_html(snapshot: DebateSnapshot) -> str:
    """The debate page as one file: inline CSS, no scripts, nothing fetched."""
    return debate_html(build_debate_page(snapshot), export=True)


def _report(snapshot: DebateSnapshot) -> dict[str, Any] | None:
    text = snapshot.final_report()
    if text is None:
        return None
    try:
        meta, body = frontmatter_io.parse(text, "final-report.md")
    except FormatError:
        meta, body = {}, text
    return {
        "meta": meta,
        "sections": [{"title": s.title, "body": s.body} for s in sections(body, 2)],
        "text": text,
    }


def _persona(persona: PersonaSnapshot, snapshot: DebateSnapshot) -> dict[str, Any]:
    context = persona.context
    panels = []
    if context is not None:
        panels = [
            {"title": s.title, "body": s.body}
            for s in sections(context.body, 2)
            if s.title.casefold() != "persona"
        ]
    entries = sorted(persona.entries, key=lambda e: e.round)
    return {
        "slug": persona.slug,
        "model": context.model if context else None,
        "person": persona.person,
        "aspects": list(context.aspects) if context else [],
        "persona": context.persona_text if context else None,
        "panels": panels,
        "entries": [
            {
                "round": e.round,
                "date": e.date,
                "sections": [{"title": s.title, "body": s.body} for s in sections(e.body, 3)],
                "body": e.body,
            }
            for e in entries
        ],
        "research": [
            {"slug": n.name, "topic": n.topic, "added_at": n.added_at, "body": n.body}
            for n in research_notes(persona, snapshot)
        ],
    }


def export_json(snapshot: DebateSnapshot) -> dict[str, Any]:
    """Everything in the debate folder, parsed, in the shape of docs/export-schema.json."""
    debate = snapshot.debate
    verdicts = snapshot.verdicts
    figures = board_figures(snapshot)
    totals = usage_totals(snapshot.usage_records())
    knowledge = knowledge_file(snapshot)
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "debate": {
            "id": debate.id,
            "topic": debate.topic,
            "status": str(debate.status),
            "current_round": debate.current_round,
            "rounds_planned": debate.rounds_planned,
            "personas": debate.personas,
            "options": verdicts.options or debate.options,
            "promoted_to_knowledge": debate.promoted,
            "flags": debate.flags,
            "created_at": _text_or_none(debate.meta.get("created_at")),
            "updated_at": _text_or_none(debate.meta.get("updated_at")),
            "question": debate.section("Question"),
            "facts": debate.facts(),
        },
        "board": figures.to_json(),
        "timeline": timeline_data(snapshot)["rounds"],
        "verdicts": {
            "options": verdicts.options,
            "rounds": {
                str(n): {slug: v.to_json() for slug, v in votes.items()}
                for n, votes in sorted(verdicts.rounds.items())
            },
        },
        "personas": [_persona(p, snapshot) for p in snapshot.personas],
        "final_report": _report(snapshot),
        "claims": snapshot.ledger,
        **({"claims_problem": problem} if (problem := snapshot.ledger_problem) else {}),
        **({"conflicts": snapshot.conflicts} if snapshot.conflicts else {}),
        "reviews": snapshot.json_file("reviews.json"),
        "usage": {
            "calls": totals.calls,
            "failed": totals.failed,
            "input_tokens": totals.input_tokens,
            "cache_write_tokens": totals.cache_write_tokens,
            "cache_read_tokens": totals.cache_read_tokens,
            "output_tokens": totals.output_tokens,
            "cost_usd": totals.cost_usd,
            "providers": list(totals.providers),
            "records": snapshot.usage_records(),
        },
        "round_log": snapshot.log,
        "knowledge": (
            {"path": debate.promoted, "text": read_text(knowledge, within=knowledge.parent)}
            if knowledge is not None
            else None
        ),
    }


def _text_or_none(value: Any) -> str | None:
    return str(value) if value is not None else None


def demote(text: str, levels: int) -> str:
    """Push every heading outside code fences down `levels` levels (at most to ######)."""
    lines = text.split("\n")
    for heading in headings(lines):
        depth = min(6, heading.level + levels)
        lines[heading.line] = "#" * depth + " " + heading.title
    return "\n".join(lines)


def export_markdown(snapshot: DebateSnapshot) -> str:
    """The whole debate as one markdown document."""
    debate = snapshot.debate
    totals = usage_totals(snapshot.usage_records())
    figures = board_figures(snapshot)
    out = [f"# {debate.topic}", ""]
    out += [
        line for conflict in snapshot.conflicts for line in (f"> Shown without it: {conflict}", "")
    ]
    facts = [
        f"- Debate: `{debate.id}`",
        f"- Status: {debate.status} · round {debate.current_round}/{debate.rounds_planned}",
    ]
    if figures.leading:
        facts.append(
            f"- Convergence: {figures.convergence}% → {figures.leading} ({figures.leading_label})"
        )
    options = snapshot.verdicts.options or debate.options
    if options:
        facts.append("- Options: " + ", ".join(f"{o['key']} = {o['label']}" for o in options))
    facts.append(f"- Personas: {', '.join(debate.personas) or '(none)'}")
    facts.append(f"- Usage: {totals.line()}")
    if debate.promoted:
        facts.append(f"- Promoted to knowledge: `{debate.promoted}`")
    facts += [f"- Flag: {flag}" for flag in debate.flags]
    out += [*facts, ""]
    out += ["## Question", "", debate.section("Question") or debate.topic, ""]
    if debate.facts():
        out += ["## Constraints & Known Facts", ""]
        out += [f"- {fact}" for fact in debate.facts()] + [""]
    out += ["## Board", "", fenced(render_board(snapshot, None, board_extra_lines(snapshot))), ""]
    if snapshot.verdicts.last_round():
        out += ["## Position timeline", "", render_timeline(snapshot).rstrip("\n"), ""]
    report = _report(snapshot)
    out += ["## Final report", ""]
    if report is None:
        out += ["_No final report yet._", ""]
    else:
        for section in report["sections"]:
            out += [f"### {section['title']}", "", demote(section["body"], 2).strip("\n"), ""]
    claims = snapshot.ledger
    if snapshot.ledger_problem is not None:
        out += ["## Claims ledger", "", f"_{snapshot.ledger_problem}_", ""]
    elif claims is not None and isinstance(claims.get("claims"), list):
        claims_json = json.dumps(claims, indent=2, ensure_ascii=False)
        out += ["## Claims ledger", "", fenced(claims_json, "json"), ""]
    out += ["## Personas", ""]
    for persona in snapshot.personas:
        out += _persona_markdown(persona, snapshot)
    out += ["## Round log", "", demote(_drop_title(snapshot.log), 1).strip("\n"), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _drop_title(log: str) -> str:
    lines = log.split("\n")
    return "\n".join(lines[1:]) if lines and lines[0].startswith("# ") else log


def _persona_markdown(persona: PersonaSnapshot, snapshot: DebateSnapshot) -> list[str]:
    context = persona.context
    out = [f"### {persona.slug}", ""]
    if context is not None:
        aspects = ", ".join(context.aspects) or "none"
        seat = "person" if persona.person else f"model {context.model}"
        out += [f"_{seat} · aspects {aspects}_", ""]
        for section in sections(context.body, 2):
            out += [f"#### {section.title}", "", demote(section.body, 2).strip("\n"), ""]
    votes = snapshot.verdicts
    for entry in sorted(persona.entries, key=lambda e: e.round):
        verdict = votes.round(entry.round).get(persona.slug)
        out += [f"#### Round {entry.round}" + (f" — {entry.date}" if entry.date else ""), ""]
        if verdict:
            out += [
                f"_Verdict: {verdict.stance} · conviction {verdict.conviction} · {verdict.headline}_",
                "",
            ]
        out += [demote(as_stored(entry.body), 2).strip("\n"), ""]
    for note in research_notes(persona, snapshot):
        out += [f"#### Research: {note.topic}", ""]
        out += [demote(note.body, 4).strip("\n") if note.body else f"_{note.problem}_", ""]
    return out
