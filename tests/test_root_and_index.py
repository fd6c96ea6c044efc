"""Where the root is found, index.json kept in step with the folders, and Node folders kept whole."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from debate_story import (
    REFERENCE,
    Chair,
    Reference,
    Runner,
    inprocess_runner,
    read_frontmatter,
    subprocess_runner,
)

from dreamcontext_council.actions import index as index_module
from dreamcontext_council.actions import rounds
from dreamcontext_council.folder.paths import Root


def test_the_nearest_root_above_the_working_directory_is_used(
    workdir: Path, root_path: Path
) -> None:
    council = subprocess_runner(workdir, None)
    debate_id = council("new", "Found from below?").last_line
    deep = workdir / "src" / "pkg"
    deep.mkdir(parents=True)
    shown = council("show", debate_id, "--json", cwd=deep)
    assert shown.code == 0, shown.err
    assert shown.json()["topic"] == "Found from below?"
    assert not (deep / "_dream_context").exists()
    again = council("new", "Second from below?", cwd=deep)
    assert "Created" not in again.out
    assert (root_path / "council" / again.last_line).is_dir()


def test_root_option_and_variable_name_the_root_or_its_parent(
    tmp_path: Path, workdir: Path
) -> None:
    elsewhere = tmp_path / "project"
    elsewhere.mkdir()
    council = subprocess_runner(workdir, None)
    made = council("new", "Rooted elsewhere?", "--root", str(elsewhere / "_dream_context"))
    assert made.code == 0, made.err
    assert (elsewhere / "_dream_context" / "council" / made.last_line).is_dir()
    assert not (workdir / "_dream_context").exists()
    by_parent = council("show", made.last_line, "--json", env={"DREAMCONTEXT_ROOT": str(elsewhere)})
    assert by_parent.code == 0, by_parent.err
    by_option = council("list", "--all", "--json", "--root", str(elsewhere))
    assert [e["id"] for e in by_option.json()] == [made.last_line]


def index_of(chair: Chair) -> list[dict[str, object]]:
    return json.loads((chair.root / "council" / "index.json").read_text(encoding="utf-8"))


def test_a_missing_index_is_rebuilt_from_the_folders(chair: Chair, cli: Runner) -> None:
    first = chair.new("First?", personas=())
    second = chair.new("Second?", personas=())
    (chair.root / "council" / "index.json").unlink()
    listed = cli("list", "--all", "--json").json()
    assert {e["id"] for e in listed} == {first, second}
    assert {e["id"] for e in index_of(chair)} == {first, second}


def test_a_corrupt_index_is_rebuilt(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new("Survives a torn index?", personas=())
    (chair.root / "council" / "index.json").write_text("[{torn")
    assert [e["id"] for e in cli("list", "--all", "--json").json()] == [debate_id]


def test_debate_md_wins_over_a_stale_index(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new("Edited by hand?", personas=())
    debate_md = chair.folder(debate_id) / "debate.md"
    text = debate_md.read_text(encoding="utf-8")
    debate_md.write_text(text.replace("rounds_planned: 2", "rounds_planned: 5"), encoding="utf-8")
    (entry,) = cli("list", "--all", "--json").json()
    assert entry["rounds_planned"] == 5
    assert index_of(chair)[0]["rounds_planned"] == 5


def test_an_index_entry_without_a_folder_is_dropped(chair: Chair, cli: Runner) -> None:
    kept = chair.new("Kept?", personas=())
    entries = index_of(chair)
    ghost = dict(entries[0], id="council_Ghost123", topic="Deleted by hand")
    (chair.root / "council" / "index.json").write_text(json.dumps([ghost, *entries]))
    assert [e["id"] for e in cli("list", "--all", "--json").json()] == [kept]


def test_unknown_frontmatter_keys_survive_our_writes(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new(personas=("risk-auditor",))
    debate_md = chair.folder(debate_id) / "debate.md"
    text = debate_md.read_text(encoding="utf-8")
    extra = "protocol: socratic\nseed: 7\nflags:\n  - one family only\n"
    debate_md.write_text(text.replace("---\n\n", extra + "---\n\n", 1), encoding="utf-8")
    before, _ = read_frontmatter(debate_md)
    chair.ok("inject", debate_id, "A fact.")
    chair.ok("round", "start", debate_id, "1")
    after, _ = read_frontmatter(debate_md)
    assert list(after) == list(before)
    assert (after["protocol"], after["seed"], after["flags"]) == (
        "socratic",
        7,
        ["one family only"],
    )


def test_promote_force_on_a_node_folder_keeps_its_identity(fixture_root: Reference) -> None:
    cli = inprocess_runner(fixture_root.root)
    debate_md = fixture_root.folder / "debate.md"
    meta_before, body_before = read_frontmatter(debate_md)
    doc = next((fixture_root.root / "knowledge").glob("decision-*.md"))
    doc_before, _ = read_frontmatter(doc)
    result = cli("promote", fixture_root.id, "--force")
    assert result.code == 0, result.err
    meta_after, body_after = read_frontmatter(debate_md)
    assert list(meta_after) == list(meta_before)
    assert {k: v for k, v in meta_after.items() if k != "updated_at"} == {
        k: v for k, v in meta_before.items() if k != "updated_at"
    }
    assert body_after == body_before
    doc_after, doc_body = read_frontmatter(doc)
    assert doc_after["id"] == doc_before["id"] == "know_I_wKLKP9"
    assert doc_after["created_at"] == doc_before["created_at"]
    node_body = read_frontmatter(REFERENCE / "_dream_context" / "knowledge" / doc.name)[1]
    # The same sections, in the same order, with the same text, as the Node tool wrote.
    assert doc_body.split("\n---\n")[0] == node_body.split("\n---\n")[0]


def test_a_list_racing_a_write_never_leaves_a_stale_index(
    chair: Chair, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    debate_id = chair.new("Raced?", personas=())
    (chair.root / "council" / "index.json").unlink()  # the list must read debate.md
    real_read = index_module.read_text
    writers: list[threading.Thread] = []

    def read_while_another_command_writes(path: Path, *, within: Path) -> str:
        text = real_read(path, within=within)
        if path.name == "debate.md" and not writers:
            # Another command raises rounds_planned between this list's read and its write.
            writer = threading.Thread(target=rounds.extend_rounds, args=(root, debate_id, 1))
            writers.append(writer)
            writer.start()
            writer.join(timeout=1.0)
        return text

    monkeypatch.setattr(index_module, "read_text", read_while_another_command_writes)
    index_module.load_index(root)
    writers[0].join(timeout=60)
    monkeypatch.undo()
    meta, _ = read_frontmatter(chair.folder(debate_id) / "debate.md")
    assert meta["rounds_planned"] == 3
    assert [e["rounds_planned"] for e in index_of(chair)] == [3]
    assert [e["rounds_planned"] for e in index_module.load_index(root)] == [3]


def test_files_saved_by_a_windows_editor_still_read(
    chair: Chair, cli: Runner, running: str
) -> None:
    for name in ("debate.md", "growth-cfo/context-and-persona.md", "risk-auditor/report.md"):
        path = chair.folder(running) / name
        text = path.read_text(encoding="utf-8")
        path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    shown = cli("show", running, "--json")
    assert shown.code == 0, shown.err
    assert shown.json()["status"] == "round_2_running"
    assert "growth-cfo" in cli("round-context", running, "growth-cfo").out
    assert cli("summaries", running, "2", "--json").json()[0]["summary"]
    assert cli("inject", running, "Saved on Windows").code == 0


def test_a_deferred_index_catches_up_once_and_reads_stay_right_meanwhile(
    chair: Chair, root: Root
) -> None:
    first = chair.new("Before the batch?", personas=())
    index_file = chair.root / "council" / "index.json"
    before = index_file.read_bytes()
    with index_module.deferred_index(root):
        second = chair.new("During the batch?", personas=())
        rounds.extend_rounds(root, first, 1)
        assert index_file.read_bytes() == before  # no write while the batch runs
        listed = {e["id"]: e["rounds_planned"] for e in index_module.load_index(root)}
        assert listed == {first: 3, second: 2}  # a reader sees the folders, not the old index
        rounds.extend_rounds(root, second, 2)
    assert {e["id"]: e["rounds_planned"] for e in index_of(chair)} == {first: 3, second: 4}
    assert index_module.index_problem(root) is None
