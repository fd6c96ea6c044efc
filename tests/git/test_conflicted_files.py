"""A file a merge left conflict markers in (no `git-setup`) costs only what it holds: the
read commands and the dashboard show the rest of the debate and name the cause, with real
`git` in temporary repositories."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from dreamcontext_council.dashboard import create_app
from dreamcontext_council.folder.paths import Root

from .test_gitmany import PERSONAS, Repo, answer_by_hand, debate_with_personas

CAUSE = (
    "holds git conflict markers: resolve them, or run `dreamcontext council git-setup` "
    "before merging next time; `dreamcontext council doctor` shows where."
)
READ_COMMANDS = (
    ("show",),
    ("board",),
    ("timeline",),
    ("summaries", "1"),
    ("round-context", "risk-auditor"),
    ("export", "--format", "md", "-o", "-"),
    ("export", "--format", "json", "-o", "-"),
)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    home = tmp_path / "home"
    home.mkdir()
    return Repo(tmp_path / "repo", home)


def split_round(repo: Repo) -> str:
    """Round 1 answered two personas per branch, merged without the drivers and committed
    with verdicts.json's conflict markers in it (the reports merge: one file each)."""
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    repo.commit("round 1 started")
    repo.git("checkout", "-q", "-b", "theirs")
    for slug, stance in (("user-advocate", "B"), ("ops-lead", "B")):
        answer_by_hand(repo, debate_id, slug, stance, 70)
    repo.commit("two answers")
    repo.git("checkout", "-q", "main")
    for slug, stance in (("risk-auditor", "A"), ("growth-cfo", "A")):
        answer_by_hand(repo, debate_id, slug, stance, 60)
    repo.commit("the other two")
    assert repo.git("merge", "--no-edit", "theirs", check=False).returncode != 0
    repo.commit("merge, conflict markers and all")
    verdicts = repo.council.folder(debate_id) / "verdicts.json"
    assert "<<<<<<<" in verdicts.read_text(encoding="utf-8")
    return debate_id


def test_read_commands_show_everything_but_a_conflicted_verdicts_json(repo: Repo) -> None:
    debate_id = split_round(repo)
    where = f"_dream_context/council/{debate_id}/verdicts.json"
    for command in READ_COMMANDS:
        done = repo.council(command[0], debate_id, *command[1:])
        assert done.code == 0, (command, done.err)
        assert f"{where} {CAUSE}" in done.text, command
        assert "not valid JSON" not in done.text
    # What the other files hold is all there: every persona's round-1 summary.
    summaries = repo.ok("summaries", debate_id, "1")
    assert all(f"{slug}: " in summaries for slug in PERSONAS)
    context = repo.ok("round-context", debate_id, "risk-auditor")
    assert f"> Left out of this page: {where} {CAUSE}" in context
    exported = repo.council("export", debate_id, "--format", "json", "-o", "-").json()
    log = f"_dream_context/council/{debate_id}/round-log.md"  # both logged their answers
    assert exported["conflicts"] == [f"{where} {CAUSE}", f"{log} {CAUSE}"]
    assert {p["slug"] for p in exported["personas"]} == set(PERSONAS)

    with TestClient(create_app(Root(repo.path / "_dream_context"))) as client:
        page = client.get(f"/d/{debate_id}")
        assert page.status_code == 200
        assert "verdicts.json holds git conflict markers" in page.text
        assert all(slug in page.text for slug in PERSONAS)

    # A write that needs the file still refuses, with the same cause.
    refused = repo.council("verdict", debate_id, "risk-auditor", "1", "--stance", "B",
                           "--conviction", "50", "--headline", "Changed.")  # fmt: skip
    assert refused.code == 1 and f"{where} {CAUSE}" in refused.err


def test_a_conflict_in_the_body_of_debate_md_leaves_its_state_readable(repo: Repo) -> None:
    debate_id = debate_with_personas(repo)
    repo.commit("a debate")
    repo.git("checkout", "-q", "-b", "theirs")
    repo.ok("inject", debate_id, "The platform team runs Postgres.")
    repo.commit("their fact")
    repo.git("checkout", "-q", "main")
    repo.ok("inject", debate_id, "Redis costs 4k a month.")
    repo.commit("our fact")
    assert repo.git("merge", "--no-edit", "theirs", check=False).returncode != 0
    repo.commit("merge, conflict markers and all")

    done = repo.council("show", debate_id)
    assert done.code == 0, done.err
    assert f"_dream_context/council/{debate_id}/debate.md {CAUSE}" in done.err
    assert "status:    created" in done.out


def test_a_conflict_in_the_frontmatter_of_debate_md_says_nothing_can_be_shown(
    repo: Repo,
) -> None:
    debate_id = debate_with_personas(repo)
    repo.commit("a debate")
    repo.git("checkout", "-q", "-b", "theirs")
    repo.ok("round", "extend", debate_id, "--by", "2")
    repo.commit("four rounds")
    repo.git("checkout", "-q", "main")
    repo.ok("round", "extend", debate_id, "--by", "1")
    repo.commit("three rounds")
    assert repo.git("merge", "--no-edit", "theirs", check=False).returncode != 0
    repo.commit("merge, conflict markers and all")

    for command in READ_COMMANDS:
        done = repo.council(command[0], debate_id, *command[1:])
        assert done.code == 1, command
        assert done.err.count("\n") == 1
        assert (
            f"_dream_context/council/{debate_id}/debate.md holds git conflict markers "
            "(every command needs it, so nothing of the debate can be shown): resolve them"
        ) in done.err
    with TestClient(create_app(Root(repo.path / "_dream_context"))) as client:
        page = client.get(f"/d/{debate_id}")
        assert page.status_code == 409
        assert "debate.md holds git conflict markers" in page.text


# -- what the drivers say they could not merge ----------------------------------------------


def test_the_driver_says_a_revert_conflicts_not_that_both_sides_changed_it(repo: Repo) -> None:
    repo.git_setup()
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    repo.commit("round 1 started")
    answer_by_hand(repo, debate_id, "risk-auditor", "A", 60)
    repo.commit("risk-auditor answers")
    repo.git("checkout", "-q", "-b", "theirs")
    repo.ok("verdict", debate_id, "risk-auditor", "1", "--stance", "B", "--conviction", "55",
            "--headline", "Changed my mind.")  # fmt: skip
    repo.commit("risk-auditor changes its verdict")
    repo.git("checkout", "-q", "main")
    repo.git("revert", "--no-edit", "HEAD")  # the answer taken back on main

    merged = repo.git("merge", "--no-edit", "theirs", check=False)
    assert merged.returncode != 0
    said = merged.stdout + merged.stderr
    assert "both sides changed the same entry" not in said
    assert (
        "council verdicts merge: ours removed risk-auditor's round 1 verdict (a revert?) and "
        "theirs changed it; conflict marked."
    ) in said


def test_the_driver_names_the_verdict_both_sides_recorded_differently(repo: Repo) -> None:
    repo.git_setup()
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    repo.commit("round 1 started")
    repo.git("checkout", "-q", "-b", "theirs")
    answer_by_hand(repo, debate_id, "growth-cfo", "B", 70)
    repo.commit("theirs")
    repo.git("checkout", "-q", "main")
    answer_by_hand(repo, debate_id, "growth-cfo", "A", 40)
    repo.commit("ours")

    merged = repo.git("merge", "--no-edit", "theirs", check=False)
    said = merged.stdout + merged.stderr
    assert (
        "council verdicts merge: both sides added growth-cfo's round 1 verdict, differently; "
        "conflict marked."
    ) in said
    assert (
        "council report merge: both sides added the round 1 entry, differently; conflict marked."
    ) in said
