"""How a run tells what went wrong: one line per distinct reason, and who did not answer.

Pure text: the engine passes in the reasons and the absences it read from the folder.
"""

from __future__ import annotations

from collections.abc import Mapping

ELLIPSIS = "…"
REASON_LIMIT = 160  # characters of one reason in a summary line


def shorten_at_word(text: str, limit: int = REASON_LIMIT) -> str:
    """`text` on one line, cut at the last word boundary that fits `limit`, ending in `…`.

    A single word longer than the limit (a path, a URL) is the only thing cut inside.
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    room = flat[: limit - len(ELLIPSIS) + 1]
    cut = room.rfind(" ")
    kept = room[:cut] if cut > 0 else room[: limit - len(ELLIPSIS)]
    return kept.rstrip(" ,;:.-—(") + ELLIPSIS


def grouped_reasons(failed: Mapping[str, str], limit: int = REASON_LIMIT) -> list[str]:
    """One line per distinct reason, in order of first failure.

    `4 personas: command 'x' exited 3`, or `contrarian: …` for a reason only one had.
    """
    by_reason: dict[str, list[str]] = {}
    for slug, reason in failed.items():
        by_reason.setdefault(shorten_at_word(reason, limit), []).append(slug)
    lines = []
    for reason, slugs in by_reason.items():
        who = slugs[0] if len(slugs) == 1 else f"{len(slugs)} personas"
        lines.append(f"{who}: {reason}")
    return lines


def _rounds(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"round {numbers[0]}"
    return "rounds " + ", ".join(str(n) for n in numbers[:-1]) + f" and {numbers[-1]}"


def absence_lines(
    absences: Mapping[str, list[int]], reasons: Mapping[tuple[str, int], str]
) -> list[str]:
    """`contrarian did not answer round 2 (command 'x' exited 3)`, one line per persona."""
    lines = []
    for slug, numbers in absences.items():
        why = [
            shorten_at_word(reasons[(slug, n)]).rstrip(".") for n in numbers if (slug, n) in reasons
        ]
        distinct = list(dict.fromkeys(why))
        lines.append(
            f"{slug} did not answer {_rounds(numbers)}"
            + (f" ({'; '.join(distinct)})" if distinct else "")
        )
    return lines


def short_council_sentence(absences: Mapping[str, list[int]]) -> str | None:
    """For the report's Verdict: who was missing from which rounds, or None when nobody."""
    if not absences:
        return None
    parts = [f"{slug} did not answer {_rounds(numbers)}" for slug, numbers in absences.items()]
    return (
        "**The council was short:** "
        + "; ".join(parts)
        + ". The verdict stands on the answers that were given."
    )
