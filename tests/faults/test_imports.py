"""The reading and persona paths of the CLI load no SDK, server or renderer they do not use.

Checked in a fresh interpreter that runs the real command and then lists `sys.modules`:
behaviour, not timing (bench/cli_latency.py measures the time).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from debate_story import REFERENCE, REFERENCE_ID, writable_copy

from dreamcontext_council import Root, append_report, new_debate, record_verdict, start_round
from dreamcontext_council.rules.roster import PRESETS

from .support import clean_env

HEAVY = ("anthropic", "openai", "starlette", "uvicorn", "watchdog", "markdown_it", "httpx")
PROBE = """
import json, sys
from dreamcontext_council.cli import cli
try:
    cli.main(sys.argv[1:], prog_name="dreamcontext", standalone_mode=False)
finally:
    loaded = sorted(sys.modules)
    sys.stderr.write("\\nMODULES " + json.dumps(loaded) + "\\n")
"""

ENTRY = (
    "### Executive Summary\nMigrate.\n\n### Position\nA.\n\n### Reasoning\nLoad.\n\n"
    "### Reactions to peers\nNone yet.\n\n### Open questions\nCost?\n"
)


@pytest.fixture(scope="module")
def debate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = Root(tmp_path_factory.mktemp("imports") / "_dream_context")
    root.council.mkdir(parents=True)
    personas = PRESETS["cognitive"][:2]
    options = [{"key": "A", "label": "Migrate"}, {"key": "B", "label": "Stay"}]
    debate_id = new_debate(root, "Migrate?", options=options, personas=personas).id
    start_round(root, debate_id, 1)
    for spec in personas:
        record_verdict(root, debate_id, spec.slug, 1, stance="A", conviction=60, headline="Go")
        append_report(root, debate_id, spec.slug, ENTRY, number=1)
    return root.path, debate_id


def loaded_modules(root: Path, *args: str) -> set[str]:
    """The top-level packages a command loaded (`loaded_names` has the modules' names)."""
    return {name.split(".")[0] for name in loaded_names(root, *args)}


def loaded_names(root: Path, *args: str) -> set[str]:
    env = clean_env(root.parent / "home", DREAMCONTEXT_ROOT=str(root))
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "council", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


@pytest.mark.parametrize(
    "command",
    [
        ("board", "{id}", "--plain"),
        ("board", "{id}", "--json"),
        ("list", "--all"),
        (
            "verdict",
            "{id}",
            "synthesizer",
            "1",
            "--stance",
            "B",
            "--conviction",
            "40",
            "--headline",
            "Stay after all",
        ),
    ],
    ids=["board", "board-json", "list", "verdict"],
)
def test_reading_and_verdict_import_no_sdk_server_or_renderer(
    debate: tuple[Path, str], command: tuple[str, ...]
) -> None:
    root, debate_id = debate
    loaded = loaded_modules(root, *(part.format(id=debate_id) for part in command))
    assert "dreamcontext_council" in loaded  # the probe really ran the command
    assert not loaded & set(HEAVY), f"{command[0]} imported {sorted(loaded & set(HEAVY))}"
    assert "jinja2" not in loaded, "templates are rendered only by commands that write files"
    # The frontmatter the tool writes is read without PyYAML (see frontmatter_io.plain_block).
    assert "yaml" not in loaded, "PyYAML is for frontmatter outside the plain subset"
    assert "filelock" not in loaded, "the debate's lock is flock itself on POSIX"
    # Printing needs neither a socket (the host name is uname's) nor shutil's archivers.
    if command[0] != "verdict":
        assert not loaded & {"socket", "shutil"}, f"{command[0]} imported socket or shutil"


@pytest.mark.parametrize(
    "command", [("board", REFERENCE_ID, "--plain"), ("list", "--all")], ids=["board", "list"]
)
def test_the_node_tools_debate_is_read_without_pyyaml(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    # The Node tool folds a long promoted_to_knowledge path with `>-`; that is plain too.
    root = writable_copy(REFERENCE, tmp_path / "reference") / "_dream_context"
    loaded = loaded_modules(root, *command)
    assert "dreamcontext_council" in loaded
    assert "yaml" not in loaded, "the Node tool's frontmatter is in the plain subset"
    assert not loaded & {"socket", "shutil"}, f"{command[0]} imported socket or shutil"


# What printing a debate that no run drives does not need: each is imported where it is used.
NOT_FOR_READING = {
    "pickle",  # the parse cache pickles only a file read twice (actions/files.py)
    "dreamcontext_council.folder.in_flight",  # the calls of a live run
    "dreamcontext_council.folder.run_record",  # read only for a debate not complete
    "dreamcontext_council.rules.run_settings",  # only a debate.md with `run:`
    "dreamcontext_council.rules.solo",  # only a debate with baseline.md
    "dreamcontext_council.rules.entry_markup",  # checks and seals an entry being written
    "encodings.utf_8_sig",  # read_text drops a BOM itself
}
NOT_FOR_THE_BOARD = {
    "shlex",  # only a `command:` model's family needs a command line split
    "dreamcontext_council.actions.newest",  # the id is given: nothing to choose
    "dreamcontext_council.actions.index",  # a board writes no index
    "dreamcontext_council.folder.machine_local",  # nor takes the lock
    "dreamcontext_council.rules.roundlog",  # nor appends to the round log
    "dreamcontext_council.actions.run_state",  # a complete debate has no run state to read
    "dreamcontext_council.rules.claims_file",  # the debate has no claims.json
    "dreamcontext_council.folder.strict_yaml",  # its frontmatter is in the plain subset
}
NOT_FOR_THE_LIST = {
    "unicodedata",  # an eval's name is made one line only on its page
    "dreamcontext_council.rules.usage",  # usage totals are `show`'s
}


@pytest.mark.parametrize(
    ("command", "unused"),
    [
        (("board", REFERENCE_ID), NOT_FOR_READING | NOT_FOR_THE_BOARD),
        (("list", "--all"), NOT_FOR_READING | NOT_FOR_THE_LIST),
    ],
    ids=["board", "list"],
)
def test_the_node_tools_debate_is_read_without_what_only_writes_and_runs_need(
    tmp_path: Path, command: tuple[str, ...], unused: set[str]
) -> None:
    root = writable_copy(REFERENCE, tmp_path / "reference") / "_dream_context"
    loaded = loaded_names(root, *command)
    assert "dreamcontext_council.cli.reading" in loaded
    assert not loaded & unused, f"{command[0]} imported {sorted(loaded & unused)}"
