"""A folder written by our commands has every field of format.md, in the shapes it lists."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
import yaml
from debate_story import LIVE_FILE, TOPIC, Chair, Runner

from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.paths import Root

DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def frontmatter_of(path: Path) -> dict[str, object]:
    """The YAML between the --- lines, read as plain YAML (as gray-matter would)."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), path
    block = text[4 : text.index("\n---\n", 4)]
    data = yaml.safe_load(block)
    assert isinstance(data, dict)
    return data


def test_debate_md_frontmatter_has_every_field_with_its_type(chair: Chair, finished: str) -> None:
    meta = frontmatter_of(chair.folder(finished) / "debate.md")
    assert re.fullmatch(r"council_[A-Za-z0-9]{8}", str(meta["id"])) and meta["id"] == finished
    assert meta["topic"] == TOPIC
    assert meta["status"] == "complete"
    assert meta["rounds_planned"] == 2 and meta["current_round"] == 2
    assert meta["interrupt_between_rounds"] is False
    assert meta["personas"] == ["risk-auditor", "growth-cfo", "user-advocate"]
    assert meta["options"] == [
        {"key": "A", "label": "Migrate now"},
        {"key": "B", "label": "Stay on Redis"},
    ]
    assert meta["promoted_to_knowledge"] == (
        "knowledge/decision-should-we-migrate-the-session-store-from-redis-to-postgres.md"
    )
    for key in ("created_at", "updated_at"):
        assert isinstance(meta[key], str) and DATE.fullmatch(meta[key]), key


def test_debate_md_body_has_the_three_sections_and_the_fact(chair: Chair, finished: str) -> None:
    text = (chair.folder(finished) / "debate.md").read_text(encoding="utf-8")
    body = text.split("\n---\n", 1)[1]
    headings = [line for line in body.split("\n") if line.startswith("## ")]
    assert headings == ["## Question", "## Constraints & Known Facts", "## Session registry"]
    assert f"## Question\n\n{TOPIC}\n" in body
    assert "- **[Interlude R1]** Postgres is already run by the platform team" in body


def test_a_fresh_debate_md_starts_as_created_with_no_promotion(chair: Chair, cli: Runner) -> None:
    debate_id = cli("new", "Fresh?").last_line
    meta = frontmatter_of(chair.folder(debate_id) / "debate.md")
    assert meta["status"] == "created" and meta["current_round"] == 0
    assert meta["promoted_to_knowledge"] is None
    assert meta["personas"] == [] and meta["options"] == []
    assert (
        (chair.folder(debate_id) / "round-log.md")
        .read_text(encoding="utf-8")
        .startswith(f"# Round log — {debate_id}\n")
    )


def test_index_json_is_newest_first_with_the_listed_keys(chair: Chair, finished: str) -> None:
    later = chair.new("A later debate?", personas=())
    entries = json.loads((chair.root / "council" / "index.json").read_text(encoding="utf-8"))
    assert [e["id"] for e in entries] == [later, finished]
    keys = [
        "id",
        "topic",
        "status",
        "rounds_planned",
        "current_round",
        "promoted_to_knowledge",
        "created_at",
        "updated_at",
    ]
    for e in entries:
        assert list(e) == keys
    meta = frontmatter_of(chair.folder(finished) / "debate.md")
    assert {k: entries[1][k] for k in keys} == {k: meta[k] for k in keys}


def test_verdicts_json_has_options_and_rounds_of_verdicts(chair: Chair, finished: str) -> None:
    data = json.loads((chair.folder(finished) / "verdicts.json").read_text(encoding="utf-8"))
    assert list(data) == ["options", "rounds"]
    assert data["options"] == [
        {"key": "A", "label": "Migrate now"},
        {"key": "B", "label": "Stay on Redis"},
    ]
    assert list(data["rounds"]) == ["1", "2"]
    verdict = data["rounds"]["2"]["user-advocate"]
    assert list(verdict) == ["stance", "conviction", "headline", "concession", "at"]
    assert (verdict["stance"], verdict["conviction"]) == ("B", 40)
    assert verdict["headline"] == "user-advocate says B in R2"
    assert verdict["concession"] == "peer point R2"
    assert STAMP.fullmatch(verdict["at"])


def test_free_stances_become_options_keyed_by_their_slug(chair: Chair) -> None:
    debate_id = chair.new(options=None, personas=("risk-auditor",))
    chair.ok("round", "start", debate_id, "1")
    long = "Adopt the managed Postgres service with a staged cutover"
    chair.ok(
        "verdict",
        debate_id,
        "risk-auditor",
        "1",
        "--stance",
        long,
        "--conviction",
        "70",
        "--headline",
        "h",
    )
    data = json.loads((chair.folder(debate_id) / "verdicts.json").read_text(encoding="utf-8"))
    key = "adopt-the-managed-postgr"
    assert data["options"] == [{"key": key, "label": long}]
    assert data["rounds"]["1"]["risk-auditor"]["stance"] == key


def test_report_md_has_its_frontmatter_and_entries_newest_first(
    chair: Chair, finished: str
) -> None:
    path = chair.folder(finished) / "growth-cfo" / "report.md"
    assert frontmatter_of(path) == {"persona": "growth-cfo", "rounds_completed": 2}
    text = path.read_text(encoding="utf-8")
    rounds = re.findall(r"^## Round (\d+) — (\d{4}-\d{2}-\d{2})$", text, re.MULTILINE)
    assert [r for r, _ in rounds] == ["2", "1"]
    for title in (
        "Executive Summary",
        "Position",
        "Reasoning",
        "Reactions to peers",
        "Open questions",
    ):
        assert text.count(f"### {title}\n") == 2, title


def test_context_file_has_frontmatter_panel_and_directives(chair: Chair, finished: str) -> None:
    path = chair.folder(finished) / "growth-cfo" / "context-and-persona.md"
    meta = frontmatter_of(path)
    assert meta == {
        "name": "growth-cfo",
        "model": "sonnet",
        "aspects": ["cost", "risk", "latency"],
        "round_entries": 2,
    }
    body = path.read_text(encoding="utf-8").split("\n---\n", 1)[1]
    assert body.lstrip("\n").startswith("## Persona\n")
    assert (
        "## Round 2 — Directives\n\n- What does the migration cost in engineer-weeks?\n- Steelman option B for this round.\n"
        in body
    )
    panel = body[body.index("## Round 2 — Cross-context loaded") :]
    assert "### risk-auditor\n\nrisk-auditor thinks round 1 points to option A." in panel
    assert "### user-advocate\n\nuser-advocate thinks round 1 points to option B." in panel
    assert "### growth-cfo" not in panel  # a persona does not read itself


def test_research_index_and_note(chair: Chair, finished: str) -> None:
    folder = chair.folder(finished) / "risk-auditor" / "researches"
    index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    assert len(index) == 1 and list(index[0]) == ["slug", "topic", "added_at"]
    assert index[0]["slug"] == "postgres-write-throughput"
    assert DATE.fullmatch(index[0]["added_at"])
    note = (folder / "postgres-write-throughput.md").read_text(encoding="utf-8")
    lines = note.split("\n")
    assert lines[0] == "# postgres write throughput"
    assert re.fullmatch(r"_Added \d{4}-\d{2}-\d{2} by risk-auditor_", lines[2])
    assert "40k small writes/s" in note


def test_knowledge_doc_has_the_format_frontmatter_and_sections(chair: Chair, finished: str) -> None:
    path = (
        chair.root
        / "knowledge"
        / "decision-should-we-migrate-the-session-store-from-redis-to-postgres.md"
    )
    meta = frontmatter_of(path)
    assert list(meta) == [
        "id",
        "name",
        "type",
        "source_debate",
        "topic",
        "personas",
        "rounds",
        "created_at",
        "updated_at",
        "tags",
    ]
    assert re.fullmatch(r"know_[A-Za-z0-9_-]{8}", str(meta["id"]))
    assert meta["name"] == f"Decision: {TOPIC}"
    assert meta["type"] == "decision" and meta["source_debate"] == finished
    assert meta["topic"] == TOPIC and meta["rounds"] == 2
    assert meta["personas"] == ["risk-auditor", "growth-cfo", "user-advocate"]
    assert meta["tags"] == ["decision", "council"]
    body = path.read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", body, re.MULTILINE)
    assert headings == [
        "Verdict",
        "Decision card",
        "Why",
        "Minority view & revisit conditions",
        "Open risks",
    ]
    assert "\n---\n\n_Promoted from council debate" in body
    assert f"_dream_context/council/{finished}/final-report.md" in body.rsplit("---", 1)[1]


def test_live_file_has_the_format_keys(chair: Chair, finished: str) -> None:
    state = json.loads((chair.root / LIVE_FILE).read_text(encoding="utf-8"))
    assert set(state) == {
        "debate", "topic", "session", "started", "updated", "phase", "round", "rounds",
        "options", "personas", "convergence", "leading",
    }  # fmt: skip
    assert state["debate"] == finished and state["phase"] == "done"
    assert (state["round"], state["rounds"]) == (2, 2)
    assert STAMP.fullmatch(state["started"]) and STAMP.fullmatch(state["updated"])
    assert (state["convergence"], state["leading"]) == (78, "A")
    user = next(p for p in state["personas"] if p["slug"] == "user-advocate")
    assert user == {
        "slug": "user-advocate",
        "state": "done",
        "model": "sonnet",
        "stance": "B",
        "conviction": 40,
        "headline": "user-advocate says B in R2",
        "prevStance": "B",
        "prevConviction": 55,
    }


def test_live_file_follows_the_phases(chair: Chair) -> None:
    def live() -> dict[str, object]:
        return json.loads((chair.root / LIVE_FILE).read_text(encoding="utf-8"))

    debate_id = chair.new(personas=("risk-auditor", "growth-cfo"))
    assert live()["phase"] == "setup"
    chair.ok("round", "start", debate_id, "1")
    assert live()["phase"] == "debate"
    assert {p["slug"]: p["state"] for p in live()["personas"]} == {  # type: ignore[attr-defined]
        "risk-auditor": "wait",
        "growth-cfo": "wait",
    }
    chair.submit(debate_id, "risk-auditor", 1)
    states = {p["slug"]: p["state"] for p in live()["personas"]}  # type: ignore[attr-defined]
    assert states == {"risk-auditor": "done", "growth-cfo": "wait"}
    chair.submit(debate_id, "growth-cfo", 1, "B", 40)
    chair.ok("round", "end", debate_id, "1")
    chair.ok("synthesize", debate_id)
    assert live()["phase"] == "synthesis"


def test_writes_follow_the_umask_like_any_file_the_user_makes(chair: Chair) -> None:
    debate_id = chair.new(personas=("risk-auditor",))
    mask = os.umask(0)
    os.umask(mask)
    for path in (chair.folder(debate_id) / "debate.md", chair.root / "council" / "index.json"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask, path


def test_files_end_with_one_newline_and_lf_endings(chair: Chair, finished: str) -> None:
    for path in chair.root.rglob("*"):
        if path.is_file() and path.name != ".council.lock" and path.name != "final-report.md":
            data = path.read_bytes()
            assert b"\r\n" not in data, path
            assert data.endswith(b"\n") and not data.endswith(b"\n\n"), path


ODD_TOPICS = [
    "Should we ship \"v2\" or keep 'v1'?",
    "'Quoted at the start' and at the end: \"yes\"",
    "Ship it? 🚀🔥 — é à ü ß",
    "我们应该迁移到 Postgres 吗？",
    "האם לעבור ל-Postgres? هل ننتقل؟",
    "key: value # not a comment - [not, a, list] {nor: a map} &anchor *alias | > % @ `",
    "true",
    "2026-11-30",
    "- a dash first",
    "x" * 1990 + " end?",
]


@pytest.mark.parametrize("topic", ODD_TOPICS, ids=lambda t: t[:20])
def test_odd_topics_survive_new_then_show(chair: Chair, cli: Runner, topic: str) -> None:
    debate_id = cli("new", "--", topic).last_line
    assert cli("show", debate_id, "--json").json()["topic"] == topic
    meta = frontmatter_of(chair.folder(debate_id) / "debate.md")
    assert meta["topic"] == topic
    listed = cli("list", "--json").json()
    assert listed[0]["topic"] == topic


def test_a_two_thousand_character_topic_survives_a_real_process(
    council: Runner, root_path: Path
) -> None:
    topic = ("Should we migrate \"sessions\" to Postgres — 迁移 🚀 'now'? " * 40)[:2000].strip()
    made = council("new", topic)
    assert made.code == 0, made.err
    shown = council("show", made.last_line, "--json")
    assert shown.json()["topic"] == topic


def test_the_parse_cache_keeps_the_newest_parses_when_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dreamcontext_council.actions import files as files_module

    monkeypatch.setattr(files_module, "_PARSE_CACHE_LIMIT", 4)
    monkeypatch.setattr(files_module, "_parse_cache", {})
    parsed: list[str] = []

    def parse(text: str) -> dict[str, str]:
        parsed.append(text)
        return {"text": text}

    paths = []
    for n in range(6):
        path = tmp_path / f"file-{n}.md"
        path.write_text(f"file {n}", encoding="utf-8")
        paths.append(path)
        files_module._parsed(path, tmp_path, parse)
        files_module._parsed(path, tmp_path, parse)  # a file read again is the one kept
    parsed.clear()
    copy = files_module._parsed(paths[-1], tmp_path, parse)
    copy["text"] = "changed by the caller"
    assert files_module._parsed(paths[-1], tmp_path, parse) == {"text": "file 5"}
    for path in paths[2:]:
        files_module._parsed(path, tmp_path, parse)
    assert parsed == []  # the newest four stayed parsed (a full cache used to forget them all)
    files_module._parsed(paths[0], tmp_path, parse)
    assert parsed == ["file 0"]  # the oldest made room


def test_a_file_read_once_is_not_pickled_and_one_read_again_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-shot command reads most files once: their parse is only noted, so printing a
    board loads no pickle (tests/faults/test_imports.py); a file read again is kept."""
    from dreamcontext_council.actions import files as files_module

    monkeypatch.setattr(files_module, "_parse_cache", {})
    parsed: list[str] = []

    def parse(text: str) -> list[str]:
        parsed.append(text)
        return [text]

    path = tmp_path / "verdicts.json"
    path.write_text("{}", encoding="utf-8")
    assert files_module._parsed(path, tmp_path, parse) == ["{}"]
    assert files_module._parse_cache[str(path)][1] is None
    assert files_module._parsed(path, tmp_path, parse) == ["{}"]
    assert isinstance(files_module._parse_cache[str(path)][1], bytes)
    files_module._parsed(path, tmp_path, parse).append("changed by the caller")
    assert files_module._parsed(path, tmp_path, parse) == ["{}"]
    assert parsed == ["{}", "{}"]


def test_a_cached_parse_looks_at_each_part_once_and_sees_a_rewrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from dreamcontext_council.actions import files as files_module
    from dreamcontext_council.folder.storage import atomic_write_text

    monkeypatch.setattr(files_module, "_parse_cache", {})
    monkeypatch.setattr(files_module, "racy_window_ns", lambda info: 0)  # settled: signature
    path = tmp_path / "persona-1" / "report.md"
    atomic_write_text(path, "first", within=tmp_path)
    assert files_module._parsed(path, tmp_path, str.upper) == "FIRST"
    assert files_module._parsed(path, tmp_path, str.upper) == "FIRST"  # read again: kept
    looked: list[tuple[str, str]] = []
    for name in ("stat", "lstat"):
        real = getattr(os, name)

        def counted(target: object, *args: object, _real: object = real, _name: str = name,
                    **kwargs: object) -> os.stat_result:  # fmt: skip
            looked.append((_name, os.fspath(target)))  # type: ignore[arg-type]
            return _real(target, *args, **kwargs)  # type: ignore[operator,no-any-return]

        monkeypatch.setattr(os, name, counted)

    assert files_module._parsed(path, tmp_path, str.upper) == "FIRST"
    assert looked == [("lstat", str(path.parent)), ("lstat", str(path))]
    atomic_write_text(path, "second", within=tmp_path)
    assert files_module._parsed(path, tmp_path, str.upper) == "SECOND"


def test_a_round_log_entry_is_appended_in_place(chair: Chair, root: Root) -> None:
    from dreamcontext_council.actions.files import DebateFiles
    from dreamcontext_council.rules import roundlog

    debate_id = chair.new()
    files = DebateFiles(root, debate_id)
    path = files.paths.round_log
    before = path.read_bytes()
    inode = path.stat().st_ino

    files.append_log("Fact added — 2026-12-01", ["The budget is fixed."])

    after = path.read_bytes()
    assert after == roundlog.append_entry(before.decode(), "Fact added — 2026-12-01",
                                          ["The budget is fixed."]).encode()  # fmt: skip
    assert path.stat().st_ino == inode  # the same file, longer: no copy renamed over it
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    "odd",
    [b"\r\n", b"  \n\n"],
    ids=["crlf", "trailing-blanks"],
)
def test_a_round_log_that_needs_tidying_is_rewritten_whole(
    chair: Chair, root: Root, odd: bytes
) -> None:
    from dreamcontext_council.actions.files import DebateFiles

    debate_id = chair.new()
    files = DebateFiles(root, debate_id)
    path = files.paths.round_log
    path.write_bytes(path.read_bytes().rstrip(b"\n") + odd)

    files.append_log("Fact added — 2026-12-01", ["The budget is fixed."])

    text = path.read_bytes().decode()
    assert "\r" not in text
    assert text.endswith("\n\n## Fact added — 2026-12-01\n- The budget is fixed.\n")
    assert "  \n" not in text


def test_a_round_log_that_is_a_link_is_replaced_not_written_through(
    chair: Chair, root: Root
) -> None:
    from dreamcontext_council.actions.files import DebateFiles

    debate_id = chair.new()
    files = DebateFiles(root, debate_id)
    path = files.paths.round_log
    target = path.parent / "elsewhere.md"
    target.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(target.name)
    kept = target.read_bytes()

    files.append_log("Fact added — 2026-12-01", ["The budget is fixed."])

    assert not path.is_symlink()
    assert target.read_bytes() == kept
    assert path.read_text().endswith("- The budget is fixed.\n")


def test_a_rewrite_that_looks_unchanged_is_parsed_again_while_it_is_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system may give a rewrite of the same size, within one tick of its clock, the
    inode number the old file freed: same signature, new text. A new file's text is compared."""
    from dreamcontext_council.actions import files as files_module
    from dreamcontext_council.folder.storage import atomic_write_text

    monkeypatch.setattr(files_module, "_parse_cache", {})
    path = tmp_path / "debate.md"
    atomic_write_text(path, "rounds_planned: 2", within=tmp_path)
    first = os.stat(path)
    assert files_module._parsed(path, tmp_path, str.upper) == "ROUNDS_PLANNED: 2"

    atomic_write_text(path, "rounds_planned: 4", within=tmp_path)  # the same size
    monkeypatch.setattr(files_module, "inside_with_info", lambda p, w: (p, first))  # same stamp
    # ... and within the same tick of the clock, however long the writes took here
    monkeypatch.setattr(files_module.time, "time_ns", lambda: first.st_ctime_ns + 1_000_000)

    assert files_module._parsed(path, tmp_path, str.upper) == "ROUNDS_PLANNED: 4"
    assert files_module._parsed(path, tmp_path, str.upper) == "ROUNDS_PLANNED: 4"


@pytest.mark.parametrize(
    ("stamp_ns", "compared"),
    [(1_700_000_000_123_456_789, False), (1_700_000_000_000_000_000, True)],
    ids=["fine-stamps", "whole-second-stamps"],
)
def test_a_file_is_compared_by_its_text_only_within_its_file_systems_tick(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stamp_ns: int, compared: bool
) -> None:
    """Stamps finer than a second move every few ms: a file parsed 0.1 s after its change
    is trusted by its signature. Whole-second stamps (FAT, HFS+) may hide a change for up
    to 2 s, so such a file is read and compared again for that long."""
    import types

    from dreamcontext_council.actions import files as files_module
    from dreamcontext_council.folder.storage import FINE_RACY_NS, RACY_NS, atomic_write_text

    monkeypatch.setattr(files_module, "_parse_cache", {})
    path = tmp_path / "verdicts.json"
    atomic_write_text(path, "{}", within=tmp_path)
    os.utime(path, ns=(stamp_ns, stamp_ns))
    changed = max(stamp_ns, os.stat(path).st_ctime_ns)
    later = changed + (FINE_RACY_NS + RACY_NS) // 2
    monkeypatch.setattr(files_module, "time", types.SimpleNamespace(time_ns=lambda: later))
    read: list[Path] = []
    real_read = files_module.read_text

    def counted(target: Path, *, within: Path, checked: bool = False) -> str:
        read.append(target)
        return real_read(target, within=within, checked=checked)

    monkeypatch.setattr(files_module, "read_text", counted)
    monkeypatch.setattr(files_module, "inside_with_info", lambda p, w: (p, os.stat(p)))

    for _ in range(3):  # the second parse is kept (the first is only noted)
        assert files_module._parsed(path, tmp_path, str.upper) == "{}"
    assert len(read) == (3 if compared else 2)


@pytest.mark.parametrize(
    "written",
    ["plain\n", "\ufeffa BOM first\n", "crlf\r\nand a lone\rcarriage return\n"],
    ids=["plain", "bom", "cr"],
)
def test_a_file_written_and_read_again_in_one_hold_is_not_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str
) -> None:
    """Within one hold of the lock no cooperating writer changes the folder, so the text a
    write put in a file is what reading it back would give: the parse comes from that text,
    with the same newline and BOM handling as a read from disk, and is kept for later holds."""
    from dreamcontext_council.actions import files as files_module
    from dreamcontext_council.folder.storage import atomic_write_text, locked, read_text

    monkeypatch.setattr(files_module, "_parse_cache", {})
    monkeypatch.setattr(files_module, "racy_window_ns", lambda info: 0)  # settled: signature
    path = tmp_path / "persona-1" / "report.md"
    atomic_write_text(path, "before\n", within=tmp_path)
    read: list[Path] = []
    parsed: list[str] = []

    def counted(target: Path, *, within: Path, checked: bool = False) -> str:
        read.append(target)
        return read_text(target, within=within, checked=checked)

    def parse(text: str) -> str:
        parsed.append(text)
        return text

    monkeypatch.setattr(files_module, "read_text", counted)
    with locked(tmp_path, within=tmp_path):
        assert files_module._parsed(path, tmp_path, parse) == "before\n"
        atomic_write_text(path, written, within=tmp_path)
        in_hold = files_module._parsed(path, tmp_path, parse)
        assert files_module._parsed(path, tmp_path, parse) == in_hold
    assert read == [path]  # once, before the write
    assert in_hold == read_text(path, within=tmp_path)  # what the disk gives back
    with locked(
        tmp_path, within=tmp_path
    ):  # a later hold: the parse kept under the file's signature
        assert files_module._parsed(path, tmp_path, parse) == in_hold
    assert files_module._parsed(path, tmp_path, parse) == in_hold  # and outside any hold
    assert read == [path]
    assert parsed == ["before\n", in_hold]


def test_an_append_in_a_hold_is_read_back_from_the_file(chair: Chair, root: Root) -> None:
    """An append does not keep the text: the file is longer, so the next look reads it."""
    from dreamcontext_council.actions.files import DebateFiles

    files = DebateFiles(root, chair.new())
    with files.lock():
        before = files.log()
        files.append_log("Fact added — 2026-12-01", ["The budget is fixed."])
        after = files.log()
    assert after.startswith(before)
    assert after.endswith("- The budget is fixed.\n")


def test_a_missing_verdicts_report_or_log_reads_as_empty(chair: Chair, root: Root) -> None:
    """No file (or a file where the persona's folder should be) is nothing recorded yet."""
    from dreamcontext_council.actions.files import DebateFiles
    from dreamcontext_council.rules import roundlog
    from dreamcontext_council.rules.verdicts import Verdicts

    debate_id = chair.new()
    files = DebateFiles(root, debate_id)
    files.paths.verdicts.unlink()
    files.paths.round_log.unlink()
    assert files.verdicts() == Verdicts()
    assert files.log() == roundlog.new_log(debate_id)
    assert files.entries("nobody") == []
    (files.paths.folder / "a-file").write_text("not a folder\n")
    assert files.entries("a-file") == []


def test_render_over_keeps_comments_and_reads_back_as_the_fresh_render() -> None:
    previous = (
        "---\n# kept by hand\nid: x  # the id\nstatus: round_1_running  # after the merge\n"
        "rounds_planned: 2\npersonas:\n  - a  # first\n  - b\n---\n\n## Question\n\nWhy?\n"
    )
    meta, body = frontmatter_io.parse(previous, "debate.md")
    meta.update(status="round_1_complete", current_round=1)

    kept = frontmatter_io.render_over(previous, meta, body)

    assert "# kept by hand\nid: x  # the id\nstatus: round_1_complete  # after the merge\n" in kept
    assert "  - a  # first\n" in kept and kept.endswith(
        "current_round: 1\n---\n\n## Question\n\nWhy?\n"
    )
    fresh = frontmatter_io.render(meta, body)
    assert frontmatter_io.parse(kept, "kept") == frontmatter_io.parse(fresh, "fresh")
    meta["personas"] = ["a", "b", "c"]  # a block value changed: rendered anew
    assert frontmatter_io.render_over(previous, meta, body) == frontmatter_io.render(meta, body)
