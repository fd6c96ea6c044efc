"""The second hour, as real processes: ids left out (or `@last`), `list` with verdicts in
80 columns, `show` without the round log, `report show` without its frontmatter, `export`
taking its format from `-o`, and `--help` naming shell completion."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from debate_story import TOPIC, Chair, Runner, council_environment, start_process


def naming(debate_id: str) -> str:
    """The stderr line naming the debate chosen: its topic cut to end the line at 80."""
    line = f"{debate_id}, the newest debate: {TOPIC}"
    return line[:79] + "…"


READS = [
    (("show",), ()),
    (("board",), ("--plain",)),
    (("timeline",), ()),
    (("report", "show"), ()),
    (("export",), ("--format", "md", "-o", "-")),
    (("summaries",), ("2",)),  # `@last` only: the round comes after the id
]


@pytest.fixture
def two_debates(chair: Chair) -> tuple[str, str]:
    """An older debate made by hand and left at `created`, then a newer one, complete."""
    older = chair.new("An older question: hire a second SRE?")
    newest = chair.reference_story()
    chair.close(newest)
    return older, newest


def test_a_read_without_an_id_or_with_at_last_reads_the_newest_debate(
    council: Runner, two_debates: tuple[str, str]
) -> None:
    _, newest = two_debates
    picked = naming(newest) + "\n"
    for words, rest in READS:
        named = council(*words, newest, *rest)
        assert named.code == 0, named.err
        assert named.err == ""
        forms = (["@last"],) if words == ("summaries",) else ([], ["@last"])
        for form in forms:
            chosen = council(*words, *form, *rest)
            assert chosen.code == 0, (words, form, chosen.err)
            assert chosen.out == named.out, (words, form)
            assert chosen.err == picked, (words, form)  # one line on stderr says which


def test_a_json_read_of_the_newest_keeps_stdout_json(
    council: Runner, two_debates: tuple[str, str]
) -> None:
    _, newest = two_debates
    shown = council("show", "--json")
    assert shown.json()["id"] == newest
    assert shown.err.count("\n") == 1 and newest in shown.err


def test_no_debate_yet_is_one_line_saying_how_to_start(council: Runner, root_path: Path) -> None:
    (root_path / "council").mkdir(parents=True)
    for args in (["show"], ["board", "@last"], ["report", "show"], ["export", "-o", "x.md"]):
        done = council(*args)
        assert done.code == 1, args
        [line] = done.err.strip().split("\n")
        assert line.startswith("Error: No debates under ") and "--topic" in line, line
        assert done.out == ""
    assert not (root_path.parent / "x.md").exists()


def test_watch_without_an_id_watches_the_newest(
    two_debates: tuple[str, str], root_path: Path, workdir: Path
) -> None:
    _, newest = two_debates
    process = start_process(["watch"], cwd=workdir, env=council_environment(root_path, None))
    try:
        assert process.stdout is not None
        drawn = []
        while not drawn or not drawn[-1].startswith("╰"):
            line = process.stdout.readline().decode("utf-8")
            assert line, "watch ended before drawing a board"
            drawn.append(line)
        assert "COUNCIL · should-we-migrate" in drawn[0]
    finally:
        process.terminate()
        _, err = process.communicate(timeout=60)
    assert err.decode("utf-8").split("\n")[0] == naming(newest)


def test_the_at_sign_completes_to_at_last(chair: Chair, workdir: Path) -> None:
    chair.new("Adopt Postgres?")
    env = os.environ | {
        "_DREAMCONTEXT_COMPLETE": "bash_complete",
        "COMP_WORDS": "dreamcontext council show @",
        "COMP_CWORD": "3",
    }
    env.pop("DREAMCONTEXT_ROOT", None)
    done = subprocess.run(
        [str(Path(sys.executable).parent / "dreamcontext")],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.splitlines() == ["plain,@last"]


# -- list ------------------------------------------------------------------------------------

LONG_TOPIC = (
    "Should we rewrite the billing service in Rust before the third-quarter launch, given "
    "that the team has two people who know Rust and the launch date cannot move?"
)


def test_list_shows_the_recent_debates_with_their_verdicts_in_80_columns(
    council: Runner, chair: Chair, two_debates: tuple[str, str]
) -> None:
    older, finished = two_debates
    made = [chair.new(f"Question number {n}?") for n in range(9)]
    longest = chair.new(LONG_TOPIC)  # the newest of twelve

    listed = council("list")
    assert listed.code == 0, listed.err
    lines = listed.out.split("\n")
    assert max(len(line) for line in lines) <= 80
    ids = [line.split()[0] for line in lines if line.startswith("  council_")]
    assert ids == [longest, *reversed(made)]  # the ten newest, newest first
    assert older not in listed.out and finished not in listed.out
    assert "2 older not shown (pass --all to list every debate)" in listed.out
    assert f"    {LONG_TOPIC[:70]}" in listed.out and LONG_TOPIC not in listed.out

    everything = council("list", "--all").out
    assert max(len(line) for line in everything.split("\n")) <= 80
    assert older in everything
    at = everything.split("\n").index(
        f"  {finished}  complete · round 2/2 · " + _day(everything, finished)
    )
    assert everything.split("\n")[at + 1 : at + 3] == [
        f"    {TOPIC}",
        "    verdict: Migrate now (A) · medium",
    ]

    data = council("list", "--json").json()  # the same ten, each whole
    assert [d["id"] for d in data] == ids
    assert data[0]["topic"] == LONG_TOPIC
    whole = {d["id"]: d for d in council("list", "--all", "--json").json()}
    assert whole[finished]["verdict"] == {"sentence": "Migrate now (A).", "confidence": "medium"}
    assert whole[older]["verdict"] is None and whole[older]["status"] == "created"
    active = council("list", "--active", "--json").json()
    assert finished not in {d["id"] for d in active} and len(active) == 11


def _day(listing: str, debate_id: str) -> str:
    [line] = [line for line in listing.split("\n") if line.startswith(f"  {debate_id}  ")]
    return line.rsplit(" · ", 1)[1]


def columns(line: str) -> int:
    """Terminal columns of a line: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def test_a_wide_topic_is_cut_by_the_columns_it_takes(council: Runner, chair: Chair) -> None:
    topic = "我们是否应该在第三季度发布之前把计费服务迁移到新的数据库上，还是等到明年再说？" * 2
    debate_id = chair.new(topic)
    listed = council("list").out
    assert all(columns(line) <= 80 for line in listed.split("\n"))
    [shown] = [line for line in listed.split("\n") if line.startswith("    我们")]
    assert shown.endswith("…") and columns(shown) >= 78
    assert council("list", "--json").json()[0]["topic"] == topic
    said = council("show").err.rstrip("\n")
    assert said.startswith(f"{debate_id}, the newest debate: 我们") and said.endswith("…")
    assert 78 <= columns(said) <= 80


def test_a_root_of_complete_debates_is_not_listed_as_none(
    council: Runner, two_debates: tuple[str, str]
) -> None:
    listed = council("list").out
    assert "none" not in listed
    assert "verdict: Migrate now (A) · medium" in listed


# -- show and report show --------------------------------------------------------------------


def test_show_keeps_to_the_state_and_log_adds_the_round_log(
    council: Runner, two_debates: tuple[str, str], root_path: Path
) -> None:
    _, newest = two_debates
    log = (root_path / "council" / newest / "round-log.md").read_text("utf-8").rstrip("\n")
    shown = council("show", newest).out
    assert log.split("\n")[-1] not in shown
    assert "  verdict:   Migrate now (A). Confidence: medium." in shown
    assert "  stances in round 2 (convergence 78%):" in shown
    assert '    user-advocate  B   40  "user-advocate says B in R2"' in shown
    assert "pass --log to read it" in shown
    assert len(shown.split("\n")) < 30 < len(log.split("\n")) + 20
    assert max(len(line) for line in shown.split("\n") if "promoted:" not in line) <= 80

    with_log = council("show", newest, "--log").out
    assert with_log.startswith(shown.split("\n  round log:")[0]) and log in with_log
    assert council("show", newest, "--json").json()["round_log"].rstrip("\n") == log


def test_report_show_leaves_out_the_frontmatter_unless_raw(
    council: Runner, two_debates: tuple[str, str], root_path: Path
) -> None:
    _, newest = two_debates
    report = (root_path / "council" / newest / "final-report.md").read_text("utf-8")
    assert report.startswith("---\ndebate_id:")

    read = council("report", "show").out
    assert read.startswith("## Verdict\n\nMigrate now (A). Confidence: medium.")
    assert "debate_id:" not in read and read.rstrip("\n") == report.split("---\n", 2)[2].strip()
    assert council("report", "show", "--raw").out.rstrip("\n") == report.rstrip("\n")
    assert council("report", "show", "--json").json()["text"] == report


# -- export ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "starts"),
    [("decision.md", "# "), ("decision.html", "<!doctype html>"), ("d.json", "{")],
)
def test_export_takes_the_format_from_the_file_name(
    council: Runner, two_debates: tuple[str, str], workdir: Path, name: str, starts: str
) -> None:
    _, newest = two_debates
    done = council("export", newest, "-o", name)
    assert done.code == 0, done.err
    fmt = name.rsplit(".", 1)[1]
    assert done.out.startswith(f"Wrote {name} ({fmt}, ")
    text = (workdir / name).read_text("utf-8")
    assert text.lower().startswith(starts)
    assert text == council("export", newest, "--format", fmt, "-o", "-").out


def test_export_to_a_missing_folder_or_an_unknown_extension_is_one_line(
    council: Runner, two_debates: tuple[str, str], workdir: Path
) -> None:
    before = sorted(p.name for p in workdir.iterdir())
    for args, said in (
        (["-o", "nowhere/decision.md"], "the folder nowhere does not exist"),
        (["-o", "decision.txt"], "Cannot tell the format of decision.txt"),
        (["-o", "-"], "pass --format html|json|md"),
        ([], "pass --format html|json|md"),
    ):
        done = council("export", *args)
        assert done.code == 2, (args, done.err)
        [line] = done.err.strip().split("\n")
        assert said in line, line
        assert done.out == ""
    assert sorted(p.name for p in workdir.iterdir()) == before
    # --format wins over the extension
    assert council("export", "--format", "json", "-o", "decision.md").code == 0
    assert json.loads((workdir / "decision.md").read_text("utf-8"))["format"]


# -- help ------------------------------------------------------------------------------------


def test_help_says_how_to_turn_on_shell_completion(workdir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dreamcontext_council", "--help"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Shell completion" in done.stdout
    bash = next(line for line in done.stdout.split("\n") if "bash_source" in line)
    line = bash.split("#")[0].strip()
    assert line == 'eval "$(_DREAMCONTEXT_COMPLETE=bash_source dreamcontext)"'
    # the line works: bash defines the completion function from what it prints
    script = subprocess.run(
        [str(Path(sys.executable).parent / "dreamcontext")],
        env=os.environ | {"_DREAMCONTEXT_COMPLETE": "bash_source"},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "complete -o nosort -F _dreamcontext_completion dreamcontext" in script.stdout
