"""The ``## Claims ledger`` section of final-report.md, rendered from the labelled claims.

Pure: a markdown table of the claims kept (each VERIFIED label with its basis), the
dropped claims after it, then one line per dissent flag (templates/files/claims-ledger.md.j2).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from dreamcontext_council.engine.prompting.claims import (
    Claim,
    LabeledClaim,
    basis,
    dropped_claims,
    kept_claims,
)
from dreamcontext_council.resources import render
from dreamcontext_council.rules.dissent import DissentFlag

LEDGER_TEMPLATE = "files/claims-ledger.md.j2"
_WHITESPACE_RE = re.compile(r"\s+")
_PIPE_RE = re.compile(r"(\\*)\|")


def _cell(text: str) -> str:
    """Text safe inside one markdown table cell: one line, pipes escaped."""
    line = _WHITESPACE_RE.sub(" ", text).strip()
    # Backslashes just before a pipe are doubled too, or they would escape each other.
    return _PIPE_RE.sub(lambda match: match.group(1) * 2 + "\\|", line)


def _citation(claim: Claim) -> str:
    return f"{claim.proposer} R{claim.round}"


def _status(item: LabeledClaim, families: Mapping[str, str] | None) -> str:
    """The label; a VERIFIED one with its basis (`basis`)."""
    found = basis(item, families)
    return f"{item.label.value} ({found})" if found else item.label.value


def render_claims_ledger(
    labeled: Sequence[LabeledClaim],
    flags: Sequence[DissentFlag],
    families: Mapping[str, str] | None = None,
) -> str:
    """The ``## Claims ledger`` section of final-report.md, heading included.

    A table ``| # | Claim | Status | Proposed by | Challenged by |`` of the claims
    that were not dropped (ids as in ``claims_to_json``, proposers cited as
    ``slug R1``), the dropped claims listed after it, then one line per dissent flag.
    """
    rows = [
        {
            "id": f"C{n}",
            "claim": _cell(item.claim.claim),
            "status": _cell(_status(item, families)),
            "proposed_by": _cell(_citation(item.claim)),
            "challenged_by": _cell(", ".join(item.dissenters)) or "—",
        }
        for n, item in enumerate(kept_claims(labeled), 1)
    ]
    dropped = [
        {"id": f"D{n}", "claim": _cell(item.claim.claim), "proposed_by": _citation(item.claim)}
        for n, item in enumerate(dropped_claims(labeled), 1)
    ]
    return render(
        LEDGER_TEMPLATE,
        rows=rows,
        dropped=dropped,
        flags=[_cell(flag.message) for flag in flags],
    )
