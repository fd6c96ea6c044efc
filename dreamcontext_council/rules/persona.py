"""context-and-persona.md: the persona text, injected cross-context panels and directives."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from dreamcontext_council.errors import FormatError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.rules.debate import MAX_ROUNDS, bounded_round
from dreamcontext_council.rules.markdown import find_section, normalize_title, sections

# Section titles a run adds; each is compiled on its first use (re keeps it), so reading
# a persona's file compiles none.
_PANEL = r"round (\d+) cross context loaded"
_DIRECTIVES = r"round (\d+) directives"
_CRITIQUES = r"round (\d+) critiques received"


@dataclass
class PersonaContext:
    """A persona's context file in memory."""

    name: str
    model: str
    aspects: list[str]
    round_entries: int
    body: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def persona_text(self) -> str:
        found = find_section(self.body, 2, "Persona")
        return found.body if found else ""

    def panel_rounds(self) -> set[int]:
        """Rounds whose cross-context panel is already injected."""
        found = (re.fullmatch(_PANEL, normalize_title(s.title)) for s in sections(self.body, 2))
        return {n for m in found if m and (n := bounded_round(m.group(1))) is not None}

    def critique_rounds(self) -> set[int]:
        """Rounds whose critiques received are already recorded (by `council run`)."""
        found = (re.fullmatch(_CRITIQUES, normalize_title(s.title)) for s in sections(self.body, 2))
        return {n for m in found if m and (n := bounded_round(m.group(1))) is not None}

    def panel(self, number: int) -> str | None:
        """The injected panel of round `number`, if any."""
        for s in sections(self.body, 2):
            m = re.fullmatch(_PANEL, normalize_title(s.title))
            if m and bounded_round(m.group(1)) == number:
                return s.body
        return None

    def directives(self, number: int) -> list[str]:
        """Every queued directive for round `number`, across all its Directives sections."""
        found: list[str] = []
        for s in sections(self.body, 2):
            m = re.fullmatch(_DIRECTIVES, normalize_title(s.title))
            if m and bounded_round(m.group(1)) == number:
                found += [line[2:].strip() for line in s.body.split("\n") if line.startswith("- ")]
        return found

    def append_section(self, heading: str, text: str) -> None:
        self.body = f"{self.body.rstrip()}\n\n## {heading}\n\n{text.strip(chr(10))}\n"

    def add_directive(self, number: int, directive: str) -> bool:
        """Queue a directive for round `number`; False when it is already queued."""
        if directive in self.directives(number):
            return False
        lines = self.body.split("\n")
        existing = [
            s
            for s in sections(self.body, 2)
            if (m := re.fullmatch(_DIRECTIVES, normalize_title(s.title)))
            and bounded_round(m.group(1)) == number
        ]
        if not existing:
            self.append_section(f"Round {number} — Directives", f"- {directive}")
            return True
        last = existing[-1].end - 1
        while last > existing[-1].start and not lines[last].strip():
            last -= 1
        lines[last + 1 : last + 1] = [f"- {directive}"]
        self.body = "\n".join(lines)
        return True


def directive_rounds(body: str) -> list[int]:
    """The rounds a context body has Directives sections for, in the order they appear."""
    found = (re.fullmatch(_DIRECTIVES, normalize_title(s.title)) for s in sections(body, 2))
    rounds = (bounded_round(m.group(1)) for m in found if m)
    return list(dict.fromkeys(n for n in rounds if n is not None))


def parse_context(text: str, where: str = "context-and-persona.md") -> PersonaContext:
    """Parse a persona's context file."""
    meta, body = frontmatter_io.parse(text, where)
    aspects = meta.get("aspects") or []
    if isinstance(aspects, str):
        aspects = [a.strip() for a in aspects.split(",") if a.strip()]
    if not isinstance(aspects, list):
        raise FormatError(f"{where}: 'aspects' must be a list, not {aspects!r}.")
    entries = meta.get("round_entries") or 0
    if isinstance(entries, str) and entries.isascii() and entries.strip().isdigit():
        entries = int(entries)
    if isinstance(entries, bool) or not isinstance(entries, int):
        raise FormatError(f"{where}: 'round_entries' must be a whole number, not {entries!r}.")
    if not 0 <= entries <= MAX_ROUNDS:
        raise FormatError(
            f"{where}: 'round_entries' is {entries}; it counts the report's entries, from 0 to "
            f"{MAX_ROUNDS}. Fix it in context-and-persona.md."
        )
    known = {"name", "model", "aspects", "round_entries"}
    return PersonaContext(
        name=str(meta.get("name", "")),
        model=str(meta.get("model") or ""),
        aspects=[str(a) for a in aspects],
        round_entries=entries,
        body=body,
        extra={k: v for k, v in meta.items() if k not in known},
    )


def render_context(context: PersonaContext) -> str:
    """context-and-persona.md text, known keys first then any others as read."""
    meta: dict[str, Any] = {
        "name": context.name,
        "model": context.model,
        "aspects": context.aspects,
        "round_entries": context.round_entries,
        **context.extra,
    }
    return frontmatter_io.render(meta, context.body)
