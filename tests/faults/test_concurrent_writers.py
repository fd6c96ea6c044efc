"""32 writer processes at once on one debate: verdicts, reports and injects, none lost.

Each writer is a real interpreter that waits at a barrier and then runs the CLI's own
commands (in-process, one after another), so all of them contend for the debate's lock
at the same moment.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from dreamcontext_council import Root, end_round, load_snapshot, new_debate, start_round
from dreamcontext_council.rules.roster import PersonaSpec

from .support import clean_env, problems, report, scaled, temp_files

WRITERS = 32
PERSONAS = [f"member-{n}" for n in range(8)]
ROUNDS = 4  # 8 personas x 4 rounds: one (persona, round) per writer
EXTRA = scaled(0, 1)  # the long suite also queues questions and adds research notes

WRITER = """
import sys, time
from pathlib import Path
from dreamcontext_council.cli import cli

go, root, debate_id, writer, slug, number, repeat, extra = sys.argv[1:]
marker = f"writer-{writer}-pass-{repeat}"
entry = (
    f"### Executive Summary\\n{marker} summary.\\n\\n### Position\\nA.\\n\\n"
    f"### Reasoning\\n{marker} reasoning.\\n\\n### Reactions to peers\\nNone.\\n\\n"
    "### Open questions\\nNone.\\n"
)
commands = [
    ["verdict", debate_id, slug, number, "--stance", "A", "--conviction", str(int(writer) % 101),
     "--headline", marker],
    ["report", "append", debate_id, slug, "--round", number, "--body", entry],
    ["inject", debate_id, f"Fact from {marker}."],
]
if extra == "1":
    commands += [
        ["question", debate_id, slug, f"Question from {marker}?"],
        ["research", "add", debate_id, slug, f"note {marker}", "--body", f"Body of {marker}."],
    ]
while not Path(go).exists():
    time.sleep(0.005)
for command in commands:
    code = cli.main(["council", *command], prog_name="dreamcontext", standalone_mode=False)
    if code not in (None, 0):
        sys.exit(f"{command[0]} exited {code}")
"""


@pytest.fixture
def debate(tmp_path: Path) -> tuple[Root, str]:
    """Eight personas in round 4 of 4; rounds 1-3 were closed with nobody reporting."""
    root = Root(tmp_path / "_dream_context")
    root.council.mkdir(parents=True)
    specs = [PersonaSpec(slug, f"You are {slug}.") for slug in PERSONAS]
    options = [{"key": "A", "label": "Migrate"}, {"key": "B", "label": "Stay"}]
    debate_id = new_debate(root, "Migrate?", rounds=ROUNDS, options=options, personas=specs).id
    for number in range(1, ROUNDS):
        start_round(root, debate_id, number)
        end_round(root, debate_id, number, excused=PERSONAS)
    start_round(root, debate_id, ROUNDS)
    return root, debate_id


def _run_writers(root: Root, debate_id: str, repeat: int, base: Path) -> None:
    go = base / f"go-{repeat}"
    env = clean_env(base / "home", DREAMCONTEXT_ROOT=str(root.path))
    writers = []
    for writer in range(WRITERS):
        slug, number = PERSONAS[writer % len(PERSONAS)], writer // len(PERSONAS) + 1
        argv = [sys.executable, "-c", WRITER, str(go), str(root.path), debate_id, str(writer)]
        argv += [slug, str(number), str(repeat), str(EXTRA)]
        writers.append(
            subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        )
    time.sleep(0.5)  # let the interpreters start and wait at the barrier
    go.touch()
    failures = []
    for process in writers:
        _, err = process.communicate(timeout=240)
        if process.returncode != 0:
            failures.append(err.decode("utf-8", "replace")[-500:])
    assert not failures, failures


@pytest.mark.slow
@pytest.mark.parametrize("repeats", [scaled(1, 3)])
def test_32_concurrent_writers_lose_nothing(
    debate: tuple[Root, str], tmp_path: Path, repeats: int
) -> None:
    root, debate_id = debate
    for repeat in range(repeats):
        _run_writers(root, debate_id, repeat, tmp_path)
        snapshot = load_snapshot(root, debate_id)
        facts = snapshot.debate.facts()
        for writer in range(WRITERS):
            slug, number = PERSONAS[writer % len(PERSONAS)], writer // len(PERSONAS) + 1
            marker = f"writer-{writer}-pass-{repeat}"
            verdict = snapshot.verdicts.round(number)[slug]
            assert verdict.headline == marker
            assert verdict.conviction == writer % 101
            persona = snapshot.persona(slug)
            assert persona is not None
            entry = persona.entry(number)
            assert entry is not None and marker in entry.body, f"{slug} R{number}"
            assert any(f"Fact from {marker}." in fact for fact in facts), marker
            if EXTRA:
                assert persona.context is not None
                assert f"Question from {marker}?" in persona.context.directives(ROUNDS + 1)
                assert any(marker in note["topic"] for note in persona.research)
        # Every persona still has exactly one entry per round, and the facts are not doubled.
        for persona in snapshot.personas:
            assert sorted(e.round for e in persona.entries) == list(range(1, ROUNDS + 1))
        assert len([f for f in facts if "Fact from writer-" in f]) == WRITERS * (repeat + 1)
    assert not problems(root.path)
    assert not temp_files(root.path)
    commands = 3 + 2 * EXTRA
    report("writers", processes=WRITERS, passes=repeats, commands=WRITERS * commands * repeats)
