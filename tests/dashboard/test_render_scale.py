"""The debate page at scale and verdict first: cached rendering, a long debate's parts on
demand, live updates that send only what changed, one claims ledger, the paginated list."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from starlette.testclient import TestClient

from dreamcontext_council import new_debate, record_verdict
from dreamcontext_council.actions.snapshot import load_snapshot
from dreamcontext_council.dashboard import create_app
from dreamcontext_council.dashboard.index_cache import IndexCache
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.run_record import begin_run, record_stop
from dreamcontext_council.views.debate_page import build_debate_page
from dreamcontext_council.views.export import export_html
from dreamcontext_council.views.html import debate_html

from .big_debates import long_debate, many_debates
from .conftest import REFERENCE_ID


@pytest.fixture
def long_root(tmp_path: Path) -> tuple[Root, str]:
    """Three personas, two rounds of 40 KB entries: past the on-demand threshold."""
    root = Root(tmp_path / "_dream_context")
    return root, long_debate(root, personas=3, rounds=2, entry_bytes=40_000)


@pytest.fixture
def long_client(long_root: tuple[Root, str]) -> Iterator[TestClient]:
    with TestClient(create_app(long_root[0])) as client:
        yield client


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    parse = MarkdownIt.parse

    def counting(self: MarkdownIt, src: str, env: Any = None) -> Any:
        seen.append(src)
        return parse(self, src, env)

    monkeypatch.setattr(MarkdownIt, "parse", counting)
    return seen


def test_a_page_built_again_renders_no_markdown_again(
    reference_root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = debate_html(build_debate_page(load_snapshot(reference_root, REFERENCE_ID)))
    parses = _parses(monkeypatch)
    again = debate_html(build_debate_page(load_snapshot(reference_root, REFERENCE_ID)))
    assert again == first and parses == []


def test_an_edit_that_keeps_size_and_mtime_still_shows(reference_root: Root) -> None:
    report = reference_root.debate(REFERENCE_ID).folder / "final-report.md"
    build_debate_page(load_snapshot(reference_root, REFERENCE_ID))
    before = report.stat()
    text = report.read_text()
    assert "Migrate" in text
    report.write_text(text.replace("Migrate", "Migrxte", 1))
    os.utime(report, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert report.stat().st_size == before.st_size
    page = debate_html(build_debate_page(load_snapshot(reference_root, REFERENCE_ID)))
    assert "Migrxte" in page


def test_the_citation_pattern_is_built_once_for_a_page(
    long_root: tuple[Root, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, debate_id = long_root
    compiled: list[str] = []
    original = re.compile

    def counting(pattern: Any, flags: int = 0) -> Any:
        if isinstance(pattern, str) and re.escape("persona-00") in pattern:
            compiled.append(pattern)
        return original(pattern, flags)

    monkeypatch.setattr(re, "compile", counting)
    page = debate_html(build_debate_page(load_snapshot(root, debate_id)))
    assert page.count('class="cite"') > 100  # every entry cites a peer, many times
    assert len(compiled) <= 1


def test_a_long_debate_page_loads_entries_and_transcripts_on_demand(
    long_root: tuple[Root, str], long_client: TestClient
) -> None:
    root, debate_id = long_root
    page = long_client.get(f"/d/{debate_id}").text
    entries = sum(p.stat().st_size for p in root.debate(debate_id).folder.glob("*/report.md"))
    assert len(page) < entries / 4
    assert "Point 40:" not in page  # the reasoning is not on the page
    assert f'data-load="/d/{debate_id}/entry/persona-01/2"' in page
    assert f'data-load="/d/{debate_id}/transcript/persona-01"' in page
    entry = long_client.get(f"/d/{debate_id}/entry/persona-01/2")
    assert entry.status_code == 200 and "<h4>Reasoning</h4>" in entry.text
    assert "Point 40:" in entry.text and "round 2" in entry.text
    assert '<a href="#cell-persona-02-1" class="cite">persona-02 R1</a>' in entry.text
    transcript = long_client.get(f"/d/{debate_id}/transcript/persona-01")
    assert transcript.status_code == 200
    assert 'id="entry-persona-01-1"' in transcript.text
    assert 'id="entry-persona-01-2"' in transcript.text
    for missing in (
        f"/d/{debate_id}/entry/persona-01/3",
        f"/d/{debate_id}/entry/persona-01/999",
        f"/d/{debate_id}/entry/nobody/1",
        f"/d/{debate_id}/entry/..%2F..%2Fdebate/1",
        f"/d/{debate_id}/transcript/nobody",
        f"/d/{debate_id}/transcript/..%2Fpersona-01",
    ):
        assert long_client.get(missing).status_code == 404, missing


def test_a_short_debate_page_and_a_long_debates_export_stay_whole(
    client_reference: TestClient, long_root: tuple[Root, str]
) -> None:
    page = client_reference.get(f"/d/{REFERENCE_ID}").text
    assert "data-load=" not in page and "<h4>Reasoning</h4>" in page
    root, debate_id = long_root
    exported = export_html(load_snapshot(root, debate_id))
    assert "data-load=" not in exported
    assert exported.count("Point 40:") == 2 * 3 * 2  # each entry in its cell and transcript


@pytest.fixture
def client_reference(reference_root: Root) -> Iterator[TestClient]:
    with TestClient(create_app(reference_root)) as client:
        yield client


def _held(text: str) -> str:
    found = re.findall(r'data-part="([a-z0-9-]+)" data-hash="([0-9a-f]+)"', text)
    return ",".join(f"{name}:{digest}" for name, digest in found)


def test_a_live_update_sends_only_the_parts_that_changed(
    long_root: tuple[Root, str], long_client: TestClient
) -> None:
    root, debate_id = long_root
    fragment = f"/d/{debate_id}/fragment"
    held = _held(long_client.get(f"/d/{debate_id}").text)
    assert "row-persona-00:" in held and "persona-persona-02:" in held
    unchanged = long_client.get(fragment, params={"have": held})
    assert unchanged.headers["x-council-parts"] == "changed" and unchanged.text == ""
    record_verdict(
        root, debate_id, "persona-01", 2, stance="B", conviction=99, headline="Changed my mind"
    )
    changed = long_client.get(fragment, params={"have": held})
    assert changed.headers["x-council-parts"] == "changed"
    sent = re.findall(r'<template data-part="([a-z0-9-]+)">', changed.text)
    assert "row-persona-01" in sent and "board" in sent
    assert "row-persona-00" not in sent and "row-persona-02" not in sent
    assert not [name for name in sent if name.startswith("persona-")]
    assert "Changed my mind" in changed.text
    # A page whose parts are not the server's (a persona appeared) gets the whole fragment.
    stale = long_client.get(fragment, params={"have": "top:00,board:00"})
    assert "x-council-parts" not in stale.headers and 'id="cell-persona-00-1"' in stale.text
    assert long_client.get(fragment, params={"have": "<bad>"}).status_code == 200


def test_a_complete_debate_opens_with_the_question_and_verdict(
    client_reference: TestClient,
) -> None:
    text = client_reference.get(f"/d/{REFERENCE_ID}").text
    order = [
        text.index(marker)
        for marker in (
            'id="question"',
            ">Verdict</h3>",
            ">Decision card</h3>",
            'id="board"',
            ">Why</h3>",
            'id="claims"',
            'id="matrix"',
            'id="personas"',
        )
    ]
    assert order == sorted(order)


def test_an_open_debate_leads_with_the_board_and_says_its_run_stopped(
    long_root: tuple[Root, str], long_client: TestClient
) -> None:
    root, debate_id = long_root
    folder = root.debate(debate_id).folder
    started = begin_run(folder, within=root.path)
    record_stop(folder, started, "the budget ran out", "round_2_complete", within=root.path)
    text = long_client.get(f"/d/{debate_id}").text
    assert text.index('id="board"') < text.index('id="question"') < text.index('id="matrix"')
    assert "stopped: the budget ran out, resume with dreamcontext council run" in text
    assert 'class="badge tone-stopped" id="status"' in text


def test_one_claims_ledger_with_its_flags(
    reference_root: Root, client_reference: TestClient
) -> None:
    folder = reference_root.debate(REFERENCE_ID).folder
    report = folder / "final-report.md"
    report.write_text(
        report.read_text() + "\n## Claims ledger\n\n| # | Claim |\n|---|---|\n| C1 | x |\n"
    )
    claims = {
        "claims": [{"id": "C1", "claim": "Postgres halves ops cost", "label": "DISPUTED"}],
        "dropped": [],
        "flags": [
            {"persona": "user-advocate", "share": 0.6667, "claims_challenged": 2, "total": 3}
        ],
    }
    (folder / "claims.json").write_text(json.dumps(claims))
    text = client_reference.get(f"/d/{REFERENCE_ID}").text
    assert text.count("Claims ledger") == 1
    flags = text.split(">Flags</h3>")[1].split("</ul>")[0]
    assert "user-advocate dissents on 2 of 3 claims (66.7%)" in flags
    assert "<li></li>" not in text.split('id="claims"')[1]


def test_the_list_sends_one_page_searched_on_the_server(tmp_path: Path) -> None:
    root, ids = many_debates(tmp_path, 120)
    with TestClient(create_app(root)) as client:
        first = client.get("/").text
        assert first.count('class="debate-row"') == 50
        assert "120 of 120 debates · page 1 of 3" in first
        assert 'href="/?page=2"' in first
        third = client.get("/fragment/list", params={"page": "3"}).text
        assert third.count('class="debate-row"') == 20 and ids[-1] in third
        found = client.get("/", params={"q": "copy 117"}).text
        assert found.count('class="debate-row"') == 1 and ids[117] in found
        assert client.get("/", params={"page": "99"}).text.count('class="debate-row"') == 20
        assert client.get("/", params={"page": "x"}).status_code == 200


def test_a_hand_edited_slug_cannot_break_out_of_its_part(
    reference_root: Root, client_reference: TestClient
) -> None:
    verdicts = reference_root.debate(REFERENCE_ID).folder / "verdicts.json"
    data = json.loads(verdicts.read_text())
    hostile = 'x"><img src=x onerror=alert(1)>'
    data["rounds"]["1"][hostile] = {"stance": "A", "conviction": 50, "headline": "h"}
    verdicts.write_text(json.dumps(data))
    page = client_reference.get(f"/d/{REFERENCE_ID}")
    assert page.status_code == 200 and "<img" not in page.text
    held = re.findall(r'data-part="([^"]*)" data-hash="([0-9a-f]+)"', page.text)
    assert "row-x&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in {n for n, _ in held}
    have = ",".join(f"{name}:{digest}" for name, digest in held)
    fragment = client_reference.get(f"/d/{REFERENCE_ID}/fragment", params={"have": have})
    assert fragment.status_code == 200 and "<img" not in fragment.text
    assert 'id="cell-risk-auditor-1"' in fragment.text  # the whole fragment, not parts


def test_the_list_reuses_the_checked_index_until_the_root_changes(tmp_path: Path) -> None:
    root, ids = many_debates(tmp_path, 3)
    index = IndexCache(root, max_age=3600)
    first = index.entries()
    assert [e["id"] for e in first] == ids
    assert index.entries() is first  # no folder walk while nothing changed
    added = new_debate(root, "A fourth question?").id
    assert added in [e["id"] for e in index.entries()]
    # A hand edit no command put in the index shows once the cache is older than max_age.
    debate_md = root.debate(ids[0]).debate_md
    debate_md.write_text(debate_md.read_text().replace("status: complete", "status: synthesizing"))
    held = index.entries()
    assert held[-3]["status"] == "complete"  # within max_age the cache still holds
    index.max_age = 0
    assert index.entries()[-3]["status"] == "synthesizing"
