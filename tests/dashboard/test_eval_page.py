"""The eval's page and the list of evals: figures equal results.json, each question links to
its debate, a running eval says what its figures cover, and a hostile eval folder (a link
out, a FIFO, markup and control characters, a malformed file) is refused or escaped."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from dreamcontext_council.dashboard import create_app
from dreamcontext_council.dashboard.changes import EVALS_LIST, change_key, eval_topic
from dreamcontext_council.dashboard.events import ChangeFeed
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.views.eval_results import accuracy_cost_svg

from .conftest import results_of, the_eval
from .test_events import _collect, run_story
from .test_watches import refuse_watches


@contextlib.asynccontextmanager
async def started_feed(root: Root, debounce: float) -> AsyncIterator[ChangeFeed]:
    """A change feed of `root` on the running loop, stopped at the end."""
    feed = ChangeFeed(root, debounce=debounce)
    feed.start(asyncio.get_running_loop())
    try:
        yield feed
    finally:
        feed.stop()


@pytest.fixture
def client(eval_root: Root) -> Iterator[TestClient]:
    with TestClient(create_app(eval_root)) as test_client:
        yield test_client


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def method_cells(text: str, method: str) -> list[str]:
    row = flat(text).split(f'id="method-{method}">')[1].split("</tr>")[0]
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in row.split("</td>")[:-1]]


def question_row(text: str, qid: str) -> str:
    return flat(text).split(f'id="question-{qid}"')[1].split("</tr>")[0]


def test_the_method_table_equals_results_json(eval_root: Root, client: TestClient) -> None:
    results = results_of(eval_root)
    page = client.get(f"/e/{results['id']}")
    assert page.status_code == 200
    text = page.text
    assert f'<h1 class="topic" id="eval-id">{results["id"]}</h1>' in text
    assert 'id="eval-size">2<' in text and 'id="eval-done">2<small> / 2</small>' in text
    assert 'id="eval-answer-type">option<' in text
    assert '<dt>Personas</dt><dd class="mono">cognitive</dd>' in text
    assert 'id="figures-note"' not in text  # the figures cover every question
    assert set(results["methods"]) == {"council", "solo", "vote", "weighted"}
    for method, s in results["methods"].items():
        low, high = s["interval_95"]
        assert method_cells(text, method)[1:] == [
            f"{s['right']}/{s['questions']}",
            f"{s['accuracy']:.0%}",
            f"{low:.0%}–{high:.0%}",
            str(s["calls"]),
            f"{s['tokens']:,}",
            f"${s['cost_usd']:.4f}",
            f"{s['tokens'] / s['questions']:,.0f}",
            f"${s['cost_usd'] / s['questions']:.4f}",
            "—",  # the scripted stand-in costs nothing: no right answers per dollar
            f"{s['wall_s']:.1f}s",
        ]
    assert method_cells(text, "council")[:2] == ["Full council", "1/2"]


def test_each_question_is_marked_and_links_to_its_debate(
    eval_root: Root, client: TestClient
) -> None:
    results = results_of(eval_root)
    debates = json.loads((the_eval(eval_root) / "debates.json").read_text("utf-8"))
    text = client.get(f"/e/{results['id']}").text
    for row in results["rows"]:
        shown = question_row(text, row["id"])
        assert f'href="/d/{debates[row["id"]]}"' in shown
        for method, right in row["right"].items():
            mark = "right" if right else "wrong"
            answer = row["answers"][method]
            assert f'class="answer {mark}" data-method="{method}">' in shown
            assert f"{'✓' if right else '✗'}</span> {answer}</td>" in shown
    assert "Ship it?" in question_row(text, "ship")
    assert 'class="answer right" data-method="council"' in question_row(text, "ship")
    assert 'class="answer wrong" data-method="council"' in question_row(text, "hire")
    # The link leads to the debate's own page.
    assert client.get(f"/d/{debates['ship']}").status_code == 200


def test_the_plot_is_drawn_from_the_figures_not_from_the_file(
    eval_root: Root, client: TestClient
) -> None:
    folder = the_eval(eval_root)
    (folder / "accuracy-cost.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg"><script>window.__xss=1</script></svg>',
        encoding="utf-8",
    )
    text = client.get(f"/e/{folder.name}").text
    drawn = accuracy_cost_svg(results_of(eval_root)["methods"])
    assert drawn in text
    assert "window.__xss" not in text


def test_the_list_shows_the_eval(eval_root: Root, client: TestClient) -> None:
    eval_id = the_eval(eval_root).name
    home = client.get("/").text
    assert '<a class="evals-link" id="evals-link" href="/e/">Evals (1)</a>' in home
    listing = flat(client.get("/e/").text)
    row = listing.split('class="eval-row">')[1].split("</tr>")[0]
    assert f'href="/e/{eval_id}">{eval_id}</a>' in row
    assert '<td class="num">2 / 2</td>' in row
    assert row.count('<td class="num">50% (1/2)</td>') == 2  # council, then solo


def test_a_root_without_evals_has_no_link(reference_root: Root) -> None:
    with TestClient(create_app(reference_root)) as client:
        assert 'id="evals-link"' not in client.get("/").text
        assert "No evals yet." in client.get("/e/").text


def test_a_running_eval_shows_what_is_done_and_what_the_figures_cover(
    eval_root: Root, client: TestClient
) -> None:
    folder = the_eval(eval_root)
    (folder / "answers" / "hire.solo.md").unlink()  # hire's solo answer is not saved yet
    text = client.get(f"/e/{folder.name}").text
    assert 'id="eval-done">1<small> / 2</small>' in text
    note = flat(text).split('id="figures-note">')[1].split("</p>")[0]
    assert note.startswith("The figures are from the last results.json (written ")
    assert note.endswith("2 questions); 1 of 2 questions are done now.")
    assert 'data-state="running"' in question_row(text, "hire")
    assert ">running<" in question_row(text, "hire")
    assert 'class="answer right" data-method="council"' in question_row(text, "ship")
    (folder / "results.json").unlink()
    text = client.get(f"/e/{folder.name}").text
    assert "No results.json yet: the figures are written when the eval ends" in text
    assert 'class="method-row"' not in text and 'id="plot"' not in text
    assert "—" in client.get("/e/").text  # no accuracy on the list either


# -- a hostile eval folder ------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/e/.hidden", "/e/a%20b", "/e/%2e%2e", "/e/eval%00x", "/e/no-such-eval", "/events/e/.x"],
)
def test_an_eval_id_that_is_not_a_plain_name_is_a_404(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 404


def test_an_eval_folder_linked_out_of_evals_is_a_404(eval_root: Root, tmp_path: Path) -> None:
    outside = tmp_path / "outside-eval"
    the_eval(eval_root).rename(outside)
    (eval_root.path / "evals" / "eval-linked").symlink_to(outside)
    with TestClient(create_app(eval_root)) as client:
        assert client.get("/e/eval-linked").status_code == 404
        assert 'id="evals-link"' not in client.get("/").text


def test_results_json_linked_out_of_the_root_is_not_read(
    eval_root: Root, client: TestClient, tmp_path: Path
) -> None:
    folder = the_eval(eval_root)
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"methods": {}, "token": "sk-SECRET-VALUE"}), encoding="utf-8")
    (folder / "results.json").unlink()
    (folder / "results.json").symlink_to(secret)
    page = client.get(f"/e/{folder.name}")
    assert page.status_code == 200
    assert "sk-SECRET-VALUE" not in page.text
    assert "results.json is a link out of" in page.text
    assert 'class="method-row"' not in page.text
    assert 'id="question-ship"' in page.text  # the rest of the page still shows


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("name", ["results.json", "set.jsonl", "debates.json"])
def test_a_fifo_in_the_eval_folder_is_refused_without_blocking(
    eval_root: Root, client: TestClient, name: str
) -> None:
    folder = the_eval(eval_root)
    (folder / name).unlink()
    os.mkfifo(folder / name)
    page = client.get(f"/e/{folder.name}")  # a reader that opened it would wait for a writer
    assert page.status_code == 200
    assert f"{name} is not a regular file" in page.text
    assert client.get("/e/").status_code == 200


def test_markup_and_control_characters_in_the_set_stay_text(
    eval_root: Root, client: TestClient
) -> None:
    folder = the_eval(eval_root)
    lines = [json.loads(line) for line in (folder / "set.jsonl").read_text("utf-8").splitlines()]
    lines[0]["question"] = "Ship <script>window.__xss=1</script>\x1b[31m it\u202e?\nnext line"
    lines[1]["question"] = "<img src=x onerror=window.__xss=1>"
    (folder / "set.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    text = client.get(f"/e/{folder.name}").text
    assert "<script>window" not in text and "<img src=x" not in text
    assert "Ship &lt;script&gt;window.__xss=1&lt;/script&gt;[31m it? next line" in text
    assert "&lt;img src=x onerror=window.__xss=1&gt;" in question_row(text, "hire")
    assert "\x1b" not in text and "\u202e" not in text


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        ("results.json", "{not json", "results.json is not JSON; run the same"),
        (
            "results.json",
            json.dumps({"questions": 2, "methods": {"council": {"accuracy": "all"}}}),
            "results.json has no 95% interval for council; run the same",
        ),
        (
            "results.json",
            json.dumps(
                {
                    "questions": 2,
                    "methods": {
                        "council": {
                            "right": 1,
                            "questions": 2,
                            "accuracy": 7,
                            "interval_95": [0, 1],
                            "calls": 1,
                            "tokens": 1,
                            "cost_usd": 0,
                            "wall_s": 0,
                        }
                    },
                }
            ),
            "results.json has 7 for council accuracy, out of range",
        ),
        ("set.jsonl", '{"id": "ship", "question": "?", "answer": "A"}\nnot json\n', "line 2"),
        ("eval.json", "[1, 2", "eval.json is not valid JSON"),
    ],
)
def test_a_malformed_file_is_named_on_the_page(
    eval_root: Root, client: TestClient, name: str, content: str, said: str
) -> None:
    folder = the_eval(eval_root)
    (folder / name).write_text(content, encoding="utf-8")
    page = client.get(f"/e/{folder.name}")
    assert page.status_code == 200
    problems = [
        flat(p).strip()
        for p in re.findall(r'<p class="card warn eval-problem">(.*?)</p>', page.text, re.S)
    ]
    assert any(said in p and name in p for p in problems), problems
    listing = client.get("/e/")
    assert listing.status_code == 200 and said.split(";")[0] in listing.text


def test_a_debate_id_that_is_not_one_gets_no_link(eval_root: Root, client: TestClient) -> None:
    folder = the_eval(eval_root)
    debates = json.loads((folder / "debates.json").read_text("utf-8"))
    debates["hire"] = "../../../etc"
    (folder / "debates.json").write_text(json.dumps(debates), encoding="utf-8")
    text = client.get(f"/e/{folder.name}").text
    assert "../../../etc" not in question_row(text, "hire").split("</td>")[-2]
    assert "hire: debates.json names &#39;../../../etc&#39; for this question" in text
    assert 'data-state="waiting"' in question_row(text, "hire")


# -- live updates ---------------------------------------------------------------------------


def test_a_file_of_an_eval_is_the_eval_key() -> None:
    root = Path("/x/_dream_context")
    assert eval_topic("eval-a-1") == "eval:eval-a-1"
    assert change_key(root, "/x/_dream_context/evals/eval-a-1/results.json") == "eval:eval-a-1"
    assert change_key(root, "/x/_dream_context/evals/eval-a-1/debates.json") == "eval:eval-a-1"
    assert change_key(root, "/x/_dream_context/evals/eval-a-1/.results.json.x.tmp") is None
    assert change_key(root, "/x/_dream_context/evals/eval-a-1/answers/q.timing.json") == (
        "eval:eval-a-1"
    )
    assert change_key(root, "/x/_dream_context/evals/eval-a-1/answers") == "eval:eval-a-1"
    assert change_key(root, "/x/_dream_context/evals/eval-a-1/other/q.md") is None
    assert change_key(root, "/x/_dream_context/evals/eval-b-2") == EVALS_LIST  # a new eval
    assert change_key(root, "/x/_dream_context/evals/eval-a-1/answers/.q.md.1-ab.tmp") is None


def test_a_write_to_results_json_wakes_the_eval_page_only(eval_root: Root) -> None:
    folder = the_eval(eval_root)
    results = (folder / "results.json").read_text("utf-8")
    topic = eval_topic(folder.name)

    async def story() -> None:
        async with started_feed(eval_root, 0.1) as feed:
            with feed.subscribe(topic) as mine, feed.subscribe(eval_topic("eval-other")) as other:
                await asyncio.sleep(0.2)
                (folder / "answers" / "ship.timing.json").write_text("{}\n")  # ship is done
                assert await asyncio.wait_for(mine.get(), timeout=5) == [topic]
                (folder / "results.json").write_text(results)
                assert await asyncio.wait_for(mine.get(), timeout=5) == [topic]
                (folder / "debates.json").write_text("{}")
                assert await asyncio.wait_for(mine.get(), timeout=5) == [topic]
                assert await _collect(other, 0.2) == []

    run_story(story)


def test_the_eval_event_stream_answers_over_http(eval_root: Root, client: TestClient) -> None:
    with client.stream("GET", f"/events/e/{the_eval(eval_root).name}") as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        assert next(stream.iter_lines()).startswith("retry:")


@pytest.mark.parametrize("name", ["results.json", "set.jsonl"])
def test_a_file_that_cannot_be_opened_is_named_not_a_500(
    eval_root: Root, client: TestClient, name: str
) -> None:
    folder = the_eval(eval_root)
    (folder / name).unlink()
    (folder / name).symlink_to(name)  # a link to itself: opening it fails with ELOOP
    page = client.get(f"/e/{folder.name}")
    assert page.status_code == 200
    assert f"{name} cannot be read (" in page.text
    assert client.get("/e/").status_code == 200


def test_past_the_watch_limit_an_open_eval_is_polled(
    eval_root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    refuse_watches(monkeypatch)
    folder = the_eval(eval_root)
    topic = eval_topic(folder.name)

    async def story() -> None:
        async with started_feed(eval_root, 0.05) as feed:
            with feed.subscribe(topic) as mine:
                await asyncio.sleep(0.1)
                (folder / "results.json").write_text("{}\n")
                assert await asyncio.wait_for(mine.get(), timeout=5) == [topic]
                assert await _collect(mine, 1.2) == []  # nothing changed since

    run_story(story)


def test_a_question_is_done_when_its_debate_says_so_not_when_the_index_catches_up(
    eval_root: Root, client: TestClient
) -> None:
    """An eval brings the root's index up to date once, when it ends: until then the page
    reads each debate's own debate.md."""
    folder = the_eval(eval_root)
    debates = json.loads((folder / "debates.json").read_text("utf-8"))
    index = json.loads(eval_root.index.read_text("utf-8"))
    for entry in index:
        entry["status"] = "round_1_running"  # the index as it stood before the eval ended
    eval_root.index.write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    text = client.get(f"/e/{folder.name}/fragment").text
    assert 'id="eval-done">2<small> / 2</small>' in text
    assert 'data-state="done"' in question_row(text, "hire")
    assert '<td class="num">2 / 2</td>' in flat(client.get("/e/").text)

    debate_md = eval_root.council / debates["hire"] / "debate.md"
    debate_md.write_text(
        debate_md.read_text("utf-8").replace("status: complete", "status: synthesizing", 1),
        encoding="utf-8",
    )
    text = client.get(f"/e/{folder.name}/fragment").text
    assert 'id="eval-done">1<small> / 2</small>' in text
    assert 'data-state="running"' in question_row(text, "hire")
    assert '<td class="num">1 / 2</td>' in flat(client.get("/e/").text)


def test_an_answers_folder_made_after_the_page_opened_is_watched(eval_root: Root) -> None:
    """A new eval has no answers/ yet when its page opens: the folder is watched once it
    appears, so the first question that ends still wakes the page."""
    folder = the_eval(eval_root)
    answers = folder / "answers"
    kept = folder.parent / "answers-kept"
    answers.rename(kept)
    topic = eval_topic(folder.name)

    async def story() -> None:
        async with started_feed(eval_root, 0.05) as feed:
            with feed.subscribe(topic) as mine:
                await asyncio.sleep(0.1)
                answers.mkdir()
                assert await asyncio.wait_for(mine.get(), timeout=5) == [topic]
                await asyncio.sleep(0.3)  # the new folder's watch is set up meanwhile
                (answers / "ship.timing.json").write_text("{}\n")
                assert await asyncio.wait_for(mine.get(), timeout=5) == [topic]

    run_story(story)


def test_the_evals_list_is_live_for_every_eval_and_for_an_eval_made_after_it_opened(
    eval_root: Root,
) -> None:
    folder = the_eval(eval_root)
    results = (folder / "results.json").read_text("utf-8")

    async def story() -> None:
        async with started_feed(eval_root, 0.05) as feed:
            with feed.subscribe(EVALS_LIST) as listing, feed.subscribe("council_Nothing1") as other:
                await asyncio.sleep(0.1)
                (folder / "answers" / "ship.timing.json").write_text("{}\n")  # a question ends
                assert await asyncio.wait_for(listing.get(), timeout=5) == [eval_topic(folder.name)]
                (folder / "results.json").write_text(results)  # the eval ends
                assert await asyncio.wait_for(listing.get(), timeout=5) == [eval_topic(folder.name)]
                later = folder.parent / "eval-later-1"
                later.mkdir()  # an eval started after the list was opened
                assert await asyncio.wait_for(listing.get(), timeout=5) == [EVALS_LIST]
                await asyncio.sleep(0.3)  # its folder's watch is set up meanwhile
                (later / "debates.json").write_text("{}\n")
                assert await asyncio.wait_for(listing.get(), timeout=5) == [
                    eval_topic("eval-later-1")
                ]
                assert await _collect(other, 0.2) == []  # no debate heard any of it

    run_story(story)


def test_the_evals_list_fragment_and_stream_answer(eval_root: Root, client: TestClient) -> None:
    page = client.get("/e/").text
    assert 'data-events="/events/evals" data-fragment="/fragment/evals"' in page
    fragment = client.get("/fragment/evals")
    assert fragment.headers["cache-control"] == "no-store"
    assert '<td class="num">2 / 2</td>' in flat(fragment.text)
    assert "<html" not in fragment.text
    with client.stream("GET", "/events/evals") as stream:
        assert stream.status_code == 200
        assert next(stream.iter_lines()).startswith("retry:")


def watched_inodes() -> set[int]:
    """The inodes this process holds an inotify watch on (/proc/self/fdinfo)."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}") as info:
                found |= {
                    int(line.split(" ino:")[1].split()[0], 16)
                    for line in info
                    if line.startswith("inotify wd:")
                }
        except OSError:
            continue  # closed meanwhile
    return found


def test_links_in_a_cloned_evals_folder_are_never_watched(eval_root: Root, tmp_path: Path) -> None:
    """An eval's answers/, or a whole eval, that is a link out of the root: no watch is put
    where it leads, and writes there wake neither the eval page nor the evals list."""
    folder = the_eval(eval_root)
    outside = tmp_path / "outside"
    (outside / "answers").mkdir(parents=True)
    (folder / "answers").rename(tmp_path / "answers-kept")
    (folder / "answers").symlink_to(outside / "answers")
    (folder.parent / "eval-linked-1").symlink_to(outside)

    async def story() -> None:
        async with started_feed(eval_root, 0.05) as feed:
            with (
                feed.subscribe(eval_topic(folder.name)) as page,
                feed.subscribe(EVALS_LIST) as listing,
            ):
                await asyncio.sleep(0.2)
                held = watched_inodes()
                assert os.stat(folder / "debates.json").st_ino not in held  # sanity: folders
                assert os.stat(folder).st_ino in held
                assert os.stat(outside).st_ino not in held
                assert os.stat(outside / "answers").st_ino not in held
                (outside / "answers" / "ship.timing.json").write_text("{}\n")
                (outside / "debates.json").write_text("{}\n")
                assert await _collect(page, 0.5) == []
                assert await _collect(listing, 0.2) == []
                (folder / "debates.json").write_text("{}\n")  # the eval's own file still wakes
                assert await asyncio.wait_for(page.get(), timeout=5) == [eval_topic(folder.name)]

    run_story(story)
