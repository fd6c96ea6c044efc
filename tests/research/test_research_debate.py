"""A research-augmented debate end to end: `run --tools` with the real SDKs and a real MCP server.

Two personas run on the openai provider and two on the anthropic one, all against the
local stub server, which asks for one tool call per persona turn: a lookup that answers,
a tool that fails, a tool that hangs, and a tool the tools file does not allow. The
lookup server is the real stdio MCP server of lookup_server.py. The synthesizer cites
the notes it was shown; the engine decides which of them back a claim.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from council_run import Council, request_task, roster_file, section
from offline import no_provider_environment as no_provider_environment  # autouse here
from stub_server import StubResponse, StubServer, tool_results

from dreamcontext_council.engine.providers.scripted import scripted_text, synthesis_answer
from dreamcontext_council.folder import frontmatter_io

from .tools_support import LOOKUP_SERVER, alive

TOPIC = "Should the event pipeline move from Kafka to Postgres?"
KEY = "sk-test-research-0123456789"
PLAN = {
    "alpha": ("lookup__lookup", {"key": "postgres write throughput"}),
    "beta": ("lookup__fail", {}),
    "gamma": ("lookup__hang", {}),
    "delta": ("lookup__secret", {}),
}
MODELS = {
    "alpha": "openai:gpt-stub",
    "beta": "openai:gpt-stub",
    "gamma": "anthropic:claude-stub",
    "delta": "anthropic:claude-stub",
}
DEBATING = ("opening", "cross-exam", "rebuttal")
NOTE_ID = re.compile(r"^### ((?:alpha|beta|gamma|delta)/[a-z0-9-]+): ", re.M)


class ResearchChamber:
    """Answers every call: a persona's first request of a turn asks for its tool call."""

    def __init__(self) -> None:
        self.tool_requests: list[dict[str, Any]] = []
        self.notes_shown: list[str] = []
        self.cited: dict[str, str] = {}

    def __call__(self, request_json: dict[str, Any]) -> str | StubResponse:
        task = request_task(request_json)
        phase = task.get("phase")
        if phase == "synthesis":
            return self.synthesis(request_json, task)
        if phase in DEBATING and "tools" in request_json:
            if not tool_results(request_json):
                name, arguments = PLAN[str(task["persona"])]
                return StubResponse.tool_calls([(name, arguments)])
            self.tool_requests.append(request_json)
        return scripted_text(task)

    def synthesis(self, request_json: dict[str, Any], task: dict[str, Any]) -> str:
        user = request_json["messages"][-1]["content"]
        text = user if isinstance(user, str) else json.dumps(user)
        self.notes_shown = NOTE_ID.findall(text)
        cited = self.cited = {note.split("/")[0]: note for note in self.notes_shown}
        if not cited:
            return synthesis_answer(task)  # a debate run without its tools
        claims = [
            claim("Postgres takes 40k small writes a second.", "alpha", [cited["alpha"]]),
            claim("The backend fails under load.", "beta", [cited["beta"]]),
            claim("The secret tool says to migrate.", "delta", [cited["delta"]]),
        ]
        report = synthesis_answer(task)
        block = "```claims\n" + json.dumps(claims) + "\n```"
        return re.sub(r"```claims\n.*?\n```", lambda _: block, report, flags=re.S)


def claim(text: str, proposer: str, notes: list[str]) -> dict[str, Any]:
    return {
        "claim": text,
        "proposer": proposer,
        "round": 1,
        "supporters": [],
        "challengers": [],
        "retracted": False,
        "research": notes,
    }


@pytest.fixture
def chamber() -> ResearchChamber:
    return ResearchChamber()


@pytest.fixture
def stub(chamber: ResearchChamber) -> Iterator[StubServer]:
    with StubServer(responder=chamber) as server:
        yield server


@pytest.fixture
def council(root_path: Path, workdir: Path, tmp_path: Path, stub: StubServer) -> Council:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "NO_PROXY": "127.0.0.1,localhost",
        "HOME": str(home),
        "ANTHROPIC_CONFIG_DIR": str(home / "anthropic-config"),
        "TERM": "dumb",
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": stub.openai_url,
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": stub.url,
    }
    return Council(root_path, workdir, env)


def write_tools(tmp_path: Path, pid_file: Path) -> Path:
    path = tmp_path / "tools.json"
    server = {
        "command": sys.executable,
        "args": [str(LOOKUP_SERVER)],
        "env": {"LOOKUP_PID_FILE": str(pid_file)},
        "allow": ["lookup", "fail", "hang"],
    }
    path.write_text(json.dumps({"mcpServers": {"lookup": server}}), encoding="utf-8")
    return path


def new_with_tools(council: Council, tools: Path, tmp_path: Path) -> None:
    """`council new` of a one-round debate with the four personas and the tools file."""
    roster = roster_file(tmp_path / "roster.json", MODELS)
    created = council("new", TOPIC, "--personas", roster, "--tools", str(tools), "--rounds", "1")
    assert created.code == 0, created.err


def notes(council: Council, debate_id: str, persona: str) -> dict[str, str]:
    """A persona's research notes by slug, from its index."""
    folder = council.folder(debate_id) / persona / "researches"
    index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    return {e["slug"]: (folder / f"{e['slug']}.md").read_text(encoding="utf-8") for e in index}


def test_a_debate_with_research_tools_records_every_call_and_the_ledger_cites_what_backs_a_claim(
    council: Council, chamber: ResearchChamber, stub: StubServer, tmp_path: Path
) -> None:
    pid_file = tmp_path / "lookup.pid"
    tools = write_tools(tmp_path, pid_file)
    roster = roster_file(tmp_path / "roster.json", MODELS)
    result = council(
        "run", "--topic", TOPIC, "--options", "A=Move to Postgres,B=Stay on Kafka",
        "--personas", roster, "--tools", str(tools), "--timeout", "2", "--yes",
    )  # fmt: skip
    assert result.code == 0, result.err
    # The live table (plain lines off a terminal) shows each tool call as it is made.
    assert re.search(r"alpha: researching · lookup__lookup ok → lookup-postgres-write-", result.err)
    assert "delta: researching · lookup__secret denied → " in result.err
    debate_id = council.only_id()
    meta = council.meta(debate_id)
    assert council.status(debate_id) == "complete"
    assert meta["rounds_planned"] == 2  # a debate with research tools is compact
    assert meta["run"]["tools"] == str(tools.resolve())
    assert meta["run"]["max_tool_calls"] == 4

    # Every call is a research note in the Node format, whatever became of it.
    alpha = notes(council, debate_id, "alpha")
    assert len(alpha) == 2  # one per round
    first = next(iter(alpha.values()))
    assert first.startswith("# lookup: postgres write throughput\n\n_Added ")
    assert "by alpha_" in first and "- **Outcome:** ok" in first
    assert "Postgres 16 handles 40k small writes/s" in first
    assert all("- **Outcome:** error" in n for n in notes(council, debate_id, "beta").values())
    gamma = notes(council, debate_id, "gamma").values()
    assert all("- **Outcome:** timeout" in n and "timed out after 2" in n for n in gamma)
    delta = notes(council, debate_id, "delta").values()
    assert all("- **Outcome:** denied" in n for n in delta)
    assert all("lookup__secret is not a tool you may call" in n for n in delta)

    # The model got each result back with the note to cite, in either API's shape.
    sent = [r.content for request in chamber.tool_requests for r in tool_results(request)]
    assert len(sent) == 8, sent
    assert all(text.startswith(("[research note ", "error: [research note ")) for text in sent), (
        sent
    )
    offered = {
        tool["function"]["name"] if "function" in tool else tool["name"]
        for request in stub.requests
        for tool in request.json.get("tools") or []
    }
    assert offered == {"lookup__lookup", "lookup__fail", "lookup__hang"}  # never secret

    # Each persona turn is one usage line that counts its tool call.
    turns = [u for u in council.usage(debate_id) if u["phase"] in DEBATING]
    assert len(turns) == 8 and all(u["tool_calls"] == 1 for u in turns)

    # Only a note with a result backs a claim; the ledger says which.
    claims = council.json_file(debate_id, "claims.json")["claims"]
    assert [(c["label"], c["notes"]) for c in claims] == [
        ("VERIFIED", [chamber.cited["alpha"]]),
        ("UNVERIFIED", []),
        ("UNVERIFIED", []),
    ]
    assert chamber.cited["alpha"].startswith("alpha/lookup-postgres-write-throughput")
    assert len(chamber.notes_shown) == 8  # every note, failed calls too, is shown
    body = frontmatter_io.parse(council.text(debate_id, "final-report.md"), "final-report.md")[1]
    assert f"VERIFIED (research: {chamber.cited['alpha']})" in section(body, "Claims ledger")

    # The tool server is stopped when the run ends.
    assert not alive(int(pid_file.read_text()))


def test_the_scripted_provider_says_it_cannot_use_tools_before_anything_is_written(
    council: Council, tmp_path: Path
) -> None:
    tools = write_tools(tmp_path, tmp_path / "lookup.pid")
    result = council(
        "run", "--topic", TOPIC, "--tools", str(tools), "--model", "scripted", "--yes",
    )  # fmt: skip
    assert result.code == 2, result.out
    assert "cannot call MCP tools" in result.err
    assert council.ids() == []
    assert not (tmp_path / "lookup.pid").exists()  # no server was started


def test_an_allow_list_naming_a_tool_the_server_lacks_leaves_no_debate_behind(
    council: Council, stub: StubServer, tmp_path: Path
) -> None:
    tools = write_tools(tmp_path, tmp_path / "lookup.pid")
    data = json.loads(tools.read_text(encoding="utf-8"))
    data["mcpServers"]["lookup"]["allow"] = ["lookup", "lokup"]
    tools.write_text(json.dumps(data), encoding="utf-8")
    roster = roster_file(tmp_path / "roster.json", MODELS)

    refused = council(
        "run", "--topic", TOPIC, "--personas", roster, "--tools", str(tools), "--yes",
    )  # fmt: skip

    assert refused.code != 0, refused.out
    assert 'does not list the tool "lokup"' in refused.err.strip().splitlines()[-1]
    assert council.ids() == []
    assert stub.requests == []  # refused before any persona was asked
    listed = council("list", "--all", "--json")
    assert listed.code == 0 and json.loads(listed.out) == []


def test_a_tools_file_recorded_in_a_folder_starts_nothing_until_the_user_names_it(
    council: Council, tmp_path: Path
) -> None:
    pid_file = tmp_path / "lookup.pid"
    tools = write_tools(tmp_path, pid_file)
    new_with_tools(council, tools, tmp_path)
    debate_id = council.only_id()
    assert council.meta(debate_id)["run"] == {"tools": str(tools.resolve())}

    # Someone else's machine (another trust file) refuses the recorded tools file.
    stranger = {"DREAMCONTEXT_TRUST_FILE": str(tmp_path / "other-trust.json")}
    refused = council("run", debate_id, "--yes", env=stranger)
    assert refused.code == 2
    assert "asks to start MCP tool servers you have not allowed" in refused.err
    assert f"--tools {tools.resolve()}" in refused.err
    assert council.status(debate_id) == "created" and not pid_file.exists()

    # Naming the file is the consent, and it is remembered for this folder.
    named = council(
        "run", debate_id, "--tools", str(tools), "--timeout", "2", "--yes", env=stranger
    )
    assert named.code == 0, named.err
    assert council.status(debate_id) == "complete"
    assert notes(council, debate_id, "alpha")
    resumed = council("run", debate_id, "--resynthesize", "--yes", env=stranger)
    assert resumed.code == 0, resumed.err  # the recorded file is allowed now


def test_the_creator_of_a_debate_with_tools_resumes_it_without_naming_the_file_again(
    council: Council, tmp_path: Path
) -> None:
    tools = write_tools(tmp_path, tmp_path / "lookup.pid")
    new_with_tools(council, tools, tmp_path)
    result = council("run", council.only_id(), "--timeout", "2", "--yes")
    assert result.code == 0, result.err
    assert council.status(council.only_id()) == "complete"
    # A resynthesis asks no persona: it needs no consent for the tools, and keeps them recorded.
    stranger = {"DREAMCONTEXT_TRUST_FILE": str(tmp_path / "other-trust.json")}
    again = council("run", council.only_id(), "--resynthesize", "--yes", env=stranger)
    assert again.code == 0, again.err
    assert council.meta(council.only_id())["run"]["tools"] == str(tools.resolve())


def test_a_dry_run_with_tools_counts_each_turn_at_its_worst_and_starts_nothing(
    council: Council, tmp_path: Path
) -> None:
    pid_file = tmp_path / "lookup.pid"
    tools = write_tools(tmp_path, pid_file)
    roster = roster_file(tmp_path / "roster.json", MODELS)
    common = ("run", "--topic", TOPIC, "--personas", roster, "--dry-run", "--json", "--yes")
    plain = json.loads(council(*common).out)
    with_tools = json.loads(council(*common, "--tools", str(tools), "--max-tool-calls", "3").out)
    assert "up to 3 tool calls" in with_tools["message"]
    turns = [c for c in with_tools["plan"] if c["phase"] == "persona"]
    assert len(turns) == 8 and all(c["tool_calls"] == 3 for c in turns)  # 2 rounds, compact
    first = next(c for c in plain["plan"] if c["phase"] == "persona")
    assert turns[0]["input_tokens"] == 4 * first["input_tokens"]
    assert council.ids() == [] and not pid_file.exists()


def test_a_recorded_tools_file_that_is_not_here_asks_for_tools_or_no_tools(
    council: Council, tmp_path: Path
) -> None:
    tools = write_tools(tmp_path, tmp_path / "lookup.pid")
    new_with_tools(council, tools, tmp_path)
    debate_id = council.only_id()
    tools.unlink()  # a folder from another machine names a file this one lacks

    missing = council("run", debate_id, "--yes")
    assert missing.code == 1
    assert (
        f"{debate_id} ran with the tools file {tools.resolve()}, which is not here" in missing.err
    )
    assert "--no-tools" in missing.err and council.status(debate_id) == "created"

    both = council("run", debate_id, "--no-tools", "--tools", str(tools), "--yes")
    assert both.code == 2 and "opposite" in both.err

    done = council("run", debate_id, "--no-tools", "--yes")
    assert done.code == 0, done.err
    assert council.status(debate_id) == "complete"
    assert "tools" not in council.meta(debate_id)["run"]
    assert not (council.folder(debate_id) / "alpha" / "researches").exists()
