"""Hostile debate folders: a debate made with the CLI, then edited as a cloned or hand-edited
tree could be. No file outside the debate is shown, exported or sent to a model; a FIFO or a
YAML bomb does not hang a command; duplicate keys and impossible values are refused with one
line, and nothing on disk changes."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from council_run import ECHO_SCRIPT, Council
from debate_story import Runner, changed_files, entry, tree_bytes
from offline import no_provider_environment as no_provider_environment
from starlette.testclient import TestClient

from dreamcontext_council.dashboard import create_app
from dreamcontext_council.errors import FormatError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.paths import Root

from .hostile_folders_support import (
    ALIAS_BOMB,
    MARKER,
    bounded_council,
    bounded_dashboard_get,
    link_file_out,
    link_folder_out,
    outside_file,
)

READERS = (
    ("show",),
    ("board",),
    ("export", "--format", "md", "-o", "-"),
    ("export", "--format", "json", "-o", "-"),
    ("export", "--format", "html", "-o", "-"),
)


def _link_round_log(folder: Path, tmp_path: Path) -> None:
    link_file_out(folder, "round-log.md", tmp_path)


def _link_final_report(folder: Path, tmp_path: Path) -> None:
    link_file_out(folder, "final-report.md", tmp_path)


def _link_report(folder: Path, tmp_path: Path) -> None:
    link_file_out(folder, "risk-auditor/report.md", tmp_path)


def _link_persona_folder(folder: Path, tmp_path: Path) -> None:
    link_folder_out(folder / "risk-auditor", tmp_path)


def _link_debate_folder(folder: Path, tmp_path: Path) -> None:
    link_folder_out(folder, tmp_path)


def _link_council_folder(folder: Path, tmp_path: Path) -> None:
    link_folder_out(folder.parent, tmp_path)


LINKS: dict[str, Callable[[Path, Path], None]] = {
    "round-log.md": _link_round_log,
    "final-report.md": _link_final_report,
    "report.md": _link_report,
    "persona folder": _link_persona_folder,
    "debate folder": _link_debate_folder,
    "council folder": _link_council_folder,
}


@pytest.mark.parametrize("link", LINKS)
def test_a_link_out_of_the_debate_is_never_shown_exported_or_served(
    link: str, finished: str, root_path: Path, council: Runner, tmp_path: Path
) -> None:
    LINKS[link](root_path / "council" / finished, tmp_path)
    for args in READERS:
        result = council(*args, finished)
        assert MARKER not in result.text, (link, args)
    with TestClient(create_app(Root(root_path))) as client:
        page = client.get(f"/d/{finished}")
        assert MARKER not in page.text
        assert page.status_code >= 400


def test_a_link_out_is_refused_with_one_line_naming_the_file(
    finished: str, root_path: Path, council: Runner, tmp_path: Path
) -> None:
    _link_round_log(root_path / "council" / finished, tmp_path)
    result = council("show", finished)
    assert result.code == 1
    [line] = result.err.strip().split("\n")
    assert "round-log.md is a link out of" in line


def test_a_link_that_stays_inside_the_debate_is_still_read(
    finished: str, root_path: Path, council: Runner
) -> None:
    folder = root_path / "council" / finished
    (folder / "round-log.kept.md").write_bytes((folder / "round-log.md").read_bytes())
    (folder / "round-log.md").unlink()
    (folder / "round-log.md").symlink_to("round-log.kept.md")
    result = council("show", finished, "--log")
    assert result.code == 0, result.err
    assert "Synthesis started" in result.out


def test_a_fifo_named_report_md_does_not_hang_show(
    finished: str, root_path: Path, workdir: Path
) -> None:
    report = root_path / "council" / finished / "risk-auditor" / "report.md"
    report.unlink()
    os.mkfifo(report)
    result = bounded_council(root_path, workdir, "show", finished)
    assert result.code == 1
    assert "report.md is not a regular file" in result.err


# -- attachments reach the model only from inside the debate ----------------------------

LOGGING_SCRIPT = (
    "import os, sys\n"
    "prompt = sys.stdin.read()\n"
    "with open(os.environ['PROMPT_LOG'], 'a', encoding='utf-8') as log:\n"
    "    log.write(prompt)\n"
    + ECHO_SCRIPT.replace("sys.stdin.read()", "prompt").replace("import sys\n", "")
)


@pytest.fixture
def logging_council(root_path: Path, workdir: Path, tmp_path: Path) -> Iterator[Council]:
    """The CLI, with every prompt a `command:` persona gets appended to PROMPT_LOG."""
    yield Council(root_path, workdir, {**os.environ, "PROMPT_LOG": str(tmp_path / "prompts.log")})


@pytest.mark.parametrize("what", ["file", "folder"])
def test_an_attachment_linked_out_of_the_debate_never_reaches_a_prompt(
    what: str, logging_council: Council, tmp_path: Path
) -> None:
    attached = tmp_path / "notes.md"
    attached.write_text("Sessions are 2 KB each and live 30 days.\n", encoding="utf-8")
    debate_id = logging_council.new_debate("--attach", str(attached))
    for slug in ("risk-auditor", "growth-cfo"):
        logging_council.add_persona(debate_id, slug)
    folder = logging_council.folder(debate_id)
    if what == "file":
        link_file_out(folder / "attachments", "notes.md", tmp_path)
    else:
        outside_file(tmp_path, "notes.md")
        (folder / "attachments" / "notes.md").unlink()
        (folder / "attachments").rmdir()
        (folder / "attachments").symlink_to(tmp_path / "outside", target_is_directory=True)
    script = tmp_path / "logging_persona.py"
    script.write_text(LOGGING_SCRIPT, encoding="utf-8")
    model = f"command:{sys.executable} {script}"
    result = logging_council.proc("run", debate_id, "--model", model, "--yes")
    prompts = tmp_path / "prompts.log"
    assert not prompts.exists() or MARKER not in prompts.read_text(encoding="utf-8")
    assert result.code == 1
    assert "notes.md is a link out of" in result.err


# -- YAML: no aliases, no duplicate keys -------------------------------------------------


def _bomb(root_path: Path, running: str) -> None:
    debate_md = root_path / "council" / running / "debate.md"
    debate_md.write_text(ALIAS_BOMB.format(id=running), encoding="utf-8")


def test_an_alias_bomb_is_refused_quickly_by_show(
    running: str, root_path: Path, workdir: Path
) -> None:
    _bomb(root_path, running)
    result = bounded_council(root_path, workdir, "show", running)
    assert result.code == 1
    [line] = result.err.strip().split("\n")
    assert "alias" in line and "debate.md" in line


def test_an_alias_bomb_does_not_stop_list(running: str, root_path: Path, workdir: Path) -> None:
    _bomb(root_path, running)
    (root_path / "council" / "index.json").unlink()  # the bomb must be read, not the index
    result = bounded_council(root_path, workdir, "list", "--all")
    assert result.code == 0, result.err


def test_an_alias_bomb_gives_an_error_page_on_the_dashboard(
    running: str, root_path: Path, workdir: Path
) -> None:
    _bomb(root_path, running)
    result = bounded_dashboard_get(root_path, workdir, f"/d/{running}")
    assert result.code == 0, result.err
    status = int(result.out.split("\n", 1)[0])
    assert 400 <= status < 600
    assert "alias" in result.out


@pytest.mark.parametrize(
    "block",
    [
        "status: complete\nstatus: created\n",  # the plain subset
        "status: complete\nflow: {a: 1}\nstatus: created\n",  # what PyYAML reads
        "options:\n  - key: A\n    key: B\n    label: x\n",
        "nested: {a: 1, a: 2}\n",
    ],
)
def test_a_duplicate_key_is_refused(block: str) -> None:
    with pytest.raises(FormatError, match="duplicate key"):
        frontmatter_io.parse(f"---\n{block}---\n\nbody\n", "debate.md")


def test_an_anchor_and_alias_are_refused_even_when_small() -> None:
    with pytest.raises(FormatError, match="alias"):
        frontmatter_io.parse("---\na: &x 1\nb: *x\n---\n", "debate.md")


def test_a_deeply_nested_block_is_refused() -> None:
    block = "a: " + "[" * 200 + "]" * 200 + "\n"
    with pytest.raises(FormatError, match="nested"):
        frontmatter_io.parse(f"---\n{block}---\n", "debate.md")


def test_run_refuses_a_debate_with_two_statuses_and_keeps_the_final_report(
    finished: str, root_path: Path, council: Runner
) -> None:
    debate_md = root_path / "council" / finished / "debate.md"
    text = debate_md.read_text(encoding="utf-8")
    debate_md.write_text(
        text.replace("status: complete\n", "status: complete\nstatus: created\n", 1),
        encoding="utf-8",
    )
    before = tree_bytes(root_path)
    result = council("run", finished, "--yes")
    assert result.code == 1
    [line] = result.err.strip().split("\n")
    assert "duplicate key 'status'" in line
    assert changed_files(before, tree_bytes(root_path)) == []


# -- impossible values -------------------------------------------------------------------


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _debate_md(folder: Path, old: str, new: str) -> None:
    _edit(folder / "debate.md", old, new)


def _conviction(folder: Path) -> None:
    data = json.loads((folder / "verdicts.json").read_text(encoding="utf-8"))
    data["rounds"]["1"]["risk-auditor"]["conviction"] = 1e308
    (folder / "verdicts.json").write_text(json.dumps(data), encoding="utf-8")


CRITIQUE = entry("x") + "### Cross-examination\n- The cutover is unpriced.\n\nScore: 5/10\n"
"""A round-2 entry a critic may append: its cross-examination ends with the score."""

IMPOSSIBLE: dict[str, tuple[str, Callable[[Path], None], tuple[str, ...]]] = {
    "round 0": (
        "status",
        lambda f: _debate_md(f, "status: round_2_running", "status: round_0_running"),
        ("inject", "{id}", "A new fact."),
    ),
    "a round past the plan": (
        "status",
        lambda f: _debate_md(f, "status: round_2_running", "status: round_3_running"),
        ("inject", "{id}", "A new fact."),
    ),
    "a million rounds": (
        "rounds_planned",
        lambda f: _debate_md(f, "rounds_planned: 2", "rounds_planned: 1000000"),
        ("inject", "{id}", "A new fact."),
    ),
    "a negative round": (
        "current_round",
        lambda f: _debate_md(f, "current_round: 2", "current_round: -5"),
        ("inject", "{id}", "A new fact."),
    ),
    "a round past the plan in current_round": (
        "current_round",
        lambda f: _debate_md(f, "current_round: 2", "current_round: 7"),
        ("inject", "{id}", "A new fact."),
    ),
    "conviction 1e308": (
        "conviction",
        _conviction,
        (
            "verdict",
            "{id}",
            "growth-cfo",
            "2",
            "--stance",
            "A",
            "--conviction",
            "50",
            "--headline",
            "h",
        ),
    ),
    "negative round entries": (
        "round_entries",
        lambda f: _edit(
            f / "growth-cfo" / "context-and-persona.md", "round_entries: 1", "round_entries: -1"
        ),
        ("report", "append", "{id}", "growth-cfo", "--round", "2", "--body", CRITIQUE),
    ),
}


@pytest.mark.parametrize("case", IMPOSSIBLE)
def test_an_impossible_value_is_refused_with_one_line_and_nothing_changes(
    case: str, running: str, root_path: Path, council: Runner
) -> None:
    field, edit, command = IMPOSSIBLE[case]
    edit(root_path / "council" / running)
    before = tree_bytes(root_path)
    for args in (("show", running), tuple(running if a == "{id}" else a for a in command)):
        result = council(*args)
        assert result.code == 1, (args, result.out)
        [line] = result.err.strip().split("\n")
        assert f"'{field}'" in line, line
    assert changed_files(before, tree_bytes(root_path)) == []


def test_round_context_does_not_hand_a_linked_out_attachment_to_a_persona(
    running: str, root_path: Path, council: Runner, tmp_path: Path
) -> None:
    attachments = root_path / "council" / running / "attachments"
    attachments.mkdir()
    link_file_out(attachments, "notes.md", tmp_path)
    result = council("round-context", running, "growth-cfo")
    assert result.code == 1
    assert MARKER not in result.text
    assert "notes.md is a link out of" in result.err


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    from dreamcontext_council.folder import safe_read

    path = tmp_path / "report.md"
    path.write_bytes(b"x" * 17)
    assert safe_read.read_bytes(path, within=tmp_path, limit=17) == b"x" * 17
    with pytest.raises(FormatError, match="over the 16-byte limit"):
        safe_read.read_bytes(path, within=tmp_path, limit=16)
    assert safe_read.MAX_FILE_BYTES == 64 * 1024 * 1024


def test_a_roster_file_with_an_alias_is_refused() -> None:
    from dreamcontext_council.errors import UsageError
    from dreamcontext_council.rules.roster import parse_roster

    text = "- &p {slug: a, body: You are a.}\n- *p\n"
    with pytest.raises(UsageError, match="alias"):
        parse_roster(text, "roster.yaml")


def test_a_run_record_linked_out_of_the_debate_is_not_read(
    running: str, root_path: Path, council: Runner, tmp_path: Path
) -> None:
    folder = root_path / "council" / running
    status = council("show", running, "--json")
    outside = tmp_path / "outside-run.json"
    outside.write_text(
        json.dumps(
            {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "started_at": "2026-12-01T00:00:00Z",
                "stopped": {
                    "reason": MARKER,
                    "at": "2026-12-01T00:00:01Z",
                    "status": "round_2_running",
                },
            }
        ),
        encoding="utf-8",
    )
    (folder / "run.json").symlink_to(outside)
    for args in (("board",), ("show",), ("show", "--json"), ("list",)):
        result = council(*args, *([running] if args[0] != "list" else []))
        assert result.code == 0, (args, result.err)
        assert MARKER not in result.text, args
    assert council("show", running, "--json").out == status.out


# -- claims.json of the wrong shape ------------------------------------------------------

BAD_LEDGERS = {
    "lists that are numbers": {"claims": "none", "dropped": 5, "flags": "x"},
    "supporters a number": {"claims": [{"id": "C1", "claim": "x", "supporters": 5}]},
    "round a list": {"claims": [{"id": "C1", "claim": "x", "round": []}]},
    "flag share text": {"claims": [], "flags": [{"persona": "risk-auditor", "share": "x"}]},
    "not an object": [1, 2],
}


@pytest.mark.parametrize("ledger", BAD_LEDGERS)
def test_a_claims_json_of_the_wrong_shape_is_one_line_and_the_debate_still_shows(
    ledger: str, finished: str, root_path: Path, council: Runner
) -> None:
    folder = root_path / "council" / finished
    (folder / "claims.json").write_text(json.dumps(BAD_LEDGERS[ledger]), encoding="utf-8")
    for args in READERS[1:]:
        result = council(*args, finished)
        assert result.code == 0, (args, result.err)
        assert "Traceback" not in result.err
        text = " ".join(line.strip("│ ") for line in result.out.split("\n"))
        assert "claims.json: " in text and "fix or remove claims.json." in text
        assert "risk-auditor" in result.out  # the rest of the debate
    exported = json.loads(council("export", "--format", "json", "-o", "-", finished).out)
    assert exported["claims"] is None and exported["claims_problem"].startswith("claims.json: ")
    assert exported["personas"]
    with TestClient(create_app(Root(root_path))) as client:
        page = client.get(f"/d/{finished}")
        assert page.status_code == 200
        assert "fix or remove claims.json." in page.text
        assert 'id="personas"' in page.text
