"""Between rounds: facts for everyone, directives for one persona."""

from __future__ import annotations

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.live_state import refresh_live
from dreamcontext_council.errors import StateError, UsageError
from dreamcontext_council.folder.live import utc_second
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.debate import append_fact
from dreamcontext_council.rules.logged_writes import directive_entry


def _clean(text: str, what: str) -> str:
    cleaned = " ".join(text.split())
    if not cleaned or "\x00" in text:
        raise UsageError(f"The {what} is empty; pass the text after the id.")
    return cleaned


def inject_fact(root: Root, debate_id: str, fact: str) -> bool:
    """Append `- **[Interlude R<n>]** fact` to Constraints & Known Facts; False if already there."""
    fact = _clean(fact, "fact")
    files = DebateFiles(root, debate_id)
    with files.lock():
        debate = files.debate()
        if debate.status.phase == "complete":
            raise StateError(f"Cannot inject into {debate_id}: it is complete.")
        bullet = f"- **[Interlude R{debate.current_round}]** {fact}"
        if bullet in debate.body.split("\n"):
            return False
        debate.body = append_fact(debate.body, bullet)
        files.save_debate(debate)
    refresh_live(root, debate_id)
    return True


def queue_directive(root: Root, debate_id: str, slug: str, directive: str) -> tuple[int, bool]:
    """Queue a directive for the persona's next round; returns (round, newly queued)."""
    directive = _clean(directive, "directive")
    files = DebateFiles(root, debate_id)
    with files.lock():
        debate = files.debate()
        files.require_persona(debate, slug)
        if debate.status.phase in ("synthesizing", "complete"):
            raise StateError(f"Cannot queue a directive: {debate_id} is {debate.status}.")
        number = debate.current_round + 1
        context = files.context(slug)
        added = context.add_directive(number, directive)
        if added:
            files.save_context(slug, context)
            # Logged too: a merge that keeps one side of the context file can drop it.
            files.append_log(*directive_entry(slug, number, directive, utc_second()))
    return number, added
