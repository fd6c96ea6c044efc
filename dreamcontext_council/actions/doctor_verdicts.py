"""`council doctor`: each round's verdict against the round entry that stands.

A hand-resolved merge can keep one side of verdicts.json and the other side of a report.md
(`git checkout --ours verdicts.json`, `--theirs report.md`). Checked here, per entry:

- no verdict in verdicts.json: restored whole (stance, conviction, headline, concession,
  time) from a side of the merge that holds it, read from git (actions/git_history.py:
  MERGE_HEAD while the merge is open, else the parents of the last merges), when it agrees
  with what the entry states and the entry states it all or that side holds this very
  entry; else restored from what the entry states (the option its Position names, its
  conviction there, its summary's first sentence as the headline), naming what could not
  be restored; else the persona named with the command that records it again;
- a verdict that contradicts the option or the conviction the entry's Position states (the
  verdict of the answer a kept side dropped): replaced the same way, from a side of the
  merge, else from the entry.
"""

from __future__ import annotations

from typing import NamedTuple

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.findings import Finding
from dreamcontext_council.actions.git_history import DebateHistory, Side
from dreamcontext_council.actions.live_state import refresh_live
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.live import now_iso
from dreamcontext_council.rules.debate import Debate
from dreamcontext_council.rules.entry_verdict import EntryVerdict, entry_verdict
from dreamcontext_council.rules.report import RoundEntry, parse_report
from dreamcontext_council.rules.verdicts import Verdict, parse_verdicts, resolve_stance

_NOT_RESTORED = "not restored: the verdict's own headline and any concession"


class Held(NamedTuple):
    """A verdict a side of the merge holds for an entry, with the option it names."""

    verdict: Verdict
    option: dict[str, str] | None  # the side's option for its stance
    side: Side


def verdict_findings(
    files: DebateFiles, debate: Debate, entries: dict[str, list[RoundEntry]], *, repair: bool
) -> list[Finding]:
    """A finding for each entry whose verdict is missing or contradicts it; repaired when
    asked and the entry or a side of the merge says what the verdict was."""
    verdicts = files.verdicts()
    keys = [o["key"] for o in verdicts.options or debate.options]
    history = DebateHistory(files.paths.folder)
    found = []
    for slug, mine in entries.items():
        for entry in sorted(mine, key=lambda e: e.round):
            recorded = verdicts.round(entry.round).get(slug)
            stated = entry_verdict(entry, keys)
            if recorded is not None and not _contradicts(recorded, stated):
                continue
            held = _held(history, slug, entry, stated, keys)
            if recorded is None:
                problem = f"{slug}'s round {entry.round} entry has no verdict in verdicts.json"
            else:
                problem = (
                    f"{slug}'s round {entry.round} verdict ({recorded.stance}, conviction "
                    f"{recorded.conviction}) contradicts the entry that stands, whose Position "
                    f"states {_stated(stated)}"
                )
            if held is not None:
                fix = f"verdict restored whole from {held.side.named}: {_whole(held.verdict)}"
            elif stated.whole:
                fix = (
                    f"verdict {'restored' if recorded is None else 'set'} from the entry: "
                    f"{stated.stance}, conviction {stated.conviction}, headline from its "
                    f"Executive Summary; {_NOT_RESTORED} (no side of a recent merge holds "
                    "the verdict of this entry)"
                )
            else:
                fix = _answer_again(files, debate, slug, entry.round, stated)
                found.append(Finding(files.id, problem, fix, repairable=False))
                continue
            repaired = repair and _replace(files, debate, slug, entry.round, recorded, held, stated)
            found.append(Finding(files.id, problem, fix, repairable=True, repaired=repaired))
    return found


def _contradicts(verdict: Verdict, stated: EntryVerdict) -> bool:
    """Whether the entry states an option or a conviction other than the verdict's."""
    return (
        stated.stance is not None and stated.stance.casefold() != verdict.stance.casefold()
    ) or (stated.conviction is not None and stated.conviction != verdict.conviction)


def _stated(stated: EntryVerdict) -> str:
    parts = []
    if stated.stance is not None:
        parts.append(f"option {stated.stance}")
    if stated.conviction is not None:
        parts.append(f"conviction {stated.conviction}")
    return ", ".join(parts)


def _whole(verdict: Verdict) -> str:
    kept = "its headline and concession" if verdict.concession else "its headline (no concession)"
    return f"{verdict.stance}, conviction {verdict.conviction}, {kept}"


def _held(
    history: DebateHistory, slug: str, entry: RoundEntry, stated: EntryVerdict, keys: list[str]
) -> Held | None:
    """The verdict a side of the merge recorded with this entry: one that contradicts
    nothing the entry states, where the entry states both option and conviction or the
    side holds the same entry."""
    for side in history.sides():
        text = history.text(side, "verdicts.json")
        if text is None:
            continue
        try:
            theirs = parse_verdicts(text)
        except CouncilError:
            continue
        verdict = theirs.round(entry.round).get(slug)
        if verdict is None:
            continue
        if _contradicts(verdict, stated):
            continue  # the verdict of another answer, or one at odds with this entry
        if not stated.whole and not _same_entry(history, side, slug, entry):
            continue  # the entry says too little to vouch for it, and the side holds another
        option = next((o for o in theirs.options if o["key"] == verdict.stance), None)
        if verdict.stance not in keys and option is None:
            continue  # an option this debate does not know and the side does not name
        return Held(verdict, option, side)
    return None


def _same_entry(history: DebateHistory, side: Side, slug: str, entry: RoundEntry) -> bool:
    text = history.text(side, f"{slug}/report.md")
    if text is None:
        return False
    try:
        theirs = parse_report(text)
    except CouncilError:
        return False
    return any(e.round == entry.round and e.body.strip() == entry.body.strip() for e in theirs)


def _answer_again(
    files: DebateFiles, debate: Debate, slug: str, number: int, stated: EntryVerdict
) -> str:
    missing = " and ".join(
        what
        for what, value in (
            ("the option it backs", stated.stance),
            ("a conviction", stated.conviction),
        )
        if value is None
    )
    if debate.status.phase == "complete":
        return (
            f"its Position does not state {missing}, and the debate is complete: restore "
            f"{files.relative(files.paths.verdicts)} from the branch that recorded it "
            "(`git show <branch>:<path>`), keeping every verdict both sides recorded"
        )
    stance = stated.stance or "<option>"
    return (
        f"its Position does not state {missing}: {slug} must give it again, "
        f"`dreamcontext council verdict {files.id} {slug} {number} --stance {stance} "
        '--conviction <0-100> --headline "<one line>"`'
    )


def _replace(
    files: DebateFiles,
    debate: Debate,
    slug: str,
    number: int,
    recorded: Verdict | None,
    held: Held | None,
    stated: EntryVerdict,
) -> bool:
    """Write the verdict `held` (else the one `stated`) in place of `recorded`, unless
    verdicts.json changed since it was examined."""
    with files.lock():
        verdicts = files.verdicts()
        if verdicts.round(number).get(slug) != recorded:
            return False  # recorded since it was examined
        if held is not None:
            verdict = held.verdict
            known = {o["key"] for o in verdicts.options or debate.options}
            if verdict.stance not in known and held.option is not None:
                if not verdicts.options:
                    verdicts.options = list(debate.options)
                verdicts.options.append(held.option)
        else:
            assert stated.stance is not None and stated.conviction is not None
            try:
                key, new_option = resolve_stance(stated.stance, debate.options, verdicts.options)
            except CouncilError:
                return False
            if new_option:
                verdicts.options.append(new_option)
            verdict = Verdict(key, stated.conviction, stated.headline, None, now_iso())
        if debate.options and not verdicts.options:
            verdicts.options = debate.options
        verdicts.rounds.setdefault(number, {})[slug] = verdict
        files.save_verdicts(verdicts)
    refresh_live(files.root, files.id, transition=False)
    return True
