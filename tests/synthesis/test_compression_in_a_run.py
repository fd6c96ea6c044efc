"""Compression before synthesis in a real run: long answers with code, through the SDK stubs."""

from __future__ import annotations

from pathlib import Path

from stub_server import StubServer

from dreamcontext_council.engine.prompting.compression import compress_answer
from dreamcontext_council.engine.prompting.seating import TIGHTER_LINES

from .chamber import Chamber, code_blocks, entry_body
from .council_cli import Council, openai_env, roster_file
from .reading import messages, seats, sent_answers, synthesis_calls

TOPIC = "Should we migrate the session store from Redis to Postgres?"
OPTIONS = "A=Migrate now,B=Stay on Redis"
SLUGS = ["alpha", "beta", "gamma", "delta"]
# Received in round 2, by the persona cross-examined: delta is the best reviewed, alpha the worst.
SCORES = {"alpha": 3, "beta": 5, "gamma": 6, "delta": 9}
GATE = 30_000


def run_debate(
    council: Council, stub: StubServer, tmp_path: Path, *args: str
) -> tuple[str, dict[str, bytes]]:
    """Run a 4-persona debate on the stub; return its id and report.md bytes at synthesis time."""
    at_synthesis: dict[str, bytes] = {}

    def snapshot() -> None:
        for path in council.root.glob("council/*/*/report.md"):
            at_synthesis[path.parent.name] = path.read_bytes()

    chamber = stub.responder
    assert isinstance(chamber, Chamber)
    chamber.on_synthesis = snapshot
    roster = roster_file(tmp_path / "roster.json", dict.fromkeys(SLUGS, "openai:gpt-stub"))
    result = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--personas", roster, "--quiet", *args,
        env=openai_env(stub.openai_url),
    )  # fmt: skip
    assert result.code == 0, result.err
    [debate_id] = council.ids()
    assert council.status(debate_id) == "complete"
    return debate_id, at_synthesis


def test_over_the_gate_the_synthesizer_reads_compressed_views_and_the_originals_stay(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.scores = SCORES
    debate_id, at_synthesis = run_debate(
        council, stub, tmp_path, "--rounds", "2", "--gate", str(GATE)
    )
    folder = council.folder(debate_id)

    # Every answer is on disk exactly as the persona sent it, and compression changed no report.md.
    assert sorted(chamber.answers) == sorted((s, r) for s in SLUGS for r in (1, 2))
    for (slug, _number), answer in chamber.answers.items():
        assert entry_body(answer) in (folder / slug / "report.md").read_text(encoding="utf-8")
    assert sorted(at_synthesis) == sorted(SLUGS)
    for slug, before in at_synthesis.items():
        assert (folder / slug / "report.md").read_bytes() == before

    # reviews.json holds the cross-examination scores.
    reviews = council.json_file(debate_id, "reviews.json")["rounds"]
    assert list(reviews) == ["2"]
    assert sorted(reviews["2"]) == sorted(SLUGS)
    assert {r["target"]: r["score"] for r in reviews["2"].values()} == SCORES

    # round-log.md: the verbatim seats hold tested material, the final (round-2) answers: the
    # best-reviewed persona's (delta, of the majority) and the best-reviewed dissenter's
    # (gamma). Every final answer is seated before any round-1 answer.
    log = council.text(debate_id, "round-log.md")
    assert f"- Gate: {GATE:,} characters; the rest of the prompt " in log
    assert "Still over the gate" not in log
    final = council.json_file(debate_id, "verdicts.json")["rounds"]["2"]
    assert final["gamma"]["stance"] != final["delta"]["stance"] == final["alpha"]["stance"]
    seated = seats(log)
    best_first = sorted(SLUGS, key=lambda slug: -SCORES[slug])
    assert [(s.persona, s.round) for s in seated] == [
        *((slug, 2) for slug in best_first),
        *((slug, 1) for slug in best_first),
    ]
    assert [s.seat for s in seated] == list(range(1, 9))
    assert not any(s.compressed for s in seated[:2])
    # The lowest seats gave way first, each to a step's lines (first 15 and last 10, then
    # fewer), but the one that brought the prompt under the gate: it took back the lines
    # that still fit.
    compressed = [s for s in seated if s.compressed]
    assert compressed and [s.seat for s in compressed] == list(range(compressed[0].seat, 9))
    steps = [(15, 10), *TIGHTER_LINES]
    assert len([s for s in compressed if s.lines_kept not in steps]) <= 1

    # What the synthesizer read: delta R2 and gamma R2 verbatim, the lowest seats compressed,
    # and the whole prompt (instructions, question, records and answers) filling the gate.
    [request] = synthesis_calls(stub.requests)
    system, user = messages(request)
    assert 0.9 * GATE <= len(system) + len(user) <= GATE
    sent = sent_answers(user)
    assert sorted(sent) == sorted(chamber.answers)
    for seat in seated:
        original = entry_body(chamber.answers[(seat.persona, seat.round)])
        read = sent[(seat.persona, seat.round)]
        assert read.compressed is seat.compressed
        head, tail = seat.lines_kept or (0, 0)
        expected = compress_answer(original, head=head, tail=tail) if seat.compressed else original
        assert read.text == expected
        assert (seat.original_chars, seat.view_chars) == (len(original), len(read.text))
        # Code is never cut: every block, the never-closed one too, byte for byte and in order.
        assert code_blocks(read.text) == code_blocks(original)
        assert len(code_blocks(original)) == (5 if seat.round == 1 else 4)
        if seat.compressed:
            [marker] = [line for line in read.text.split("\n") if line.startswith("[... ")]
            assert marker.endswith("]") and " lines compressed. Key points: " in marker
            points = marker.split("Key points: ", 1)[1][:-1].split("; ")
            assert 1 <= len(points) <= 3 and all(len(p) <= 60 for p in points)
            lines = original.split("\n")
            view_lines = read.text.split("\n")
            assert view_lines[:head] == lines[:head]
            assert view_lines[-tail:] == lines[-tail:]

    # synthesis-input.md records exactly those bytes.
    record = council.text(debate_id, "synthesis-input.md")
    assert system in record and user in record

    # compressed.md beside each report.md, holding that persona's compressed views only.
    for slug in SLUGS:
        compressed = (folder / slug / "compressed.md").read_text(encoding="utf-8")
        for number in (2, 1):
            heading = f"## Round {number} — compressed view\n\n"
            expected = heading + sent[(slug, number)].text.strip("\n") + "\n"
            assert (expected in compressed) is sent[(slug, number)].compressed
        if sent[(slug, 2)].compressed:
            assert compressed.index("## Round 2 —") < compressed.index("## Round 1 —")
        else:
            assert "## Round 2 —" not in compressed


def test_without_reviews_the_roster_order_seats_the_answers(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    debate_id, _ = run_debate(council, stub, tmp_path, "--rounds", "1", "--gate", "15000")

    assert not (council.folder(debate_id) / "reviews.json").exists()
    log = council.text(debate_id, "round-log.md")
    seated = seats(log)
    # Roster order, taken alternately from the majority and the dissent (gamma).
    assert [(s.persona, s.compressed) for s in seated] == [
        ("alpha", False),
        ("gamma", False),
        ("beta", True),
        ("delta", True),
    ]
    # Two verbatim answers alone nearly fill this gate: the log says the input is still over it.
    assert "- Still over the gate after compression: code is never cut" in log
    [request] = synthesis_calls(stub.requests)
    sent = sent_answers(messages(request)[1])
    for slug in SLUGS:
        original = entry_body(chamber.answers[(slug, 1)])
        assert code_blocks(sent[(slug, 1)].text) == code_blocks(original)
        # The answer ended inside an open fence; stored, the fence is closed.
        assert original.endswith("### a heading inside code\n~~~~")


def test_under_the_gate_every_answer_is_read_verbatim(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.lines = 10
    debate_id, _ = run_debate(council, stub, tmp_path, "--rounds", "1")

    log = council.text(debate_id, "round-log.md")
    assert "## Synthesis input under the gate — " in log
    assert "- Gate: 60,000 characters; the rest of the prompt " in log
    assert "## Compression before synthesis" not in log
    [request] = synthesis_calls(stub.requests)
    for (slug, number), answer in sent_answers(messages(request)[1]).items():
        assert not answer.compressed
        assert answer.text == entry_body(chamber.answers[(slug, number)])
    assert not list(council.folder(debate_id).glob("*/compressed.md"))
