"""The dashboard app in-process (no port): routes, the debate page, safety rules."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from dreamcontext_council.dashboard import create_app
from dreamcontext_council.folder.paths import Root

from .conftest import REFERENCE_ID

KNOWLEDGE = "decision-should-we-migrate-the-session-store-from-redis-to-postgres.md"


@pytest.fixture
def client(reference_root: Root) -> Iterator[TestClient]:
    with TestClient(create_app(reference_root)) as test_client:
        yield test_client


def test_the_list_links_to_the_debate_and_marks_it_promoted(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert f'href="/d/{REFERENCE_ID}"' in page.text
    assert "Should we migrate the session store from Redis to Postgres?" in page.text
    assert "★ promoted" in page.text
    assert 'id="q"' in page.text and 'id="status-filter"' in page.text


def _row_shown(client: TestClient, query: str) -> bool:
    return 'class="debate-row"' in client.get("/" + query).text


def test_the_list_filters_by_query_and_status_without_javascript(client: TestClient) -> None:
    # Search and filters are done on the server: a row that does not match is not sent.
    assert _row_shown(client, "?q=redis+postgres")
    assert _row_shown(client, "?q=LWVPZ")  # ids match too, in any case
    assert not _row_shown(client, "?q=nothing-like-this")
    assert not _row_shown(client, "?status=running")
    assert _row_shown(client, "?status=promoted")
    assert not _row_shown(client, "?status=unpromoted")
    assert 'id="no-match"' in client.get("/?status=unpromoted").text


def test_the_debate_page_header_and_board(client: TestClient) -> None:
    text = client.get(f"/d/{REFERENCE_ID}").text
    assert '<span class="badge tone-done" id="status">complete</span>' in text
    assert "2<small> / 2</small>" in text
    assert "78%" in text and "Δ +9" in text
    assert 'title="A · Migrate now"><b>A</b><span class="chip-label">Migrate now</span>' in text
    assert ">no calls<" in text and "$0.0000" in text
    for slug, conviction in (("growth-cfo", 70), ("risk-auditor", 70), ("user-advocate", 40)):
        assert f'id="board-{slug}"' in text
        assert f'<span class="num">{conviction}</span>' in text
    assert "↓ 55→40" in text


def test_the_matrix_has_a_cell_per_persona_and_round(client: TestClient) -> None:
    text = client.get(f"/d/{REFERENCE_ID}").text
    for slug in ("risk-auditor", "growth-cfo", "user-advocate"):
        for number in (1, 2):
            assert f'id="cell-{slug}-{number}"' in text
    cell = text.split('id="cell-user-advocate-2"')[1].split("</td>")[0]
    assert "user-advocate says B in R2" in cell and "peer point R2" in cell
    assert "<details" in cell and "Executive summary" in cell
    # The expanded entry holds every section, fenced headings included as code.
    assert "<h4>Reasoning</h4>" in cell and "<h4>Open questions</h4>" in cell
    assert "-- ## Round 9 fake heading inside a fence" in cell
    assert "69% → A" in text and "78% → A" in text


def test_citations_and_mentions_are_links(client: TestClient) -> None:
    text = client.get(f"/d/{REFERENCE_ID}").text
    assert '<a href="#cell-risk-auditor-1" class="cite">risk-auditor R1</a>' in text
    assert '<a href="#cell-growth-cfo-2" class="cite">growth-cfo R2</a>' in text
    assert '<a href="#persona-growth-cfo" class="chip persona-chip">growth-cfo</a>:' in text
    assert 'id="persona-growth-cfo"' in text


def test_the_page_opens_with_the_verdict_and_folds_the_appendix(client: TestClient) -> None:
    text = client.get(f"/d/{REFERENCE_ID}").text
    # The question, then the Verdict and the decision card, before the board.
    outcome = text.split('id="outcome"')[1].split('id="board"')[0]
    assert re.findall(r"<h3 class=\"card-title\">([^<]+)</h3>", outcome) == [
        "Verdict",
        "Decision card",
    ]
    assert outcome.index('id="question"') < outcome.index(">Verdict</h3>")
    assert "verdict" in outcome.split(">Verdict</h3>")[0].rsplit("<article", 1)[1]
    report = text.split('id="report"')[1].split('id="claims"')[0]
    titles = re.findall(r"<h3 class=\"card-title\">([^<]+)</h3>", report)
    assert titles[-1] == "Appendix: per-agent per-round summaries"
    assert set(titles) >= {"Why", "Open risks", "Minority view &amp; revisit conditions"}
    assert "Verdict" not in titles and "Decision card" not in titles
    assert '<details class="card report-card appendix"' in report


def test_transcripts_show_panels_directives_and_research(client: TestClient) -> None:
    text = client.get(f"/d/{REFERENCE_ID}").text
    cfo = text.split('id="persona-growth-cfo"')[1].split('id="persona-user-advocate"')[0]
    assert "Round 2 — Directives" in cfo and "Round 2 — Cross-context loaded" in cfo
    assert "What does the migration cost in engineer-weeks?" in cfo
    assert "Steelman option B for this round." in cfo
    assert "You are growth-cfo." in cfo
    auditor = text.split('id="persona-risk-auditor"')[1].split('id="persona-growth-cfo"')[0]
    assert "postgres write throughput" in auditor
    assert "Postgres 16 handles 40k small writes/s" in auditor


def test_the_knowledge_doc_is_linked_and_served_read_only(client: TestClient) -> None:
    text = client.get(f"/d/{REFERENCE_ID}").text
    assert f'href="/knowledge/{KNOWLEDGE}"' in text
    doc = client.get(f"/knowledge/{KNOWLEDGE}")
    assert doc.status_code == 200
    assert "Decision: Should we migrate the session store" in doc.text
    assert f'href="/d/{REFERENCE_ID}"' in doc.text


def test_usage_and_claims_show_when_the_engine_wrote_them(
    client: TestClient, reference_root: Root
) -> None:
    folder = reference_root.debate(REFERENCE_ID).folder
    records = [
        {"provider": "anthropic", "input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.0081},
        {
            "provider": "openai",
            "input_tokens": 800,
            "output_tokens": 200,
            "cost_usd": 0.004,
            "outcome": "error",
        },
    ]
    (folder / "usage.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    claims = {
        "claims": [
            {
                "id": "c1",
                "claim": "Postgres halves ops cost (risk-auditor R1)",
                "proposer": "risk-auditor",
                "round": 1,
                "supporters": ["growth-cfo"],
                "challengers": ["user-advocate"],
                "label": "supported",
                "research": ["postgres-write-throughput"],
            }
        ],
        "dropped": [{"claim": "Redis is free", "reason": "no source"}],
        "flags": ["c1 rests on one note"],
    }
    (folder / "claims.json").write_text(json.dumps(claims))
    text = client.get(f"/d/{REFERENCE_ID}").text
    assert "2 calls" in text and "(1 failed)" in text and "$0.0121" in text
    assert "2,000 in · 500 out" in text and "anthropic, openai" in text
    ledger = text.split('id="claims"')[1].split('id="personas"')[0]
    assert "Postgres halves ops cost" in ledger
    assert '<a href="#cell-risk-auditor-1" class="cite">risk-auditor R1</a>' in ledger
    assert 'href="#persona-user-advocate"' in ledger and "supported" in ledger
    assert "Redis is free — no source" in ledger and "c1 rests on one note" in ledger


def test_fragments_are_the_live_part_only(client: TestClient) -> None:
    fragment = client.get(f"/d/{REFERENCE_ID}/fragment")
    assert fragment.status_code == 200
    assert "<html" not in fragment.text and 'id="cell-risk-auditor-1"' in fragment.text
    assert fragment.headers["cache-control"] == "no-store"
    rows = client.get("/fragment/list")
    assert "<html" not in rows.text and REFERENCE_ID in rows.text


@pytest.mark.parametrize(
    "path",
    [
        "/d/council_00000000",
        "/d/not-an-id",
        "/d/council_lwVpZDlF/../../etc/passwd",
        "/d/..%2F..%2Fetc%2Fpasswd",
        "/d/..%2F..",
        "/d/%2e%2e%2f%2e%2e%2fknowledge",
        "/d/council_lwVpZDlF%2F..%2F..%2Fknowledge",
        "/d/council_lwVpZDlF%00",
        "/events/council_00000000",
        "/events/..%2F..",
        "/knowledge/..%2Fcouncil%2Findex.json",
        "/knowledge/%2e%2e%2fcouncil%2findex.json",
        "/knowledge/%2e%2e",
        "/knowledge/missing.md",
        "/static/..%2Fdebate.html.j2",
        "/static/dashboard.css%2F..%2F..%2Fbase.html.j2",
        "/nothing/here",
    ],
)
def test_unknown_and_traversing_paths_are_404(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert "root:" not in response.text and "{%" not in response.text


def test_no_route_follows_a_link_out_of_the_root(reference_root: Root, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = "TOP-SECRET-OUTSIDE-THE-ROOT"
    (outside / "debate.md").write_text(
        f"---\nid: council_Outside1\ntopic: {secret}\nstatus: created\nrounds_planned: 1\n---\n"
    )
    (outside / "decision-leak.md").write_text(secret)
    (reference_root.council / "council_Outside1").symlink_to(outside)
    (reference_root.knowledge / "decision-leak.md").symlink_to(outside / "decision-leak.md")
    with TestClient(create_app(reference_root)) as client:
        for path in (
            "/d/council_Outside1",
            "/d/council_Outside1/fragment",
            "/knowledge/decision-leak.md",
        ):
            response = client.get(path)
            assert response.status_code == 404, path
            assert secret not in response.text


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
@pytest.mark.parametrize("path", ["/", f"/d/{REFERENCE_ID}", "/events", "/nowhere"])
def test_the_server_is_read_only(client: TestClient, method: str, path: str) -> None:
    response = client.request(method, path)
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"


def test_head_works_like_get(client: TestClient) -> None:
    assert client.head(f"/d/{REFERENCE_ID}").status_code == 200


def test_pages_carry_a_strict_content_security_policy(client: TestClient) -> None:
    response = client.get(f"/d/{REFERENCE_ID}")
    policy = response.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    scripts = re.findall(r"<script[^>]*>", response.text)
    assert scripts == ['<script src="/static/dashboard.js" defer>']
    assert not re.search(r"<[a-z][^>]*\son\w+=", response.text)
    assert not re.search(r"\sstyle=", response.text)


def test_static_files_are_served_from_a_fixed_list(client: TestClient) -> None:
    assert client.get("/static/dashboard.css").headers["content-type"].startswith("text/css")
    js = client.get("/static/dashboard.js")
    assert js.headers["content-type"].startswith("text/javascript")
    assert "EventSource" in js.text
    # No polling: one timer counts a call's elapsed seconds up on the page, and only
    # while a call is shown; the other a run's time on the list, only while one is listed.
    # Neither fetches anything.
    assert re.findall(r"setInterval\((\w+)", js.text) == ["countRuns", "tick"]
    for timer in ("tick", "countRuns"):
        body = js.text.split(f"function {timer}()")[1].split("\n  }\n")[0]
        assert "fetch" not in body and "refresh" not in body
    assert client.get("/static/base.html.j2").status_code == 404


def test_only_local_host_names_when_asked(reference_root: Root) -> None:
    app = create_app(reference_root, allowed_hosts=["127.0.0.1", "localhost"])
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        assert client.get("/").status_code == 200
        assert client.get("/", headers={"host": "rebound.example"}).status_code == 400


def test_a_broken_debate_file_is_an_error_page_not_a_crash(
    client: TestClient, reference_root: Root
) -> None:
    (reference_root.debate(REFERENCE_ID).verdicts).write_text("{not json")
    response = client.get(f"/d/{REFERENCE_ID}")
    assert response.status_code == 500
    assert "verdicts.json is not valid JSON" in response.text
    assert client.get("/").status_code == 200


def _tool_note(reference_root: Root, persona: str, key: str, number: int, outcome: str) -> str:
    """A tool call recorded as the engine records it; returns the note's slug."""
    from dreamcontext_council.actions.submissions import add_research
    from dreamcontext_council.rules import tool_note

    arguments = {"key": key}
    result = tool_note.cut("Postgres 16 handles 40k small writes/s.", tool_note.RESULT_LIMIT)
    body = tool_note.body(
        tool="lookup",
        server="facts",
        round=number,
        outcome=outcome,
        arguments=arguments,
        result=result,
        limit=tool_note.RESULT_LIMIT,
        called_at="2026-12-01T10:04:12+00:00",
        latency_s=0.12,
    )
    topic = tool_note.topic("lookup", arguments, outcome)
    return add_research(reference_root, REFERENCE_ID, persona, topic, body, unique=True).slug


def test_tool_calls_show_in_their_round_of_the_matrix_and_link_to_their_notes(
    client: TestClient, reference_root: Root
) -> None:
    _tool_note(reference_root, "risk-auditor", "pg failover", 2, "ok")
    _tool_note(reference_root, "risk-auditor", "pg replicas", 2, "timeout")
    page = client.get(f"/d/{REFERENCE_ID}").text
    cell = page.split('id="cell-risk-auditor-2"')[1].split("</td>")[0]
    calls = re.findall(
        r'<li class="tool-call outcome-(\w+)"><a href="#(research-risk-auditor-\d+)">([^<]*)</a>',
        cell,
    )
    assert [(outcome, topic) for outcome, _, topic in calls] == [
        ("ok", "lookup: pg failover"),
        ("timeout", "lookup: pg replicas (timeout)"),
    ]
    for _, anchor, _ in calls:
        assert f'id="{anchor}"' in page  # the note itself, with the persona's transcript
    first = page.split('id="cell-risk-auditor-1"')[1].split("</td>")[0]
    assert "tool-call" not in first  # a hand-written note is not a tool call of round 1
    # The live fragment carries them too.
    assert "lookup: pg failover" in client.get(f"/d/{REFERENCE_ID}/fragment").text


def test_the_ledger_shows_the_notes_the_engine_found_behind_a_claim(
    client: TestClient, reference_root: Root
) -> None:
    folder = reference_root.debate(REFERENCE_ID).folder
    claim = {
        "id": "C1",
        "claim": "Postgres takes the write load",
        "proposer": "risk-auditor",
        "round": 1,
        "supporters": [],
        "challengers": [],
        "label": "VERIFIED",
        "research": True,
        "notes": ["risk-auditor/postgres-write-throughput"],
    }
    (folder / "claims.json").write_text(json.dumps({"claims": [claim], "dropped": [], "flags": []}))
    ledger = client.get(f"/d/{REFERENCE_ID}").text.split('id="claims"')[1].split('id="personas"')[0]
    assert '<span class="tag">risk-auditor/postgres-write-throughput</span>' in ledger
