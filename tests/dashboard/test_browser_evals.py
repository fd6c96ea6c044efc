"""An eval's debates in the dashboard's list: left out unless the filter asks for them,
reachable from the eval's page, which says the scripted stand-in gave the answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dreamcontext_council.folder.paths import Root

from .conftest import served, the_eval

pytestmark = pytest.mark.browser


def test_the_list_leaves_eval_debates_out_unless_asked(eval_root: Root, page: Any) -> None:
    debates = json.loads((the_eval(eval_root) / "debates.json").read_text("utf-8"))
    with served(eval_root) as (url, _):
        page.goto(url + "/")
        assert page.locator(".debate-row").count() == 0
        assert page.inner_text("#show-evals") == "2 eval debates left out"
        page.check("#evals-filter")
        page.wait_for_selector(".debate-row")
        assert page.evaluate("location.search") == "?evals=1"
        assert page.locator(".debate-row").count() == 2
        page.wait_for_selector('#live[data-state="on"]')
        assert page.locator("#show-evals").count() == 0
        # The eval's page says where its answers came from and leads to each debate.
        page.goto(f"{url}/e/{the_eval(eval_root).name}")
        assert "scripted stand-in, not a model" in page.inner_text("#stand-in-note")
        page.click(f"#question-hire a[href='/d/{debates['hire']}']")
        page.wait_for_url(f"{url}/d/{debates['hire']}")
        assert page.errors == []
