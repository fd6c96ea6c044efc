"""A repository shared with the Node dreamcontext CLI: a fresh clone in which only the Node
tool has run commits none of its machine-local files, and the Node tool can append the first
entry of a persona this tool seated. Real `git`, clones of one bare repository, no project
`.gitignore` and no `git-setup`: the rules must come with the debates themselves.

The Node tool is not run here: its writes are made as that tool makes them (its lock beside
`verdicts.json`, its temps `<name>.tmp` and `<name>.<pid>.<hex>.tmp`, its live file, and
`report append`, which reads `report.md` and writes it again with the entry on top)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from council_run import roster_file
from debate_story import entry

# Imported fixtures are registered for this module: no developer key reaches a command.
from offline import clean_environment
from offline import no_provider_environment as no_provider_environment

from dreamcontext_council.folder import frontmatter_io, machine_local
from dreamcontext_council.rules.report import parse_report

from .test_merge_order import Clone

PERSONAS = ("risk-auditor", "user-advocate", "growth-cfo")
KNOWLEDGE_DOC = "---\nid: know_Ab12Cd34\nname: Caching\ntype: pattern\n---\n\n# Caching\n"


def clones(tmp_path: Path, *names: str) -> list[Clone]:
    """A bare repository with a Node project's `knowledge/` committed, and one clone per name."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "gitconfig").write_text("", encoding="utf-8")
    env = clean_environment(os.environ, home)
    env.update(GIT_CONFIG_GLOBAL=str(home / "gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], env=env, check=True)
    made = []
    for name in names:
        subprocess.run(
            ["git", "clone", "-q", str(origin), str(tmp_path / name)], env=env, check=True
        )
        clone = Clone(tmp_path / name, env)
        clone.git("config", "user.name", name)
        clone.git("config", "user.email", f"{name}@example.invalid")
        clone.git("config", "commit.gpgsign", "false")
        if made:
            clone.git("pull", "-q")
        else:
            knowledge = clone.path / "_dream_context" / "knowledge"
            knowledge.mkdir(parents=True)
            (knowledge / "caching.md").write_text(KNOWLEDGE_DOC, encoding="utf-8")
            clone.commit("a dreamcontext project")
            clone.git("push", "-q", "-u", "origin", "main")
        made.append(clone)
    return made


def seated_debate(clone: Clone) -> str:
    """A debate in round 1 made by this tool: two personas seated by `new`'s roster file, one
    by `agent create`; committed and pushed."""
    seats = dict.fromkeys(PERSONAS[:2], "scripted")
    roster = roster_file(clone.path.parent / "roster.json", seats)
    debate_id = clone.council.new_debate("--personas", roster)
    clone.council.add_persona(debate_id, "growth-cfo")
    clone.ok("round", "start", debate_id, "1")
    clone.commit("a debate in round 1")
    clone.git("push", "-q")
    return debate_id


def node_local_files(root: Path, debate_id: str) -> list[Path]:
    """What the Node tool leaves on its machine while it works: its live file, the lock it
    takes on verdicts.json, and atomic-write temps beside a debate file and a knowledge doc."""
    folder = root / "council" / debate_id
    made = {
        root / "tmp" / ".council-live.json": json.dumps({"debate": debate_id, "phase": "debate"})
        + "\n",
        folder / "verdicts.json.lock": "4242\n",
        folder / "risk-auditor" / "report.md.tmp": "half",
        root / "knowledge" / "decision-adopt-postgres.md.tmp": "half",
        root / "knowledge" / "decision-adopt-postgres.md.4242.0a1b2c3d4e5f.tmp": "half",
        root / "knowledge" / "decision-adopt-postgres.md.lock": "4242\n",
    }
    for path, text in made.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(made)


def node_report_append(report: Path, slug: str, number: int, body: str) -> None:
    """`report append` as the Node tool does it: read report.md (it must exist: the tool
    fails with ENOENT otherwise), keep the other rounds' entries, put this one on top and
    write the frontmatter again."""
    text = report.read_text(encoding="utf-8")
    _, _, rest = text.partition("---\n")
    _, _, content = rest.partition("---\n")
    others = [e.render().strip("\n") for e in parse_report(text) if e.round != number]
    merged = "\n\n".join([f"## Round {number} — 2026-12-05\n\n{body.strip()}", *others])
    rounds = max([number, *(e.round for e in parse_report(text))])
    assert "## Round" not in content or others  # nothing of another round is lost
    report.write_text(
        f'---\npersona: "{slug}"\nrounds_completed: {rounds}\n---\n\n{merged}\n', encoding="utf-8"
    )


def node_verdict(path: Path, slug: str, number: int, stance: str, conviction: int) -> None:
    """`verdict` as the Node tool records it in verdicts.json."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data["rounds"].setdefault(str(number), {})[slug] = {
        "stance": stance,
        "conviction": conviction,
        "headline": "Stay on Redis.",
        "concession": "",
        "at": "2026-12-05T10:00:00.000Z",
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def untracked(clone: Clone) -> list[str]:
    return clone.git("status", "--porcelain", "--untracked-files=all").stdout.splitlines()


def test_a_fresh_clone_used_only_by_the_node_tool_commits_none_of_its_local_files(
    tmp_path: Path,
) -> None:
    alice, bob = clones(tmp_path, "alice", "bob")
    debate_id = seated_debate(alice)
    committed = alice.git("ls-files", "_dream_context").stdout.split()
    assert "_dream_context/council/.gitignore" in committed
    assert "_dream_context/tmp/.gitignore" in committed
    assert "_dream_context/knowledge/.gitignore" in committed
    bob.git("pull", "-q", "--no-rebase")

    # bob works with the Node tool only: no command of this tool runs in his clone.
    local = node_local_files(bob.path / "_dream_context", debate_id)
    assert all(path.exists() for path in local)

    assert untracked(bob) == []
    bob.commit("the Node tool's work")  # `git add -A`, as a sync does
    assert bob.git("show", "--name-only", "--format=", "HEAD").stdout == ""
    bob.git("push", "-q")
    # alice's own live file and locks do not meet bob's: the pull merges nothing of them.
    alice.ok("board", debate_id)
    node_local_files(alice.path / "_dream_context", debate_id)
    alice.commit("alice's work")
    pulled = alice.git("pull", "--no-rebase", "--no-edit", check=False)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert untracked(alice) == []


def test_the_ignore_files_an_earlier_version_wrote_are_brought_up_to_date(tmp_path: Path) -> None:
    (alice,) = clones(tmp_path, "alice")
    debate_id = seated_debate(alice)
    root = alice.path / "_dream_context"
    # As an earlier version wrote them: each listed itself, so none was ever committed.
    alice.git("rm", "-q", "--cached", "_dream_context/council/.gitignore")
    alice.git("rm", "-q", "--cached", "_dream_context/tmp/.gitignore")
    alice.git("rm", "-q", "--cached", "_dream_context/knowledge/.gitignore")
    alice.git("commit", "-q", "-m", "as an earlier version left it")
    (root / "council" / ".gitignore").write_text(
        f"{machine_local.MARKER}\n.gitignore\n.council.lock\n.*.tmp\n", encoding="utf-8"
    )
    (root / "tmp" / ".gitignore").write_text("*\n", encoding="utf-8")
    (root / "knowledge" / ".gitignore").unlink()
    assert untracked(alice) == []

    injected = alice.council.proc("inject", debate_id, "Postgres 16 is approved.")  # a new process
    assert injected.code == 0, injected.err

    assert (root / "council" / ".gitignore").read_text("utf-8") == machine_local.COUNCIL_IGNORE
    assert (root / "tmp" / ".gitignore").read_text("utf-8") == machine_local.TMP_IGNORE
    assert (root / "knowledge" / ".gitignore").read_text("utf-8") == machine_local.KNOWLEDGE_IGNORE
    alice.commit("the ignore files, committed")
    node_local_files(root, debate_id)
    assert untracked(alice) == []


def test_a_user_ignore_file_in_knowledge_is_kept(tmp_path: Path) -> None:
    (alice,) = clones(tmp_path, "alice")
    mine = alice.path / "_dream_context" / "knowledge" / ".gitignore"
    mine.write_text("drafts/\n", encoding="utf-8")
    seated_debate(alice)
    assert mine.read_text("utf-8") == "drafts/\n"


@pytest.mark.parametrize("slug", ["risk-auditor", "growth-cfo"])  # by `new`, by `agent create`
def test_the_node_tool_appends_the_first_entry_of_a_persona_this_tool_seated(
    tmp_path: Path, slug: str
) -> None:
    alice, bob = clones(tmp_path, "alice", "bob")
    debate_id = seated_debate(alice)
    report = alice.council.folder(debate_id) / slug / "report.md"
    assert f"_dream_context/council/{debate_id}/{slug}/report.md" in (
        alice.git("ls-files").stdout.split()
    )
    meta, body = frontmatter_io.parse(report.read_text("utf-8"), "report.md")
    assert meta == {"persona": slug, "rounds_completed": 0} and body == ""
    # Seated is not answered: every reader still says the persona owes its entry.
    listed = json.loads(alice.ok("agent", "list", debate_id, "--json"))
    assert {row["slug"]: row["rounds_reported"] for row in listed} == {p: [] for p in PERSONAS}
    ended = alice.council("round", "end", debate_id, "1")
    assert ended.code != 0 and all(p in ended.err for p in PERSONAS), ended.err
    bob.git("pull", "-q", "--no-rebase")

    # bob answers with the Node tool: its verdict, then its entry, in a file it must find.
    node_verdict(bob.council.folder(debate_id) / "verdicts.json", slug, 1, "B", 70)
    node_report_append(
        bob.council.folder(debate_id) / slug / "report.md",
        slug,
        1,
        entry(f"{slug} would stay on Redis.", position="Option B, conviction 70."),
    )
    bob.commit(f"{slug} answered round 1 with the Node tool")
    bob.git("push", "-q")
    alice.git("pull", "-q", "--no-rebase")

    for other in (p for p in PERSONAS if p != slug):
        alice.ok(
            "verdict",
            debate_id,
            other,
            "1",
            "--stance",
            "A",
            "--conviction",
            "60",
            "--headline",
            "Go.",
        )
        alice.ok("report", "append", debate_id, other, "--round", "1", input=entry())
    listed = json.loads(alice.ok("agent", "list", debate_id, "--json"))
    assert {row["slug"]: row["rounds_reported"] for row in listed} == {p: [1] for p in PERSONAS}
    alice.ok("round", "end", debate_id, "1")
    summaries = alice.ok("summaries", debate_id, "1")
    assert f"{slug} would stay on Redis." in summaries
