"""`show` and `list`: a debate's metadata and the list of debates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dreamcontext_council.folder.in_flight import STREAMING
from dreamcontext_council.rules.final_report import VerdictStatement, verdict_statement
from dreamcontext_council.rules.usage import usage_totals
from dreamcontext_council.views.terminal import printable

if TYPE_CHECKING:
    from dreamcontext_council.actions.snapshot import DebateSnapshot


def show_data(snapshot: DebateSnapshot) -> dict[str, Any]:
    """Metadata, usage totals, the calls in flight and the round log of a debate."""
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
        "round_log": snapshot.log,
    }


def verdict_of(snapshot: DebateSnapshot) -> VerdictStatement | None:
    """The decision of a complete debate, as its final report's Verdict states it."""
    if snapshot.debate.status.phase != "complete":
        return None
    text = snapshot.final_report()
    return verdict_statement(text) if text is not None else None


def render_show(snapshot: DebateSnapshot) -> str:
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
    lines += in_flight_lines(data["in_flight"])
    lines += ["", "─── Round log ───", snapshot.log.rstrip("\n"), ""]
    return "\n".join(lines)


def in_flight_lines(calls: list[dict[str, Any]]) -> list[str]:
    """`show`'s block of the calls running now: `  contrarian  opening r1  1,234 chars  12 s`."""
    if not calls:
        return []
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


def filter_debates(entries: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    """`active` (not complete), `unpromoted` (complete, not promoted) or `all`."""
    if mode == "all":
        return entries
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


def render_list(entries: list[dict[str, Any]], mode: str, left_out: int = 0) -> str:
    title = {"all": "◆ Debates", "unpromoted": "◆ Unpromoted debates"}.get(mode, "◆ Active debates")
    lines = ["", f"  {title}", "  " + "─" * len(title)]
    if not entries:
        hint = "" if mode == "all" else " (pass --all to see every debate)"
        lines.append(f"  none{hint}")
    for e in entries:
        promoted = " [promoted]" if e.get("promoted_to_knowledge") else ""
        run = e.get("run")
        lines.append(f"  {e['id']}  {status_label(e):<22}  {e.get('topic')}{promoted}")
        lines.append(
            f"  {'':<16}  round {e.get('current_round')}/{e.get('rounds_planned')}  updated {e.get('updated_at')}"
        )
        if isinstance(run, dict) and run.get("line"):
            lines.append(f"  {'':<16}  {run['line']}")
    if left_out:
        debates = "debate" if left_out == 1 else "debates"
        lines += ["", f"  {left_out} eval {debates} left out (pass --evals to list them)"]
    return "\n".join(lines) + "\n"
