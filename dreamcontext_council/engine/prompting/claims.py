"""The claims ledger: the claims a verdict rests on, labelled by the engine, not the model.

The synthesizer ends its report with a fenced block whose info string is ``claims``,
holding a JSON array; each item names a claim, the persona and round that proposed
it, the personas that supported and challenged it, whether the proposer retracted
it, and optionally the research notes that back it (``"research": ["<persona>/<note>"]``;
a bare ``true`` is read as "a note, unnamed") and the attached files that back it
(``"attachments": ["design.md"]``). The engine parses that block out of the report,
keeps only the notes and attachments that exist in the debate (``resolve_research``,
``resolve_attachments``), labels every claim by fixed rules, states the basis of every
VERIFIED label (``basis``: research, attachment, or agreement of N personas, said to be
within one model family when it is), flags personas that dissent on too many claims,
and renders claims.json (the ``## Claims ledger`` section: claims_section.py).

Everything here is pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from dreamcontext_council.engine.prompting.compression import find_fenced_blocks
from dreamcontext_council.errors import FormatError
from dreamcontext_council.rules.dissent import DissentFlag

DISSENT_THRESHOLD = 0.4
UNKNOWN_FAMILY = "?"

_REQUIRED = ("claim", "proposer", "round", "supporters", "challengers", "retracted")
_OPTIONAL = ("research", "attachments")
_WHITESPACE_RE = re.compile(r"\s+")


class ClaimLabel(StrEnum):
    """What the engine concluded about a claim."""

    VERIFIED = "VERIFIED"
    DISPUTED = "DISPUTED"
    UNVERIFIED = "UNVERIFIED"
    DROPPED = "DROPPED"


@dataclass(frozen=True)
class Claim:
    """One claim as the synthesizer reported it."""

    claim: str
    proposer: str
    """Slug of the persona that proposed it."""
    round: int
    """Round in which it was proposed."""
    supporters: tuple[str, ...] = ()
    """Slugs of personas that supported it, without duplicates; may include the proposer."""
    challengers: tuple[str, ...] = ()
    """Slugs of personas that challenged it, without duplicates."""
    retracted: bool = False
    """The proposer withdrew it."""
    research: bool = False
    """A research note backs it."""
    notes: tuple[str, ...] = ()
    """The research notes cited for it, as ``<persona>/<note slug>``."""
    attachments: tuple[str, ...] = ()
    """The attached files cited for it, by name."""


@dataclass(frozen=True)
class LabeledClaim:
    """A claim with the label the engine gave it."""

    claim: Claim
    label: ClaimLabel

    @property
    def support(self) -> tuple[str, ...]:
        """Every persona that supports the claim: the proposer first, then the others."""
        return _distinct((self.claim.proposer, *self.claim.supporters))

    @property
    def dissenters(self) -> tuple[str, ...]:
        """The personas that challenged the claim."""
        return self.claim.challengers


def _distinct(slugs: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(slugs))


def _claims_block(text: str) -> tuple[int, int, str] | None:
    """Start, end and body of the one fenced block whose info string is ``claims``."""
    blocks = [
        block
        for block in find_fenced_blocks(text)
        if block.info.split(maxsplit=1)[:1] == ["claims"]
    ]
    if len(blocks) > 1:
        raise FormatError(
            f"the report has {len(blocks)} claims blocks; end it with exactly one "
            "```claims block holding a JSON array"
        )
    if not blocks:
        return None
    return blocks[0].start, blocks[0].end, blocks[0].body


def parse_claims_block(
    text: str, roster: Sequence[str] | None = None
) -> tuple[str, list[Claim] | None]:
    """Take the ```` ```claims ```` block out of a synthesizer's report and parse it.

    Returns the report without the block (trailing blank lines trimmed, ending in
    one newline) and the claims in the order given, each claim's text on one line
    (whitespace collapsed) and duplicate slugs removed. When the report has no claims
    block, returns the text unchanged and ``None``, so the caller can ask for a
    repair. With a ``roster``, every persona slug must be in it (compared without
    regard to case; the roster's spelling is kept).

    Raises ``FormatError`` naming the item and field for anything malformed: more
    than one claims block, JSON that does not parse or is not an array of objects,
    a missing, unknown or mistyped field, an unknown persona, or a persona that both
    supports and challenges a claim.
    """
    found = _claims_block(text)
    if found is None:
        return text, None
    start, end, body = found
    try:
        data = json.loads(body)
    except json.JSONDecodeError as error:
        raise FormatError(
            f"the claims block is not valid JSON: {error.msg} "
            f"(line {error.lineno}, column {error.colno})"
        ) from None
    if not isinstance(data, list):
        raise FormatError(f"the claims block must hold a JSON array, not {_json_type(data)}")
    known = None if roster is None else {slug.lower(): slug for slug in roster}
    claims = [_parse_claim(item, number, known) for number, item in enumerate(data, start=1)]
    remaining = (text[:start] + text[end:]).rstrip()
    return (remaining + "\n" if remaining else ""), claims


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "true/false"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)


def _parse_claim(item: object, number: int, known: dict[str, str] | None) -> Claim:
    where = f"claim {number}"
    if not isinstance(item, dict):
        raise FormatError(f"{where}: must be a JSON object, not {_json_type(item)}")
    missing = [name for name in _REQUIRED if name not in item]
    if missing:
        raise FormatError(f"{where}: missing field {', '.join(repr(m) for m in missing)}")
    unknown = sorted(set(item) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        allowed = ", ".join(repr(name) for name in (*_REQUIRED, *_OPTIONAL))
        raise FormatError(
            f"{where}: unknown field {', '.join(repr(u) for u in unknown)} (allowed: {allowed})"
        )

    text = item["claim"]
    if not isinstance(text, str) or not text.strip():
        raise FormatError(f"{where}: field 'claim' must be a non-empty string")
    rnd = item["round"]
    if isinstance(rnd, bool) or not isinstance(rnd, int) or rnd < 1:
        raise FormatError(
            f"{where}: field 'round' must be a whole number of at least 1, got {json.dumps(rnd)}"
        )
    if not isinstance(item["retracted"], bool):
        raise FormatError(
            f"{where}: field 'retracted' must be true or false, got {json.dumps(item['retracted'])}"
        )
    research, notes = _research(item.get("research", False), where)
    attachments = _attachments(item.get("attachments", []), where)

    proposer = _slug(item["proposer"], f"{where}: field 'proposer'", known)
    supporters = _slugs(item["supporters"], f"{where}: field 'supporters'", known)
    challengers = _slugs(item["challengers"], f"{where}: field 'challengers'", known)
    if proposer in challengers:
        raise FormatError(
            f"{where}: {proposer!r} is both the proposer and a challenger; "
            "mark the claim retracted instead"
        )
    both = [slug for slug in supporters if slug in challengers]
    if both:
        raise FormatError(f"{where}: {both[0]!r} both supports and challenges the claim")
    return Claim(
        claim=_WHITESPACE_RE.sub(" ", text).strip(),
        proposer=proposer,
        round=rnd,
        supporters=supporters,
        challengers=challengers,
        retracted=item["retracted"],
        research=research,
        notes=notes,
        attachments=attachments,
    )


def _attachments(value: object, where: str) -> tuple[str, ...]:
    if isinstance(value, list) and all(isinstance(n, str) and n.strip() for n in value):
        return _distinct([n.strip() for n in value])
    raise FormatError(
        f"{where}: field 'attachments' must be an array of attached file names "
        f'like "design.md", got {json.dumps(value)}'
    )


def _research(value: object, where: str) -> tuple[bool, tuple[str, ...]]:
    """``research`` as (backed, cited notes): false, true, or an array of note ids."""
    if isinstance(value, bool):
        return value, ()
    if isinstance(value, list) and all(isinstance(n, str) and n.strip() for n in value):
        notes = _distinct([n.strip() for n in value])
        return bool(notes), notes
    raise FormatError(
        f"{where}: field 'research' must be false, true or an array of research note ids "
        f'like "risk-auditor/pg-write-throughput", got {json.dumps(value)}'
    )


def resolve_research(claims: Sequence[Claim], known_notes: Iterable[str]) -> list[Claim]:
    """The claims with only the research notes that exist; ``research`` true only when one does.

    The model names the notes; the engine checks them against the debate's
    ``researches/`` indexes (ids ``<persona>/<slug>``, compared without regard to
    case). A claim that names no existing note, or says only ``true``, is not backed
    by research.
    """
    known = {note.lower(): note for note in known_notes}
    resolved = []
    for claim in claims:
        notes = tuple(dict.fromkeys(known[n.lower()] for n in claim.notes if n.lower() in known))
        resolved.append(replace(claim, notes=notes, research=bool(notes)))
    return resolved


def resolve_attachments(claims: Sequence[Claim], attached: Iterable[str]) -> list[Claim]:
    """The claims with only the attachments the debate has (names compared without case)."""
    known = {name.lower(): name for name in attached}
    return [
        replace(
            claim,
            attachments=tuple(
                dict.fromkeys(known[n.lower()] for n in claim.attachments if n.lower() in known)
            ),
        )
        for claim in claims
    ]


def _slug(value: object, where: str, known: dict[str, str] | None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise FormatError(f"{where} must be a persona slug, got {json.dumps(value)}")
    slug = value.strip()
    if known is None:
        return slug
    if slug.lower() not in known:
        roster = ", ".join(known.values())
        raise FormatError(f"{where}: {slug!r} is not a persona of this debate ({roster})")
    return known[slug.lower()]


def _slugs(value: object, where: str, known: dict[str, str] | None) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise FormatError(f"{where} must be an array of persona slugs, not {_json_type(value)}")
    return _distinct([_slug(entry, f"{where} item {n}", known) for n, entry in enumerate(value, 1)])


def label_claim(claim: Claim) -> ClaimLabel:
    """The label for one claim.

    Retracted → DROPPED; challenged by at least one persona → DISPUTED; supported
    by two or more distinct personas (the proposer counts as one) or backed by a
    research note or an attachment → VERIFIED; otherwise UNVERIFIED.
    """
    if claim.retracted:
        return ClaimLabel.DROPPED
    if claim.challengers:
        return ClaimLabel.DISPUTED
    if len(_distinct((claim.proposer, *claim.supporters))) >= 2 or claim.research:
        return ClaimLabel.VERIFIED
    if claim.attachments:
        return ClaimLabel.VERIFIED
    return ClaimLabel.UNVERIFIED


def label_claims(claims: Sequence[Claim]) -> list[LabeledClaim]:
    """Label every claim (``label_claim``), keeping their order; dropped ones included."""
    return [LabeledClaim(claim, label_claim(claim)) for claim in claims]


def kept_claims(labeled: Sequence[LabeledClaim]) -> list[LabeledClaim]:
    return [item for item in labeled if item.label is not ClaimLabel.DROPPED]


def dropped_claims(labeled: Sequence[LabeledClaim]) -> list[LabeledClaim]:
    return [item for item in labeled if item.label is ClaimLabel.DROPPED]


def dissent_flags(
    labeled: Sequence[LabeledClaim],
    roster: Sequence[str],
    threshold: float = DISSENT_THRESHOLD,
) -> list[DissentFlag]:
    """Personas that challenge more than ``threshold`` of the claims that were not dropped.

    Exactly at the threshold raises no flag. Personas come in roster order, then any
    challenger missing from the roster in the order first seen. No claims, no flags.
    """
    kept = kept_claims(labeled)
    if not kept:
        return []
    extra = [slug for item in kept for slug in item.dissenters if slug not in roster]
    flags = []
    for persona in _distinct([*roster, *extra]):
        challenged = sum(persona in item.dissenters for item in kept)
        share = challenged / len(kept)
        if share > threshold:
            flags.append(DissentFlag(persona, share, challenged, len(kept)))
    return flags


def basis(item: LabeledClaim, families: Mapping[str, str] | None = None) -> str:
    """What a VERIFIED label rests on: research notes, attachments, agreement of N personas
    (said to be within one model family when every supporter's model is of one); else empty.
    `families`: persona slug → model family."""
    if item.label is not ClaimLabel.VERIFIED:
        return ""
    claim = item.claim
    parts = []
    if claim.notes:
        parts.append(f"research: {', '.join(claim.notes)}")
    elif claim.research:
        parts.append("research")
    if claim.attachments:
        parts.append(f"attachment: {', '.join(claim.attachments)}")
    support = item.support
    if len(support) >= 2:
        agreement = f"agreement of {len(support)} personas"
        found = {(families or {}).get(slug, UNKNOWN_FAMILY) for slug in support}
        if len(found) == 1 and not found & {UNKNOWN_FAMILY, "unspecified"}:
            agreement += f", all of one model family ({found.pop()})"
        parts.append(agreement)
    return "; ".join(parts)


def _claim_json(
    item: LabeledClaim, claim_id: str, families: Mapping[str, str] | None = None
) -> dict[str, Any]:
    claim = item.claim
    return {
        "id": claim_id,
        "claim": claim.claim,
        "proposer": claim.proposer,
        "round": claim.round,
        "supporters": [slug for slug in claim.supporters if slug != claim.proposer],
        "challengers": list(claim.challengers),
        "label": item.label.value,
        "research": claim.research,
        "notes": list(claim.notes),
        "attachments": list(claim.attachments),
        "basis": basis(item, families),
    }


def claims_to_json(
    labeled: Sequence[LabeledClaim],
    flags: Sequence[DissentFlag],
    families: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The content of claims.json, keys in a stable order.

    ``claims`` holds the claims that were not dropped, numbered ``C1``, ``C2``, ...
    in the order given; ``dropped`` the retracted ones, numbered ``D1``, ...;
    ``supporters`` lists the supporters other than the proposer. ``flags`` holds the
    dissent flags with their share rounded to 4 decimals.
    """
    return {
        "claims": [
            _claim_json(item, f"C{n}", families) for n, item in enumerate(kept_claims(labeled), 1)
        ],
        "dropped": [
            _claim_json(item, f"D{n}", families)
            for n, item in enumerate(dropped_claims(labeled), 1)
        ],
        "flags": [
            {
                "persona": flag.persona,
                "share": round(flag.share, 4),
                "claims_challenged": flag.claims_challenged,
                "total": flag.total,
            }
            for flag in flags
        ],
    }
