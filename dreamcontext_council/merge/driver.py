"""The merge driver git calls for a council file: our merge, or git's own where ours stops.

`git-setup` registers one driver per kind of file; git runs it with the three versions
as files (and, as `%P`, the file's path in the repository) and takes the merged text from
the "ours" file and a conflict from the exit code. A file whose path is not a council file
of that kind (a repository's `.gitattributes` can aim a driver anywhere) gets git's own
line merge, untouched by the council's rules.
"""

from __future__ import annotations

import subprocess
import tempfile
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from dreamcontext_council.errors import EXIT_CONFLICT_MARKED
from dreamcontext_council.merge import Driver
from dreamcontext_council.merge.debate import merge_debate, merge_facts
from dreamcontext_council.merge.logs import merge_round_log, merge_usage
from dreamcontext_council.merge.persona import merge_context
from dreamcontext_council.merge.records import merge_index, merge_verdicts
from dreamcontext_council.merge.report import merge_report
from dreamcontext_council.merge.reviews import merge_reviews

# The kind a driver is registered under, its pure merge, and the files it is for (as
# `.gitattributes` patterns relative to the `_dream_context/` folder).
DRIVERS: dict[str, tuple[Driver, str, str]] = {
    "index": (merge_index, "council/index.json", "the union of the debates by id"),
    "verdicts": (merge_verdicts, "council/*/verdicts.json", "the union by (round, persona)"),
    "debate": (merge_debate, "council/*/debate.md", "the frontmatter field by field"),
    "round-log": (merge_round_log, "council/*/round-log.md", "both sides' entries in time order"),
    "reviews": (
        merge_reviews,
        "council/*/reviews.json",
        "the union of the scores by (round, critic)",
    ),
    "usage": (merge_usage, "council/*/usage.jsonl", "both sides' lines by time"),
    "report": (merge_report, "council/*/*/report.md", "both sides' entries, newest first"),
    "context": (
        merge_context,
        "council/*/*/context-and-persona.md",
        "the frontmatter field by field, both sides' directives",
    ),
}

# The driver's exit code for "merged, a conflict left marked in the file". Not 1: that is
# also what a Python that cannot import the tool exits with, and the registered command
# (see actions/git_setup.py) then hands the untouched file to git's line merge instead.
CONFLICT_MARKED = EXIT_CONFLICT_MARKED


def is_council_file(kind: str, path: str) -> bool:
    """Whether `path` (relative to the repository, as git's `%P`) is a file of this kind:
    its last segments match the kind's pattern under the `_dream_context/` folder."""
    pattern = DRIVERS[kind][1].split("/")
    parts = PurePosixPath(path).parts
    return len(parts) >= len(pattern) and all(
        fnmatchcase(part, want) for part, want in zip(parts[-len(pattern) :], pattern, strict=True)
    )


def merge_file(kind: str, base: Path, ours: Path, theirs: Path, path: str | None = None) -> bool:
    """Merge three versions of a file into `ours`; False when a conflict is left marked in it.

    Where the council's rules do not settle the merge (a real conflict, a side that does
    not parse), git's line merge does, and marks what it cannot merge as usual. A `path`
    that is not a file of this kind is merged by git's line merge alone.
    """
    if path is not None and not is_council_file(kind, path):
        return _git_merge_file(ours, base, theirs)
    merge = DRIVERS[kind][0]
    try:
        old, mine, other = (file.read_bytes().decode("utf-8") for file in (base, ours, theirs))
    except UnicodeDecodeError:
        return _git_merge_file(ours, base, theirs)
    if kind == "debate":
        merged = merge_debate(old, mine, other, merge_body=merge_body)
    elif kind == "context":
        merged = merge_context(old, mine, other, merge_body=merge_text)
    else:
        merged = merge(old, mine, other)
    if merged is None:
        return _git_merge_file(ours, base, theirs)
    ours.write_bytes(merged.encode("utf-8"))
    return True


def merge_body(base: str, ours: str, theirs: str) -> str | None:
    """debate.md's body: both sides' injected facts, or else git's line merge."""
    merged = merge_facts(base, ours, theirs)
    return merge_text(base, ours, theirs) if merged is None else merged


def merge_text(base: str, ours: str, theirs: str) -> str | None:
    """git's line merge of three texts; None when it leaves a conflict."""
    with tempfile.TemporaryDirectory(prefix="council-merge-") as folder:
        paths = [Path(folder) / name for name in ("ours", "base", "theirs")]
        for path, text in zip(paths, (ours, base, theirs), strict=True):
            path.write_bytes(text.encode("utf-8"))
        if not _git_merge_file(*paths):
            return None
        return paths[0].read_bytes().decode("utf-8")


def _git_merge_file(ours: Path, base: Path, theirs: Path) -> bool:
    done = subprocess.run(
        [
            "git",
            "merge-file",
            "-L",
            "ours",
            "-L",
            "base",
            "-L",
            "theirs",
            str(ours),
            str(base),
            str(theirs),
        ],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0
