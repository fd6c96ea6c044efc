"""HTML pages of the dashboard and the HTML export, from autoescaping Jinja templates."""

from __future__ import annotations

import hashlib
import re
from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup

from dreamcontext_council.resources import templates_dir
from dreamcontext_council.views.debate_list import STATUS_FILTERS, DebateList
from dreamcontext_council.views.debate_page import DebatePage, status_tone
from dreamcontext_council.views.persona_page import PersonaView
from dreamcontext_council.views.positions_by_round import Section

STATIC_FILES = {
    "dashboard.css": "text/css",
    "dashboard.js": "text/javascript",
    "desk.css": "text/css",
    "desk.js": "text/javascript",
}
# The export is opened from disk: nothing in it may run or fetch anything.
EXPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@cache
def html_environment() -> jinja2.Environment:
    """Templates under templates/dashboard/: autoescaped, strict about missing values."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir() / "dashboard")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["tone"] = lambda status: status_tone(str(status))
    env.filters["stamped"] = stamped
    return env


# The name is as the template escaped it: a hand-edited slug cannot hold a quote here.
_PART = re.compile(r'data-part="([^"]*)"')
_STAMPED = re.compile(r'data-part="([^"]*)" data-hash="([0-9a-f]+)"')


def stamped(html: str) -> Markup:
    """A part of the page with `data-hash`, the digest of its HTML, beside its `data-part`:
    a live update sends only the parts whose digest the page does not have."""
    found = _PART.search(html)
    if found is None:
        return Markup(html)
    digest = hashlib.blake2b(html.encode(), digest_size=8).hexdigest()
    at = found.end()
    return Markup(f'{html[:at]} data-hash="{digest}"{html[at:]}')


def part_digest(html: str) -> tuple[str, str] | None:
    """The name and digest a stamped part carries."""
    found = _STAMPED.search(html)
    return (found.group(1), found.group(2)) if found else None


def debate_parts(page: DebatePage) -> list[tuple[str, str, Markup]]:
    """The page's live parts in page order, each as (name, digest, stamped HTML)."""
    parts = html_environment().get_template("debate_parts.html.j2").module
    found = [parts.top(page, False)]  # type: ignore[attr-defined]
    pair = [parts.outcome(page, False), parts.board(page, False)]  # type: ignore[attr-defined]
    found += pair if page.complete else pair[::-1]
    found += [parts.report(page, False), parts.claims(page, False)]  # type: ignore[attr-defined]
    if page.columns and page.matrix:
        found.append(parts.matrix_head(page, False))  # type: ignore[attr-defined]
        found += [parts.matrix_row(page, row, False) for row in page.matrix]  # type: ignore[attr-defined]
    found += [parts.persona(page, p, False) for p in page.personas]  # type: ignore[attr-defined]
    found.append(parts.log(page, False))  # type: ignore[attr-defined]
    result = []
    for html in found:
        part = stamped(str(html))
        named = part_digest(part)
        assert named is not None, "every part of the debate page carries data-part"
        result.append((named[0], named[1], part))
    return result


def changed_parts(page: DebatePage, have: list[tuple[str, str]]) -> str | None:
    """The parts whose digest differs from `have` (the page's parts, in order), each in a
    `<template data-part>`; None when the page's parts are not the same list of names
    (a persona or a round appeared): then the whole fragment is needed."""
    parts = debate_parts(page)
    if [name for name, _, _ in parts] != [name for name, _ in have]:
        return None
    return "".join(
        f'<template data-part="{name}">{html}</template>'
        for (name, digest, html), (_, old) in zip(parts, have, strict=True)
        if digest != old
    )


def entry_html(sections: list[Section]) -> str:
    """A whole round entry, for a matrix cell opened on a long debate's page."""
    module = html_environment().get_template("debate_parts.html.j2").module
    return str(module.entry_sections(sections))  # type: ignore[attr-defined]


def transcript_html(persona: PersonaView) -> str:
    """A persona's whole transcript, for its box opened on a long debate's page."""
    module = html_environment().get_template("debate_parts.html.j2").module
    return str(module.transcript(persona))  # type: ignore[attr-defined]


def static_text(name: str) -> str:
    """One of the dashboard's own static files (CSS or JS), by name from a fixed list."""
    if name not in STATIC_FILES:
        raise KeyError(name)
    return (templates_dir() / "dashboard" / "static" / name).read_text(encoding="utf-8")


def render_page(template: str, *, export: bool, **values: Any) -> str:
    """A template under templates/dashboard/ as HTML; `export` puts the stylesheet inline."""
    css = Markup(static_text("dashboard.css").replace("</", "<\\/")) if export else None
    return (
        html_environment()
        .get_template(template)
        .render(export=export, css=css, export_csp=EXPORT_CSP, **values)
    )


def debate_html(
    page: DebatePage, *, export: bool = False, fragment: bool = False, desk: Any = None
) -> str:
    """The debate page; `fragment` is the live part only, `export` the standalone file;
    `desk` (dashboard/desk.py) the run's controls and the person's seats, when writable."""
    if fragment:
        return render_page("debate_body.html.j2", export=export, page=page)
    return render_page("debate.html.j2", export=export, page=page, desk=desk)


def desk_html(desk: Any) -> str:
    """The debate page's desk alone, fetched again when it changes."""
    return render_page("desk.html.j2", export=False, desk=desk)


def list_html(
    listing: DebateList, *, fragment: bool = False, evals: int = 0, ask: Any = None
) -> str:
    """One page of the list of debates, with its search box, status filter and pager, and a
    link to the `evals` evals under the root when there are any; `ask` (dashboard/ask.py)
    the form that starts a debate, when writable."""
    template = "list_rows.html.j2" if fragment else "list.html.j2"
    return render_page(
        template, export=False, listing=listing, filters=STATUS_FILTERS, evals=evals, ask=ask
    )


def knowledge_html(name: str, meta: dict[str, Any], body: Markup, source: str | None) -> str:
    """A promoted knowledge doc, read-only."""
    title = str(meta.get("name") or name)
    shown = {k: v for k, v in meta.items() if isinstance(v, str | int | float | list)}
    return render_page(
        "knowledge.html.j2", export=False, title=title, meta=shown, body=body, source=source
    )


def error_html(status: int, message: str) -> str:
    """A plain error page."""
    return render_page("error.html.j2", export=False, status=status, message=message)
