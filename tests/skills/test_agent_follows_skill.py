"""Play a coding agent that follows SKILL.md literally, on a fresh folder.

The agent takes every command from the bash blocks of SKILL.md's "Orchestration
flow", in order, fills the placeholders, and runs it in bash. It reads the flow the
way the skill tells it to:
- commands before the first `round start` set the debate up; a command naming
  `<slug>` runs once per persona;
- from `round start` to `synthesize` is one round, repeated for N = 1, 2, …; a run
  of consecutive commands naming `<slug>` is one persona sub-agent's script and
  runs once per persona (the sub-agents in parallel, as the skill dispatches them);
- `check` is the convergence check, played after each round from 2 that is not the
  last planned (as `run` asks it), answered CONTINUE;
- `inject`, `question` and `round extend` are the interlude, played once after
  round 1; `round extend` adds the round the agent then runs;
- at `synthesize` it dispatches the synthesizer, which runs the commands of
  council-synthesizer.md, reads synthesis-input.md and writes final-report.md ending
  with its claims block; then the rest of the flow.
Every command must exit 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from dreamcontext_council.actions import closing, convene, rounds, submissions
from dreamcontext_council.cli import cli
from dreamcontext_council.folder.paths import Root, root_for_new
from dreamcontext_council.rules.roster import PersonaSpec

from .agent_shell import Shell
from .pack_commands import (
    PERSONA_MD,
    PLACEHOLDER,
    PROTOCOL_MD,
    SKILL_MD,
    SYNTHESIZER_MD,
    PackCommand,
    bash_commands,
    command_path,
)

QUESTION = "Should we migrate the session store from Redis to Postgres?"
PERSONAS = {
    "risk-auditor": ("A", 70, "You are the risk auditor: you look for what can go wrong."),
    "growth-cfo": ("A", 55, "You are the growth CFO: you weigh cost against revenue."),
    "user-advocate": ("B", 60, "You are the user advocate: you judge by what users feel."),
}
BASE_VALUES = {
    "question": QUESTION,
    "rounds": "2",
    "options": "A=Migrate now,B=Stay on Redis",
    "model": "sonnet",
    "aspects": "risk, cost, users",
    "research-topic": "postgres write throughput",
    "note": "Postgres 16 handles 40k small writes per second on the platform cluster.",
    "fact": "Postgres is already run by the platform team.",
    "directive": "What does the migration cost in engineer-weeks?",
    "concession": "The cutover risk is real and needs a rehearsal.",
    "preset": "engineering",
    "dollars": "1",
    "score": "6",
    "answer": "CONTINUE",
    "reason": "the rollback critique is still unanswered",
}
BETWEEN_ROUNDS = {("council", "inject"), ("council", "question"), ("council", "round", "extend")}
CHECK = ("council", "check")
SHELL_UNSAFE = set('"$`\\')


def fill(command: PackCommand, values: dict[str, str]) -> str:
    """The command line with every placeholder replaced, checked to be shell-safe."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise AssertionError(f"{command.where}: no value for the placeholder <{name}>")
        text = values[name]
        assert not SHELL_UNSAFE & set(text), f"test value for <{name}> is not shell-safe"
        quoted = command.text[match.start() - 1 : match.start()] == '"'
        if not quoted:
            assert re.fullmatch(r"[\w.:,=-]+", text), (
                f"{command.where}: <{name}> is not quoted but its value {text!r} has spaces"
            )
        return text

    return PLACEHOLDER.sub(value, command.text)


def persona_values(slug: str, number: int) -> dict[str, str]:
    stance, conviction, text = PERSONAS[slug]
    return {
        "slug": slug,
        "N": str(number),
        "persona-text": text,
        "stance": stance,
        "conviction": str(min(100, conviction + 5 * (number - 1))),
        "headline": f"{slug} backs option {stance} in round {number}",
    }


def path_of(command: PackCommand) -> tuple[str, ...]:
    return command_path(cli, command)


def flow_commands() -> list[PackCommand]:
    return [c for c in bash_commands(SKILL_MD) if c.section == "Orchestration flow"]


def persona_blocks(commands: list[PackCommand]) -> list[list[PackCommand] | PackCommand]:
    """Group consecutive commands that name <slug>: each group is one sub-agent's script."""
    grouped: list[list[PackCommand] | PackCommand] = []
    for command in commands:
        if "slug" in command.placeholders():
            if grouped and isinstance(grouped[-1], list):
                grouped[-1].append(command)
            else:
                grouped.append([command])
        else:
            grouped.append(command)
    return grouped


class Agent:
    """The orchestrator, its persona sub-agents and its synthesizer, all following the pack."""

    def __init__(self, shell: Shell) -> None:
        self.shell = shell
        self.values = dict(BASE_VALUES)
        self.rounds_to_run = int(self.values["rounds"])
        self.outputs: dict[tuple[str, ...], list[str]] = {}

    def run(self, command: PackCommand, extra: dict[str, str] | None = None) -> str:
        values = self.values | (extra or {})
        stdin = command.stdin and PLACEHOLDER.sub(lambda m: values[m.group(1)], command.stdin)
        out = self.shell.run(fill(command, values), stdin, command.where)
        path = path_of(command)
        self.outputs.setdefault(path, []).append(out)
        if path == ("council", "new"):
            self.values["id"] = out.strip().splitlines()[-1]
        if path == ("council", "round", "extend"):
            by = re.search(r"--by (\d+)", command.text)
            self.rounds_to_run += int(by.group(1)) if by else 1
        return out

    def for_each_persona(self, command: PackCommand, number: int = 1) -> None:
        for slug in PERSONAS:
            self.run(command, persona_values(slug, number))

    def persona_subagents(self, script: list[PackCommand], number: int) -> None:
        def subagent(slug: str) -> None:
            for command in script:
                self.run(command, persona_values(slug, number))

        with ThreadPoolExecutor(len(PERSONAS)) as pool:
            list(pool.map(subagent, PERSONAS))

    def play_steps(self, commands: list[PackCommand], number: int) -> None:
        checked = 2 <= number < self.rounds_to_run  # `run` checks after these rounds only
        for step in persona_blocks(commands):
            if isinstance(step, list):
                self.persona_subagents(step, number)
            elif path_of(step) != CHECK or checked:
                self.run(step, {"N": str(number)})

    def synthesizer(self) -> None:
        """A clean sub-agent: it knows only the id, runs its commands, reads the prompt
        `synthesize` wrote and writes its answer as final-report.md."""
        for command in bash_commands(SYNTHESIZER_MD):
            self.run(command, {"id": self.values["id"]})
        folder = self.shell.cwd / "_dream_context" / "council" / self.values["id"]
        prompt = (folder / "synthesis-input.md").read_text(encoding="utf-8")
        assert "## System prompt" in prompt and "```claims" in prompt
        (folder / "final-report.md").write_text(final_report(), encoding="utf-8")


def final_report() -> str:
    """A synthesizer's answer as synthesis-input.md asks for it, its claims block last."""
    return """## Verdict

Migrate now (A). Confidence: medium.

## Decision card

| Chosen | Runner-up | Deciding factors | Strongest dissent | Conditions to revisit |
|---|---|---|---|---|
| A | B | cost, ops | user-advocate | p99 above 20ms |

## Why

- **Ops cost** drops with one fewer datastore. *— risk-auditor R1, growth-cfo R2*

## What was debated

Latency against operating cost.

## Minority view & revisit conditions

user-advocate: stay on Redis if p99 latency goes above 20ms. *— user-advocate R3*

## Open risks

- The cutover needs a rehearsal.

## Appendix: per-agent per-round summaries

### risk-auditor — Round 1
Backs A with a rollback plan.

```claims
[{"claim": "One fewer datastore lowers the operating cost.", "proposer": "risk-auditor",
  "round": 1, "supporters": ["growth-cfo"], "challengers": ["user-advocate"],
  "retracted": false, "research": [], "attachments": []}]
```
"""


def play(shell: Shell, on_round_context: Callable[[int, str], None] | None = None) -> Agent:
    commands = flow_commands()
    paths = [path_of(c) for c in commands]
    first_round = paths.index(("council", "round", "start"))
    synthesis = paths.index(("council", "synthesize"))
    setup, loop, closing = (
        commands[:first_round],
        commands[first_round:synthesis],
        commands[synthesis:],
    )
    per_round = [c for c in loop if path_of(c) not in BETWEEN_ROUNDS]
    between = [c for c in loop if path_of(c) in BETWEEN_ROUNDS]

    agent = Agent(shell)
    for command in setup:
        if "slug" in command.placeholders():
            agent.for_each_persona(command)
        else:
            agent.run(command)
    number = 1
    while number <= agent.rounds_to_run:
        agent.play_steps(per_round, number)
        if number == 1:
            agent.play_steps(between, number)
        number += 1
    for command in closing:
        agent.run(command)
        if path_of(command) == ("council", "synthesize"):
            agent.synthesizer()
    return agent


def test_skill_flow_names_the_whole_agent_driven_debate() -> None:
    paths = [path_of(c) for c in flow_commands()]
    expected = [
        ("council", "new"),
        ("council", "agent", "create"),
        ("council", "round", "start"),
        ("council", "round-context"),
        ("council", "report", "append"),
        ("council", "round", "end"),
        ("council", "check"),
        ("council", "synthesize"),
        ("council", "complete"),
        ("council", "promote"),
    ]
    positions = [paths.index(p) for p in expected]
    assert positions == sorted(positions), f"the flow runs these out of order: {paths}"
    for needed in (("council", "research", "add"), *BETWEEN_ROUNDS):
        assert needed in paths
    # The persona answers in one command; the orchestrator decides from the check page.
    for left_out in (("council", "verdict"), ("council", "summaries"), ("council", "board")):
        assert left_out not in paths


def test_persona_agent_runs_the_same_script_as_skill_md() -> None:
    in_skill = [(c.text, c.stdin) for c in flow_commands() if "slug" in c.placeholders()]
    in_skill = [c for c in in_skill if not c[0].startswith("dreamcontext council agent create")]
    in_skill = [c for c in in_skill if not c[0].startswith("dreamcontext council question")]
    in_agent = [(c.text, c.stdin) for c in bash_commands(PERSONA_MD)]
    assert in_skill == in_agent


def test_every_placeholder_is_documented_in_skill_md() -> None:
    table = SKILL_MD.read_text(encoding="utf-8").split("## Placeholders", 1)[1].split("\n## ")[0]
    documented = set(PLACEHOLDER.findall(table))
    for path in (SKILL_MD, PROTOCOL_MD, PERSONA_MD, SYNTHESIZER_MD):
        for command in bash_commands(path):
            missing = set(command.placeholders()) - documented
            assert not missing, f"{command.where}: undocumented placeholder(s) {missing}"


@pytest.mark.slow
def test_agent_following_skill_md_runs_a_whole_debate(shell: Shell) -> None:
    agent = play(shell)
    debate_id = agent.values["id"]
    folder = shell.cwd / "_dream_context" / "council" / debate_id

    debate = (folder / "debate.md").read_text(encoding="utf-8")
    assert "status: complete" in debate
    assert "rounds_planned: 3" in debate
    assert "- **[Interlude R1]** Postgres is already run by the platform team." in debate

    verdicts = json.loads((folder / "verdicts.json").read_text(encoding="utf-8"))
    assert sorted(verdicts["rounds"]) == ["1", "2", "3"]
    for by_persona in verdicts["rounds"].values():
        assert sorted(by_persona) == sorted(PERSONAS)
    assert verdicts["rounds"]["3"]["user-advocate"]["stance"] == "B"

    for slug in PERSONAS:
        report = (folder / slug / "report.md").read_text(encoding="utf-8")
        assert [f"## Round {n}" in report for n in (1, 2, 3)] == [True, True, True]
        context = (folder / slug / "context-and-persona.md").read_text(encoding="utf-8")
        assert "## Round 2 — Cross-context loaded" in context
        assert "What does the migration cost in engineer-weeks?" in context
        assert (folder / slug / "researches" / "postgres-write-throughput.md").is_file()

    # Round 2 was a cross-examination: each persona critiqued its assigned peer and scored it.
    reviews = json.loads((folder / "reviews.json").read_text(encoding="utf-8"))
    assert sorted(reviews["rounds"]["2"]) == sorted(PERSONAS)
    assert {r["score"] for r in reviews["rounds"]["2"].values()} == {6.0}
    round_contexts = agent.outputs[("council", "round-context")]
    assert any("Critiques aimed at you" in out for out in round_contexts)
    assert any("What does the migration cost in engineer-weeks?" in out for out in round_contexts)
    # The check after round 2 is recorded as `run` records its own; none after round 3.
    log = (folder / "round-log.md").read_text(encoding="utf-8")
    assert "## Convergence check after round 2 — CONTINUE" in log
    assert "- Reason: the rollback critique is still unanswered" in log
    assert "Convergence check after round 3" not in log
    check_page = agent.outputs[("council", "check")][0]
    assert "## Round 2 critiques revealed" in check_page
    # `complete` rendered the synthesizer's claims block as `run` would.
    claims = json.loads((folder / "claims.json").read_text(encoding="utf-8"))
    assert [c["proposer"] for c in claims["claims"]] == ["risk-auditor"]
    report = (folder / "final-report.md").read_text(encoding="utf-8")
    assert "## Claims ledger" in report and "## Position timeline" in report
    assert "```claims" not in report

    knowledge = shell.cwd / "_dream_context" / "knowledge"
    promoted = knowledge / "decision-should-we-migrate-the-session-store-from-redis-to-postgres.md"
    assert promoted.is_file()
    assert "## Verdict" in promoted.read_text(encoding="utf-8")


def test_handing_the_debate_to_council_run(shell: Shell) -> None:
    """The hand-over section: seat personas as in steps 1-2, then let `run` finish."""
    handoff = [
        c for c in bash_commands(SKILL_MD) if c.section == "Handing the debate to `council run`"
    ]
    assert [path_of(c) for c in handoff] == [("council", "run")] * len(handoff)
    commands = flow_commands()
    first_round = [path_of(c) for c in commands].index(("council", "round", "start"))
    agent = Agent(shell)
    agent.values["model"] = "scripted"  # the model each persona's provider runs
    for command in commands[:first_round]:
        if "slug" in command.placeholders():
            agent.for_each_persona(command)
        else:
            agent.run(command)
    for command in handoff:
        agent.run(command)
    folder = shell.cwd / "_dream_context" / "council" / agent.values["id"]
    assert "status: complete" in (folder / "debate.md").read_text(encoding="utf-8")
    assert "## Verdict" in (folder / "final-report.md").read_text(encoding="utf-8")


# Failure-mode recovery commands in debate-protocol.md, each run in the state where
# the protocol says to use it: a running round 1 where `growth-cfo` has not reported,
# or a complete debate for `promote`.
MISSING = "growth-cfo"


ENTRY = "".join(
    f"### {title}\n{title} text.\n\n"
    for title in (
        "Executive Summary",
        "Position",
        "Reasoning",
        "Reactions to peers",
        "Open questions",
    )
)


def _root(shell: Shell) -> Root:
    root, _ = root_for_new(shell.cwd / "_dream_context")
    return root


def _debate_in_round_one(shell: Shell) -> str:
    """Built in-process (fast); only the protocol's own command runs as a subprocess."""
    root = _root(shell)
    options = [{"key": "A", "label": "Migrate now"}, {"key": "B", "label": "Stay"}]
    debate_id = convene.new_debate(root, QUESTION, options=options).id
    for slug, (_, _, text) in PERSONAS.items():
        convene.create_agent(root, debate_id, PersonaSpec(slug, text))
    rounds.start_round(root, debate_id, 1)
    for slug, (stance, conviction, _) in PERSONAS.items():
        if slug != MISSING:
            submissions.record_verdict(
                root, debate_id, slug, 1, stance=stance, conviction=conviction, headline=slug
            )
            submissions.append_report(root, debate_id, slug, ENTRY, number=1)
    return debate_id


def _complete_debate(shell: Shell) -> str:
    debate_id = _debate_in_round_one(shell)
    root = _root(shell)
    rounds.end_round(root, debate_id, 1, excused=[MISSING])
    closing.begin_synthesis(root, debate_id)
    report = final_report()
    (root.council / debate_id / "final-report.md").write_text(report, encoding="utf-8")
    closing.complete_debate(root, debate_id)
    closing.promote(root, debate_id)
    return debate_id


PROTOCOL_RECOVERIES = bash_commands(PROTOCOL_MD)


@pytest.mark.parametrize(
    "command", PROTOCOL_RECOVERIES, ids=[c.text.split(" <")[0] for c in PROTOCOL_RECOVERIES]
)
def test_debate_protocol_recovery_commands_succeed(shell: Shell, command: PackCommand) -> None:
    path = path_of(command)
    debate_id = (
        _complete_debate(shell) if path == ("council", "promote") else _debate_in_round_one(shell)
    )
    values = BASE_VALUES | persona_values(MISSING, 1) | {"id": debate_id, "N": "1"}
    shell.run(fill(command, values), command.stdin, command.where)


def test_debate_protocol_has_recovery_commands() -> None:
    paths = {path_of(c) for c in PROTOCOL_RECOVERIES}
    assert ("council", "round", "end") in paths
    assert ("council", "live", "clear") in paths
