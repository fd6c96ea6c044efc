"""Clones of one bare repository that each moved a debate on: a merge or a rebase keeps every
event of both, in time order, and `doctor` lists rebuilt debates newest first. Real `git`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from council_run import Council

# Imported fixtures are registered for this module: no developer key reaches a command.
from offline import clean_environment
from offline import no_provider_environment as no_provider_environment

from dreamcontext_council.errors import EXIT_STOPPED
from dreamcontext_council.rules import roundlog

from .test_gitmany import Repo

PERSONAS = ("risk-auditor", "growth-cfo", "user-advocate", "ops-lead")
MACHINE_LOCAL = ".council.lock\n.run.lock\n.*.tmp\n.new-*\n_dream_context/tmp/\nrun.json\n"


class Clone(Repo):
    """One clone of the shared bare repository, with its own git config and none of the user's;
    `git`, `commit` and `ok` as a test repository has them."""

    def __init__(self, path: Path, env: dict[str, str]) -> None:  # a clone, not a new repository
        self.path = path
        self.env = env
        self.council = Council(path / "_dream_context", path, env)

    def log(self, debate_id: str) -> str:
        return (self.council.folder(debate_id) / "round-log.md").read_text(encoding="utf-8")

    def log_entry(self, debate_id: str, heading: str, bullets: list[str]) -> None:
        """An entry appended as the command that writes it does, at a time the test chooses."""
        path = self.council.folder(debate_id) / "round-log.md"
        path.write_text(roundlog.append_entry(self.log(debate_id), heading, bullets), "utf-8")


def team(tmp_path: Path, *names: str, drivers: bool = True) -> list[Clone]:
    """A bare repository and one clone per name, each (with `drivers`) after `git-setup`."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "gitconfig").write_text("", encoding="utf-8")
    env = clean_environment(os.environ, home)
    env.update(GIT_CONFIG_GLOBAL=str(home / "gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], env=env, check=True)
    clones = []
    for name in names:
        subprocess.run(
            ["git", "clone", "-q", str(origin), str(tmp_path / name)], env=env, check=True
        )
        clone = Clone(tmp_path / name, env)
        clone.git("config", "user.name", name)
        clone.git("config", "user.email", f"{name}@example.invalid")
        clone.git("config", "commit.gpgsign", "false")
        if clones:
            clone.git("pull", "-q")
        else:
            (clone.path / ".gitignore").write_text(MACHINE_LOCAL, encoding="utf-8")
        if drivers:  # the first clone commits .gitattributes, the others register the drivers
            result = clone.council.proc("git-setup")
            assert result.code == 0, result.err
        if not clones:
            clone.commit("start")
            clone.git("push", "-q", "-u", "origin", "main")
        clones.append(clone)
    return clones


def shared_debate(clones: list[Clone]) -> str:
    """A debate in round 1 with four personas, made in the first clone and pulled by all."""
    first = clones[0]
    debate_id = first.council.new_debate("--rounds", "2")
    for slug in PERSONAS:
        first.council.add_persona(debate_id, slug)
    first.ok("round", "start", debate_id, "1")
    first.commit("round 1 started")
    first.git("push", "-q")
    for clone in clones[1:]:
        clone.git("pull", "-q", "--no-rebase")
    return debate_id


def headings(log: str) -> list[str]:
    return [line[3:] for line in log.split("\n") if line.startswith("## ")]


def test_submissions_merge_in_order_of_the_second_then_the_persona_by_merge_and_by_rebase(
    tmp_path: Path,
) -> None:
    alice, bob, carol = team(tmp_path, "alice", "bob", "carol")
    debate_id = shared_debate([alice, bob, carol])

    def submitted(clone: Clone, slug: str, at: str) -> None:
        clone.log_entry(debate_id, *roundlog.submission_entry(slug, 1, f"{slug} backs A.", at))

    submitted(alice, "risk-auditor", "2026-12-02T05:44:29Z")
    alice.commit("risk-auditor answered")
    alice.git("push", "-q")
    for clone in (bob, carol):  # the same two answers on two machines
        submitted(clone, "growth-cfo", "2026-12-02T05:44:28Z")
        submitted(clone, "user-advocate", "2026-12-02T05:44:29Z")
        clone.commit("growth-cfo and user-advocate answered")

    merged = bob.git("pull", "--no-rebase", "--no-edit", check=False)
    rebased = carol.git("pull", "--rebase", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert rebased.returncode == 0, rebased.stdout + rebased.stderr
    assert headings(bob.log(debate_id))[1:] == [
        "Report submitted — growth-cfo in round 1 — 2026-12-02T05:44:28Z",
        "Report submitted — risk-auditor in round 1 — 2026-12-02T05:44:29Z",  # same second:
        "Report submitted — user-advocate in round 1 — 2026-12-02T05:44:29Z",  # by persona
    ]
    # A merge (ours: bob's) and a rebase (ours: alice's) write the same file.
    assert carol.log(debate_id) == bob.log(debate_id)


def test_two_runs_stopped_by_budget_on_two_clones_are_two_stops_after_the_merge(
    tmp_path: Path,
) -> None:
    alice, bob = team(tmp_path, "alice", "bob")
    debate_id = shared_debate([alice, bob])
    for clone, only in ((alice, "risk-auditor,growth-cfo"), (bob, "user-advocate,ops-lead")):
        result = clone.council.proc("run", debate_id, "--only", only, "--max-calls", "1")
        assert result.code == EXIT_STOPPED, result.err
        clone.commit(f"run --only {only}")
    stop = [h for h in headings(alice.log(debate_id)) if h.startswith("Run stopped by budget")]
    assert [h for h in headings(bob.log(debate_id)) if h.startswith("Run stopped")] == stop
    alice.git("push", "-q")

    merged = bob.git("pull", "--no-rebase", "--no-edit", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    log = bob.log(debate_id)
    assert headings(log).count(stop[0]) == 2, log
    assert log.count("- --max-calls 1 reached after 1 calls") == 2
    answered = [h.split(" — ")[1] for h in headings(log) if h.startswith("Report submitted")]
    assert sorted(answered) == sorted(f"{slug} in round 1" for slug in PERSONAS[:4:2])
    assert bob.council.proc("doctor").code == 0


def test_facts_injected_on_two_clones_merge_without_a_conflict(tmp_path: Path) -> None:
    alice, bob, carol = team(tmp_path, "alice", "bob", "carol")
    debate_id = shared_debate([alice, bob, carol])
    alice.ok("inject", debate_id, "Postgres is already run by the platform team.")
    alice.commit("a fact")
    alice.git("push", "-q")
    for clone in (bob, carol):
        clone.ok("inject", debate_id, "The budget is fixed until June.")
        clone.ok("inject", debate_id, "Two engineers know Rust.")
        clone.commit("two facts")

    merged = bob.git("pull", "--no-rebase", "--no-edit", check=False)
    rebased = carol.git("pull", "--rebase", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert rebased.returncode == 0, rebased.stdout + rebased.stderr
    shown = bob.council("show", debate_id, "--json")
    assert shown.code == 0, shown.err
    facts = bob.council.text(debate_id, "debate.md").split("## Constraints & Known Facts")[1]
    assert [line for line in facts.split("\n") if line.startswith("- ")] == [
        "- **[Interlude R1]** Postgres is already run by the platform team.",
        "- **[Interlude R1]** The budget is fixed until June.",
        "- **[Interlude R1]** Two engineers know Rust.",
    ]
    assert carol.council.text(debate_id, "debate.md") == bob.council.text(debate_id, "debate.md")
    assert bob.council.proc("doctor").code == 0


def test_doctor_lists_the_debates_it_rebuilds_newest_first(tmp_path: Path) -> None:
    alice, bob = team(tmp_path, "alice", "bob", drivers=False)
    made = []
    for clone in (alice, bob, alice, bob):  # one after the other, all on one day
        result = clone.council.proc("run", "--topic", "Adopt Rust?", "--rounds", "1", "--json")
        assert result.code == 0, result.err
        made.append(result.json()["id"])
        clone.commit("a debate")
    alice.git("push", "-q")
    merged = bob.git("pull", "--no-rebase", "--no-edit", check=False)
    index = bob.path / "_dream_context/council/index.json"
    assert merged.returncode != 0 and "<<<<<<<" in index.read_text(encoding="utf-8")
    bob.commit("merge, the index as git left it")

    repaired = bob.council.proc("doctor", "--repair")

    assert repaired.code == 0, repaired.out + repaired.err
    listed = bob.council.proc("list", "--all", "--json")
    assert [e["id"] for e in listed.json()] == made[::-1], [
        (debate_id, bob.council.usage(debate_id)[0]["at"]) for debate_id in made
    ]
    assert [e["id"] for e in json.loads(index.read_text(encoding="utf-8"))] == made[::-1]


def test_directives_queued_on_two_clones_merge_without_a_conflict(tmp_path: Path) -> None:
    alice, bob, carol = team(tmp_path, "alice", "bob", "carol")
    debate_id = shared_debate([alice, bob, carol])
    alice.ok("question", debate_id, "risk-auditor", "What does the migration cost?")
    alice.commit("a directive")
    alice.git("push", "-q")
    for clone in (bob, carol):
        clone.ok("question", debate_id, "risk-auditor", "Steelman staying on Redis.")
        clone.commit("a directive")

    merged = bob.git("pull", "--no-rebase", "--no-edit", check=False)
    rebased = carol.git("pull", "--rebase", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert rebased.returncode == 0, rebased.stdout + rebased.stderr
    context = bob.council.text(debate_id, "risk-auditor/context-and-persona.md")
    directives = context.split("## Round 2 — Directives")[1]
    assert [line for line in directives.split("\n") if line.startswith("- ")] == [
        "- Steelman staying on Redis.",
        "- What does the migration cost?",
    ]
    assert carol.council.text(debate_id, "risk-auditor/context-and-persona.md") == context
    assert bob.council.proc("doctor").code == 0
