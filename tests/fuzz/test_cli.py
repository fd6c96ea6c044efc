"""The CLI under hostile ids, slugs, values and corrupted files: a clean exit, or nothing written.

In-process through click's CliRunner (fast), on a private copy of a debate per example.
A command may succeed (exit 0) or refuse (exit 1 or 2 with an `Error:` line); any other
exception is a crash, and a refusal must leave every byte of the root as it was.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamcontext_council import (
    Root,
    UsageError,
    append_report,
    inject_fact,
    new_debate,
    queue_directive,
    record_verdict,
    start_round,
)
from dreamcontext_council.cli import cli
from dreamcontext_council.folder.names import check_debate_id, check_slug
from dreamcontext_council.rules.roster import PRESETS

from .conftest import LONG
from .strategies import (
    HEADINGS,
    any_text,
    context_document,
    debate_document,
    frontmatter_document,
    json_values,
    markdown_body,
    small_text,
    verdicts_document,
)

CLI_PROFILE = settings(
    max_examples=200 if LONG else 25,
    deadline=None,
    suppress_health_check=list(__import__("hypothesis").HealthCheck),
)
ENTRY = (
    "### Executive Summary\nMigrate, staged.\n\n### Position\nA.\n\n### Reasoning\nLoad.\n\n"
    "### Reactions to peers\nNone yet.\n\n### Open questions\nCost?\n"
)
SLUG = "synthesizer"


@pytest.fixture(scope="module")
def template() -> Iterator[tuple[Path, str]]:
    """A debate in round 1 with a verdict, a report, a fact and a directive; built once."""
    with tempfile.TemporaryDirectory() as folder:
        root = Root(Path(folder) / "_dream_context")
        root.council.mkdir(parents=True)
        options = [{"key": "A", "label": "Migrate"}, {"key": "B", "label": "Stay"}]
        personas = PRESETS["cognitive"][:3]
        debate_id = new_debate(root, "Migrate?", options=options, personas=personas).id
        start_round(root, debate_id, 1)
        record_verdict(root, debate_id, SLUG, 1, stance="A", conviction=60, headline="Go")
        append_report(root, debate_id, SLUG, ENTRY, number=1)
        inject_fact(root, debate_id, "Peak load is 40k writes per second.")
        queue_directive(root, debate_id, "contrarian", "What breaks first?")
        yield root.path, debate_id


class Workspace:
    """A private copy of the template root, and the CLI pointed at it."""

    def __init__(self, template: Path, debate_id: str) -> None:
        self._dir = tempfile.TemporaryDirectory()
        self.root = Path(self._dir.name) / "_dream_context"
        shutil.copytree(template, self.root)
        self.id = debate_id
        self.folder = self.root / "council" / debate_id

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self._dir.cleanup()

    def bytes(self) -> dict[str, bytes]:
        return {
            str(p.relative_to(self.root)): p.read_bytes()
            for p in sorted(self.root.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock")
        }

    def invoke(self, args: Sequence[str], stdin: bytes | None = None) -> Result:
        return CliRunner().invoke(
            cli,
            ["council", *args],
            input=stdin if stdin is not None else b"",
            env={"DREAMCONTEXT_ROOT": str(self.root), "TERM": "dumb"},
            catch_exceptions=True,
        )

    def check(self, args: Sequence[str], stdin: bytes | None = None) -> Result:
        """Run a command; it exits 0, 1 or 2, and a refusal changes nothing."""
        before = self.bytes()
        result = self.invoke(args, stdin)
        crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
        assert not crashed, f"{list(args)} crashed: {result.exception!r}\n{result.output}"
        assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.output)
        if result.exit_code:
            assert "Error: " in result.output, (args, result.output)
            assert self.bytes() == before, f"{list(args)} failed but changed files"
        return result


def _safe_segment(value: str) -> bool:
    return bool(value) and value not in (".", "..") and not set(value) & {"/", "\\", "\0"}


# -- ids and slugs ----------------------------------------------------------------------

hostile_names = st.one_of(
    st.sampled_from(
        [
            "../x",
            "..",
            ".",
            "a/b",
            "council_AbC12345/..",
            "council_../../x",
            "council_AbC1234",
            "council_AbC123456",
            "COUNCIL_AbC12345",
            "council_AbC1234\x00",
            "x\x00y",
            "x-",
            "-x",
            "X",
            "a" * 65,
            "café",
            "١٢٣",
            " synthesizer",
            "synthesizer\n",
            "",
        ]
    ),
    any_text,
)


@settings(max_examples=500 if LONG else 200, deadline=None)
@given(hostile_names)
def test_accepted_ids_and_slugs_are_single_safe_segments(value: str) -> None:
    for check, pattern in (
        (check_debate_id, r"council_[A-Za-z0-9_-]{8}"),
        (check_slug, r"[a-z0-9][a-z0-9-]{0,63}"),
    ):
        try:
            accepted = check(value)
        except UsageError as refusal:
            assert "\n" not in str(refusal)
            continue
        assert accepted == value and _safe_segment(value)
        assert re.fullmatch(pattern, value, re.ASCII)


def _commands(debate_id: str, slug: str) -> list[list[str]]:
    return [
        ["board", debate_id],
        ["show", debate_id],
        ["timeline", debate_id, "--json"],
        ["summaries", debate_id, "1"],
        ["agent", "list", debate_id],
        ["round-context", debate_id, slug],
        ["verdict", debate_id, slug, "1", "--stance", "A", "--conviction", "50", "--headline", "h"],
        ["report", "append", debate_id, slug, "--round", "1", "--body", ENTRY],
        ["research", "add", debate_id, slug, "topic", "--body", "Body."],
        ["research", "list", debate_id, slug],
        ["question", debate_id, slug, "Why?"],
        ["agent", "create", debate_id, slug, "--body", "You are new."],
        ["inject", debate_id, "A fact."],
        ["round", "end", debate_id, "1"],
        ["synthesize", debate_id],
        ["complete", debate_id],
        ["promote", debate_id],
    ]


@CLI_PROFILE
@given(hostile_names, st.sampled_from(range(len(_commands("x", "y")))))
def test_hostile_ids_are_refused_before_any_file_is_touched(
    template: tuple[Path, str], value: str, which: int
) -> None:
    with Workspace(*template) as space:
        result = space.check(_commands(value, SLUG)[which])
        if value != space.id and not value.startswith("-"):  # -h is help, not an id
            assert result.exit_code in (1, 2)


@CLI_PROFILE
@given(hostile_names, st.sampled_from(range(5, len(_commands("x", "y")) - 5)))
def test_hostile_slugs_are_refused_before_any_file_is_touched(
    template: tuple[Path, str], value: str, which: int
) -> None:
    with Workspace(*template) as space:
        space.check(_commands(space.id, value)[which])


# -- values -----------------------------------------------------------------------------


@CLI_PROFILE
@given(
    st.one_of(small_text, st.sampled_from(["A", "b", "Migrate", "Stay", " a ", "C", ""])),
    st.one_of(small_text, st.sampled_from(["0", "100", "101", "-1", "abc", "50.5", " 7 "])),
    st.one_of(small_text, st.just("   ")),
    st.one_of(st.none(), small_text),
    st.integers(0, 3),
)
def test_hostile_verdicts(
    template: tuple[Path, str],
    stance: str,
    conviction: str,
    headline: str,
    concession: str | None,
    number: int,
) -> None:
    args = ["verdict", template[1], SLUG, str(number), "--stance", stance]
    args += ["--conviction", conviction, "--headline", headline]
    if concession is not None:
        args += ["--concession", concession]
    with Workspace(*template) as space:
        space.check(args)


@CLI_PROFILE
@given(
    st.one_of(
        markdown_body().map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.binary(max_size=200),
        st.just(ENTRY.encode()),
        st.just(b"\xff\xfe" + ENTRY.encode()),
    ),
    st.sampled_from([[], ["--round", "1"], ["--round", "2"], ["--round", "0"]]),
)
def test_hostile_report_bodies_on_stdin(
    template: tuple[Path, str], body: bytes, extra: list[str]
) -> None:
    with Workspace(*template) as space:
        space.check(["report", "append", space.id, SLUG, *extra], stdin=body)


@CLI_PROFILE
@given(st.one_of(st.none(), small_text, st.lists(small_text, max_size=5).map(",".join)))
def test_hostile_options_for_a_new_debate(template: tuple[Path, str], spec: str | None) -> None:
    args = ["new", "Should we migrate?"] + (["--options", spec] if spec is not None else [])
    with Workspace(*template) as space:
        space.check(args)


@CLI_PROFILE
@given(small_text, st.sampled_from(["inject", "question"]))
def test_hostile_facts_and_directives(template: tuple[Path, str], text: str, kind: str) -> None:
    with Workspace(*template) as space:
        args = (
            ["inject", space.id, text] if kind == "inject" else ["question", space.id, SLUG, text]
        )
        space.check(args)


# -- corrupted files --------------------------------------------------------------------

CORRUPTIONS = {
    "debate.md": st.one_of(debate_document(), frontmatter_document(), any_text),
    "verdicts.json": st.one_of(verdicts_document(), any_text),
    f"{SLUG}/context-and-persona.md": st.one_of(context_document(), any_text),
    f"{SLUG}/report.md": st.one_of(frontmatter_document(), markdown_body(), any_text),
    "round-log.md": st.one_of(markdown_body(), any_text),
    "../index.json": st.one_of(verdicts_document(), any_text),
    f"{SLUG}/researches/index.json": st.one_of(verdicts_document(), any_text),
    "usage.jsonl": st.one_of(verdicts_document(), any_text),
}


ODD_VALUES = [
    "[]",
    "{}",
    "[{a: 1}, 5]",
    "{key: A}",
    "5",
    "-1",
    "99999999999999999999",
    "true",
    "~",
    "2026-13-45",
    "'x'",
    "[[nested]]",
    "{key: [1], label: {a: b}}",
    "[{key: 1, label: 2}]",
    "[{key: A}]",
    "round_9_running",
    "round_0_complete",
    "council_zzzzzzzz",
    "../../etc",
]


def _mutate_frontmatter(data: st.DataObject, text: str) -> str:
    """Give one `key:` of the frontmatter an odd value (a list, a map, a wrong type...)."""
    lines = text.split("\n")
    keys = [i for i, line in enumerate(lines) if re.match(r"^[a-z_]+:", line)]
    if not keys:
        return text
    at = data.draw(st.sampled_from(keys))
    key = lines[at].split(":", 1)[0]
    end = at + 1
    while end < len(lines) and lines[end].startswith(("  ", "- ")):
        end += 1  # the key's block value goes too
    value = data.draw(st.sampled_from(ODD_VALUES) if data.draw(st.integers(0, 3)) else small_text)
    return "\n".join([*lines[:at], f"{key}: {value}", *lines[end:]])


def _mutate_json(data: st.DataObject, text: str) -> str:
    """Replace one value anywhere in the JSON with an odd one."""
    document = json.loads(text)
    holders: list[tuple[object, object]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                holders.append((node, key))
                walk(value)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                holders.append((node, index))
                walk(value)

    walk(document)
    if not holders:
        return data.draw(verdicts_document())
    holder, key = data.draw(st.sampled_from(holders))
    holder[key] = data.draw(json_values)  # type: ignore[index]
    return json.dumps(document, allow_nan=True)


def _corrupt(data: st.DataObject, path: Path) -> str:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    how = data.draw(st.sampled_from(["value", "value", "truncate", "line", "replace"]))
    if how == "value" and path.suffix == ".md":
        return _mutate_frontmatter(data, text)
    if how == "value" and path.suffix == ".json" and text:
        return _mutate_json(data, text)
    if how == "truncate":
        return text[: data.draw(st.integers(0, len(text)))]
    if how == "line":
        lines = text.split("\n")
        at = data.draw(st.integers(0, len(lines)))
        odd = data.draw(st.one_of(st.sampled_from(HEADINGS), small_text))
        return "\n".join([*lines[:at], odd, *lines[at:]])
    return data.draw(CORRUPTIONS[path.name])


FILES = [
    "debate.md",
    "verdicts.json",
    f"{SLUG}/context-and-persona.md",
    f"{SLUG}/report.md",
    "round-log.md",
    "../index.json",
    f"{SLUG}/researches/index.json",
    "usage.jsonl",
    "reviews.json",
]
CORRUPTIONS = {
    "debate.md": st.one_of(debate_document(), frontmatter_document(), any_text),
    "verdicts.json": st.one_of(verdicts_document(), any_text),
    "context-and-persona.md": st.one_of(context_document(), any_text),
    "report.md": st.one_of(frontmatter_document(), markdown_body(), any_text),
    "round-log.md": st.one_of(markdown_body(), any_text),
    "index.json": st.one_of(verdicts_document(), any_text),
    "usage.jsonl": st.one_of(verdicts_document(), any_text),
    "reviews.json": st.one_of(verdicts_document(), any_text),
}


@pytest.mark.parametrize("name", FILES)
@settings(CLI_PROFILE, max_examples=300 if LONG else 15)
@given(st.data(), st.sampled_from(range(len(_commands("x", "y")))))
def test_corrupted_files_give_clean_errors(
    template: tuple[Path, str], name: str, data: st.DataObject, which: int
) -> None:
    with Workspace(*template) as space:
        path = (space.folder / name).resolve()
        text = _corrupt(data, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        space.check(_commands(space.id, SLUG)[which])
        space.check(["list", "--all"])
