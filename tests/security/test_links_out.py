"""Links out of the root, as a cloned repository could commit them: no command writes through
one. `usage.jsonl`, `knowledge/`, `tmp/`, a persona's `researches/` or `raw/`, and `council/`
itself each point at a folder outside the root; the real command gives one line naming the
link and exit 1, and the folder outside is exactly as it was. The dashboard does not serve a
knowledge doc through a `knowledge` link out either."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from debate_story import OPTIONS, TOPIC, Chair, Result, Runner
from mcp import Client, StdioServerParameters
from offline import clean_environment
from starlette.testclient import TestClient

from dreamcontext_council.dashboard import create_app
from dreamcontext_council.folder.paths import Root

from .engine_writes_support import LONG_CAP_KB, long_command
from .hostile_folders_support import MARKER


def outside_folder(tmp_path: Path) -> Path:
    """A folder outside the root, holding one file with the marker."""
    folder = tmp_path / "outside"
    folder.mkdir(exist_ok=True)
    (folder / "kept.md").write_text(f"{MARKER}\n", encoding="utf-8")
    return folder


def contents(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (links not followed), by relative path."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def link_out(path: Path, target: Path) -> None:
    """Replace `path` (a file, a folder or nothing) with a link to `target`."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target, target_is_directory=target.is_dir())


def new_debate(chair: Chair, personas: tuple[str, ...], rounds: int = 2) -> str:
    """A debate whose personas take the model `run --model` names."""
    debate_id = chair.ok("new", TOPIC, "--options", OPTIONS, "--rounds", str(rounds))
    debate_id = debate_id.strip().split("\n")[-1]
    for slug in personas:
        body = f"You are {slug}. You judge every option by its cost and risk."
        chair.ok("agent", "create", debate_id, slug, "--model", "", "--body", body)
    return debate_id


def refused(result: Result, link: Path) -> None:
    """Exit 1 and one error line (after a run's progress lines) naming the link as a link
    out, saying to remove it."""
    assert result.code == 1, (result.out, result.err)
    line = result.err.strip().split("\n")[-1]
    assert line.startswith("Error: "), result.err
    assert result.err.count(" is a link ") == 1, result.err
    assert f"{link} is a link out of" in line, line
    assert "remove the link" in line, line


@pytest.mark.parametrize("name", ["usage.jsonl", ".run.lock"])
def test_a_run_does_not_write_through_a_linked_file_of_the_debate(
    name: str, chair: Chair, council: Runner, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    debate_id = new_debate(chair, ("risk-auditor", "growth-cfo"))
    linked = chair.folder(debate_id) / name
    # A link to a file not there yet: a read finds nothing, a write would make it outside.
    link_out(linked, outside / name)
    before = contents(outside)

    result = council("run", debate_id, "--model", "scripted")

    assert contents(outside) == before
    refused(result, linked)


def test_promote_does_not_write_through_a_knowledge_link(
    finished: str, root_path: Path, council: Runner, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    link_out(root_path / "knowledge", outside)
    before = contents(outside)

    result = council("promote", finished, "--to", "picked-by-the-user")

    assert contents(outside) == before
    refused(result, root_path / "knowledge")


def test_council_promote_over_mcp_does_not_write_through_a_knowledge_link(
    finished: str, root_path: Path, workdir: Path, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    link_out(root_path / "knowledge", outside)
    before = contents(outside)
    answers: list[str] = []

    async def scenario(client: Client) -> None:
        result = await client.call_tool(
            "council_promote", {"debate_id": finished, "to": "picked-by-the-agent"}
        )
        assert result.is_error, result.structured_content
        (block,) = result.content
        answers.append(block.text)  # type: ignore[union-attr]

    home = tmp_path / "home"
    home.mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dreamcontext_council", "council", "mcp"],
        env=clean_environment(os.environ, home),
        cwd=workdir,
    )

    async def main() -> None:
        with anyio.fail_after(120):
            async with Client(params, read_timeout_seconds=60) as client:
                await scenario(client)

    anyio.run(main)
    [answer] = answers
    assert f"{root_path / 'knowledge'} is a link out of" in answer
    assert contents(outside) == before


def test_a_tmp_link_stops_new_before_anything_is_made(
    finished: str, root_path: Path, council: Runner, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    link_out(root_path / "tmp", outside)
    before = contents(outside)
    debates = sorted(os.listdir(root_path / "council"))

    result = council("new", "Where should sessions live?")

    assert contents(outside) == before
    refused(result, root_path / "tmp")
    assert sorted(os.listdir(root_path / "council")) == debates


def test_live_clear_deletes_nothing_through_a_tmp_link(
    finished: str, root_path: Path, council: Runner, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    (outside / ".council-live.json").write_text("{}\n", encoding="utf-8")
    link_out(root_path / "tmp", outside)
    before = contents(outside)

    result = council("live", "clear")

    assert contents(outside) == before
    refused(result, root_path / "tmp")


def test_a_research_note_is_not_written_through_a_researches_link(
    chair: Chair, council: Runner, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    debate_id = chair.new()
    researches = chair.folder(debate_id) / "risk-auditor" / "researches"
    link_out(researches, outside)
    before = contents(outside)

    result = council(
        "research", "add", debate_id, "risk-auditor", "session cost", "--body", "2 KB each."
    )

    assert contents(outside) == before
    refused(result, researches)


def test_a_capped_answer_is_not_kept_through_a_raw_link(
    chair: Chair, council: Runner, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    said = tmp_path / "said"
    said.mkdir()
    debate_id = new_debate(chair, ("risk-auditor", "growth-cfo"), rounds=1)
    raw = chair.folder(debate_id) / "risk-auditor" / "raw"
    link_out(raw, outside)
    before = contents(outside)

    result = council(
        "run",
        debate_id,
        "--model",
        long_command(said),
        "--max-answer-kb",
        str(LONG_CAP_KB),
        "--yes",
    )

    assert contents(outside) == before
    refused(result, raw)


def test_no_debate_folder_is_made_through_a_council_link(
    finished: str, root_path: Path, council: Runner, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    moved = outside / "council"
    shutil.move(str(root_path / "council"), moved)
    (root_path / "council").symlink_to(moved, target_is_directory=True)
    before = contents(outside)

    result = council("new", "Where should sessions live?")

    assert contents(outside) == before
    refused(result, root_path / "council")


def test_the_dashboard_does_not_serve_a_doc_through_a_knowledge_link(
    finished: str, root_path: Path, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    (outside / "decision-leak.md").write_text(
        f"---\ntitle: {MARKER}\n---\n\n{MARKER}\n", encoding="utf-8"
    )
    link_out(root_path / "knowledge", outside)

    with TestClient(create_app(Root(root_path))) as client:
        page = client.get("/knowledge/decision-leak.md")

    assert page.status_code == 500
    assert MARKER not in page.text
    assert "knowledge is a link out of" in page.text


# -- the layer itself (imported in each test: the module runs on code without it) ---------


def test_a_folder_link_that_stays_inside_the_root_is_not_written_through(tmp_path: Path) -> None:
    from dreamcontext_council.errors import LinkOut
    from dreamcontext_council.folder.storage import append_line, atomic_write_text

    root = tmp_path / "_dream_context"
    real = root / "council" / "council_AbC12345" / "risk-auditor"
    real.mkdir(parents=True)
    linked = root / "council" / "council_AbC12345" / "growth-cfo"
    linked.symlink_to(real, target_is_directory=True)

    with pytest.raises(LinkOut, match=r"growth-cfo is a link inside .*report\.md was not written"):
        atomic_write_text(linked / "report.md", "text\n", within=root)
    with pytest.raises(LinkOut, match="growth-cfo is a link inside"):
        append_line(linked / "usage.jsonl", "{}", within=root)
    assert list(real.iterdir()) == []


def test_missing_folders_are_made_real_and_a_path_leaving_the_root_is_refused(
    tmp_path: Path,
) -> None:
    from dreamcontext_council.errors import LinkOut
    from dreamcontext_council.folder.storage import atomic_write_text

    root = tmp_path / "_dream_context"
    report = root / "council" / "council_AbC12345" / "risk-auditor" / "report.md"

    atomic_write_text(report, "text\n", within=root)
    assert report.read_text(encoding="utf-8") == "text\n"
    assert not any(part.is_symlink() for part in report.parents)
    with pytest.raises(LinkOut, match="is not a path inside"):
        atomic_write_text(root / "council" / ".." / ".." / "escaped.md", "x", within=root)
    assert not (tmp_path / "escaped.md").exists()
