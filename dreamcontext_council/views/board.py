"""The chamber board: convergence meter, one row per persona, options tally.

A seat a person answers is marked `(person)` on its row and `person: true` in the JSON;
while the run waits on it the top says `round 2 of 3: waiting for alice`. While round 1 is
sealed for it (rules/sealing.py) a seat that answered shows only that (`sealed: true`).
"""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any, NamedTuple

from rich.cells import cell_len

from dreamcontext_council.actions.snapshot import DebateSnapshot
from dreamcontext_council.folder.names import slugify
from dreamcontext_council.rules import metrics
from dreamcontext_council.rules.sealing import SEALED, SEALED_ROUND
from dreamcontext_council.views.terminal import printable

WIDTH = 94  # the board where no terminal says otherwise: exports, pipes
MAX_WIDTH = 120  # a wider terminal gets no wider board
FULL_WIDTH = 80  # below this the conviction bars are left out
MIN_WIDTH = 40
TITLE_LIMIT = 43
HEADLINE_MIN = 16  # a headline given fewer cells than this goes on a line of its own
_LABEL = r"[A-Z]+ {2,}|CONVERGENCE "  # compiled when a line must wrap (re keeps it)


def bar(percent: int, cells: int = 10) -> str:
    """A ▓░ meter of `cells` cells, halves rounded up."""
    filled = min(cells, max(0, int(percent / (100 / cells) + 0.5)))
    return "▓" * filled + "░" * (cells - filled)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - cell_len(text))


def _cut(text: str, width: int) -> str:
    if cell_len(text) <= width:
        return text
    out = ""
    for char in text:
        if cell_len(out + char) > width - 1:
            break
        out += char
    return out + "…"


class BoardRow(NamedTuple):
    slug: str
    stance: str | None
    conviction: int | None
    headline: str | None
    shift: str
    person: bool = False  # a person answers this seat, not a model
    sealed: bool = False  # answered round 1, which is sealed for a person's seat


class BoardFigures(NamedTuple):
    """The board's numbers for one round."""

    round: int
    rounds_planned: int
    status: str
    convergence: int
    leading: str | None
    leading_label: str | None
    delta: int | None
    rows: list[BoardRow]
    tally: list[metrics.Tally]

    def to_json(self) -> dict[str, Any]:
        return {
            **self._asdict(),
            "rows": [row._asdict() for row in self.rows],
            "tally": [asdict(tally) for tally in self.tally],
        }


def board_figures(snapshot: DebateSnapshot, number: int | None = None) -> BoardFigures:
    """The board's numbers for a round (default: the latest with verdicts, else the current)."""
    verdicts = snapshot.verdicts
    debate = snapshot.debate
    if number is None:
        number = verdicts.last_round() or debate.current_round
    votes = verdicts.round(number)
    previous = verdicts.round(number - 1)
    people = set(snapshot.people())
    sealed = set(snapshot.sealed) if number == SEALED_ROUND else set()
    rows = []
    for slug in sorted(set(debate.personas) | set(votes)):
        current = votes.get(slug)
        rows.append(
            BoardRow(
                slug,
                current.stance if current else None,
                current.conviction if current else None,
                current.headline if current else None,
                metrics.shift(previous.get(slug), current) if current else "·",
                slug in people,
                slug in sealed and current is None,
            )
        )
    lead = metrics.leading(votes)
    level = metrics.convergence(votes)
    return BoardFigures(
        round=number,
        rounds_planned=debate.rounds_planned,
        status=str(debate.status),
        convergence=level,
        leading=lead,
        leading_label=verdicts.label(lead) if lead else None,
        delta=level - metrics.convergence(previous) if previous else None,
        rows=rows,
        tally=metrics.tally(verdicts, number),
    )


def render_board(
    snapshot: DebateSnapshot,
    number: int | None = None,
    extra_lines: list[str] | None = None,
    width: int = WIDTH,
) -> str:
    """The board as plain text, `width` cells wide (see `fitted_width`).

    Below `FULL_WIDTH` the conviction bars are left out; a headline or a row too long for
    the frame wraps inside it (a headline to at most two lines), so every line of the
    frame is whole at any width from `MIN_WIDTH` up.
    """
    width = max(MIN_WIDTH, width)
    figures = board_figures(snapshot, number)
    inner = width - 4
    meter = f"CONVERGENCE {bar(figures.convergence)} {figures.convergence}%"
    if figures.leading:
        meter += f" → {figures.leading} ({figures.leading_label})"
    if figures.delta is not None:
        meter += f"   Δ {figures.delta:+d}"
    lines = [*_wrap(meter, inner), ""]
    lines += _persona_rows(figures.rows, inner, bars=width >= FULL_WIDTH)
    lines.append("")
    tally = "   ".join(f"{t.key} {t.label} ({t.count} · {t.conviction})" for t in figures.tally)
    lines += _wrap(f"OPTIONS  {tally}" if tally else "OPTIONS  (none yet)", inner)
    for extra in extra_lines or []:
        lines += _wrap(extra, inner)
    body = [f"│ {_pad(line, inner)} │" for line in lines]
    bottom = "╰" + "─" * (width - 2) + "╯"
    return "\n".join([_top(snapshot, figures, width), *body, bottom])


def fitted_width(columns: int | None) -> int:
    """The board's width for a terminal of `columns` (the default width when unknown)."""
    if not columns or columns <= 0:
        return WIDTH
    return max(MIN_WIDTH, min(columns, MAX_WIDTH))


def _top(snapshot: DebateSnapshot, figures: BoardFigures, width: int) -> str:
    """`╭──── COUNCIL · <topic> ──── round 1 of 3: all answers in ──╮`, the topic cut to fit."""
    debate = snapshot.debate
    where = _round_label(snapshot, figures.round)
    slug = printable(slugify(debate.topic, 200) or debate.id)
    slug = slug if len(slug) <= TITLE_LIMIT else slug[:TITLE_LIMIT] + "…"
    room = width - 2 - cell_len(f"──── COUNCIL ·  ──── {where} ─")
    if room < 8:  # a narrow terminal: the topic goes before the round does
        left = _cut(f"╭─ {where} ", width - 2)
    else:
        left = f"╭──── COUNCIL · {_cut(slug, room)} ──── {where} "
    return left + "─" * max(1, width - 1 - cell_len(left)) + "╮"


def _round_label(snapshot: DebateSnapshot, number: int) -> str:
    """`round 1 of 3: all answers in` while the debate goes on; a finished debate's board
    keeps the form the Node tool printed, `round 2/2 · complete`."""
    state = _round_state(snapshot, number)
    planned = snapshot.debate.rounds_planned
    if snapshot.debate.status.phase in ("synthesizing", "complete"):
        return f"round {number}/{planned} · {state}"
    if state == "complete":
        state = "all answers in"
    return f"round {number} of {planned}: {state}"


def _persona_rows(rows: list[BoardRow], inner: int, *, bars: bool) -> list[str]:
    """One row per persona; without `bars` the conviction is a number alone."""
    names = [printable(r.slug) + (" (person)" if r.person else "") for r in rows]
    slug_width = max((cell_len(name) for name in names), default=0)
    shift_width = max((cell_len(r.shift) for r in rows), default=1)
    lines: list[str] = []
    for row, name in zip(rows, names, strict=True):
        slug = _pad(name, slug_width)
        if row.stance is None or row.conviction is None:
            said = f"answered, {SEALED}" if row.sealed else "no verdict yet"
            lines += _wrap(f"⬦ {slug}  — {said}", inner)
            continue
        meter = f"{bar(row.conviction)} " if bars else ""
        lead = (
            f"⬥ {slug}  {row.stance} {meter}{row.conviction:>3}  {_pad(row.shift, shift_width)}  "
        )
        headline = f'"{printable(row.headline or "")}"'
        if inner - cell_len(lead) < HEADLINE_MIN:  # the headline goes under the row
            lines.append(_cut(lead.rstrip(), inner))
            lead = " " * 4
        parts = _wrap(headline, inner - cell_len(lead), indent=0, most=2)
        lines += [(lead if i == 0 else " " * cell_len(lead)) + p for i, p in enumerate(parts)]
    return lines


def _wrap(line: str, width: int, *, indent: int | None = None, most: int = 0) -> list[str]:
    """`line` (its control characters shown) in lines of at most `width` cells, broken at
    spaces; later lines are indented under a leading label (`OPTIONS  `) or by `indent`.
    With `most`, the lines after that many are left out and the last ends in `…`."""
    line = printable(line)
    if cell_len(line) <= width:
        return [line]
    if indent is None:
        label = re.match(_LABEL, line)
        indent = label.end() if label and label.end() <= width // 2 else 2
    out: list[str] = []
    current = ""
    for word in line.split(" "):
        room = width - (indent if out else 0)
        joined = f"{current} {word}" if current else word
        if cell_len(joined) <= room or (not current and not word):
            current = joined
            continue
        if current:
            out.append(current)
            room = width - indent
        while cell_len(word) > room:  # a word wider than the frame is split
            head = _cut(word, room + 1)[:-1] or word[0]
            out.append(head)
            word = word[len(head) :]
        current = word
    out.append(current)
    if most and len(out) > most:
        last = _cut(out[most - 1] + " " + out[most], width - (indent if most > 1 else 0))
        out = [*out[: most - 1], last]
    return [out[0], *(" " * indent + part for part in out[1:])]


def _round_state(snapshot: DebateSnapshot, number: int) -> str:
    status = snapshot.debate.status
    if number == 0 or status.phase == "created":
        return "not started"
    if status.phase == "running" and status.round == number:
        run = snapshot.run_state()
        return (run.label if run else "") or "running"
    if status.phase in ("synthesizing", "complete") and number == snapshot.debate.current_round:
        return str(status)
    if number <= snapshot.debate.current_round:
        return "complete"
    return "not started"
