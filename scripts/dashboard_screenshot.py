"""Take docs/dashboard.png: the reference debate's page in Debian's chromium.

Usage: python scripts/dashboard_screenshot.py [FIXTURE_DIR] [OUTPUT]
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from dreamcontext_council.dashboard.server import bind, build_server
from dreamcontext_council.folder.paths import Root

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "reference-debate"
DEBATE = "council_lwVpZDlF"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]


@contextmanager
def dashboard_page(root: Root, path: str) -> Iterator[Any]:
    """A chromium page at 1280×900 on `path` of the dashboard serving `root`, once its live
    updates are on; the browser and the server stop after it."""
    sock = bind("127.0.0.1", 0)
    server = build_server(root, "127.0.0.1", sock)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=os.environ.get("CHROMIUM") or "/usr/bin/chromium",
                args=CHROMIUM_ARGS,
            )
            page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme="light")
            page.goto(f"http://127.0.0.1:{sock.getsockname()[1]}{path}")
            page.wait_for_selector('#live[data-state="on"]')
            yield page
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def main() -> None:
    fixture = Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURE
    output = Path(sys.argv[2]) if len(sys.argv) > 2 else REPO / "docs" / "dashboard.png"
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "debate"
        shutil.copytree(fixture, copy)
        for path in copy.rglob("*"):
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        root = Root(copy / "_dream_context")
        with dashboard_page(root, f"/d/{DEBATE}") as page:
            # Open one entry so the picture shows what a matrix cell expands to.
            page.click("#cell-user-advocate-2 summary")
            # From the top of the page to the end of the final report's Verdict card.
            bottom = page.eval_on_selector(
                "#report-verdict", "el => el.getBoundingClientRect().bottom + window.scrollY"
            )
            page.evaluate("() => window.scrollTo(0, 0)")
            height = int(bottom) + 10
            page.screenshot(
                path=str(output),
                full_page=True,
                clip={"x": 0, "y": 0, "width": 1280, "height": height},
            )
    print(f"Wrote {output}")


if __name__ == "__main__":
    main()
