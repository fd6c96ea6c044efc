"""The chamber board: convergence meter, one row per persona, options tally."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, NamedTuple

from rich.cells import cell_len

from dreamcontext_council.actions.snapshot import DebateSnapshot
from dreamcontext_council.folder.names import slugify
from dreamcontext_council.rules import metrics
from dreamcontext_council.views.terminal import printable

WIDTH = 94
TITLE_LIMIT = 43


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
    snapshot: DebateSnapshot, number: int | None = None, extra_lines: list[str] | None = None
) -> str:
    """The board as plain text, 94 cells wide."""
    figures = board_figures(snapshot, number)
    debate = snapshot.debate
    inner = WIDTH - 4
    state = _round_state(snapshot, figures.round)
    slug = slugify(debate.topic, 200) or debate.id
    slug = slug if len(slug) <= TITLE_LIMIT else slug[:TITLE_LIMIT] + "…"
    left = f"╭──── COUNCIL · {slug} ──── round {figures.round}/{debate.rounds_planned} · {state} "
    top = left + "─" * max(1, WIDTH - 1 - cell_len(left)) + "╮"
    meter = f"CONVERGENCE {bar(figures.convergence)} {figures.convergence}%"
    if figures.leading:
        meter += f" → {figures.leading} ({figures.leading_label})"
    if figures.delta is not None:
        meter += f"   Δ {figures.delta:+d}"
    lines = [meter, ""]
    slug_width = max((cell_len(r.slug) for r in figures.rows), default=0)
    shift_width = max((cell_len(r.shift) for r in figures.rows), default=1)
    for row in figures.rows:
        if row.stance is None or row.conviction is None:
            lines.append(f"⬦ {_pad(row.slug, slug_width)}  — no verdict yet")
            continue
        lines.append(
            f"⬥ {_pad(row.slug, slug_width)}  {row.stance} {bar(row.conviction)} "
            f'{row.conviction:>3}  {_pad(row.shift, shift_width)}  "{row.headline}"'
        )
    lines.append("")
    tally = "   ".join(f"{t.key} {t.label} ({t.count} · {t.conviction})" for t in figures.tally)
    lines.append(f"OPTIONS  {tally}" if tally else "OPTIONS  (none yet)")
    lines += extra_lines or []
    # Escapes are shown before measuring, so a hostile headline cannot break the frame.
    body = [f"│ {_pad(_cut(printable(line), inner), inner)} │" for line in lines]
    bottom = "╰" + "─" * (WIDTH - 2) + "╯"
    return "\n".join([top, *body, bottom])


def _round_state(snapshot: DebateSnapshot, number: int) -> str:
    status = snapshot.debate.status
    if number == 0 or status.phase == "created":
        return "not started"
    if status.phase == "running" and status.round == number:
        run = snapshot.run_state()
        return "stopped" if run and run.state == "stopped" else "running"
    if status.phase in ("synthesizing", "complete") and number == snapshot.debate.current_round:
        return str(status)
    if number <= snapshot.debate.current_round:
        return "complete"
    return "not started"
