"""Big roots for the dashboard's scale tests: a long debate held through the library, and a
root of many debates copied from the reference debate under new ids."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from debate_story import REFERENCE, REFERENCE_ID

from dreamcontext_council import (
    Root,
    append_report,
    end_round,
    new_debate,
    record_verdict,
    start_round,
)
from dreamcontext_council.folder.storage import atomic_write_json
from dreamcontext_council.rules.roster import PersonaSpec

OPTIONS = [{"key": "A", "label": "Migrate now"}, {"key": "B", "label": "Stay on Redis"}]


def _entry(slug: str, number: int, peer: str, size: int) -> str:
    paragraph = (
        f"The write path is the risk in round {number}; {peer} R1 argued the pool limits, and "
        "a staged migration with a dual-write window keeps the change reversible. "
    )
    reasoning = "\n\n".join(
        f"- Point {i}: {paragraph}" for i in range(max(1, size // (len(paragraph) + 16)))
    )
    return (
        "### Executive Summary\n"
        f"{slug} favours option A in round {number}: the write path is the risk.\n\n"
        "### Position\nOption A, with a rollback plan.\n\n"
        f"### Reasoning\n{reasoning}\n\n"
        f"### Reactions to peers\n**{peer}**: the pool limits hold; pgbouncer answers them.\n\n"
        "### Open questions\n- Who owns the runbook?\n"
    )


def long_debate(
    root: Root, *, personas: int = 10, rounds: int = 4, entry_bytes: int = 20_000
) -> str:
    """A debate of `personas` × `rounds` entries of about `entry_bytes`, every verdict in."""
    slugs = [f"persona-{n:02d}" for n in range(personas)]
    specs = [PersonaSpec(slug, f"You are {slug}.") for slug in slugs]
    debate_id = new_debate(
        root, "Migrate the session store?", rounds=rounds, options=OPTIONS, personas=specs
    ).id
    for number in range(1, rounds + 1):
        start_round(root, debate_id, number)
        for i, slug in enumerate(slugs):
            peer = slugs[(i + 1) % len(slugs)]
            record_verdict(
                root,
                debate_id,
                slug,
                number,
                stance="AB"[i % 2],
                conviction=50 + i,
                headline=f"{slug} holds in round {number}",
            )
            append_report(
                root, debate_id, slug, _entry(slug, number, peer, entry_bytes), number=number
            )
        end_round(root, debate_id, number)
    return debate_id


def many_debates(base: Path, count: int) -> tuple[Root, list[str]]:
    """A root of `count` copies of the reference debate; the ids, newest first."""
    root = Root(base / "_dream_context")
    source = REFERENCE / "_dream_context" / "council" / REFERENCE_ID
    template = json.loads((REFERENCE / "_dream_context" / "council" / "index.json").read_text())[0]
    root.council.mkdir(parents=True)
    ids = []
    for n in range(count):
        debate_id = f"council_b{n:07d}"
        folder = root.council / debate_id
        shutil.copytree(source, folder)
        debate_md = folder / "debate.md"
        topic = f"{template['topic']} (copy {n})"
        text = debate_md.read_text().replace(REFERENCE_ID, debate_id)
        debate_md.write_text(text.replace(f"topic: {template['topic']}\n", f"topic: {topic}\n"))
        ids.append(debate_id)
    # The index says what each debate.md says (debate.md wins where they differ).
    entries = [
        template | {"id": debate_id, "topic": f"{template['topic']} (copy {n})"}
        for n, debate_id in enumerate(ids)
    ]
    atomic_write_json(root.index, entries, within=root.path)
    return root, ids
