"""`council git-setup`: make a git repository merge debates without conflicts.

It writes `_dream_context/.gitattributes` (committed, so every clone names the same
drivers) and registers the drivers in the repository's own git config (local to each
clone: run it once per clone). A clone without the drivers still merges, with git's line
merge, as before.

git runs a driver in the work tree, which a branch chose: the registered command runs the
tool's interpreter isolated (`-I`: nothing imported from the current folder, no user site,
no PYTHON* variables). When that interpreter is gone or fails, the command hands the file
to `git merge-file`, so both sides stay in it, conflicts marked, never only ours.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from dreamcontext_council.errors import UsageError
from dreamcontext_council.folder.machine_local import keep_out_of_git
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import atomic_write_text, read_text
from dreamcontext_council.merge.driver import CONFLICT_MARKED, DRIVERS

ATTRIBUTES_MARKER = "# dreamcontext council: merge drivers (see `dreamcontext council git-setup`)"
DRIVER_PREFIX = "dreamcontext-"
# What the registered command says when the tool could not merge the file itself.
NOT_RUN = (
    "dreamcontext council: the merge driver could not run; git merge-file merged this file "
    "instead (any conflict marked). Run `dreamcontext council git-setup` again."
)


@dataclass
class GitSetup:
    """What `git-setup` found and changed."""

    repository: Path
    attributes: Path
    added_attributes: list[str] = field(default_factory=list)
    registered: list[str] = field(default_factory=list)
    program: str = ""  # the Python the drivers run

    @property
    def changed(self) -> bool:
        return bool(self.added_attributes or self.registered)


def driver_command(kind: str, program: str | None = None) -> str:
    """The shell command git runs to merge a file of this kind (%O base, %A ours, %B theirs,
    %P its path): the tool isolated from the work tree, then, only when it did not merge
    (exit neither 0 nor CONFLICT_MARKED: not found, not importable, failed), git's line merge."""
    tool = shlex.join([program or sys.executable, "-I", "-m", "dreamcontext_council"])
    return (
        f"{tool} council merge-driver {kind} %O %A %B %P; s=$?; "
        f"if [ $s = 0 ] || [ $s = {CONFLICT_MARKED} ]; then exit $s; fi; "
        f"echo {shlex.quote(NOT_RUN)} >&2; "
        "git merge-file -L ours -L base -L theirs %A %O %B"
    )


def attribute_lines() -> list[str]:
    """The `.gitattributes` lines, relative to `_dream_context/`."""
    return [f"{pattern} merge={DRIVER_PREFIX}{kind}" for kind, (_, pattern, _) in DRIVERS.items()]


def git_setup(root: Root) -> GitSetup:
    """Write the attributes and register the drivers; running it again changes nothing."""
    repository = _repository(_existing(root.path))
    setup = GitSetup(repository, root.path / ".gitattributes", program=sys.executable)
    keep_out_of_git(root)
    for kind, (_, _, description) in DRIVERS.items():
        name = f"merge.{DRIVER_PREFIX}{kind}"
        wanted = {
            f"{name}.name": f"dreamcontext council: {description}",
            f"{name}.driver": driver_command(kind),
        }
        if any(_git(repository, "config", "--local", "--get", k) != v for k, v in wanted.items()):
            for key, value in wanted.items():
                if _git(repository, "config", "--local", key, value) is None:
                    raise UsageError(
                        f"git could not write {key} to the config of {repository}; check that "
                        "its .git/config is writable and run this again."
                    )
            setup.registered.append(f"{DRIVER_PREFIX}{kind}")
    current = read_text(setup.attributes, within=root.path) if setup.attributes.exists() else ""
    have = set(current.split("\n"))
    missing = [line for line in attribute_lines() if line not in have]
    if missing:
        block = ([ATTRIBUTES_MARKER] if ATTRIBUTES_MARKER not in have else []) + missing
        head = current.rstrip("\n") + "\n" if current.strip() else ""
        atomic_write_text(setup.attributes, head + "\n".join(block) + "\n", within=root.path)
        setup.added_attributes = missing
    return setup


def repository_of(folder: Path) -> Path | None:
    """The git repository `folder` is in; None outside one, or without git."""
    try:
        top = _git(folder, "rev-parse", "--show-toplevel")
    except (FileNotFoundError, NotADirectoryError):
        return None
    return Path(top) if top is not None else None


def is_set_up(root: Root) -> bool:
    """Whether this clone has every driver registered and the attributes written."""
    repository = repository_of(_existing(root.path))
    if repository is None or not (root.path / ".gitattributes").is_file():
        return False
    lines = set(read_text(root.path / ".gitattributes", within=root.path).split("\n"))
    return set(attribute_lines()) <= lines and all(
        _git(repository, "config", "--local", "--get", f"merge.{DRIVER_PREFIX}{kind}.driver")
        == driver_command(kind)
        for kind in DRIVERS
    )


def driver_problems(root: Root) -> list[tuple[str, str]]:
    """(problem, fix) for this clone's registered drivers that cannot run as git-setup means
    them to: a program that no longer exists, or a command another version registered."""
    repository = repository_of(_existing(root.path))
    if repository is None:
        return []
    listed = _git(
        repository, "config", "--local", "--get-regexp", rf"^merge\.{DRIVER_PREFIX}.*\.driver$"
    )
    gone: dict[str, list[str]] = {}
    stale: list[str] = []
    for line in (listed or "").split("\n"):
        key, _, command = line.partition(" ")
        if not key:
            continue
        name = key.removeprefix("merge.").removesuffix(".driver")
        kind = name.removeprefix(DRIVER_PREFIX)
        try:
            program = shlex.split(command)[0]
        except (ValueError, IndexError):
            program = command
        if shutil.which(program) is None:
            gone.setdefault(program, []).append(name)
        elif kind not in DRIVERS or command != driver_command(kind, program):
            stale.append(name)
    again = "run `dreamcontext council git-setup` again with the tool as installed now"
    problems = [
        (
            f"merge drivers {', '.join(names)} run {program}, which no longer exists "
            "(merges of those files fall back to git's line merge)",
            again,
        )
        for program, names in gone.items()
    ]
    if stale:
        problems.append(
            (
                f"merge drivers {', '.join(stale)} are not the command this version registers "
                "(an older one could import code committed in the work tree)",
                again,
            )
        )
    return problems


def _existing(folder: Path) -> Path:
    """`folder`, or its nearest parent that exists (git-setup may come before any debate)."""
    while not folder.is_dir() and folder.parent != folder:
        folder = folder.parent
    return folder


def _repository(folder: Path) -> Path:
    try:
        top = _git(folder, "rev-parse", "--show-toplevel")
    except FileNotFoundError:
        raise UsageError("git is not installed (no `git` on PATH); install it first.") from None
    if top is None:
        raise UsageError(
            f"{folder} is not inside a git repository; run `git init` there first, "
            "then `dreamcontext council git-setup`."
        )
    return Path(top)


def _git(where: Path, *args: str) -> str | None:
    """A git command's output without its final newline; None when it fails."""
    done = subprocess.run(
        ["git", "-C", str(where), *args], capture_output=True, text=True, check=False
    )
    return done.stdout.rstrip("\n") if done.returncode == 0 else None
