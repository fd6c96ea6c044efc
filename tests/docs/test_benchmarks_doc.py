"""docs/benchmarks.md states the present and cannot drift from bench/: every section gives
the command that reproduces its figures and its target, every command names a script and
options that exist, every script that measures is in it, and it stays short enough to read
(under 300 lines: the story of each pass belongs in commit messages)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "benchmarks.md"
BENCH = REPO / "bench"
# Scripts the measuring ones run, not benchmarks of their own.
HELPERS = {"council_stub.py", "sdk_alone.py"}
_COMMAND = re.compile(r"^\$ \.venv/bin/python (bench/\S+\.py)(.*?)(?:\s+#.*)?$", re.M)
_CONTINUED = re.compile(r"\\\n\s+")


def sections() -> dict[str, str]:
    parts = re.split(r"^## ", DOC.read_text(encoding="utf-8"), flags=re.M)[1:]
    return {part.split("\n", 1)[0]: part for part in parts}


def commands() -> list[tuple[str, str]]:
    text = _CONTINUED.sub(" ", DOC.read_text(encoding="utf-8"))
    return [(script, options) for script, options in _COMMAND.findall(text)]


def test_benchmarks_md_is_under_300_lines() -> None:
    assert len(DOC.read_text(encoding="utf-8").splitlines()) < 300


def test_each_section_gives_its_command_and_its_target() -> None:
    assert len(sections()) >= 10
    for title, body in sections().items():
        assert _COMMAND.search(body), f"{title}: no `$ .venv/bin/python bench/...` command"
        assert re.search(r"\btargets?\b", body, re.I), f"{title}: no target"


def test_each_command_names_a_script_and_options_that_exist() -> None:
    for script, options in commands():
        source = (REPO / script).read_text(encoding="utf-8")
        for option in re.findall(r"--[a-z][a-z-]*", options):
            assert f'"{option}"' in source, f"{script} has no {option}"


def test_every_measuring_script_is_in_the_doc() -> None:
    named = {Path(script).name for script, _ in commands()}
    text = DOC.read_text(encoding="utf-8")
    for script in sorted(BENCH.glob("*.py")):
        if script.name in HELPERS:
            assert f"bench/{script.name}" in text, f"{script.name} is not mentioned"
        else:
            assert script.name in named or f"`bench/{script.name}`" in text, script.name
