"""Fixtures: a fresh folder with a `dreamcontext` on PATH that runs this checkout's package."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from .agent_shell import Shell


@pytest.fixture
def shell(tmp_path: Path) -> Shell:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "dreamcontext"
    # The shim makes `dreamcontext` mean this interpreter's package, installed or not.
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m dreamcontext_council "$@"\n')
    shim.chmod(0o755)
    work = tmp_path / "project"
    work.mkdir()
    # No keys: `council run` falls back to the offline scripted provider.
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "DREAMCONTEXT_ROOT" and not k.startswith(("ANTHROPIC_", "OPENAI_"))
    }
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["NO_COLOR"] = "1"
    return Shell(work, env)
