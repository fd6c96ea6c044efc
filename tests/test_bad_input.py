"""Bad input: one clear line on stderr, exit 1 or 2, and every file byte for byte as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from debate_story import Chair, Result, Runner, changed_files, entry, tree_bytes

from dreamcontext_council.actions import convene, interlude, submissions
from dreamcontext_council.errors import UsageError
from dreamcontext_council.folder.names import check_debate_id, check_slug
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.roster import PersonaSpec

GOOD = "council_AbC12345"
TRAVERSAL = ["../x", "a/b", "..", "/etc", "x/../../y"]


def assert_refused(result: Result, *words: str, codes: tuple[int, ...] = (1, 2)) -> None:
    """Exit 1 or 2 and exactly one line on stderr that says what is wrong."""
    assert result.code in codes, result
    lines = result.err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.err
    for word in words:
        assert word in result.err, (word, result.err)


def each_refuses_untouched(
    chair: Chair,
    cli: Runner,
    commands: list[list[str]],
    *words: str,
    codes: tuple[int, ...] = (1, 2),
) -> list[Result]:
    """Every command refused (see `assert_refused`), and after them all every file as it was."""
    before = tree_bytes(chair.root)
    results = []
    for args in commands:
        result = cli(*args)
        assert_refused(result, *words, codes=codes)
        results.append(result)
    assert changed_files(before, tree_bytes(chair.root)) == []
    return results


def refuses_untouched(
    chair: Chair, cli: Runner, args: list[str], *words: str, codes: tuple[int, ...] = (1, 2)
) -> Result:
    [result] = each_refuses_untouched(chair, cli, [args], *words, codes=codes)
    return result


def filled(command: list[str], debate_id: str, slug: str = "") -> list[str]:
    """A command with `{id}`, `{slug}` and `{entry}` (a whole round entry) filled in."""
    body = entry()
    return [
        a.replace("{id}", debate_id).replace("{slug}", slug).replace("{entry}", body)
        for a in command
    ]


# ids and slugs


ID_COMMANDS = [
    ["show", "{id}"],
    ["board", "{id}"],
    ["round", "start", "{id}", "1"],
    ["inject", "{id}", "A fact."],
    ["verdict", "{id}", "risk-auditor", "2", "--stance", "A", "--conviction", "5", "--headline", "h"],
    ["report", "append", "{id}", "risk-auditor", "--body", "{entry}"],
]  # fmt: skip


@pytest.mark.parametrize(
    "bad", [*TRAVERSAL, "council_../../x", "council_AbC1234", "COUNCIL_AbC12345"]
)
def test_unsafe_debate_ids_are_refused(chair: Chair, cli: Runner, running: str, bad: str) -> None:
    commands = [filled(command, bad) for command in ID_COMMANDS]
    each_refuses_untouched(chair, cli, commands, "not a debate id", codes=(2,))


SLUG_COMMANDS = [
    ["agent", "create", "{id}", "{slug}", "--body", "You are new."],
    ["verdict", "{id}", "{slug}", "2", "--stance", "A", "--conviction", "5", "--headline", "h"],
    ["report", "append", "{id}", "{slug}", "--body", "{entry}"],
    ["question", "{id}", "{slug}", "Why?"],
    ["round-context", "{id}", "{slug}"],
    ["research", "add", "{id}", "{slug}", "a topic", "--body", "A note."],
    ["research", "list", "{id}", "{slug}"],
]  # fmt: skip


@pytest.mark.parametrize("bad", [*TRAVERSAL, "Risk-Auditor", "a\\b", "x" * 65, "risk auditor"])
def test_unsafe_slugs_are_refused(chair: Chair, cli: Runner, running: str, bad: str) -> None:
    commands = [filled(command, running, bad) for command in SLUG_COMMANDS]
    each_refuses_untouched(chair, cli, commands, codes=(1, 2))
    assert not (chair.root.parent / "x").exists() and not (chair.root / "x").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["show", "council_\x00AbC1234"],
        ["agent", "create", "{id}", "a\x00b", "--body", "You are new."],
        ["question", "{id}", "growth\x00", "Why?"],
        ["research", "add", "{id}", "risk-auditor\x00", "topic", "--body", "x"],
        ["report", "append", "{id}", "growth-cfo", "--body", "{entry}\x00"],
        ["agent", "create", "{id}", "newcomer", "--body", "You are\x00 new."],
        ["research", "add", "{id}", "risk-auditor", "a topic", "--body", "A\x00note"],
        ["research", "add", "{id}", "risk-auditor", "a\x00topic", "--body", "A note."],
        ["inject", "{id}", "A fact\x00 with a NUL"],
        ["question", "{id}", "growth-cfo", "Why\x00?"],
        ["new", "A topic\x00 with a NUL"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_nul_characters_are_refused(
    chair: Chair, cli: Runner, running: str, args: list[str]
) -> None:
    # argv cannot carry NUL; the in-process CLI can, as a library caller could.
    refuses_untouched(chair, cli, filled(args, running))


def test_nul_ids_and_slugs_are_refused_by_the_library(root: Root) -> None:
    for bad in ("council_AbC1234\x00", "council_\x00/../x", GOOD + "\x00"):
        with pytest.raises(UsageError):
            check_debate_id(bad)
        with pytest.raises(UsageError):
            root.debate(bad)
    for bad in ("a\x00b", "\x00", "risk-auditor\x00/../x"):
        with pytest.raises(UsageError):
            check_slug(bad)
    assert not root.path.exists()


def test_the_library_refuses_nul_before_touching_disk(
    chair: Chair, running: str, root: Root
) -> None:
    before = tree_bytes(chair.root)
    with pytest.raises(UsageError):
        convene.create_agent(root, running, PersonaSpec("a\x00", "You are new."))
    with pytest.raises(UsageError):
        submissions.add_research(root, running, "risk-auditor", "a\x00b", "A note.")
    with pytest.raises(UsageError):
        interlude.inject_fact(root, running, "\x00")
    with pytest.raises(UsageError):
        convene.new_debate(root, "\x00")
    assert changed_files(before, tree_bytes(chair.root)) == []


# files that do not parse


MALFORMED_DEBATE_MD = [
    "---\nid: council_X\ntopic: [unclosed\n---\n\n## Question\n",
    "---\nid: {id}\ntopic: T\nstatus: round_two_running\nrounds_planned: 2\n---\n",
    "---\nid: {id}\ntopic: T\nstatus: created\nrounds_planned: two\n---\n",
    "---\nid: {id}\nstatus: created\nrounds_planned: 2\n---\n",
    "---\nid: council_Zz999999\ntopic: T\nstatus: created\nrounds_planned: 2\n---\n",
    "---\nid: {id}\ntopic: T\nstatus: created\nrounds_planned: 2\noptions: A\n---\n",
]


DEBATE_COMMANDS = [
    ["show", "{id}"],
    ["board", "{id}"],
    ["round", "end", "{id}", "2"],
    ["inject", "{id}", "A fact."],
    ["verdict", "{id}", "growth-cfo", "2", "--stance", "A", "--conviction", "5", "--headline", "h"],
    ["report", "append", "{id}", "growth-cfo", "--body", "{entry}"],
    ["agent", "create", "{id}", "newcomer", "--body", "You are new."],
]  # fmt: skip


@pytest.mark.parametrize("text", MALFORMED_DEBATE_MD, ids=range(len(MALFORMED_DEBATE_MD)))
def test_malformed_debate_md_is_reported_not_rewritten(
    chair: Chair, cli: Runner, running: str, text: str
) -> None:
    (chair.folder(running) / "debate.md").write_text(text.replace("{id}", running))
    commands = [filled(command, running) for command in DEBATE_COMMANDS]
    each_refuses_untouched(chair, cli, commands, "debate.md")


def test_a_debate_md_that_is_not_utf8_is_reported(chair: Chair, cli: Runner, running: str) -> None:
    (chair.folder(running) / "debate.md").write_bytes(b"---\nid: \xff\xfe\n---\n")
    refuses_untouched(chair, cli, ["inject", running, "A fact."], "UTF-8")


NOT_UTF8 = {
    "verdicts.json": ["verdict", "board", "timeline"],
    "growth-cfo/report.md": ["summaries", "report", "round-end"],
    "growth-cfo/context-and-persona.md": ["round-context", "question", "report"],
    "round-log.md": ["show", "round-end"],
    "risk-auditor/researches/index.json": ["research"],
}
NOT_UTF8_COMMANDS = {
    "verdict": ["verdict", "{id}", "growth-cfo", "2", "--stance", "A", "--conviction", "5", "--headline", "h"],
    "board": ["board", "{id}"],
    "timeline": ["timeline", "{id}"],
    "summaries": ["summaries", "{id}", "1"],
    "report": ["report", "append", "{id}", "growth-cfo", "--body", "{entry}"],
    "round-end": ["round", "end", "{id}", "2"],
    "round-context": ["round-context", "{id}", "growth-cfo"],
    "question": ["question", "{id}", "growth-cfo", "Why?"],
    "show": ["show", "{id}"],
    "research": ["research", "add", "{id}", "risk-auditor", "a topic", "--body", "A note."],
}  # fmt: skip


@pytest.mark.parametrize("name", list(NOT_UTF8))
def test_a_file_that_is_not_utf8_is_reported_not_rewritten(
    chair: Chair, cli: Runner, running: str, name: str
) -> None:
    path = chair.folder(running) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"---\npersona: caf\xe9\n---\n\n## Round 1 \xff\n")
    commands = [filled(NOT_UTF8_COMMANDS[command], running) for command in NOT_UTF8[name]]
    for result in each_refuses_untouched(chair, cli, commands, name.split("/")[-1], codes=(1,)):
        assert "not UTF-8" in result.err or "not valid JSON" in result.err


CORRUPT_VERDICTS = [
    "{bad json",
    "[]",
    '{"options": "A", "rounds": {}}',
    '{"rounds": {"one": {}}}',
    '{"rounds": {"1": {"x": {"conviction": 5}}}}',
]


VERDICT_COMMANDS = [
    ["verdict", "{id}", "growth-cfo", "2", "--stance", "A", "--conviction", "5", "--headline", "h"],
    ["report", "append", "{id}", "growth-cfo", "--body", "{entry}"],
    ["board", "{id}"],
    ["timeline", "{id}"],
    ["summaries", "{id}", "1"],
]  # fmt: skip


@pytest.mark.parametrize("text", CORRUPT_VERDICTS, ids=range(len(CORRUPT_VERDICTS)))
def test_a_corrupt_verdicts_json_is_reported_not_rewritten(
    chair: Chair, cli: Runner, running: str, text: str
) -> None:
    (chair.folder(running) / "verdicts.json").write_text(text)
    commands = [filled(command, running) for command in VERDICT_COMMANDS]
    each_refuses_untouched(chair, cli, commands, "verdicts.json")


# submissions


def test_a_report_missing_sections_names_them(chair: Chair, cli: Runner, running: str) -> None:
    body = entry(drop=("Reasoning", "Open questions"))
    result = refuses_untouched(
        chair, cli, ["report", "append", running, "growth-cfo", "--body", body]
    )
    assert result.code == 2
    assert "### Reasoning" in result.err and "### Open questions" in result.err
    assert "### Position" not in result.err


def test_an_empty_section_counts_as_missing(chair: Chair, cli: Runner, running: str) -> None:
    body = entry().replace("Option A.", "")
    refuses_untouched(
        chair, cli, ["report", "append", running, "growth-cfo", "--body", body], "### Position"
    )


def test_a_report_for_a_round_not_started_is_refused(
    chair: Chair, cli: Runner, running: str
) -> None:
    refuses_untouched(
        chair,
        cli,
        ["report", "append", running, "growth-cfo", "--round", "3", "--body", entry()],
        "round 2",
    )
    body = entry(heading_round=1)
    refuses_untouched(
        chair,
        cli,
        ["report", "append", running, "growth-cfo", "--round", "2", "--body", body],
        "Round 1",
    )


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--stance", "C", "--conviction", "50"], ["'C' is not an option", "A (Migrate now)"]),
        (["--stance", " ", "--conviction", "50"], ["stance is empty"]),
        (["--stance", "A", "--conviction", "101"], ["0 to 100", "101"]),
        (["--stance", "A", "--conviction", "-1"], ["0 to 100"]),
        (["--stance", "A", "--conviction", "abc"], ["whole number", "abc"]),
        (["--stance", "A", "--conviction", "50.5"], ["whole number"]),
    ],
    ids=["not-an-option", "empty-stance", "101", "negative", "abc", "fraction"],
)
def test_bad_verdicts_are_refused(
    chair: Chair, cli: Runner, running: str, flags: list[str], words: list[str]
) -> None:
    args = ["verdict", running, "growth-cfo", "2", *flags, "--headline", "h"]
    result = refuses_untouched(chair, cli, args, *words)
    assert result.code == 2


def test_a_stance_may_name_the_option_in_any_case(chair: Chair, cli: Runner, running: str) -> None:
    for stance in ("a", "migrate NOW"):
        result = cli("verdict", running, "growth-cfo", "2", "--stance", stance, "--conviction", "50", "--headline", "h", "--json")  # fmt: skip
        assert result.json()["stance"] == "A"


def test_an_empty_headline_is_refused(chair: Chair, cli: Runner, running: str) -> None:
    args = [
        "verdict",
        running,
        "growth-cfo",
        "2",
        "--stance",
        "A",
        "--conviction",
        "5",
        "--headline",
        "  ",
    ]
    refuses_untouched(chair, cli, args, "headline")


@pytest.mark.parametrize(
    "args",
    [
        ["report", "append", "{id}", "growth-cfo"],
        ["report", "append", "{id}", "growth-cfo", "--body", "  \n "],
        ["agent", "create", "{id}", "newcomer"],
        ["agent", "create", "{id}", "newcomer", "--body", ""],
        ["research", "add", "{id}", "risk-auditor", "a topic"],
        ["inject", "{id}", " "],
        ["question", "{id}", "growth-cfo", "  "],
    ],
    ids=lambda a: " ".join(a[:2]) + (" --body" if "--body" in a else ""),
)
def test_empty_bodies_are_refused(chair: Chair, cli: Runner, running: str, args: list[str]) -> None:
    argv = [a.replace("{id}", running) for a in args]
    result = refuses_untouched(chair, cli, argv, "empty")
    assert result.code == 2


@pytest.mark.parametrize(
    "args",
    [
        ["report", "append", "{id}", "growth-cfo"],
        ["agent", "create", "{id}", "newcomer"],
        ["research", "add", "{id}", "risk-auditor", "a topic"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_non_utf8_stdin_is_refused(
    chair: Chair, council: Runner, running: str, args: list[str]
) -> None:
    before = tree_bytes(chair.root)
    latin1 = entry("Le café est très cher.").encode("latin-1")
    result = council(*[a.replace("{id}", running) for a in args], input=latin1)
    assert_refused(result, "not UTF-8", codes=(2,))
    assert changed_files(before, tree_bytes(chair.root)) == []


def test_non_utf8_arguments_are_refused(chair: Chair, council: Runner, running: str) -> None:
    before = tree_bytes(chair.root)
    for args in (
        [b"new", b"caf\xe9?"],
        [b"inject", running.encode(), b"caf\xe9"],
        [
            b"verdict",
            running.encode(),
            b"growth-cfo",
            b"2",
            b"--stance",
            b"A",
            b"--conviction",
            b"5",
            b"--headline",
            b"\xff",
        ],
    ):
        result = council(*args)
        assert result.code == 2, result
        assert "Traceback" not in result.err
        assert "UTF-8" in result.err
    assert changed_files(before, tree_bytes(chair.root)) == []


# a failed `new` leaves no root behind


@pytest.mark.parametrize(
    "args",
    [
        ["new", "  "],
        ["new", "A topic", "--rounds", "0"],
        ["new", "A topic", "--rounds", "11"],
        ["new", "A topic", "--options", "A"],
        ["new", "A topic", "--options", "A=x,a=y"],
        ["new", "A topic", "--personas", "no-such-roster.yaml"],
    ],
    ids=lambda a: " ".join(a[2:]) or "blank topic",
)
def test_a_refused_new_creates_no_root(
    cli: Runner, workdir: Path, root_path: Path, args: list[str]
) -> None:
    result = cli(*args)
    assert_refused(result, codes=(2,))
    assert not root_path.exists()
    assert list(workdir.iterdir()) == []


def test_reading_without_a_root_says_how_to_start(council: Runner, workdir: Path) -> None:
    for args in (["list"], ["show", GOOD], ["board", GOOD]):
        result = council(*args, env={"DREAMCONTEXT_ROOT": ""})
        assert_refused(result, "council new", codes=(1,))
    assert list(workdir.iterdir()) == []


def test_an_unknown_debate_or_persona_says_what_exists(
    chair: Chair, cli: Runner, running: str
) -> None:
    refuses_untouched(chair, cli, ["show", GOOD], "list --all")
    refuses_untouched(
        chair, cli, ["round-context", running, "nobody"], "risk-auditor, growth-cfo, user-advocate"
    )


def test_round_start_with_one_broken_context_injects_into_nobody(
    chair: Chair, cli: Runner, debated: str
) -> None:
    # Reopen round 3 by extending; user-advocate's context no longer parses.
    chair.ok("round", "extend", debated)
    (chair.folder(debated) / "user-advocate" / "context-and-persona.md").write_text(
        "---\nname: [unclosed\n---\n"
    )
    refuses_untouched(chair, cli, ["round", "start", debated, "3"], "context-and-persona.md")


def test_synthesize_with_a_broken_research_index_changes_nothing(
    chair: Chair, cli: Runner, debated: str
) -> None:
    index = chair.folder(debated) / "growth-cfo" / "researches" / "index.json"
    index.parent.mkdir(parents=True)
    index.write_text("[{torn")
    refuses_untouched(chair, cli, ["synthesize", debated], "index.json")
