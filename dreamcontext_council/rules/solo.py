"""baseline.md: one model's solo answer to the question, and how it compares with the council.

The file is ours (the Node tool has none and ignores it): frontmatter `debate_id`, `model`,
`stance`, `conviction`, `headline`, `answered_at`, then the answer's sections. The
comparison is the engine's, never the model's: the same stance or not, and the claims of
the ledger the solo answer lacks. A claim counts as in the solo answer when at least
`HELD_SHARE` of its content words (four letters or more) appear in it.

Everything here is pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dreamcontext_council.errors import FormatError, UsageError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.rules.verdicts import parse_conviction

HELD_SHARE = 0.6
_WORD = re.compile(r"[^\W_]{4,}")


@dataclass(frozen=True)
class SoloAnswer:
    """The solo answer as baseline.md holds it."""

    stance: str
    conviction: int
    headline: str
    model: str
    body: str


def render_solo(
    debate_id: str, model: str, stance: str, conviction: int, headline: str, at: str, body: str
) -> str:
    meta = {
        "debate_id": debate_id,
        "model": model,
        "stance": stance,
        "conviction": conviction,
        "headline": headline,
        "answered_at": at,
    }
    return frontmatter_io.render(meta, body.strip("\n") + "\n")


def parse_solo(text: str, where: str = "baseline.md") -> SoloAnswer:
    """Read baseline.md; FormatError names what is wrong."""
    meta, body = frontmatter_io.parse(text, where)
    stance = meta.get("stance")
    if not isinstance(stance, str) or not stance.strip():
        raise FormatError(f"{where} has no stance in its frontmatter; fix or delete it.")
    try:
        conviction = parse_conviction(str(meta.get("conviction", "")))
    except UsageError:
        raise FormatError(
            f"{where} has no conviction from 0 to 100 in its frontmatter; fix or delete it."
        ) from None
    return SoloAnswer(
        stance.strip(),
        conviction,
        " ".join(str(meta.get("headline") or "").split()),
        str(meta.get("model") or ""),
        body,
    )


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


@dataclass(frozen=True)
class SoloComparison:
    """Solo answer vs council verdict."""

    solo_stance: str
    council_stance: str | None
    lacking: list[str] = field(default_factory=list)
    """The ledger's claims the solo answer does not hold."""
    claims: int = 0
    """How many claims the ledger holds (0: no ledger yet)."""

    @property
    def same(self) -> bool | None:
        return None if self.council_stance is None else self.solo_stance == self.council_stance

    def line(self) -> str:
        if self.council_stance is None:
            return f"solo answer {self.solo_stance}; no council verdict yet"
        verdict = "same stance" if self.same else "different stance"
        text = f"solo answer {self.solo_stance} · council {self.council_stance} · {verdict}"
        if self.claims:
            text += f" · the council adds {len(self.lacking)} of {self.claims} ledger claims"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "solo_stance": self.solo_stance,
            "council_stance": self.council_stance,
            "same": self.same,
            "claims": self.claims,
            "lacking": self.lacking,
        }


def compare(
    solo: SoloAnswer, council_stance: str | None, claims: Iterable[Mapping[str, Any]] | None
) -> SoloComparison:
    """The comparison; `claims` are the ledger's kept claims (None: no ledger)."""
    held = _words(solo.body + " " + solo.headline)
    texts = [str(c.get("claim", "")) for c in claims or []]
    lacking = []
    for text in texts:
        words = _words(text)
        if words and len(words & held) / len(words) < HELD_SHARE:
            lacking.append(text)
    return SoloComparison(solo.stance, council_stance, lacking, len(texts))
