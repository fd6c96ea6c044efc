"""Issue 14, items 4-6: verbatim seats for two voices, a free report structure, promote --to.

Each test runs a real `council run` against the stub server and reads what the
synthesizer was sent, what the round log says and what was written.
"""

from __future__ import annotations

from pathlib import Path

from stub_server import StubServer

from dreamcontext_council.engine.compression import compress_answer

from .chamber import Chamber, entry_body
from .council_cli import Council
from .reading import messages, seats, sent_answers, synthesis_calls
from .test_compression_in_a_run import SLUGS, run_debate

# --- item 4: verbatim seats go to two voices ----------------------------------------------


def test_a_low_gate_seats_two_personas_verbatim_ties_by_roster_order(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.scores = dict.fromkeys(SLUGS, 7)  # every reviewed answer scored the same
    debate_id, _ = run_debate(council, stub, tmp_path, "--rounds", "2", "--gate", "30000")

    seated = seats(council.text(debate_id, "round-log.md"))
    verbatim = [(s.persona, s.round) for s in seated if not s.compressed]
    # The reviewed (round-1) answers of the first two personas in the roster, not one
    # persona's two answers.
    assert verbatim == [("alpha", 1), ("beta", 1)]
    [request] = synthesis_calls(stub.requests)
    sent = sent_answers(messages(request)[1])
    for key in verbatim:
        assert not sent[key].compressed
        assert sent[key].text == entry_body(chamber.answers[key])
    assert sent[("alpha", 2)].compressed


def test_the_round_log_states_the_lines_each_compressed_answer_kept(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.scores = {"alpha": 3, "beta": 5, "gamma": 6, "delta": 9}
    # So low that even the tightest compression leaves the input over the gate.
    debate_id, _ = run_debate(council, stub, tmp_path, "--rounds", "2", "--gate", "5000")

    log = council.text(debate_id, "round-log.md")
    seated = seats(log)
    [request] = synthesis_calls(stub.requests)
    sent = sent_answers(messages(request)[1])
    tightest = set()
    for seat in seated:
        original = entry_body(chamber.answers[(seat.persona, seat.round)])
        read = sent[(seat.persona, seat.round)].text
        if not seat.compressed:
            assert read == original
            continue
        assert seat.lines_kept is not None
        head, tail = seat.lines_kept
        assert read == compress_answer(original, head=head, tail=tail)
        tightest.add(seat.lines_kept)
    assert tightest == {(2, 1)}
    assert (
        "- Still over the gate after compression: code is never cut, the verbatim seats stay "
        "whole, and every compressed answer keeps its first 2 and last 1 lines." in log
    )
    assert "first 15 and last 10" not in log
