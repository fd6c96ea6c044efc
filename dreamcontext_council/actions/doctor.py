"""`council doctor`: find, and repair, what a hand-resolved git merge left behind.

Repaired (the files that hold the record win over the files that sum it up):
- index.json that does not list the folders as they are (conflict markers, a side lost);
- a persona's `round_entries` that does not count its report's entries;
- a debate.md status (and `rounds_planned`) behind the state its round log records;
- verdicts and round-log lines a kept side dropped, from the round entries
  (actions/doctor_records.py, which also reports lost usage lines and doubled entries);
- reviews.json from the round-2 entries, and panels and directives a context file lost
  that round-log.md records (actions/doctor_logged.py, which also names facts a complete
  debate's final report never weighed).

Only reported, with the command that fixes it: merge drivers this clone registered whose
program is gone or that another version registered (see actions/git_setup.py).

Only reported, for a person to resolve: merge conflict markers left in a debate's files
(with the git commands that resolve them: the drivers merge the shared files again, a
persona's file keeps one side), and files that no longer parse. Nothing is repaired in a
debate that has either.
"""

from __future__ import annotations

import os
from pathlib import Path

from dreamcontext_council.actions.closing import completion_refusal, synthesis_refusal
from dreamcontext_council.actions.doctor_logged import logged_findings
from dreamcontext_council.actions.doctor_records import record_findings
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.findings import Finding
from dreamcontext_council.actions.git_setup import driver_problems
from dreamcontext_council.actions.index import has_conflict_markers, index_problem, rebuild_index
from dreamcontext_council.actions.live_state import refresh_live
from dreamcontext_council.actions.submissions import recount_entries
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.debate import Debate
from dreamcontext_council.rules.logged_state import logged_state, rank, status_behind

# The text files of a debate a merge can leave conflict markers in (reports are per persona).
_MERGED_FILES = ("debate.md", "round-log.md", "verdicts.json", "usage.jsonl", "reviews.json")
_PERSONA_FILES = ("context-and-persona.md", "report.md")


def examine(
    root: Root, debate_ids: list[str] | None = None, *, repair: bool = False
) -> list[Finding]:
    """Every finding for the named debates (all when None), repaired when `repair` is set."""
    # Checked first: repairing a debate.md rewrites the index, which would hide its state.
    problem = index_problem(root)
    findings: list[Finding] = []
    if problem is not None:
        findings.append(Finding(None, problem, "rebuilt from the debate folders", True))
    findings += [
        Finding(None, p, fix, False, where="git config") for p, fix in driver_problems(root)
    ]
    ids = debate_ids if debate_ids is not None else _debate_ids(root)
    for debate_id in ids:
        findings += _examine_debate(root, debate_id, repair=repair)
    if problem is not None and repair:
        rebuild_index(root)  # last, from the debate.md files as repaired
        findings[0] = Finding(None, problem, findings[0].fix, True, repaired=True)
    return findings


def _debate_ids(root: Root) -> list[str]:
    if not root.council.is_dir():
        return []
    with os.scandir(root.council) as scan:
        return sorted(
            item.name
            for item in scan
            if item.name.startswith("council_")
            and item.is_dir()
            and os.path.isfile(os.path.join(item.path, "debate.md"))
        )


def _examine_debate(root: Root, debate_id: str, *, repair: bool) -> list[Finding]:
    files = DebateFiles(root, debate_id)
    marked = _conflicted_files(files)
    if marked:
        return _conflict_findings(files, marked)
    try:
        debate = files.debate()
        contexts = {slug: files.context(slug).round_entries for slug in _seated(files, debate)}
        counts = {slug: len({e.round for e in files.entries(slug)}) for slug in contexts}
        log = files.log()
        files.verdicts()
    except (CouncilError, OSError, UnicodeDecodeError) as exc:
        return [Finding(debate_id, f"a file does not parse ({exc})", "fix it by hand", False)]
    findings = record_findings(files, debate, list(contexts), repair=repair)
    findings += logged_findings(files, debate, list(contexts), repair=repair)
    for slug, recorded in contexts.items():
        if recorded != counts[slug]:
            found = Finding(
                debate_id,
                f"{slug} has round_entries {recorded} but {counts[slug]} round entries",
                "round_entries set to the report's count",
                repairable=True,
            )
            if repair:
                recount_entries(root, debate_id, slug)
                found = Finding(debate_id, found.problem, found.fix, True, repaired=True)
            findings.append(found)
    behind = status_behind(debate.status, log)
    planned = logged_state(log).rounds_planned
    if behind is not None or planned > debate.rounds_planned:
        shown = str(behind) if behind is not None else str(debate.status)
        problem = (
            f"status is {debate.status} but round-log.md records {shown}"
            if behind is not None
            else f"rounds_planned is {debate.rounds_planned} but round-log.md records {planned}"
        )
        refusal = _refusal(files, debate, log)
        if refusal is not None:
            fix = f"left as it is, as the commands would: {refusal}"
            return [*findings, Finding(debate_id, problem, fix, repairable=False)]
        found = Finding(debate_id, problem, "debate.md set to what round-log.md records", True)
        if repair:
            _catch_up(files, planned)
            refresh_live(root, debate_id)
            found = Finding(debate_id, problem, found.fix, True, repaired=True)
        findings.append(found)
    return findings


def _conflict_findings(files: DebateFiles, marked: list[str]) -> list[Finding]:
    """Advice that can be followed: the records both sides add are merged again by the
    drivers; one persona's file written on both sides keeps one side."""
    folder = files.relative(files.paths.folder)
    shared = [name for name in marked if "/" not in name]
    findings = []
    if shared:
        paths = " ".join(f"{folder}/{name}" for name in shared)
        findings.append(
            Finding(
                files.id,
                f"{', '.join(shared)} hold merge conflict markers",
                "both sides added records to them: while the merge is open, run "
                f"`dreamcontext council git-setup`, then `git checkout -m -- {paths}` to merge "
                "them again with the council's drivers, and `git add` them (what stays marked, "
                "such as one verdict recorded two ways, keeps one side); then run doctor again",
                repairable=False,
            )
        )
    for name in marked:
        if "/" not in name:
            continue
        path = f"{folder}/{name}"
        findings.append(
            Finding(
                files.id,
                f"{name} holds merge conflict markers",
                "one persona's file was written on both sides and only one side can stand: "
                f"keep one, `git checkout --ours -- {path}` or `git checkout --theirs -- {path}` "
                "while the merge is open (after it, in every conflict delete the `<<<<<<<` line "
                "through the `=======` line to keep theirs, or the `=======` line through the "
                "`>>>>>>>` line to keep ours); then run `dreamcontext council doctor --repair`",
                repairable=False,
            )
        )
    return findings


def _seated(files: DebateFiles, debate: Debate) -> list[str]:
    return [s for s in debate.personas if files.persona_paths(s).context.exists()]


def _conflicted_files(files: DebateFiles) -> list[str]:
    folder = files.paths.folder
    names: list[Path] = [folder / name for name in _MERGED_FILES]
    for item in sorted(folder.iterdir()):
        if item.is_dir() and not item.name.startswith("."):
            names += [item / name for name in _PERSONA_FILES]
    marked = []
    for path in names:
        try:
            text = files.read(path) if path.is_file() else ""
        except (CouncilError, OSError, UnicodeDecodeError):
            continue  # reported by the parse check when it matters
        if has_conflict_markers(text):
            marked.append(str(path.relative_to(folder)))
    return marked


def _refusal(files: DebateFiles, debate: Debate, log: str) -> str | None:
    """Why the commands would not move debate.md to the state the log records; None if they would.

    A round entry moves a debate on as `round start` and `round end --excuse` do; synthesis
    and completion follow the rules of `synthesize` and `complete` (actions/closing.py), from
    the furthest round either file records: a log line alone cannot complete a debate that has
    no final report."""
    behind = status_behind(debate.status, log)
    if behind is None or behind.phase not in ("synthesizing", "complete"):
        return None
    logged = logged_state(log).last_round
    before = debate.status if rank(debate.status) >= rank(logged) else logged
    if before.phase in ("synthesizing", "complete"):
        return None  # a resynthesis, or a debate.md already past its rounds
    current = max(debate.current_round, before.round)
    if behind.phase == "synthesizing":
        return synthesis_refusal(debate.id, before, current)
    return synthesis_refusal(debate.id, before, current) or completion_refusal(files, before)


def _catch_up(files: DebateFiles, planned: int) -> None:
    """Move debate.md forward to the state the round log records (never backward)."""
    with files.lock():
        debate = files.debate()
        over = files.read(files.paths.debate_md)
        if _refusal(files, debate, files.log()) is not None:
            return  # changed since it was examined: left for the next look
        behind = status_behind(debate.status, files.log())
        if behind is not None:
            debate.meta["status"] = str(behind)
            if behind.phase in ("running", "round_complete"):
                debate.meta["current_round"] = max(debate.current_round, behind.round)
        needed = max(planned, debate.current_round)
        if needed > debate.rounds_planned:
            debate.meta["rounds_planned"] = needed
        files.save_debate(debate, over=over)
