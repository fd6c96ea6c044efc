"""`council doctor` after a hand resolution that kept one side of a file: the verdicts,
log lines and usage the round entries still vouch for, and an entry two branches wrote,
with real `git` in temporary repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from debate_story import entry

# Imported fixtures are registered for this module: no developer key reaches a command.
from offline import no_provider_environment as no_provider_environment

from .test_gitmany import Repo, answer_by_hand, debate_with_personas

BY_RUN = ("user-advocate", "ops-lead")
BY_HAND = ("risk-auditor", "growth-cfo")


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    home = tmp_path / "home"
    home.mkdir()
    return Repo(tmp_path / "repo", home)


def verdicts_of(repo: Repo, debate_id: str, ref: str | None = None) -> dict[str, dict[str, object]]:
    path = f"_dream_context/council/{debate_id}/verdicts.json"
    if ref is None:
        text = (repo.path / path).read_text(encoding="utf-8")
    else:
        text = repo.git("show", f"{ref}:{path}").stdout
    return dict(json.loads(text)["rounds"].get("1", {}))


def split_round_kept_one_side(repo: Repo, side: str, *, main_by_run: bool = False) -> str:
    """Round 1 answered two personas by hand (or `run --only`) on main and two by
    `run --only` on `theirs`, merged without the drivers, and resolved by
    `git checkout --<side>` of every conflicted file."""
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    repo.commit("round 1 started")
    repo.git("checkout", "-q", "-b", "theirs")
    ran = repo.council.proc("run", debate_id, "--only", ",".join(BY_RUN))
    assert ran.code == 0, ran.err
    repo.commit("two answers by run")
    repo.git("checkout", "-q", "main")
    if main_by_run:
        ran = repo.council.proc("run", debate_id, "--only", ",".join(BY_HAND))
        assert ran.code == 0, ran.err
    else:
        for slug in BY_HAND:
            answer_by_hand(repo, debate_id, slug, "A", 60)
    repo.commit("two answers")
    assert repo.git("merge", "--no-edit", "theirs", check=False).returncode != 0
    folder = f"_dream_context/council/{debate_id}"
    conflicted = repo.git("diff", "--name-only", "--diff-filter=U").stdout.split()
    assert f"{folder}/verdicts.json" in conflicted
    repo.git("checkout", f"--{side}", "--", *conflicted)
    repo.commit("merge, one side kept")
    return debate_id


def test_doctor_restores_the_verdicts_a_kept_side_dropped_whole_from_the_merge(
    repo: Repo,
) -> None:
    debate_id = split_round_kept_one_side(repo, "ours")
    assert set(verdicts_of(repo, debate_id)) == set(BY_HAND)  # two of four, for good
    theirs = verdicts_of(repo, debate_id, "theirs")
    merge = repo.git("rev-parse", "--short=7", "HEAD").stdout.strip()
    parent = repo.git("rev-parse", "--short=7", "theirs").stdout.strip()

    found = repo.council.proc("doctor")
    assert found.code == 1
    for slug in BY_RUN:
        stance, conviction = theirs[slug]["stance"], theirs[slug]["conviction"]
        assert (
            f"{debate_id}: {slug}'s round 1 entry has no verdict in verdicts.json; verdict "
            f"restored whole from commit {parent} (parent 2 of merge {merge}): {stance}, "
            f"conviction {conviction}, its headline and concession"
        ) in found.out
    repaired = repo.council.proc("doctor", "--repair")
    assert repaired.code == 0, repaired.out + repaired.err
    restored = verdicts_of(repo, debate_id)
    assert set(restored) == {*BY_HAND, *BY_RUN}
    for slug in BY_RUN:
        assert restored[slug] == theirs[slug]  # headline, concession and time too
    assert repo.council.proc("doctor").code == 0


def test_doctor_finds_the_model_calls_a_kept_usage_jsonl_dropped(repo: Repo) -> None:
    debate_id = split_round_kept_one_side(repo, "ours", main_by_run=True)
    usage = f"_dream_context/council/{debate_id}/usage.jsonl"
    repaired = repo.council.proc("doctor", "--repair")
    assert repaired.code == 1
    for slug in BY_RUN:
        assert (
            f"{debate_id}: usage.jsonl has no model call for {slug}'s round 1 entry, which "
            "`run` answered: its tokens and cost are not counted; restore "
            f"{usage} from the branch that ran it (`git show <branch>:{usage}`), keeping both "
            "sides' lines"
        ) in repaired.out
    assert "(repaired)" in repaired.out  # the verdicts and log lines the entries vouch for
    theirs = repo.git("show", f"theirs:{usage}").stdout
    with (repo.path / usage).open("a", encoding="utf-8") as lines:
        lines.write(theirs)  # both sides' lines
    assert repo.council.proc("doctor").code == 0


def test_doctor_restores_a_dropped_verdict_from_our_side_of_the_merge(repo: Repo) -> None:
    debate_id = split_round_kept_one_side(repo, "theirs")
    assert set(verdicts_of(repo, debate_id)) == set(BY_RUN)
    ours = verdicts_of(repo, debate_id, "HEAD^1")
    merge = repo.git("rev-parse", "--short=7", "HEAD").stdout.strip()
    parent = repo.git("rev-parse", "--short=7", "HEAD^1").stdout.strip()

    repaired = repo.council.proc("doctor", "--repair")
    assert repaired.code == 0, repaired.out + repaired.err
    for slug in BY_HAND:  # "Option A." states no conviction: the merge's side says it all
        assert (
            f"{debate_id}: {slug}'s round 1 entry has no verdict in verdicts.json; verdict "
            f"restored whole from commit {parent} (parent 1 of merge {merge}): A, conviction "
            "60, its headline (no concession) (repaired)"
        ) in repaired.out
    restored = verdicts_of(repo, debate_id)
    assert {slug: restored[slug] for slug in BY_HAND} == {slug: ours[slug] for slug in BY_HAND}


def test_doctor_names_the_persona_that_must_answer_again(repo: Repo) -> None:
    debate_id = split_round_kept_one_side(repo, "theirs")
    repo.git("checkout", "-q", "--orphan", "squashed")  # history without the merge
    repo.commit("squashed")
    assert set(verdicts_of(repo, debate_id)) == set(BY_RUN)

    for args in (("doctor",), ("doctor", "--repair")):
        found = repo.council.proc(*args)
        assert found.code == 1
        for slug in BY_HAND:  # "Option A." states the option, not the conviction
            assert (
                f"{debate_id}: {slug}'s round 1 entry has no verdict in verdicts.json; its "
                f"Position does not state a conviction: {slug} must give it again, "
                f"`dreamcontext council verdict {debate_id} {slug} 1 --stance A "
                '--conviction <0-100> --headline "<one line>"`'
            ) in found.out
    assert set(verdicts_of(repo, debate_id)) == set(BY_RUN)
    for slug in BY_HAND:
        repo.ok("verdict", debate_id, slug, "1", "--stance", "A", "--conviction", "60",
                "--headline", "Again.")  # fmt: skip
    assert repo.council.proc("doctor").code == 0


def one_entry_on_two_branches(repo: Repo) -> tuple[str, str]:
    """risk-auditor's round 1 answered differently on main and on `theirs`, merged with the
    drivers: its report.md is left conflicted (and verdicts.json, recorded at two times)."""
    repo.git_setup()
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    repo.commit("round 1 started")
    repo.git("checkout", "-q", "-b", "theirs")
    repo.git("checkout", "-q", "main")
    answer_by_hand(repo, debate_id, "risk-auditor", "A", 60)
    repo.commit("ours")
    repo.git("checkout", "-q", "theirs")
    repo.ok("verdict", debate_id, "risk-auditor", "1", "--stance", "A", "--conviction", "60",
            "--headline", "risk-auditor says A")  # fmt: skip
    repo.ok("report", "append", debate_id, "risk-auditor", "--round", "1",
            input=entry("Stay until the cutover is rehearsed.", position="Option A, later."))  # fmt: skip
    repo.commit("theirs")
    repo.git("checkout", "-q", "main")
    merged = repo.git("merge", "--no-edit", "theirs", check=False)
    assert merged.returncode != 0
    report = f"_dream_context/council/{debate_id}/risk-auditor/report.md"
    conflicted = repo.git("diff", "--name-only", "--diff-filter=U").stdout.split()
    assert sorted(conflicted) == sorted(
        [report, report.replace("risk-auditor/report.md", "verdicts.json")]
    )
    return debate_id, report


def test_doctor_advice_for_an_entry_written_on_two_branches_can_be_followed(
    repo: Repo,
) -> None:
    debate_id, report = one_entry_on_two_branches(repo)
    found = repo.council.proc("doctor")
    assert found.code == 1
    assert "keeping both sides' entries" not in found.out
    assert (
        f"{debate_id}: risk-auditor/report.md holds merge conflict markers; one persona's file "
        f"was written on both sides and only one side can stand: keep one, `git checkout --ours "
        f"-- {report}` or `git checkout --theirs -- {report}` while the merge is open"
    ) in found.out

    verdicts = report.replace("risk-auditor/report.md", "verdicts.json")
    repo.git("checkout", "--ours", "--", report, verdicts)  # as the advice says
    repo.commit("merge, our answer kept")
    repaired = repo.council.proc("doctor", "--repair")
    assert repaired.code == 0, repaired.out + repaired.err
    assert "Stay until the cutover" not in (repo.path / report).read_text(encoding="utf-8")
    log = repo.council.folder(debate_id) / "round-log.md"
    # The log's last word on that entry quotes the side kept: both sides' submissions merge
    # in time order, and doctor adds "Report replaced" when theirs came last.
    entries = log.read_text(encoding="utf-8").rstrip("\n").split("\n## ")
    last = [
        e
        for e in entries
        if e.startswith(
            (
                "Report submitted — risk-auditor in round 1 — ",
                "Report replaced — risk-auditor in round 1 — ",
            )
        )
    ][-1]
    assert last.endswith("- Executive summary: risk-auditor: A.")
    assert repo.council.proc("doctor").code == 0


def test_doctor_finds_an_entry_holding_both_sides_answers(repo: Repo) -> None:
    debate_id, report = one_entry_on_two_branches(repo)
    path = repo.path / report
    ours = repo.git("show", f"HEAD:{report}").stdout
    theirs = repo.git("show", f"theirs:{report}").stdout
    # "keeping both sides": the whole of their answer under ours, markers gone.
    their_body = theirs.split("## Round 1 — ", 1)[1].split("\n", 1)[1]
    path.write_text(ours.rstrip("\n") + "\n\n" + their_body, encoding="utf-8")
    repo.git("checkout", "--ours", "--", report.replace("risk-auditor/report.md", "verdicts.json"))
    repo.commit("merge, both kept")

    for args in (("doctor",), ("doctor", "--repair")):
        found = repo.council.proc(*args)
        assert found.code == 1
        assert (
            f"{debate_id}: risk-auditor's round 1 entry holds ### Executive Summary, "
            "### Position, ### Reasoning, ### Reactions to peers, ### Open questions twice: "
            "two versions of one answer run together; keep one version"
        ) in found.out
    assert path.read_text(encoding="utf-8").count("### Position") == 2  # nothing guessed
