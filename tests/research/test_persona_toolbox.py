"""A persona's tool calls in one round: each one answered or denied, and each one kept as a
research note in the Node format that `research list` and the persona can cite."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from debate_story import Runner

from dreamcontext_council.actions.submissions import RESEARCH_SLUG_LIMIT, add_research
from dreamcontext_council.engine.providers.tools import ToolBox, ToolCall, ToolOutcome
from dreamcontext_council.engine.research.servers import ToolServers
from dreamcontext_council.engine.research.toolbox import BUDGET_SPENT, PersonaToolBox, ToolRecord
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.tool_config import ToolsConfig

from .tools_support import alive, lookup_server, tools_file

PERSONA = "risk-auditor"
ALLOWED = ["lookup", "fail", "hang", "shout", "pid"]


class Turn:
    """One round of one persona, with every record its toolbox reported."""

    def __init__(self, root: Root, debate_id: str) -> None:
        self.root = root
        self.debate_id = debate_id
        self.records: list[ToolRecord] = []

    def play(
        self,
        scenario: Callable[[PersonaToolBox], Awaitable[None]],
        config: ToolsConfig | None = None,
        **limits: Any,
    ) -> None:
        settings = {"max_calls": 4, "timeout_s": 30.0} | limits

        async def main() -> None:
            config_used = config or tools_file(lookup=lookup_server(ALLOWED))
            async with ToolServers(config_used, environ={}, start_timeout_s=60) as servers:
                box = PersonaToolBox(
                    servers, self.root, self.debate_id, PERSONA, 2,
                    on_record=self.records.append, **settings,
                )  # fmt: skip
                assert isinstance(box, ToolBox)
                await scenario(box)

        anyio.run(main)

    @property
    def researches(self) -> Path:
        return self.root.path / "council" / self.debate_id / PERSONA / "researches"

    def index(self) -> list[dict[str, str]]:
        return json.loads((self.researches / "index.json").read_text())

    def note(self, slug: str) -> str:
        return (self.researches / f"{slug}.md").read_text()


def turn(root: Root, running: str) -> Turn:
    return Turn(root, running)


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=f"call-{name}", name=name, arguments=arguments)


def test_a_lookup_is_answered_and_kept_as_a_note_the_persona_can_cite(
    root: Root, running: str, cli: Runner
) -> None:
    story = turn(root, running)
    outcomes: list[ToolOutcome] = []

    async def scenario(box: PersonaToolBox) -> None:
        outcomes.append(await box.call(call("lookup__lookup", key="postgres write throughput")))

    story.play(scenario)
    (outcome,) = outcomes
    slug = "lookup-postgres-write-throughput"
    assert outcome == ToolOutcome(
        f"[research note {slug}]\nPostgres 16 handles 40k small writes/s on the platform cluster.",
        is_error=False,
        note=slug,
    )
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert story.index() == [
        {"slug": slug, "topic": "lookup: postgres write throughput", "added_at": today}
    ]
    note = story.note(slug)
    head, body = note.split("\n\n", 2)[:2], note.split("\n\n", 2)[2]
    assert head == ["# lookup: postgres write throughput", f"_Added {today} by {PERSONA}_"]
    assert body.startswith(
        "- **Tool:** `lookup` on the server `lookup`\n- **Round:** 2\n- **Outcome:** ok\n"
    )
    assert re.search(r"- \*\*Called at:\*\* \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00 \(took ", body)
    assert '**Arguments**\n\n```json\n{\n  "key": "postgres write throughput"\n}\n```' in body
    assert (
        "**Result**\n\n```text\n"
        "Postgres 16 handles 40k small writes/s on the platform cluster.\n```\n"
    ) in body
    (record,) = story.records
    assert (record.persona, record.round, record.tool, record.outcome, record.note) == (
        PERSONA, 2, "lookup__lookup", "ok", slug,
    )  # fmt: skip
    assert record.arguments == {"key": "postgres write throughput"}
    assert record.result_bytes == len(
        b"Postgres 16 handles 40k small writes/s on the platform cluster."
    )
    listed = cli("research", "list", running, PERSONA, "--json")
    assert listed.code == 0 and listed.json()[0]["slug"] == slug


def test_the_same_call_twice_keeps_two_notes_newest_first(root: Root, running: str) -> None:
    story = turn(root, running)

    async def scenario(box: PersonaToolBox) -> None:
        for _ in range(2):
            await box.call(call("lookup__lookup", key="kafka retention"))

    story.play(scenario)
    assert [e["slug"] for e in story.index()] == [
        "lookup-kafka-retention-2",
        "lookup-kafka-retention",
    ]


def test_tool_errors_come_back_as_error_text_and_are_recorded(root: Root, running: str) -> None:
    story = turn(root, running)
    outcomes: list[ToolOutcome] = []

    async def scenario(box: PersonaToolBox) -> None:
        outcomes.append(await box.call(call("lookup__lookup", key="mongo")))
        outcomes.append(await box.call(call("lookup__fail")))

    story.play(scenario)
    missing, failed = outcomes
    assert missing.is_error and missing.text == (
        "[research note lookup-mongo-error]\nError executing tool lookup: no entry for 'mongo'"
    )
    assert failed.is_error and failed.text.endswith(": the lookup backend is down")
    assert [r.outcome for r in story.records] == ["error", "error"]
    assert "- **Outcome:** error" in story.note("fail-error")
    assert "the lookup backend is down" in story.note("fail-error")


def test_a_hanging_tool_times_out_is_recorded_and_leaves_no_process(
    root: Root, running: str
) -> None:
    story = turn(root, running)
    pids: list[int] = []
    outcomes: list[ToolOutcome] = []

    async def scenario(box: PersonaToolBox) -> None:
        pids.append(int((await box.call(call("lookup__pid"))).text.split("\n")[1]))
        outcomes.append(await box.call(call("lookup__hang")))
        outcomes.append(await box.call(call("lookup__lookup", key="kafka retention")))

    story.play(scenario, timeout_s=0.5)
    hung, after = outcomes
    assert hung.is_error and hung.text == (
        "[research note hang-timeout]\nlookup/hang timed out after 0.5 s."
    )
    assert not after.is_error  # the server still answers after a call timed out
    assert [r.outcome for r in story.records] == ["ok", "timeout", "ok"]
    assert "- **Outcome:** timeout" in story.note("hang-timeout")
    assert not alive(pids[0])


def test_denied_calls_are_recorded_and_never_reach_a_server(root: Root, running: str) -> None:
    story = turn(root, running)
    outcomes: list[ToolOutcome] = []

    async def scenario(box: PersonaToolBox) -> None:
        outcomes.append(await box.call(call("lookup__secret")))  # listed, not allowed
        outcomes.append(await box.call(call("shell__run", cmd="rm -rf /")))  # injected
        outcomes.append(await box.call(call("lookup__lookup", key="kafka retention")))
        outcomes.append(await box.call(call("lookup__lookup", key="postgres write throughput")))

    story.play(scenario, max_calls=3)
    secret, injected, allowed, over = outcomes
    assert secret.is_error and secret.text == (
        "[research note lookup-secret-denied]\n"
        "lookup__secret is not a tool you may call in this debate."
    )
    assert injected.is_error and injected.note == "shell-run-rm-rf-denied"
    assert not allowed.is_error
    assert over.is_error and over.text.endswith(f"\n{BUDGET_SPENT}")
    assert [r.outcome for r in story.records] == ["denied", "denied", "ok", "denied"]
    assert [e["topic"] for e in story.index()] == [
        "lookup: postgres write throughput (denied)",
        "lookup: kafka retention",
        "shell__run: rm -rf / (denied)",
        "lookup__secret (denied)",
    ]
    note = story.note("shell-run-rm-rf-denied")
    assert "- **Tool:** `shell__run` on the server `(none: not offered)`" in note
    assert "- **Outcome:** denied" in note
    everything = "".join(p.read_text() for p in story.researches.iterdir())
    assert "the secret tool ran" not in everything


def test_a_result_over_the_limit_is_cut_with_its_full_size(root: Root, running: str) -> None:
    story = turn(root, running)
    outcomes: list[ToolOutcome] = []

    async def scenario(box: PersonaToolBox) -> None:
        outcomes.append(await box.call(call("lookup__shout", size=5000)))

    story.play(scenario, result_limit=1000)
    (outcome,) = outcomes
    assert outcome.text == f"[research note shout-5000]\n{'x' * 1000}\n[cut at 1000 of 5000 bytes]"
    note = story.note("shout-5000")
    assert f"**Result** (cut at 1000 of 5000 bytes)\n\n```text\n{'x' * 1000}\n```" in note
    assert story.records[0].result_bytes == 5000


def test_control_characters_are_stripped_and_headings_stay_inside_the_fence(
    root: Root, running: str
) -> None:
    story = turn(root, running)
    outcomes: list[ToolOutcome] = []

    async def scenario(box: PersonaToolBox) -> None:
        outcomes.append(await box.call(call("lookup__shout")))

    story.play(scenario)
    note = story.note("shout")
    result = "line one[31m red\n## Heading in the result\n```\nfenced ``` text\n\ttabend"
    assert f"**Result**\n\n````text\n{result}\n````\n" in note
    assert outcomes[0].text == f"[research note shout]\n{result}"
    for character in "\x1b\x07\x00\r\u202e":
        assert character not in note
    assert [line for line in note.splitlines() if line.startswith("#")] == [
        "# shout",
        "## Heading in the result",
    ]


def test_arguments_that_are_not_an_object_are_an_error_without_a_call(
    root: Root, running: str
) -> None:
    story = turn(root, running)
    outcomes: list[ToolOutcome] = []

    async def scenario(box: PersonaToolBox) -> None:
        bad = ToolCall(id="c1", name="lookup__lookup", arguments=["kafka"])  # type: ignore[arg-type]
        outcomes.append(await box.call(bad))

    story.play(scenario)
    assert outcomes[0].is_error and outcomes[0].text.endswith(
        "must be a JSON object; call the tool again."
    )
    assert '"given": [\n    "kafka"\n  ]' in story.note(outcomes[0].note or "")


def test_a_unique_note_on_a_long_topic_keeps_within_the_slug_limit(
    root: Root, running: str
) -> None:
    topic = "lookup: " + "very long words " * 10
    first = add_research(root, running, PERSONA, topic, "one", unique=True)
    second = add_research(root, running, PERSONA, topic, "two", unique=True)
    replaced = add_research(root, running, PERSONA, topic, "three")
    assert second.slug == first.slug[: RESEARCH_SLUG_LIMIT - 2].rstrip("-") + "-2"
    assert len(first.slug) <= RESEARCH_SLUG_LIMIT and len(second.slug) <= RESEARCH_SLUG_LIMIT
    assert replaced.slug == first.slug  # without `unique`, `research add` still replaces
    assert [e["slug"] for e in turn(root, running).index()] == [first.slug, second.slug]
