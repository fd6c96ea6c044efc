"""A bash shell in one folder, the way an agent's shell tool runs commands."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Shell:
    """Runs command lines in bash in one folder, the way an agent's shell tool does."""

    cwd: Path
    env: dict[str, str]
    history: list[str] = field(default_factory=list)

    def run(self, line: str, stdin: str | None = None, where: str = "") -> str:
        self.history.append(line)
        done = subprocess.run(
            ["bash", "-c", line],
            cwd=self.cwd,
            env=self.env,
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"{where}: `{line}` exited {done.returncode}\n"
                f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
            )
        return done.stdout
