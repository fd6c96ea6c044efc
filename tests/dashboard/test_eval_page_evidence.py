"""The eval page's comparisons, rounds, effective votes and seats: shown from results.json's
checked figures, each sentence written again from its numbers, and a hostile results.json
(a figure out of range, markup in a name, a sentence of its own) refused or escaped."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from dreamcontext_council.dashboard import create_app
from dreamcontext_council.folder.paths import Root

from .conftest import results_of, the_eval


@pytest.fixture
def client(eval_root: Root) -> Iterator[TestClient]:
    with TestClient(create_app(eval_root)) as test_client:
        yield test_client


def rewrite(root: Root, data: dict[str, Any]) -> None:
    (the_eval(root) / "results.json").write_text(json.dumps(data), encoding="utf-8")


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_page_shows_each_comparison_and_the_effective_votes(
    eval_root: Root, client: TestClient
) -> None:
    results = results_of(eval_root)
    text = flat(client.get(f"/e/{results['id']}").text)
    # The scripted council backs the first option, as every method does: no difference.
    for method in ("solo", "vote", "weighted"):
        c = results["comparisons"]["methods"][method]
        assert (c["difference"], c["interval_95"]) == (0.0, [0.0, 0.0])
        assert f'<li id="conclusion-{method}">{c["conclusion"]}</li>' in text
        row = text.split(f'id="comparison-{method}">')[1].split("</tr>")[0]
        cells = [re.sub(r"<[^>]+>", "", cell).strip() for cell in row.split("</td>")[:-1]]
        assert cells[1:6] == ["0", "[0, 0]", "0", "0", "1.000"]
        assert cells[6] == f"{c['cost_ratio']:.1f}× tokens"
    votes = results["votes"]
    assert f"worth <strong>{votes['effective']:.2f}</strong> independent votes" in text
    assert text.count('class="seat-row"') == len(results["seats"]) == 4
    assert 'id="flips-2"' in text


def test_a_hostile_results_file_is_refused_or_escaped(eval_root: Root, client: TestClient) -> None:
    data = results_of(eval_root)
    eval_id = data["id"]
    vote = data["comparisons"]["methods"]["vote"]
    vote["conclusion"] = "<b>the council won everything</b>"
    data["seats"][0]["persona"] = "<script>window.__x=1</script>\x1b[31m"
    rewrite(eval_root, data)
    text = client.get(f"/e/{eval_id}").text
    # The sentence is written again from the numbers; the name is escaped, its escape cut.
    assert "the council won everything" not in text
    assert "the council and the round-1 vote did not differ: 0 points [0, 0]" in text
    assert "<script>window.__x" not in text and "\x1b" not in text
    assert "&lt;script&gt;window.__x=1&lt;/script&gt;" in text

    vote["difference"] = 5
    rewrite(eval_root, data)
    text = client.get(f"/e/{eval_id}").text
    assert 'id="evidence-problem"' in text
    assert "results.json has 5 for vote difference, out of range" in text
    assert 'id="comparisons"' not in text
    # The method table still shows: only the section that failed its check is left off.
    assert 'id="method-council"' in text
