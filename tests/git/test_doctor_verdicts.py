"""`council doctor` on the verdicts after a hand resolution, in two clones of one bare
repository: a verdict the kept side dropped comes back whole from the side of the merge
that holds it, and a verdict that contradicts the entry that stands is found and replaced.
Real `git`; the repository's history is read only as far as the debate's own files."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from debate_story import entry

# Imported fixtures are registered for this module: no developer key reaches a command.
from offline import no_provider_environment as no_provider_environment

from dreamcontext_council.actions import git_history

from .test_merge_order import Clone, shared_debate, team

SUMMARY = {"A": "Migrate now: the rollback is rehearsed.", "B": "Stay: nobody rehearsed it."}


def answer(clone: Clone, debate_id: str, slug: str, stance: str, conviction: int) -> None:
    """An answer given whole to `report append`: the entry, then its ```verdict block, as
    `run` asks a model for it; its Position states the option and the conviction."""
    body = entry(
        f"{slug}: {SUMMARY[stance]}", position=f"Option {stance}, conviction {conviction}."
    )
    verdict = (
        f"```verdict\nstance: {stance}\nconviction: {conviction}\n"
        f"headline: {slug} holds {stance} in its own words\n"
        f"concession: {slug} grants the other side its cost\n```\n"
    )
    clone.ok("report", "append", debate_id, slug, "--round", "1", input=f"{body}\n{verdict}")


def verdicts(clone: Clone, debate_id: str, ref: str | None = None) -> dict[str, Any]:
    path = f"_dream_context/council/{debate_id}/verdicts.json"
    if ref is None:
        text = (clone.path / path).read_text(encoding="utf-8")
    else:
        text = clone.git("show", f"{ref}:{path}").stdout
    return dict(json.loads(text)["rounds"].get("1", {}))


def pull_in_conflict(clone: Clone) -> list[str]:
    """`git pull` (merge) that stops on conflicts; the conflicted paths."""
    assert clone.git("pull", "--no-rebase", "--no-edit", check=False).returncode != 0
    return clone.git("diff", "--name-only", "--diff-filter=U").stdout.split()


def short(clone: Clone, ref: str) -> str:
    return clone.git("rev-parse", "--short=7", ref).stdout.strip()


# -- item: a dropped verdict comes back whole ---------------------------------------------


def two_clones_answered_apart(tmp_path: Path) -> tuple[Clone, Clone, str]:
    """alice answers two personas and bob the other two (no drivers); alice pushes first."""
    alice, bob = team(tmp_path, "alice", "bob", drivers=False)
    debate_id = shared_debate([alice, bob])
    answer(alice, debate_id, "risk-auditor", "A", 80)
    answer(alice, debate_id, "growth-cfo", "A", 65)
    alice.commit("two answers")
    alice.git("push", "-q")
    answer(bob, debate_id, "user-advocate", "B", 70)
    answer(bob, debate_id, "ops-lead", "B", 55)
    bob.commit("the other two")
    return alice, bob, debate_id


def test_a_verdict_dropped_in_an_open_merge_is_restored_whole_from_merge_head(
    tmp_path: Path,
) -> None:
    alice, bob, debate_id = two_clones_answered_apart(tmp_path)
    conflicted = pull_in_conflict(bob)
    assert f"_dream_context/council/{debate_id}/verdicts.json" in conflicted
    bob.git("checkout", "--ours", "--", *conflicted)  # "keep mine": alice's verdicts gone
    assert set(verdicts(bob, debate_id)) == {"user-advocate", "ops-lead"}

    found = bob.council.proc("doctor")
    assert found.code == 1
    for slug, stance, conviction in (("risk-auditor", "A", 80), ("growth-cfo", "A", 65)):
        assert (
            f"{debate_id}: {slug}'s round 1 entry has no verdict in verdicts.json; verdict "
            "restored whole from MERGE_HEAD (their side of the merge in progress): "
            f"{stance}, conviction {conviction}, its headline and concession"
        ) in found.out
    repaired = bob.council.proc("doctor", "--repair")
    assert repaired.code == 0, repaired.out + repaired.err
    theirs = verdicts(alice, debate_id)
    restored = verdicts(bob, debate_id)
    for slug in ("risk-auditor", "growth-cfo"):
        assert restored[slug] == theirs[slug]  # headline, concession and time as recorded
    assert restored["risk-auditor"]["concession"] == "risk-auditor grants the other side its cost"
    bob.commit("merged, doctor repaired")
    assert bob.council.proc("doctor").code == 0


def test_a_verdict_no_merge_holds_is_restored_from_the_entry_naming_what_is_lost(
    tmp_path: Path,
) -> None:
    _, bob, debate_id = two_clones_answered_apart(tmp_path)
    # A rebase makes no merge commit: no side of a merge holds bob's verdicts afterwards.
    assert bob.git("pull", "--rebase", check=False).returncode != 0
    conflicted = bob.git("diff", "--name-only", "--diff-filter=U").stdout.split()
    bob.git("checkout", "--ours", "--", *conflicted)  # in a rebase, ours is alice's
    bob.git("add", "-A")
    bob.env["GIT_EDITOR"] = "true"
    bob.git("rebase", "--continue")
    assert set(verdicts(bob, debate_id)) == {"risk-auditor", "growth-cfo"}

    repaired = bob.council.proc("doctor", "--repair")
    assert repaired.code == 0, repaired.out + repaired.err
    for slug, stance, conviction in (("user-advocate", "B", 70), ("ops-lead", "B", 55)):
        assert (
            f"{debate_id}: {slug}'s round 1 entry has no verdict in verdicts.json; verdict "
            f"restored from the entry: {stance}, conviction {conviction}, headline from its "
            "Executive Summary; not restored: the verdict's own headline and any concession "
            "(no side of a recent merge holds the verdict of this entry) (repaired)"
        ) in repaired.out
        verdict = verdicts(bob, debate_id)[slug]
        assert (verdict["stance"], verdict["conviction"]) == (stance, conviction)
        assert verdict["headline"] == f"{slug}: {SUMMARY[stance]}"
        assert "concession" not in verdict
    assert bob.council.proc("doctor").code == 0


# -- item: a verdict that contradicts the entry that stands ---------------------------------


def one_persona_answered_two_ways(tmp_path: Path) -> tuple[Clone, Clone, str]:
    """risk-auditor answered A 80 by alice and B 60 by bob; bob merges and keeps alice's
    entry (`--theirs` report.md) but his own verdicts.json (`--ours`)."""
    alice, bob = team(tmp_path, "alice", "bob", drivers=False)
    debate_id = shared_debate([alice, bob])
    answer(alice, debate_id, "risk-auditor", "A", 80)
    alice.commit("risk-auditor: A")
    alice.git("push", "-q")
    answer(bob, debate_id, "risk-auditor", "B", 60)
    bob.commit("risk-auditor: B")
    conflicted = pull_in_conflict(bob)
    report = f"_dream_context/council/{debate_id}/risk-auditor/report.md"
    assert report in conflicted
    bob.git("checkout", "--theirs", "--", report)
    bob.git("checkout", "--ours", "--", *[p for p in conflicted if p != report])
    bob.commit("merged: alice's entry, my verdicts")
    assert "Option A, conviction 80." in (bob.path / report).read_text(encoding="utf-8")
    assert verdicts(bob, debate_id)["risk-auditor"]["stance"] == "B"
    return alice, bob, debate_id


def board_stance(clone: Clone, debate_id: str) -> Any:
    board = clone.council("board", debate_id, "--json")
    assert board.code == 0, board.err
    return board.json()


def test_a_verdict_contradicting_the_entry_that_stands_is_found_and_replaced_whole(
    tmp_path: Path,
) -> None:
    alice, bob, debate_id = one_persona_answered_two_ways(tmp_path)
    parent = short(bob, "HEAD^2")
    merge = short(bob, "HEAD")

    found = bob.council.proc("doctor")
    assert found.code == 1
    assert (
        f"{debate_id}: risk-auditor's round 1 verdict (B, conviction 60) contradicts the entry "
        "that stands, whose Position states option A, conviction 80; verdict restored whole "
        f"from commit {parent} (parent 2 of merge {merge}): A, conviction 80, its headline "
        "and concession"
    ) in found.out
    repaired = bob.council.proc("doctor", "--repair")
    assert repaired.code == 0, repaired.out + repaired.err
    assert verdicts(bob, debate_id)["risk-auditor"] == verdicts(alice, debate_id)["risk-auditor"]
    assert "risk-auditor holds A in its own words" in json.dumps(board_stance(bob, debate_id))
    assert "risk-auditor holds B" not in json.dumps(board_stance(bob, debate_id))
    assert bob.council.proc("doctor").code == 0


def test_a_verdict_contradicting_its_entry_is_set_from_the_entry_when_no_merge_holds_it(
    tmp_path: Path,
) -> None:
    _, bob, debate_id = one_persona_answered_two_ways(tmp_path)
    bob.git("checkout", "-q", "--orphan", "squashed")  # the history without the merge
    bob.commit("squashed")

    repaired = bob.council.proc("doctor", "--repair")
    assert repaired.code == 0, repaired.out + repaired.err
    assert (
        f"{debate_id}: risk-auditor's round 1 verdict (B, conviction 60) contradicts the entry "
        "that stands, whose Position states option A, conviction 80; verdict set from the "
        "entry: A, conviction 80, headline from its Executive Summary; not restored: the "
        "verdict's own headline and any concession (no side of a recent merge holds the "
        "verdict of this entry) (repaired)"
    ) in repaired.out
    verdict = verdicts(bob, debate_id)["risk-auditor"]
    assert (verdict["stance"], verdict["conviction"]) == ("A", 80)
    assert verdict["headline"] == "risk-auditor: Migrate now: the rollback is rehearsed."
    assert "concession" not in verdict  # bob's concession belonged to bob's answer
    assert bob.council.proc("doctor").code == 0


# -- reading someone else's repository --------------------------------------------------------


def test_reading_the_merge_runs_no_program_the_repository_names(tmp_path: Path) -> None:
    _, bob, _ = two_clones_answered_apart(tmp_path)
    ran = tmp_path / "ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f'#!/bin/sh\necho "$0 $*" >> {ran}\n', encoding="utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    for key in ("core.fsmonitor", "core.pager", "pager.cat-file", "pager.rev-list", "core.editor"):
        bob.git("config", key, str(hook))
    conflicted = pull_in_conflict(bob)
    bob.git("checkout", "--ours", "--", *conflicted)
    ran.unlink(missing_ok=True)  # what git's own merge ran is not the doctor's doing

    repaired = bob.council.proc("doctor", "--repair")
    assert repaired.code == 0, repaired.out + repaired.err
    assert "restored whole from MERGE_HEAD" in repaired.out
    assert not ran.exists()


def test_a_side_too_big_to_read_is_not_read(tmp_path: Path, monkeypatch: Any) -> None:
    _, bob, debate_id = two_clones_answered_apart(tmp_path)
    conflicted = pull_in_conflict(bob)
    bob.git("checkout", "--ours", "--", *conflicted)
    history = git_history.DebateHistory(bob.council.folder(debate_id))
    [theirs, ours] = history.sides()
    assert theirs.named.startswith("MERGE_HEAD") and ours.named.startswith("HEAD")
    assert '"risk-auditor"' in (history.text(theirs, "verdicts.json") or "")
    assert history.text(theirs, "../../../.gitignore") is None  # only the debate's files
    monkeypatch.setattr(git_history, "MAX_BLOB_BYTES", 100)
    assert git_history.DebateHistory(history.folder).text(theirs, "verdicts.json") is None


def test_a_side_holding_the_same_contradicting_verdict_is_not_restored_for_ever(
    tmp_path: Path,
) -> None:
    """An entry whose Position states an option its own verdict does not: every side of the
    merge holds that verdict with that entry, so none vouches for it; the persona is named."""
    alice, bob = team(tmp_path, "alice", "bob", drivers=False)
    debate_id = shared_debate([alice, bob])
    alice.ok("verdict", debate_id, "risk-auditor", "1", "--stance", "B", "--conviction", "60",
             "--headline", "B after all")  # fmt: skip
    alice.ok("report", "append", debate_id, "risk-auditor", "--round", "1",
             input=entry("Migrate.", position="Option A."))  # fmt: skip
    alice.commit("risk-auditor: an entry for A, a verdict for B")
    alice.git("push", "-q")
    answer(bob, debate_id, "ops-lead", "B", 55)
    bob.commit("ops-lead")
    conflicted = pull_in_conflict(bob)
    bob.git("checkout", "--theirs", "--", *conflicted)  # alice's verdicts.json
    bob.commit("merged")

    for args in (("doctor",), ("doctor", "--repair")):
        found = bob.council.proc(*args)
        assert found.code == 1
        assert (
            f"{debate_id}: risk-auditor's round 1 verdict (B, conviction 60) contradicts the "
            "entry that stands, whose Position states option A; its Position does not state "
            "a conviction: risk-auditor must give it again, `dreamcontext council verdict "
            f'{debate_id} risk-auditor 1 --stance A --conviction <0-100> --headline "<one line>"`'
        ) in found.out
    assert verdicts(bob, debate_id)["risk-auditor"]["stance"] == "B"
