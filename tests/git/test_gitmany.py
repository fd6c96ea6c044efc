"""Debates in git without setup, `council doctor` after a hand merge, and one debate answered
on many branches (`run --only`), with real `git` in temporary repositories."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from council_run import Council
from debate_story import entry
from hypothesis import given
from hypothesis import strategies as st

# Imported fixtures are registered for this module: no developer key reaches a command.
from offline import clean_environment
from offline import no_provider_environment as no_provider_environment

from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.rules import roundlog
from dreamcontext_council.rules.debate import Status
from dreamcontext_council.rules.logged_state import status_behind
from dreamcontext_council.rules.report import parse_report

PERSONAS = ("risk-auditor", "growth-cfo", "user-advocate", "ops-lead")
# What no branch commits: this tool's machine-local files (the tool's own ignore rules may
# cover them too; these tests are about merging debate content).
MACHINE_LOCAL = ".council.lock\n.run.lock\n.*.tmp\n.new-*\n_dream_context/tmp/\nrun.json\n"


class Repo:
    """A git repository in a temp folder with its own config; never the user's."""

    def __init__(self, path: Path, home: Path) -> None:
        self.path = path
        self.env = clean_environment(os.environ, home)
        self.env.update(
            GIT_CONFIG_GLOBAL=str(home / "gitconfig"),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_AUTHOR_DATE="2026-11-30T12:00:00Z",
            GIT_COMMITTER_DATE="2026-11-30T12:00:00Z",
        )
        (home / "gitconfig").write_text("", encoding="utf-8")
        path.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.name", "Council Test")
        self.git("config", "user.email", "council@example.invalid")
        self.git("config", "commit.gpgsign", "false")
        (path / ".gitignore").write_text(MACHINE_LOCAL, encoding="utf-8")
        self.council = Council(path / "_dream_context", path, self.env)

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["git", *args], cwd=self.path, env=self.env, capture_output=True, text=True
        )
        assert not check or done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
        return done

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)

    def ok(self, *args: str, input: str | None = None) -> str:
        result = self.council(*args, input=input)
        assert result.code == 0, f"council {' '.join(args)}: {result.err}"
        return result.out

    def index_ids(self) -> list[str]:
        data = json.loads((self.path / "_dream_context/council/index.json").read_text("utf-8"))
        return [e["id"] for e in data]

    def git_setup(self) -> None:
        """`council git-setup`: the merge drivers it registers are what lets two branches'
        answers to one round merge with exit 0."""
        result = self.council.proc("git-setup")
        assert result.code == 0, result.err


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Repo(tmp_path / "repo", home)


def debate_with_personas(repo: Repo, *, rounds: int = 2) -> str:
    debate_id = repo.council.new_debate("--rounds", str(rounds))
    for slug in PERSONAS:
        repo.council.add_persona(debate_id, slug)  # no model: the run's (scripted) one
    return debate_id


def answer_by_hand(repo: Repo, debate_id: str, slug: str, stance: str, conviction: int) -> None:
    """What an agent following the skill pack does for one persona in round 1."""
    repo.ok(
        "verdict", debate_id, slug, "1", "--stance", stance,
        "--conviction", str(conviction), "--headline", f"{slug} says {stance}",
    )  # fmt: skip
    body = entry(f"{slug}: {stance}.", position=f"Option {stance}.")  # as its verdict says
    repo.ok("report", "append", debate_id, slug, "--round", "1", input=body)


# -- without git-setup, nothing breaks -------------------------------------------------------


def test_a_conflicted_index_after_a_merge_leaves_every_command_working_and_the_next_write_rebuilds_it(
    repo: Repo,
) -> None:
    base = repo.council.new_debate()
    repo.commit("a debate")
    repo.git("checkout", "-q", "-b", "theirs")
    theirs = repo.council.new_debate()
    repo.commit("their debate")
    repo.git("checkout", "-q", "main")
    ours = repo.council.new_debate()
    repo.commit("our debate")

    merged = repo.git("merge", "--no-edit", "theirs", check=False)
    index = repo.path / "_dream_context/council/index.json"
    assert merged.returncode != 0  # both branches put their debate first in index.json
    assert "<<<<<<<" in index.read_text(encoding="utf-8")
    repo.commit("merge, conflict markers and all")

    doctor = repo.council.proc("doctor")
    assert doctor.code == 1
    assert "index.json: index.json holds merge conflict markers" in doctor.out
    for debate_id in (base, theirs, ours):
        for command in (("show", debate_id), ("board", debate_id), ("timeline", debate_id)):
            result = repo.council(*command)
            assert result.code == 0, (command, result.err)

    repo.ok("inject", theirs, "Postgres is already run by the platform team.")
    assert sorted(repo.index_ids()) == sorted([base, theirs, ours])
    assert repo.council.proc("doctor").code == 0
    listed = repo.council.proc("list", "--all", "--json")
    assert listed.code == 0, listed.err
    assert {e["id"] for e in listed.json()} == {base, theirs, ours}


def test_an_index_resolved_by_hand_to_one_side_is_repaired_by_the_next_write(repo: Repo) -> None:
    first = repo.council.new_debate()
    repo.commit("a debate")
    repo.git("checkout", "-q", "-b", "theirs")
    theirs = repo.council.new_debate()
    repo.commit("their debate")
    repo.git("checkout", "-q", "main")
    ours = repo.council.new_debate()
    repo.commit("our debate")
    assert repo.git("merge", "--no-edit", "theirs", check=False).returncode != 0
    repo.git("checkout", "--ours", "_dream_context/council/index.json")  # "keep mine"
    repo.commit("merge")
    assert theirs not in repo.index_ids()

    repo.ok("inject", first, "A fact.")
    assert sorted(repo.index_ids()) == sorted([first, theirs, ours])


# -- council doctor ------------------------------------------------------------------------


def walk(rounds: int) -> list[tuple[Status, str]]:
    """Every status of a debate of `rounds` rounds, with the log heading its command writes."""
    steps = [(Status("created", 0), "")]
    for number in range(1, rounds + 1):
        steps.append((Status("running", number), f"Round {number} started — 2026-11-30"))
        steps.append((Status("round_complete", number), f"Round {number} complete — 2026-11-30"))
    steps.append((Status("synthesizing", 0), "Synthesis started — 2026-11-30"))
    steps.append((Status("complete", 0), "Debate complete — 2026-11-30"))
    return steps


@given(st.integers(1, 10), st.data())
def test_a_status_is_behind_exactly_when_the_log_records_a_later_step(
    rounds: int, data: st.DataObject
) -> None:
    steps = walk(rounds)
    logged = data.draw(st.integers(0, len(steps) - 1))
    kept = data.draw(st.integers(0, len(steps) - 1))  # the step the kept debate.md says
    log = roundlog.new_log("council_AbC12345")
    for _, heading in steps[1 : logged + 1]:
        log = roundlog.append_entry(log, heading, ["A line."])
    behind = status_behind(steps[kept][0], log)
    assert behind == (steps[logged][0] if logged > kept else None)


def test_doctor_moves_a_status_behind_the_round_log_forward(repo: Repo) -> None:
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    for slug in PERSONAS:
        answer_by_hand(repo, debate_id, slug, "A", 60)
    repo.commit("round 1 answered")
    debate_md = repo.council.folder(debate_id) / "debate.md"
    before = debate_md.read_text(encoding="utf-8")
    repo.ok("round", "end", debate_id, "1")
    # A hand merge that kept the other side's debate.md and both sides' round-log.md, and
    # committed index.json with its conflict markers.
    debate_md.write_text(before, encoding="utf-8")
    index = repo.path / "_dream_context/council/index.json"
    index.write_text(f"<<<<<<< HEAD\n{index.read_text(encoding='utf-8')}=======\n[]\n>>>>>>> b\n")

    found = repo.council.proc("doctor")
    assert found.code == 1
    assert (
        f"{debate_id}: status is round_1_running but round-log.md records round_1_complete"
        in found.out
    )
    assert debate_md.read_text(encoding="utf-8") == before  # reporting changes nothing

    repaired = repo.council.proc("doctor", "--repair")
    assert repaired.code == 0, repaired.out + repaired.err
    assert repaired.out.splitlines() == [
        "index.json: index.json holds merge conflict markers; rebuilt from the debate folders "
        "(repaired)",
        f"{debate_id}: status is round_1_running but round-log.md records round_1_complete; "
        "debate.md set to what round-log.md records (repaired)",
    ]
    assert repo.index_ids() == [debate_id]
    assert repo.council.status(debate_id) == "round_1_complete"
    assert repo.council.proc("doctor").code == 0
    repo.ok("round", "start", debate_id, "2")


def with_comments(debate_md: Path) -> str:
    """debate.md with a comment line and a comment after its status, as a person edits it."""
    text = debate_md.read_text(encoding="utf-8").replace(
        "\nstatus: ", "\n# settled in the merge review\nstatus: ", 1
    )
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("status: "))
    lines[at] += "  # kept from main"
    debate_md.write_text("\n".join(lines), encoding="utf-8")
    return "\n".join(lines)


def test_doctor_keeps_the_comments_of_the_debate_md_it_repairs(repo: Repo) -> None:
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    for slug in PERSONAS:
        answer_by_hand(repo, debate_id, slug, "A", 60)
    debate_md = repo.council.folder(debate_id) / "debate.md"
    before = debate_md.read_text(encoding="utf-8")
    repo.ok("round", "end", debate_id, "1")
    debate_md.write_text(before, encoding="utf-8")  # a hand merge kept this side's debate.md
    with_comments(debate_md)

    assert repo.council.proc("doctor", "--repair").code == 0
    text = debate_md.read_text(encoding="utf-8")
    assert "\n# settled in the merge review\nstatus: round_1_complete  # kept from main\n" in text
    assert repo.council.status(debate_id) == "round_1_complete"
    assert repo.council.proc("doctor").code == 0


@pytest.mark.parametrize(
    "forged",
    ["Debate complete — 2026-11-30", "Synthesis started — 2026-11-30"],
)
def test_doctor_does_not_close_a_running_debate_for_a_forged_round_log_line(
    repo: Repo, forged: str
) -> None:
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    log = repo.council.folder(debate_id) / "round-log.md"
    log.write_text(log.read_text(encoding="utf-8") + f"\n## {forged}\n\n- Done.\n")
    debate_md = repo.council.folder(debate_id) / "debate.md"
    before = with_comments(debate_md)

    for args in (("doctor",), ("doctor", "--repair")):
        result = repo.council.proc(*args)
        assert result.code == 1, result.out + result.err
        [line] = [line for line in result.out.splitlines() if line.startswith(debate_id)]
        assert line.startswith(f"{debate_id}: status is round_1_running but round-log.md")
        assert "left as it is" in line and "(repaired)" not in line
    assert debate_md.read_text(encoding="utf-8") == before
    assert repo.council.status(debate_id) == "round_1_running"
    refused = repo.council.proc("complete", debate_id)
    assert refused.code != 0  # what `complete` refuses, `doctor` does not do either


def test_doctor_recounts_round_entries_and_rebuilds_an_index_newer_than_the_debates(
    repo: Repo,
) -> None:
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    answer_by_hand(repo, debate_id, "risk-auditor", "A", 60)
    context = repo.council.folder(debate_id) / "risk-auditor" / "context-and-persona.md"
    context.write_text(
        context.read_text(encoding="utf-8").replace("round_entries: 1", "round_entries: 0"),
        encoding="utf-8",
    )
    index = repo.path / "_dream_context/council/index.json"
    entries: list[dict[str, Any]] = json.loads(index.read_text(encoding="utf-8"))
    entries[0]["status"] = "created"  # one side's index, resolved after the debates merged
    index.write_text(json.dumps(entries, indent=2), encoding="utf-8")

    found = repo.council.proc("doctor", "--json")
    assert found.code == 1
    problems = {(f["debate_id"], f["problem"]) for f in found.json()}
    assert problems == {
        (None, "index.json does not match the debate folders"),
        (debate_id, "risk-auditor has round_entries 0 but 1 round entries"),
    }
    assert repo.council.proc("doctor", "--repair").code == 0
    assert json.loads(index.read_text(encoding="utf-8"))[0]["status"] == "round_1_running"
    meta, _ = frontmatter_io.parse(context.read_text(encoding="utf-8"), "context")
    assert meta["round_entries"] == 1


def test_doctor_reports_conflict_markers_and_repairs_nothing_in_that_debate(repo: Repo) -> None:
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    verdicts = repo.council.folder(debate_id) / "verdicts.json"
    verdicts.write_text("<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> theirs\n", encoding="utf-8")
    before = repo.council.tree()

    for args in (("doctor",), ("doctor", "--repair")):
        result = repo.council.proc(*args)
        assert result.code == 1
        assert f"{debate_id}: verdicts.json hold merge conflict markers" in result.out
    assert repo.council.tree() == before


# -- run --only --------------------------------------------------------------------------------


def test_run_only_answers_the_named_personas_and_leaves_the_round_open(repo: Repo) -> None:
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    folder = repo.council.folder(debate_id)
    others = [folder / "debate.md", folder / "risk-auditor" / "context-and-persona.md"]
    before = [path.read_bytes() for path in others]

    result = repo.council.proc("run", debate_id, "--only", "growth-cfo,ops-lead")
    assert result.code == 0, result.err
    # What another machine writes stays as it was: the merge has nothing to reconcile there.
    assert [path.read_bytes() for path in others] == before
    assert "Still to answer: risk-auditor, user-advocate" in result.out
    assert {call["persona"] for call in repo.council.usage(debate_id)} == {"growth-cfo", "ops-lead"}
    assert repo.council.status(debate_id) == "round_1_running"
    verdicts = repo.council.json_file(debate_id, "verdicts.json")
    assert set(verdicts["rounds"]["1"]) == {"growth-cfo", "ops-lead"}
    unanswered = repo.council.folder(debate_id) / "risk-auditor" / "report.md"
    assert parse_report(unanswered.read_text("utf-8")) == []  # seated, with no entry


def test_run_only_refuses_a_debate_without_a_running_round_and_a_stranger(repo: Repo) -> None:
    debate_id = debate_with_personas(repo)
    before = repo.council.tree()
    created = repo.council.proc("run", debate_id, "--only", "growth-cfo")
    assert created.code == 1
    assert f"start the round first (`dreamcontext council round start {debate_id} 1`)" in (
        created.err
    )
    repo.ok("round", "start", debate_id, "1")
    stranger = repo.council.proc("run", debate_id, "--only", "growth-cfo,nobody")
    assert stranger.code == 2
    assert "--only names nobody, not in round 1" in stranger.err
    assert created.err.count("\n") == 1 and stranger.err.count("\n") == 1
    assert before.keys() <= repo.council.tree().keys()


# -- one debate, answered on many branches -----------------------------------------------------


def board_and_timeline(repo: Repo, debate_id: str) -> tuple[Any, Any]:
    board = repo.council("board", debate_id, "--json")
    timeline = repo.council("timeline", debate_id, "--json")
    assert board.code == 0 and timeline.code == 0, board.err + timeline.err
    return board.json(), timeline.json()


def test_four_personas_answered_two_per_branch_merge_into_the_single_branch_debate(
    repo: Repo,
) -> None:
    repo.git_setup()
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    repo.commit("round 1 started")

    def by_hand() -> None:
        answer_by_hand(repo, debate_id, "risk-auditor", "A", 60)
        answer_by_hand(repo, debate_id, "growth-cfo", "B", 70)

    def by_run() -> None:
        result = repo.council.proc("run", debate_id, "--only", "user-advocate,ops-lead")
        assert result.code == 0, result.err

    repo.git("checkout", "-q", "-b", "single")
    by_hand()
    by_run()
    repo.ok("round", "end", debate_id, "1")
    expected = board_and_timeline(repo, debate_id)
    repo.commit("one machine")

    repo.git("checkout", "-q", "-b", "by-hand", "main")
    by_hand()
    repo.commit("two personas by hand")
    repo.git("checkout", "-q", "-b", "by-run", "main")
    by_run()
    repo.commit("two personas by run --only")
    merged = repo.git("merge", "--no-edit", "by-hand", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr

    assert repo.council.proc("doctor").code == 0
    repo.ok("round", "end", debate_id, "1")
    assert board_and_timeline(repo, debate_id) == expected
    going_on = repo.council.proc("run", debate_id, "--quiet")
    assert going_on.code == 0, going_on.err
    assert repo.council.status(debate_id) == "complete"
