"""Hand paths across branches: round-2 critics answered on two machines, a question on one
and `round start` on the other, a fact injected into a debate the other side completed,
and merges in either direction; with the drivers, and after a hand resolution that kept
one side, as `doctor` finds and repairs it. Real `git`, real clones of one bare repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from debate_story import entry

# Imported fixtures are registered for this module: no developer key reaches a command.
from offline import no_provider_environment as no_provider_environment

from .test_gitmany import PERSONAS, Repo, answer_by_hand, debate_with_personas
from .test_merge_order import Clone, shared_debate, team

SCORES = {"risk-auditor": 7, "growth-cfo": 4, "user-advocate": 6, "ops-lead": 8}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    home = tmp_path / "home"
    home.mkdir()
    return Repo(tmp_path / "repo", home)


def round_two_started(repo: Repo, *, drivers: bool = True) -> str:
    """A debate whose round 1 all four answered (by `run`), in round 2 with its pairs."""
    if drivers:
        repo.git_setup()
    debate_id = debate_with_personas(repo, rounds=3)
    repo.ok("round", "start", debate_id, "1")
    ran = repo.council.proc("run", debate_id, "--only", ",".join(PERSONAS))
    assert ran.code == 0, ran.err
    repo.ok("round", "end", debate_id, "1")
    repo.ok("round", "start", debate_id, "2")
    repo.commit("round 2 started")
    return debate_id


def critique(repo: Repo, debate_id: str, slug: str, score: int) -> None:
    """A critic's round-2 answer by hand: its verdict, then its entry with a scored review."""
    repo.ok(
        "verdict", debate_id, slug, "2", "--stance", "A", "--conviction", "60",
        "--headline", f"{slug} keeps A",
    )  # fmt: skip
    body = entry(f"{slug}: the peer misses the cutover cost.")
    body += f"\n### Cross-examination\n{slug} finds the cost missing.\n\nScore: {score}/10\n"
    repo.ok("report", "append", debate_id, slug, "--round", "2", input=body)


def critics_on_two_branches(repo: Repo, debate_id: str) -> None:
    """Two critics answer on `by-a`, the other two on `by-b`; both branch from main."""
    for branch, slugs in (("by-a", PERSONAS[:2]), ("by-b", PERSONAS[2:])):
        repo.git("checkout", "-q", "-b", branch, "main")
        for slug in slugs:
            critique(repo, debate_id, slug, SCORES[slug])
        repo.commit(f"{', '.join(slugs)} critiqued")


def reviews_of(repo: Repo, debate_id: str) -> dict[str, object]:
    data = json.loads(repo.council.text(debate_id, "reviews.json"))
    return {c: r["score"] for c, r in data["rounds"]["2"].items()}


def round_three_page(repo: Repo, debate_id: str, slug: str) -> str:
    page = repo.council("round-context", debate_id, slug)
    assert page.code == 0, page.err
    return page.out


def critics_named(page: str) -> set[str]:
    return {slug for slug in PERSONAS if f"{slug} finds the cost missing" in page}


# -- 1. reviews.json ---------------------------------------------------------------------------


def test_critics_answered_on_two_branches_merge_every_score_into_reviews_json(repo: Repo) -> None:
    debate_id = round_two_started(repo)
    critics_on_two_branches(repo, debate_id)

    merged = repo.git("merge", "--no-edit", "by-a", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert reviews_of(repo, debate_id) == {c: float(s) for c, s in SCORES.items()}
    assert repo.council.proc("doctor").code == 0
    repo.ok("round", "end", debate_id, "2")
    repo.ok("round", "start", debate_id, "3")
    page = round_three_page(repo, debate_id, "risk-auditor")
    assert critics_named(page) == set(PERSONAS), page


def test_doctor_rebuilds_reviews_json_a_kept_side_dropped(repo: Repo) -> None:
    debate_id = round_two_started(repo)
    critics_on_two_branches(repo, debate_id)
    ours = repo.git("rev-parse", "HEAD").stdout.strip()
    repo.git("merge", "--no-edit", "by-a", check=False)
    # The hand resolution kept by-b's reviews.json (as `git checkout --ours` does).
    repo.git("checkout", ours, "--", f"_dream_context/council/{debate_id}/reviews.json")
    repo.commit("merge, our reviews kept")
    assert set(reviews_of(repo, debate_id)) == set(PERSONAS[2:])

    found = repo.council.proc("doctor")
    repaired = repo.council.proc("doctor", "--repair")

    assert found.code != 0
    assert "reviews.json does not hold the round-2 scores" in found.out, found.out
    assert "risk-auditor (on " in found.out and "growth-cfo (on " in found.out
    assert repaired.code == 0, repaired.out + repaired.err
    assert reviews_of(repo, debate_id) == {c: float(s) for c, s in SCORES.items()}
    assert repo.council.proc("doctor").code == 0
    repo.ok("round", "end", debate_id, "2")
    repo.ok("round", "start", debate_id, "3")
    assert critics_named(round_three_page(repo, debate_id, "ops-lead")) == set(PERSONAS)


def test_doctors_advice_for_conflicted_reviews_merges_them_again(repo: Repo) -> None:
    debate_id = round_two_started(repo, drivers=False)
    critics_on_two_branches(repo, debate_id)
    assert repo.git("merge", "--no-edit", "by-a", check=False).returncode != 0
    conflicted = repo.git("diff", "--name-only", "--diff-filter=U").stdout.split()
    assert f"_dream_context/council/{debate_id}/reviews.json" in conflicted
    advice = repo.council.proc("doctor")
    assert "git checkout -m --" in advice.out, advice.out

    repo.git_setup()  # what the advice says, while the merge is open
    repo.git("checkout", "-m", "--", *conflicted)
    repo.commit("merge, the council files merged again")

    assert reviews_of(repo, debate_id) == {c: float(s) for c, s in SCORES.items()}
    assert repo.council.proc("doctor").code == 0


def test_one_review_recorded_two_ways_is_settled_alike_both_ways_and_said(repo: Repo) -> None:
    debate_id = round_two_started(repo)
    for branch, score in (("by-a", 3), ("by-b", 9)):
        repo.git("checkout", "-q", "-b", branch, "main")
        critique(repo, debate_id, "risk-auditor", score)
        repo.commit(f"risk-auditor scored {score}")
    path = f"_dream_context/council/{debate_id}/reviews.json"
    kept = {}
    for into, other in (("by-a", "by-b"), ("by-b", "by-a")):
        repo.git("checkout", "-q", "-B", f"merge-{into}", into)
        merged = repo.git("merge", "--no-edit", other, check=False)
        # Both wrote risk-auditor's round-2 entry: report.md conflicts; reviews.json does not.
        assert merged.returncode != 0
        conflicted = repo.git("diff", "--name-only", "--diff-filter=U").stdout.split()
        assert path not in conflicted, conflicted
        assert "risk-auditor's round 2 review was recorded two ways" in merged.stderr, merged.stderr
        kept[into] = repo.council.text(debate_id, "reviews.json")
        if into == "by-a":
            repo.git("merge", "--abort")
    assert kept["by-a"] == kept["by-b"]
    # The person keeps by-a's answer (ours here is by-b): doctor sets the review from it.
    repo.git("checkout", "--theirs", "--", *conflicted)
    repo.commit("merge, by-a's answer of risk-auditor kept")
    repaired = repo.council.proc("doctor", "--repair")
    assert repaired.code == 0, repaired.out + repaired.err
    assert reviews_of(repo, debate_id)["risk-auditor"] == 3.0


# -- 2. context-and-persona.md -----------------------------------------------------------------


def question_and_round_start(clones: list[Clone], *, drivers: bool) -> tuple[str, str]:
    """Round 1 closed on every clone; alice starts round 2, bob queues a question for it."""
    alice, bob = clones
    debate_id = shared_debate(clones)
    for slug in PERSONAS:
        answer_by_hand(alice, debate_id, slug, "A", 60)
    alice.ok("round", "end", debate_id, "1")
    alice.commit("round 1 closed")
    alice.git("push", "-q")
    bob.git("pull", "-q", "--no-rebase")
    alice.ok("round", "start", debate_id, "2")
    alice.commit("round 2 started")
    alice.git("push", "-q")
    question = "What does the cutover cost in a night of downtime?"
    bob.ok("question", debate_id, "risk-auditor", question)
    bob.commit("a question")
    return debate_id, question


def test_a_question_on_one_clone_and_round_start_on_the_other_merge_with_both(
    tmp_path: Path,
) -> None:
    clones = team(tmp_path, "alice", "bob")
    debate_id, question = question_and_round_start(clones, drivers=True)
    bob = clones[1]

    merged = bob.git("pull", "--no-rebase", "--no-edit", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    context = bob.council.text(debate_id, "risk-auditor/context-and-persona.md")
    directives = context.split("## Round 2 — Directives")[1].split("## ")[0]
    assert f"- {question}" in directives
    assert "- Cross-examine " in directives
    assert context.index("## Round 2 — Directives") < context.index(
        "## Round 2 — Cross-context loaded"
    )
    assert bob.council.proc("doctor").code == 0
    page = bob.council("round-context", debate_id, "risk-auditor")
    assert question in page.out and "Cross-examine " in page.out


@pytest.mark.parametrize("kept", ["ours", "theirs"])
def test_doctor_restores_the_directive_or_panel_a_kept_side_dropped(
    tmp_path: Path, kept: str
) -> None:
    clones = team(tmp_path, "alice", "bob")
    debate_id, question = question_and_round_start(clones, drivers=True)
    bob = clones[1]
    sides = {"ours": bob.git("rev-parse", "HEAD").stdout.strip(), "theirs": "origin/main"}
    bob.git("pull", "--no-rebase", "--no-edit", check=False)
    # The hand resolution kept one side's context file (as `git checkout --ours` does).
    path = f"_dream_context/council/{debate_id}/risk-auditor/context-and-persona.md"
    bob.git("checkout", sides[kept], "--", path)
    bob.commit(f"merge, {kept} kept")
    before = bob.council.text(debate_id, "risk-auditor/context-and-persona.md")
    # ours (bob's) lost round start's directive and panel; theirs (alice's) lost the question
    assert (question in before) == (kept == "ours")

    found = bob.council.proc("doctor")
    repaired = bob.council.proc("doctor", "--repair")

    assert found.code != 0, found.out
    lost = "cross-context panel" if kept == "ours" else repr(question)
    assert "lacks what round-log.md and debate.md record as written to it" in found.out
    assert lost in found.out, found.out
    assert repaired.code == 0, repaired.out + repaired.err
    context = bob.council.text(debate_id, "risk-auditor/context-and-persona.md")
    assert question in context and "- Cross-examine " in context
    assert context.index("## Round 2 — Directives") < context.index(
        "## Round 2 — Cross-context loaded"
    )
    assert bob.council.proc("doctor").code == 0


# -- 9. one order, whichever way the merge went ------------------------------------------------


def test_answers_merged_either_way_give_the_same_files(repo: Repo) -> None:
    repo.git_setup()
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    repo.commit("round 1 started")
    for branch, slugs in (("by-a", PERSONAS[:2]), ("by-b", PERSONAS[2:])):
        repo.git("checkout", "-q", "-b", branch, "main")
        for slug in slugs:
            answer_by_hand(repo, debate_id, slug, "A", 60)
        repo.commit(f"{', '.join(slugs)} answered")
    for into, other in (("by-a", "by-b"), ("by-b", "by-a")):
        repo.git("checkout", "-q", "-b", f"merge-{into}", into)
        merged = repo.git("merge", "--no-edit", other, check=False)
        assert merged.returncode == 0, merged.stdout + merged.stderr

    differs = repo.git("diff", "--stat", "merge-by-a", "merge-by-b").stdout

    assert differs == "", differs


def test_critiques_merged_either_way_give_the_same_files(repo: Repo) -> None:
    debate_id = round_two_started(repo)
    critics_on_two_branches(repo, debate_id)
    for into, other in (("by-a", "by-b"), ("by-b", "by-a")):
        repo.git("checkout", "-q", "-b", f"merge-{into}", into)
        merged = repo.git("merge", "--no-edit", other, check=False)
        assert merged.returncode == 0, merged.stdout + merged.stderr

    differs = repo.git("diff", "--stat", "merge-by-a", "merge-by-b").stdout

    assert differs == "", differs
    repo.ok("round", "end", debate_id, "2")
    repo.ok("round", "start", debate_id, "3")
    pages = {slug: round_three_page(repo, debate_id, slug) for slug in PERSONAS}
    repo.commit("round 3 started")
    repo.git("checkout", "-q", "merge-by-a")
    repo.ok("round", "end", debate_id, "2")
    repo.ok("round", "start", debate_id, "3")
    for slug in PERSONAS:
        assert round_three_page(repo, debate_id, slug) == pages[slug]


def test_round_three_prompts_do_not_follow_the_order_a_merge_left_records_in(
    repo: Repo,
) -> None:
    debate_id = round_two_started(repo)
    for slug in PERSONAS:
        critique(repo, debate_id, slug, SCORES[slug])
    repo.ok("round", "end", debate_id, "2")
    repo.commit("round 2 closed")

    def pages() -> dict[str, str]:
        shown = {"check": repo.ok("check", debate_id, "2")}
        repo.ok("round", "start", debate_id, "3")
        shown |= {slug: round_three_page(repo, debate_id, slug) for slug in PERSONAS}
        return shown

    as_written = pages()
    repo.git("reset", "-q", "--hard")
    # The records in reverse order, as a merge resolved by hand may leave them.
    for name, rounds in (("reviews.json", ["2"]), ("verdicts.json", ["1", "2"])):
        path = repo.council.folder(debate_id) / name
        data = json.loads(path.read_text(encoding="utf-8"))
        for number in rounds:
            data["rounds"][number] = dict(reversed(list(data["rounds"][number].items())))
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    assert pages() == as_written


def test_doctor_names_a_fact_injected_into_a_debate_the_other_clone_completed(
    tmp_path: Path,
) -> None:
    alice, bob = team(tmp_path, "alice", "bob")
    debate_id = shared_debate([alice, bob])
    done = alice.council.proc("run", debate_id, "--quiet")
    assert done.code == 0, done.err
    assert alice.council.status(debate_id) == "complete"
    alice.commit("debate complete")
    alice.git("push", "-q")
    bob.ok("inject", debate_id, "The platform team freezes changes in June.")
    bob.commit("a fact")

    merged = bob.git("pull", "--no-rebase", "--no-edit", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert bob.council.status(debate_id) == "complete"
    found = bob.council.proc("doctor")
    assert found.code != 0
    assert "1 fact(s) written after the final report" in found.out, found.out
    assert "The platform team freezes changes in June." in found.out
    assert alice.council.proc("doctor").code == 0
