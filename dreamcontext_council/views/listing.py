"""`show` and `list`: a debate's metadata and the list of debates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dreamcontext_council.rules.final_report import VerdictStatement, verdict_statement
from dreamcontext_council.views.terminal import cells, cut_to, printable

if TYPE_CHECKING:
    from dreamcontext_council.actions.snapshot import DebateSnapshot


def show_data(snapshot: DebateSnapshot) -> dict[str, Any]:
    """Metadata, usage totals, the calls in flight and the round log of a debate."""
    from dreamcontext_council.rules.usage import usage_totals  # `show` only: `list` has none

    debate = snapshot.debate
    totals = usage_totals(snapshot.usage_records())
    run = snapshot.run_state()
    in_flight = snapshot.in_flight()
    return {
        "id": debate.id,
        "topic": debate.topic,
        "status": str(debate.status),
        "run": run.to_json() if run else None,
        "in_flight": [call.to_json() for call in in_flight],
        "waiting_for": list(run.waiting_for) if run else [],
        "current_round": debate.current_round,
        "rounds_planned": debate.rounds_planned,
        "personas": debate.personas,
        "people": snapshot.people(),
        # Round 1 sealed for a person's seat: who answered it; nothing of what they said.
        "sealed": snapshot.sealed,
        "options": snapshot.verdicts.options or debate.options,
        "verdict": statement.to_json() if (statement := verdict_of(snapshot)) else None,
        "promoted_to_knowledge": debate.promoted,
        "flags": debate.flags,
        "created_at": debate.meta.get("created_at"),
        "updated_at": debate.meta.get("updated_at"),
        "usage": totals.to_json(),
        "stances": stances_data(snapshot),
        "round_log": snapshot.log,
    }


def stances_data(snapshot: DebateSnapshot) -> dict[str, Any] | None:
    """Where each persona stands in the latest round with verdicts: {round, convergence,
    rows: [{persona, stance, conviction, headline}]}; None before any verdict."""
    from dreamcontext_council.rules import metrics

    number = snapshot.verdicts.last_round()
    if not number:
        return None
    votes = snapshot.verdicts.round(number)
    rows = [
        {"persona": slug, "stance": v.stance, "conviction": v.conviction, "headline": v.headline}
        for slug, v in votes.items()
    ]
    return {"round": number, "convergence": metrics.convergence(votes), "rows": rows}


def verdict_of(snapshot: DebateSnapshot) -> VerdictStatement | None:
    """The decision of a complete debate, as its final report's Verdict states it."""
    if snapshot.debate.status.phase != "complete":
        return None
    text = snapshot.final_report()
    return verdict_statement(text) if text is not None else None


def render_show(snapshot: DebateSnapshot, *, log: bool = False) -> str:
    """The debate's state, its verdict once complete, where each persona stands and the
    calls running now; with `log`, its round log below."""
    from dreamcontext_council.rules.usage import usage_totals

    data = show_data(snapshot)
    title = f"◆ Debate {data['id']}"
    lines = ["", f"  {title}", "  " + "─" * len(title)]
    people = set(data["people"])
    personas = [f"{slug} (person)" if slug in people else slug for slug in data["personas"]]
    rows = [
        ("topic", data["topic"]),
        ("status", " · ".join(filter(None, [data["status"], waiting_label(data["waiting_for"])]))),
        *([("run", data["run"]["line"])] if data["run"] else []),
        ("round", f"{data['current_round']}/{data['rounds_planned']}"),
        ("personas", ", ".join(personas) or "(none)"),
    ]
    if data["sealed"]:
        answered = ", ".join(data["sealed"])
        why = "a person's seat has yet to answer"
        rows.append(("sealed", f"round 1, until it closes ({why}); answered: {answered}"))
    if data["verdict"]:
        rows.append(("verdict", VerdictStatement(**data["verdict"]).line()))
    if data["options"]:
        rows.append(("options", "   ".join(f"{o['key']} {o['label']}" for o in data["options"])))
    rows.append(("promoted", data["promoted_to_knowledge"] or "no"))
    if data["flags"]:
        rows.append(("flags", "; ".join(data["flags"])))
    rows.append(("usage", usage_totals(snapshot.usage_records()).line()))
    rows += [("created", str(data["created_at"])), ("updated", str(data["updated_at"]))]
    lines += [f"  {key + ':':<10} {value}" for key, value in rows]
    lines += stance_lines(data["stances"], people)
    lines += in_flight_lines(data["in_flight"])
    if log:
        lines += ["", "─── Round log ───", snapshot.log.rstrip("\n"), ""]
    else:
        entries = sum(1 for line in snapshot.log.split("\n") if line.startswith("## "))
        if entries:
            said = "entry" if entries == 1 else "entries"
            lines += ["", f"  round log: {entries} {said} (pass --log to read it)", ""]
    return "\n".join(lines)


def stance_lines(stances: dict[str, Any] | None, people: set[str]) -> list[str]:
    """`show`'s block of where each persona stands: `    risk-auditor  A  70  "Migrate…"`."""
    if not stances:
        return []
    rows = stances["rows"]
    names = [
        printable(str(r["persona"])) + (" (person)" if r["persona"] in people else "") for r in rows
    ]
    width = max((cells(name) for name in names), default=0)
    lines = ["", f"  stances in round {stances['round']} (convergence {stances['convergence']}%):"]
    for row, name in zip(rows, names, strict=True):
        lead = f"    {name}{' ' * (width - cells(name))}  {printable(str(row['stance']))}  {row['conviction']:>3}"
        headline = _one_line(row.get("headline"))
        room = LIST_WIDTH - cells(lead) - 4
        lines.append(f'{lead}  "{cut_to(headline, room)}"' if headline and room > 8 else lead)
    return lines


def in_flight_lines(calls: list[dict[str, Any]]) -> list[str]:
    """`show`'s block of the calls running now: `  contrarian  opening r1  1,234 chars  12 s`."""
    if not calls:
        return []
    from dreamcontext_council.folder.in_flight import STREAMING  # `list` shows no calls

    width = max(len(printable(str(call["persona"]))) for call in calls)
    lines = ["", "  in flight:"]
    for call in calls:
        state = "" if call["state"] == STREAMING else f"  {call['state']}"
        detail = f" ({call['detail']})" if call.get("detail") else ""
        lines.append(
            f"    {printable(str(call['persona'])):<{width}}  {printable(str(call['phase']))} "
            f"r{call['round']}  {call['chars']:,} chars  {int(call['elapsed_s'])} s"
            f"{printable(state + detail)}"
        )
    return lines


def waiting_label(slugs: object) -> str:
    """`waiting for alice, bob` for the seats a live run waits on; empty for none."""
    if not isinstance(slugs, list) or not slugs:
        return ""
    return "waiting for " + ", ".join(printable(str(slug)) for slug in slugs)


def status_label(entry: Mapping[str, Any]) -> str:
    """A listed debate's status as `list` shows it: `stopped` for a run that stopped short,
    `waiting for alice` while its live run waits on a person, `conflicted` for a debate.md
    with git conflict markers in its frontmatter, else the debate's status."""
    if entry.get("conflicted"):
        return "conflicted"
    run = entry.get("run")
    if isinstance(run, dict) and run.get("state") == "stopped":
        return "stopped"  # the reason is on the run line
    return waiting_label(entry.get("waiting_for")) or str(entry.get("status"))


RECENT = 10
"""How many debates plain `list` shows, newest first."""
LIST_WIDTH = 80
"""Every line `list` prints fits in this many columns."""
_INDENT = "    "
REASON_LINES = 4  # a stopped run's reason wraps to at most this many lines


def filter_debates(entries: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    """`recent` (the RECENT newest), `active` (not complete), `unpromoted` (complete, not
    promoted) or `all`."""
    if mode == "all":
        return entries
    if mode == "recent":
        return entries[:RECENT]
    if mode == "unpromoted":
        return [
            e
            for e in entries
            if e.get("status") == "complete" and not e.get("promoted_to_knowledge")
        ]
    return [e for e in entries if e.get("status") != "complete"]


def without_evals(
    entries: list[dict[str, Any]], evals: Mapping[str, str]
) -> tuple[list[dict[str, Any]], int]:
    """The entries less the debates an eval made (`evals`: debate id -> eval), and how
    many were left out."""
    kept = [e for e in entries if str(e.get("id")) not in evals]
    return kept, len(entries) - len(kept)


_TITLES = {
    "all": "◆ Debates",
    "recent": "◆ Recent debates",
    "active": "◆ Debates in progress",
    "unpromoted": "◆ Unpromoted debates",
}


def render_list(entries: list[dict[str, Any]], mode: str, left_out: int = 0, more: int = 0) -> str:
    """The debates, each in lines within LIST_WIDTH columns: the id, status, round and
    day; the topic; a complete debate's verdict (`verdict: Migrate now (A) · medium`) or
    how its run stands. `more`: how many recent debates are not shown."""
    title = _TITLES.get(mode, _TITLES["active"])
    lines = ["", f"  {title}", "  " + "─" * len(title)]
    if not entries:
        hint = "" if mode == "all" else " (pass --all to see every debate)"
        lines.append(f"  none{hint}")
    for e in entries:
        lines += [cut_to(line, LIST_WIDTH) for line in _entry_lines(e)]
    if more:
        lines += ["", f"  {more} older not shown (pass --all to list every debate)"]
    if left_out:
        debates = "debate" if left_out == 1 else "debates"
        lines += ["", f"  {left_out} eval {debates} left out (pass --evals to list them)"]
    return "\n".join(lines) + "\n"


def _entry_lines(entry: Mapping[str, Any]) -> list[str]:
    """One listed debate: `  <id>  <status> · round 2/3 · <day>`, its topic, then what it
    decided or how its run stands, each line to be cut to LIST_WIDTH."""
    facts = [
        printable(status_label(entry)),
        f"round {entry.get('current_round')}/{entry.get('rounds_planned')}",
        _one_line(entry.get("updated_at")),
    ]
    if entry.get("promoted_to_knowledge"):
        facts.append("promoted")
    lines = [f"  {entry['id']}  {' · '.join(facts)}", _INDENT + _one_line(entry.get("topic"))]
    verdict = entry.get("verdict")
    if isinstance(verdict, dict) and verdict.get("sentence"):
        decided = VerdictStatement(str(verdict["sentence"]), verdict.get("confidence"))
        lines.append(f"{_INDENT}verdict: {printable(decided.short())}")
    run = entry.get("run")
    if isinstance(run, dict) and run.get("state") == "stopped":
        lines += _wrapped(f"stopped: {_one_line(run.get('reason'))}")
        lines.append(f"{_INDENT}resume with: {run.get('resume')}")
    elif isinstance(run, dict) and run.get("line"):
        lines.append(_INDENT + _one_line(run["line"]))
    return lines


def _wrapped(text: str, most: int = REASON_LINES) -> list[str]:
    """`text` on lines of LIST_WIDTH under the indent, at most `most` of them (the last
    ending in `…` when it goes on)."""
    import textwrap

    return textwrap.wrap(
        text,
        LIST_WIDTH - len(_INDENT),
        initial_indent=_INDENT,
        subsequent_indent=_INDENT + "  ",
        break_on_hyphens=False,
        max_lines=most,
        placeholder=" …",
    )


def _one_line(value: object) -> str:
    return printable(" ".join(str(value or "").split()))
