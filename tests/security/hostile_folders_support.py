"""Hostile debate folders for the security tests: a debate made with the CLI, then edited by
hand as a cloned repository could have it (links out, a FIFO, a YAML bomb, odd values)."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

from debate_story import Result

# What a file outside the debate holds; it must never appear in what a command prints.
MARKER = "OUTSIDE-SECRET-7f3c9e"
# A process may use this much memory; the alias bomb took 1.8 GB before it was refused.
MEMORY_LIMIT = 1 << 30
# Far above what a refused folder takes to answer; a hang goes over it.
HANG_TIMEOUT_S = 60

ALIAS_BOMB = """\
---
id: {id}
topic: Bomb
status: created
rounds_planned: 2
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
---

## Question

Bomb
"""


def outside_file(tmp_path: Path, name: str = "secret.txt") -> Path:
    """A file outside the root that holds the marker."""
    folder = tmp_path / "outside"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"{MARKER}\n\n## Verdict\n\n{MARKER}\n", encoding="utf-8")
    return path


def link_file_out(folder: Path, name: str, tmp_path: Path) -> None:
    """Replace `folder/name` with a symlink to a file outside holding the marker."""
    target = folder / name
    target.unlink(missing_ok=True)
    target.symlink_to(outside_file(tmp_path, name.replace("/", "-")))


def link_folder_out(folder: Path, tmp_path: Path) -> None:
    """Move `folder` outside the root, mark its files, and leave a symlink in its place."""
    moved = tmp_path / "outside" / folder.name
    moved.parent.mkdir(exist_ok=True)
    shutil.move(str(folder), moved)
    for path in moved.rglob("*.md"):
        if path.name != "debate.md":
            path.write_text(path.read_text(encoding="utf-8") + f"\n{MARKER}\n", encoding="utf-8")
    folder.symlink_to(moved, target_is_directory=True)


def limited_memory() -> None:
    """In a child, before exec: at most MEMORY_LIMIT of address space."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def bounded_council(root: Path, workdir: Path, *args: str) -> Result:
    """`council ARGS` as a process with bounded memory and time (a hang fails the test)."""
    return bounded_python(root, workdir, "-m", "dreamcontext_council", "council", *args)


DASHBOARD_GET = """\
import sys
from pathlib import Path
from starlette.testclient import TestClient
from dreamcontext_council.dashboard import create_app
from dreamcontext_council.folder.paths import Root
with TestClient(create_app(Root(Path(sys.argv[1])))) as client:
    page = client.get(sys.argv[2])
print(page.status_code)
print(page.text)
"""


def bounded_dashboard_get(root: Path, workdir: Path, url: str) -> Result:
    """The dashboard's answer to GET `url`, in a process with bounded memory and time.

    The first line of `out` is the status code, the page follows.
    """
    return bounded_python(root, workdir, "-c", DASHBOARD_GET, str(root), url)


def bounded_python(root: Path, workdir: Path, *args: str) -> Result:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMCONTEXT_")}
    env.update(DREAMCONTEXT_ROOT=str(root), PYTHONIOENCODING="utf-8")
    done = subprocess.run(
        [sys.executable, *args],
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=HANG_TIMEOUT_S,
        preexec_fn=limited_memory,
    )
    return Result(
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )
