"""`council doctor`: the records that sum up the round entries, checked against them.

A persona's round entry (report.md) is its answer; verdicts.json, round-log.md and
usage.jsonl record the same answer elsewhere. A hand-resolved merge that kept one side of
one of those files (`git checkout --ours verdicts.json`) loses the other side's records,
and `run` then takes the personas whose entries stand as answered. Checked here:

- an entry with no verdict, or a verdict that contradicts it (actions/doctor_verdicts.py);
- an entry holding a section twice: two versions of one answer run together;
- round-log.md without an entry's submission though it logs the round's others (a
  `Report submitted` entry is added), or whose last submission of an entry quotes a summary
  the entry no longer has (the other side's answer was dropped: `Report replaced` added);
- an answer `run` sent prompts for with no model call in usage.jsonl: its cost is lost.
"""

from __future__ import annotations

import json
import re

from dreamcontext_council.actions.doctor_verdicts import verdict_findings
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.findings import Finding
from dreamcontext_council.folder.live import utc_second
from dreamcontext_council.rules import roundlog
from dreamcontext_council.rules.debate import Debate
from dreamcontext_council.rules.entry_verdict import doubled_sections
from dreamcontext_council.rules.report import RoundEntry
from dreamcontext_council.rules.usage import calls_of

_PERSONA_PHASES = ("opening", "cross-exam", "rebuttal", "repair")
_SUBMISSION = re.compile(
    r"^## Report (?:submitted|replaced) — (\S+) in round (\d+) — .*\n+- Executive summary: (.*)$",
    re.MULTILINE,
)


def record_findings(
    files: DebateFiles, debate: Debate, slugs: list[str], *, repair: bool
) -> list[Finding]:
    """Every finding of the entries of `slugs` against the records; repaired when asked."""
    findings: list[Finding] = []
    entries = {slug: files.entries(slug) for slug in slugs}
    for slug, mine in entries.items():
        findings += _doubled(files, slug, mine)
    if any(f.problem.endswith("run together") for f in findings):
        return findings  # one version must be chosen first: nothing is restored from two
    findings += verdict_findings(files, debate, entries, repair=repair)
    findings += _submissions(files, entries, repair=repair)
    findings += _usage(files, entries)
    return findings


def _doubled(files: DebateFiles, slug: str, entries: list[RoundEntry]) -> list[Finding]:
    path = files.relative(files.persona_paths(slug).report)
    found = []
    for entry in entries:
        doubled = doubled_sections(entry)
        if doubled:
            named = ", ".join(f"### {title}" for title in doubled)
            found.append(
                Finding(
                    files.id,
                    f"{slug}'s round {entry.round} entry holds {named} twice: two versions of "
                    "one answer run together",
                    "keep one version: during the merge `git checkout --ours -- "
                    f"{path}` (or `--theirs`); after it `git checkout <branch> -- {path}` "
                    "from the branch whose answer stays; then run doctor again",
                    repairable=False,
                )
            )
    return found


def _submissions(
    files: DebateFiles, entries: dict[str, list[RoundEntry]], *, repair: bool
) -> list[Finding]:
    """An entry round-log.md does not log though it logs the round's others (a kept side
    dropped the line), or whose last logged submission quotes another answer's summary."""
    logged: dict[tuple[str, int], str] = {}
    for match in _SUBMISSION.finditer(files.log()):
        logged[(match.group(1), int(match.group(2)))] = match.group(3).strip()
    rounds_logged = {number for _, number in logged}
    found = []
    for slug, mine in entries.items():
        for entry in mine:
            quoted = logged.get((slug, entry.round))
            sentence = roundlog.first_sentence(entry.executive_summary or "")
            if quoted == (sentence or "(no executive summary)"):
                continue
            if quoted is None and entry.round not in rounds_logged:
                continue  # a log that records no submissions (the Node tool's)
            if quoted is None:
                problem = (
                    f"round-log.md logs the other round {entry.round} entries but not "
                    f"{slug}'s (a kept side dropped the line)"
                )
                fix = "a Report submitted entry added to round-log.md"
                more = ["Logged by `dreamcontext council doctor`: the merge dropped this line."]
            else:
                problem = (
                    f"round-log.md's last submission of {slug}'s round {entry.round} entry "
                    f'quotes "{quoted}", an answer report.md no longer holds'
                )
                fix = "a Report replaced entry added to round-log.md for the answer that stands"
                more = []
            if repair:
                heading, bullets = roundlog.submission_entry(
                    slug,
                    entry.round,
                    entry.executive_summary or "",
                    utc_second(),
                    replaced=quoted is not None,
                )
                files.append_log(heading, [*bullets, *more])
            found.append(Finding(files.id, problem, fix, repairable=True, repaired=repair))
    return found


def _usage(files: DebateFiles, entries: dict[str, list[RoundEntry]]) -> list[Finding]:
    """An answer `run` made (its prompts are kept) whose model call usage.jsonl lacks."""
    called = {
        (str(c.get("persona")), c.get("round"))
        for c in _usage_calls(files)
        if c.get("phase") in _PERSONA_PHASES
    }
    path = files.relative(files.paths.usage)
    found = []
    for slug, mine in entries.items():
        for entry in mine:
            if (slug, entry.round) in called:
                continue
            if not files.persona_paths(slug).sent_prompt(entry.round).is_file():
                continue  # answered by hand: no model call to record
            found.append(
                Finding(
                    files.id,
                    f"usage.jsonl has no model call for {slug}'s round {entry.round} entry, "
                    "which `run` answered: its tokens and cost are not counted",
                    f"restore {path} from the branch that ran it (`git show <branch>:{path}`), "
                    "keeping both sides' lines",
                    repairable=False,
                )
            )
    return found


def _usage_calls(files: DebateFiles) -> list[dict[str, object]]:
    path = files.paths.usage
    if not path.exists():
        return []
    records = []
    for line in files.read(path).split("\n"):
        try:
            record = json.loads(line) if line.strip() else None
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return calls_of(records)
