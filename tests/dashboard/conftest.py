"""Fixtures for the dashboard: a private copy of the reference debate, the CLI as a real
process, the app served by uvicorn on a free port, and Debian's chromium through playwright."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from council_run import Council as InProcess
from debate_story import REFERENCE, subprocess_runner, writable_copy
from debate_story import REFERENCE_ID as REFERENCE_ID
from debate_story import REPO as REPO
from debate_story import Runner as Council
from offline import clean_environment

from dreamcontext_council.dashboard.server import bind, build_server
from dreamcontext_council.dashboard.write_path import WriteAccess
from dreamcontext_council.folder.paths import Root

# Debian's chromium, or the one CHROMIUM names (the README says how to get either).
CHROMIUM = Path(os.environ.get("CHROMIUM") or "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]


@pytest.fixture
def reference_root(tmp_path: Path) -> Root:
    """The Node tool's reference debate, copied so tests may change it."""
    copy = writable_copy(REFERENCE, tmp_path / "reference")
    return Root(copy / "_dream_context")


@pytest.fixture
def council(tmp_path: Path) -> Callable[[Root], Council]:
    """`python -m dreamcontext_council council ...` as a real process, against a root."""

    def for_root(root: Root) -> Council:
        return subprocess_runner(tmp_path, root.path)

    return for_root


def ok(run: Council, *args: str, input: str | None = None) -> str:
    done = run(*args, input=input)
    assert done.code == 0, f"council {' '.join(args)} failed: {done.err}"
    return done.out


def give_verdict(
    run: Council,
    debate_id: str,
    slug: str,
    stance: str,
    conviction: int,
    headline: str,
    *more: str,
) -> str:
    """`council verdict` for round 1, with any further options in `more`."""
    return ok(
        run,
        "verdict",
        debate_id,
        slug,
        "1",
        "--stance",
        stance,
        "--conviction",
        str(conviction),
        "--headline",
        headline,
        *more,
    )


def append_report(run: Council, debate_id: str, slug: str, text: str) -> str:
    """`council report append` for round 1, the entry on stdin."""
    return ok(run, "report", "append", debate_id, slug, "--round", "1", input=text)


ENTRY = """### Executive Summary
{summary}

### Position
{position}

### Reasoning
{reasoning}

### Reactions to peers
None yet.

### Open questions
None.
"""


def entry(summary: str, position: str = "Option A.", reasoning: str = "Because.") -> str:
    return ENTRY.format(summary=summary, position=position, reasoning=reasoning)


def new_running_debate(run: Council, topic: str, personas: tuple[str, ...], body: str = "") -> str:
    """A debate with options A/B, the given personas and round 1 running, made by the CLI."""
    out = ok(run, "new", topic, "--rounds", "2", "--options", "A=Migrate now,B=Stay on Redis")
    debate_id = out.rstrip("\n").split("\n")[-1]
    for slug in personas:
        text = body or f"You are {slug}."
        ok(run, "agent", "create", debate_id, slug, "--model", "sonnet", "--body", text)
    ok(run, "round", "start", debate_id, "1")
    return debate_id


@contextmanager
def served(root: Root, write: WriteAccess | None = None) -> Iterator[tuple[str, Any]]:
    """The dashboard on 127.0.0.1 and a free port, run by uvicorn in a background thread;
    with `write`, its write path on (the page's address then needs `write.address`)."""
    sock = bind("127.0.0.1", 0)
    server = build_server(root, "127.0.0.1", sock, write)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the dashboard did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", server
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        assert not thread.is_alive(), "the dashboard did not shut down"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium, headless, driven by playwright (never a downloaded browser).

    Module-scoped: playwright's sync API runs an event loop on this thread while it is
    open, and tests elsewhere call asyncio.run()."""
    if not CHROMIUM.exists():
        pytest.skip(
            f"no chromium at {CHROMIUM}: apt-get install chromium, or set CHROMIUM=/path/to/it"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser page; script errors and console errors (CSP reports) are kept on
    `page.errors`."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.errors = []
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    tab.on(
        "console",
        lambda message: tab.errors.append(message.text) if message.type == "error" else None,
    )
    try:
        yield tab
    finally:
        context.close()


# -- an eval, made by the real `council eval` on the scripted provider ----------------------

# The scripted council backs the first option of every question: right on ship, wrong on hire.
EVAL_SET = [
    {"id": "ship", "question": "Ship it?", "options": {"A": "Ship", "B": "Wait"}, "answer": "A"},
    {"id": "hire", "question": "Hire?", "options": {"A": "Hire", "B": "Freeze"}, "answer": "B"},
]


@pytest.fixture(scope="module")
def built_eval(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace holding one finished eval of EVAL_SET (made once per module: copy it)."""
    workdir = tmp_path_factory.mktemp("eval-workspace")
    home = workdir / "home"
    home.mkdir()
    path = workdir / "adopt.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in EVAL_SET), encoding="utf-8")
    run = InProcess(workdir / "_dream_context", workdir, clean_environment(os.environ, home))
    # A real process: the browser tests' playwright holds this thread's event loop.
    done = run.proc("eval", str(path))
    assert done.code == 0, done.err
    return workdir / "_dream_context"


@pytest.fixture
def eval_root(built_eval: Path, tmp_path: Path) -> Root:
    """A private copy of the finished eval's workspace, which a test may change."""
    copy = tmp_path / "_dream_context"
    shutil.copytree(built_eval, copy, symlinks=True)
    return Root(copy)


def the_eval(root: Root) -> Path:
    """The one eval folder of a root."""
    [folder] = list((root.path / "evals").iterdir())
    return folder


def results_of(root: Root) -> dict[str, Any]:
    """The one eval's results.json, parsed."""
    data: dict[str, Any] = json.loads((the_eval(root) / "results.json").read_text("utf-8"))
    return data


def end_runs(root: Root) -> None:
    """Kill every `council run` still driving a debate under `root` (a test that failed
    while its run waited on a person would leave it waiting)."""
    import signal

    from dreamcontext_council.folder.run_record import read_run_record, still_running

    council = root.council
    for folder in council.iterdir() if council.is_dir() else []:
        record = read_run_record(folder)
        if record is not None and record.stopped_reason is None and still_running(record):
            with contextlib.suppress(OSError):
                os.kill(record.pid, signal.SIGKILL)
