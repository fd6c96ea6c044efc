"""Shell completion as the shell asks for it: the installed `dreamcontext` with click's
completion variables, completing debate ids and the personas of the debate typed before,
and printing nothing (never an error) when it cannot read the root."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from debate_story import Chair

DREAMCONTEXT = Path(sys.executable).parent / "dreamcontext"


def complete(cwd: Path, *words: str, shell: str = "bash") -> tuple[int, list[str], str]:
    """What the shell gets for the last word of `dreamcontext WORDS` (types stripped)."""
    env = os.environ | {
        "_DREAMCONTEXT_COMPLETE": f"{shell}_complete",
        "COMP_WORDS": " ".join(("dreamcontext", *words)),
        "COMP_CWORD": str(len(words)),
    }
    env.pop("DREAMCONTEXT_ROOT", None)
    done = subprocess.run(
        [str(DREAMCONTEXT)], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    values = [line.split(",", 1)[1] for line in done.stdout.splitlines() if "," in line]
    return done.returncode, values, done.stderr


def test_debate_ids_and_persona_slugs_complete(chair: Chair, workdir: Path) -> None:
    first = chair.new("Adopt Postgres?")
    second = chair.new("Hire a second SRE?", personas=("risk-auditor", "growth-cfo"))
    code, ids, err = complete(workdir, "council", "show", "council_")
    assert code == 0 and err == ""
    assert sorted(ids) == sorted([first, second])
    assert complete(workdir, "council", "board", second[:-1])[1] == [second]
    code, slugs, _ = complete(workdir, "council", "round-context", second, "")
    assert slugs == ["growth-cfo", "risk-auditor"]
    assert complete(workdir, "council", "report", "append", first, "us")[1] == ["user-advocate"]
    # zsh gets the topic as each id's help.
    zsh = subprocess.run(
        [str(DREAMCONTEXT)],
        cwd=workdir,
        env=os.environ
        | {
            "_DREAMCONTEXT_COMPLETE": "zsh_complete",
            "COMP_WORDS": f"dreamcontext council show {second}",
            "COMP_CWORD": "3",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Hire a second SRE?" in zsh.stdout


def test_completion_never_fails(chair: Chair, workdir: Path, tmp_path: Path) -> None:
    debate_id = chair.new("Adopt Postgres?")
    (workdir / "_dream_context" / "council" / "index.json").write_text("{not json", "utf-8")
    code, ids, err = complete(workdir, "council", "show", "")
    assert (code, ids, err) == (0, [debate_id], "")
    # No root at all, and a debate that does not exist: no candidates, no error.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert complete(elsewhere, "council", "show", "") == (0, [], "")
    assert complete(workdir, "council", "round-context", "council_nothere", "") == (0, [], "")
    assert complete(workdir, "council", "round-context", "../..", "") == (0, [], "")
