"""The merge drivers as pure functions: a side left unchanged yields the other side, and two
valid versions merge into a valid file that keeps what each side added."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.merge.debate import merge_debate, merge_facts, status_rank
from dreamcontext_council.merge.driver import DRIVERS
from dreamcontext_council.merge.logs import merge_round_log, merge_usage
from dreamcontext_council.merge.records import merge_index, merge_verdicts
from dreamcontext_council.rules import roundlog
from dreamcontext_council.rules.debate import append_fact, parse_debate
from dreamcontext_council.rules.report import RoundEntry, parse_report, render_report
from dreamcontext_council.rules.verdicts import Verdict, Verdicts, parse_verdicts, render_verdicts

SLUGS = ("risk-auditor", "growth-cfo", "user-advocate", "ops-lead", "contrarian")
DATES = st.dates().map(lambda d: f"2026-{d.month:02d}-{d.day:02d}")
ROUNDS = st.integers(1, 4)

any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)


@given(st.sampled_from(sorted(DRIVERS)), any_text, any_text)
def test_merging_with_an_unchanged_side_returns_the_other_side(
    kind: str, base: str, changed: str
) -> None:
    merge = DRIVERS[kind][0]
    assert merge(base, base, changed) == changed
    assert merge(base, changed, base) == changed
    assert merge(base, changed, changed) == changed


# -- verdicts.json -----------------------------------------------------------------------

verdict = st.builds(
    Verdict,
    stance=st.sampled_from(("A", "B")),
    conviction=st.integers(0, 100),
    headline=st.text(max_size=20),
    concession=st.none(),
    at=DATES,
)
verdict_map = st.dictionaries(st.tuples(ROUNDS, st.sampled_from(SLUGS)), verdict, max_size=6)


def _verdicts(by_key: dict[tuple[int, str], Verdict]) -> str:
    record = Verdicts(options=[{"key": "A", "label": "Adopt"}, {"key": "B", "label": "Stay"}])
    for (number, slug), value in sorted(by_key.items()):
        record.rounds.setdefault(number, {})[slug] = value
    return render_verdicts(record)


def _flat(text: str) -> dict[tuple[int, str], Verdict]:
    parsed = parse_verdicts(text)
    return {(n, s): v for n, by in parsed.rounds.items() for s, v in by.items()}


@given(verdict_map, verdict_map, verdict_map)
def test_verdicts_merge_to_the_union_or_a_real_conflict(
    base: dict[tuple[int, str], Verdict],
    ours_added: dict[tuple[int, str], Verdict],
    theirs_added: dict[tuple[int, str], Verdict],
) -> None:
    ours, theirs = {**base, **ours_added}, {**base, **theirs_added}
    merged = merge_verdicts(_verdicts(base), _verdicts(ours), _verdicts(theirs))
    clash = [
        k
        for k in ours
        if k in theirs and ours[k] != theirs[k] and base.get(k) not in (ours[k], theirs[k])
    ]
    if clash:
        assert merged is None
        return
    assert merged is not None
    # Each record: the side that changed it, else the ancestor's.
    wanted = {k: ours[k] if k in ours and ours[k] != base.get(k) else theirs[k] for k in theirs}
    assert _flat(merged) == {**ours, **wanted}


# -- index.json --------------------------------------------------------------------------

index_entry = st.fixed_dictionaries(
    {
        "id": st.sampled_from([f"council_{c * 8}" for c in "ABCDEF"]),
        "status": st.sampled_from(("created", "round_1_running", "round_1_complete", "complete")),
        "created_at": DATES,
        "updated_at": DATES,
    }
)
index_list = st.lists(index_entry, max_size=5, unique_by=lambda e: e["id"])


@given(index_list, index_list, index_list)
def test_index_merges_to_every_debate_once(
    base: list[dict[str, Any]], ours: list[dict[str, Any]], theirs: list[dict[str, Any]]
) -> None:
    texts = [json.dumps(x, indent=2) + "\n" for x in (base, ours, theirs)]
    merged = merge_index(*texts)
    assert merged is not None
    entries = json.loads(merged)
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids))
    base_ids = {e["id"] for e in base}
    ours_ids, theirs_ids = {e["id"] for e in ours}, {e["id"] for e in theirs}
    # Added on a side: kept. Kept on both sides: kept.
    assert (ours_ids - base_ids) | (theirs_ids - base_ids) | (ours_ids & theirs_ids) <= set(ids)
    for e in entries:
        assert e in ours or e in theirs


# -- debate.md ---------------------------------------------------------------------------

STATES = ("created", *(f"round_{n}_{p}" for n in (1, 2, 3) for p in ("running", "complete")))


def _debate(status: str, personas: list[str], updated: str, facts: str) -> str:
    current = 0 if status == "created" else int(status.split("_")[1])
    meta = {
        "id": "council_AbC12345",
        "topic": "Adopt Rust?",
        "status": status,
        "rounds_planned": 3,
        "current_round": current,
        "personas": personas,
        "created_at": "2026-01-01",
        "updated_at": updated,
    }
    return frontmatter_io.render(meta, f"## Question\n\nAdopt Rust?\n\n{facts}")


debate_state = st.tuples(
    st.sampled_from(STATES),
    st.lists(st.sampled_from(SLUGS), unique=True, max_size=4),
    DATES,
    st.sampled_from(("", "## Constraints & Known Facts\n\n- Budget is fixed")),
)


@given(debate_state, debate_state, debate_state)
def test_debate_md_merges_into_a_valid_debate_on_the_later_state(
    base: tuple[str, list[str], str, str],
    ours: tuple[str, list[str], str, str],
    theirs: tuple[str, list[str], str, str],
) -> None:
    merged = merge_debate(_debate(*base), _debate(*ours), _debate(*theirs))
    if merged is None:  # only the body, changed both ways, is left to git
        assert base[3] not in (ours[3], theirs[3]) and ours[3] != theirs[3]
        return
    debate = parse_debate(merged)
    wanted = [s for s in (ours[0], theirs[0]) if s != base[0]] or [base[0]]
    assert str(debate.status) == max(wanted, key=status_rank)
    assert debate.meta["updated_at"] in (ours[2], theirs[2])
    for side in (ours, theirs):
        assert set(side[1]) - set(base[1]) <= set(debate.personas)


# -- round-log.md and usage.jsonl --------------------------------------------------------

log_entry = st.tuples(st.sampled_from(("Round 1 started", "Fact injected", "Note")), DATES)


def _log(entries: list[tuple[str, str]]) -> str:
    text = roundlog.new_log("council_AbC12345")
    for title, date in entries:
        text = roundlog.append_entry(text, f"{title} — {date}", ["Personas: a, b"])
    return text


# Each side appends in time order, as commands do.
log_entries = st.lists(log_entry, max_size=4).map(lambda xs: sorted(xs, key=lambda e: e[1]))


@given(st.lists(log_entry, max_size=4), log_entries, log_entries)
def test_round_logs_merge_to_both_sides_additions_after_the_ancestor(
    base: list[tuple[str, str]], ours: list[tuple[str, str]], theirs: list[tuple[str, str]]
) -> None:
    merged = merge_round_log(_log(base), _log(base + ours), _log(base + theirs))
    assert merged is not None
    assert merged.startswith(_log(base).rstrip("\n"))
    headings = [line for line in merged.split("\n") if line.startswith("## ")]
    added = headings[len(base) :]
    for entry in ours + theirs:
        assert f"## {entry[0]} — {entry[1]}" in added
    dates = [h.rsplit(" — ", 1)[1] for h in added]
    assert dates == sorted(dates)


@given(st.lists(log_entry, max_size=3), log_entries, log_entries)
def test_round_logs_merge_the_same_both_ways_keeping_every_entry_each_side_added(
    base: list[tuple[str, str]], ours: list[tuple[str, str]], theirs: list[tuple[str, str]]
) -> None:
    old, mine, other = _log(base), _log(base + ours), _log(base + theirs)
    merged = merge_round_log(old, mine, other)
    assert merged is not None
    assert merge_round_log(old, other, mine) == merged
    if mine == other:
        return  # git takes a file both sides hold alike without asking the driver
    added = [line[3:] for line in merged.split("\n") if line.startswith("## ")][len(base) :]
    assert sorted(added) == sorted(f"{title} — {date}" for title, date in ours + theirs)


usage_line = st.builds(
    lambda call, at: json.dumps({"call": call, "at": at, "outcome": "ok"}),
    st.text("0123456789abcdef", min_size=4, max_size=4),
    DATES,
)


usage_lines = st.lists(usage_line, max_size=4).map(
    lambda xs: sorted(xs, key=lambda line: json.loads(line)["at"])
)


@given(st.lists(usage_line, max_size=4), usage_lines, usage_lines)
def test_usage_merges_to_every_line_in_time_order(
    base: list[str], ours: list[str], theirs: list[str]
) -> None:
    def text(lines: list[str]) -> str:
        return "".join(f"{line}\n" for line in lines)

    merged = merge_usage(text(base), text(base + ours), text(base + theirs))
    assert merged is not None
    lines = merged.split("\n")[:-1]
    assert lines[: len(base)] == base
    assert set(ours + theirs) <= set(lines)
    times = [json.loads(line)["at"] for line in lines[len(base) :]]
    assert times == sorted(times)


# -- report.md ---------------------------------------------------------------------------

report_entries = st.dictionaries(ROUNDS, st.sampled_from(("A wins.", "B wins.")), max_size=4)


def _report(entries: dict[int, str]) -> str:
    body = "### Executive Summary\n\n{}\n\n### Position\n\nA"
    return render_report(
        "risk-auditor",
        [RoundEntry(n, "2026-01-01", body.format(text)) for n, text in entries.items()],
    )


@given(report_entries, report_entries, report_entries)
def test_reports_merge_to_both_sides_entries_newest_first(
    base: dict[int, str], ours_added: dict[int, str], theirs_added: dict[int, str]
) -> None:
    ours, theirs = {**base, **ours_added}, {**base, **theirs_added}
    merged = DRIVERS["report"][0](_report(base), _report(ours), _report(theirs))
    clash = [
        n
        for n in ours
        if n in theirs and ours[n] != theirs[n] and base.get(n) not in (ours[n], theirs[n])
    ]
    if clash:
        assert merged is None
        return
    assert merged is not None
    entries = parse_report(merged)
    rounds = [e.round for e in entries]
    assert rounds == sorted(set(ours) | set(theirs), reverse=True)
    meta, _ = frontmatter_io.parse(merged, "report.md")
    assert meta == {"persona": "risk-auditor", "rounds_completed": len(rounds)}


def test_an_index_entry_both_sides_moved_on_takes_the_newer() -> None:
    def index(status: str, updated: str) -> str:
        entry = {"id": "council_AAAAAAAA", "status": status, "updated_at": updated}
        return json.dumps([entry], indent=2) + "\n"

    base = index("created", "2026-01-01")
    merged = merge_index(
        base, index("round_1_running", "2026-01-02"), index("round_2_running", "2026-01-02")
    )
    assert merged is not None
    assert json.loads(merged)[0]["status"] == "round_2_running"
    merged = merge_index(
        base, index("complete", "2026-01-03"), index("round_2_running", "2026-01-02")
    )
    assert merged is not None
    assert json.loads(merged)[0]["status"] == "complete"


def test_the_driver_leaves_a_side_it_cannot_read_to_gits_line_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))  # not the user's
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    base = _verdicts({})
    ours = base.replace('"rounds": {}', '"rounds": {"1": {}}')
    theirs = "<<<<<<< a hand merge left this\n" + base
    paths = []
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        paths.append(tmp_path / name)
        paths[-1].write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "dreamcontext_council", "council", "merge-driver", "verdicts"]
        + [str(p) for p in paths],
        capture_output=True,
        text=True,
    )
    # git's line merge took both changes, as without the driver: nothing was guessed.
    assert done.returncode == 0, done.stderr
    assert paths[1].read_text() == "<<<<<<< a hand merge left this\n" + ours


def test_the_merge_driver_command_takes_every_kind_git_setup_registers() -> None:
    from dreamcontext_council.cli.git import merge_driver

    [kind] = [p for p in merge_driver.params if p.name == "kind"]
    assert isinstance(kind.type, click.Choice)
    assert sorted(kind.type.choices) == sorted(DRIVERS)


FACTS_BODY = "## Question\n\nAdopt Rust?\n\n## Constraints & Known Facts\n\n- Budget is fixed\n"
fact = st.tuples(st.integers(0, 3), st.sampled_from(("Postgres runs.", "Two know Rust.", "X")))


@given(st.lists(fact, max_size=3, unique=True), st.lists(fact, max_size=3, unique=True))
def test_facts_injected_on_both_sides_merge_by_round_the_same_both_ways(
    ours: list[tuple[int, str]], theirs: list[tuple[int, str]]
) -> None:
    def body(facts: list[tuple[int, str]]) -> str:
        text = FACTS_BODY
        for number, text_of in sorted(facts):  # `inject` runs as the rounds go on
            text = append_fact(text, f"- **[Interlude R{number}]** {text_of}")
        return text

    merged = merge_facts(FACTS_BODY, body(ours), body(theirs))
    assert merged is not None
    assert merge_facts(FACTS_BODY, body(theirs), body(ours)) == merged
    bullets = [line for line in merged.split("\n") if line.startswith("- **[Interlude")]
    assert sorted(bullets) == sorted({f"- **[Interlude R{n}]** {t}" for n, t in ours + theirs})
    rounds = [int(b.split("R", 1)[1].split("]", 1)[0]) for b in bullets]
    assert rounds == sorted(rounds)


def test_a_body_changed_beyond_its_facts_is_left_to_git() -> None:
    ours = append_fact(FACTS_BODY, "- **[Interlude R1]** Postgres runs.")
    theirs = FACTS_BODY.replace("Adopt Rust?", "Adopt Go?")
    assert merge_facts(FACTS_BODY, ours, theirs) is None
