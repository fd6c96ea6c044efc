"""Take docs/dashboard-ask-{1280,375}.png and docs/dashboard-seat-{1280,375}.png: the list
page's ask form, and a person's seat on the debate page, in Debian's chromium.

The question is asked from the page; `council run` then runs on the scripted provider (no
key reaches it) and waits for alice's seat.

Usage: python scripts/dashboard_write_screenshots.py [OUTPUT_DIR]
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from dreamcontext_council.dashboard.server import bind, build_server
from dreamcontext_council.dashboard.write_path import WriteAccess
from dreamcontext_council.folder.paths import Root

REPO = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
]
WIDTHS = {1280: 900, 375: 812}
TOPIC = "Should we migrate the session store to Postgres?"


def offline_env(home: Path) -> dict[str, str]:
    """This environment without provider keys, servers or council settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "DREAMCONTEXT_"))
        and not k.lower().endswith("_proxy")
    }
    return env | {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


def main(output: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "home").mkdir()
        root = Root(work / "project" / "_dream_context")
        root.path.mkdir(parents=True)
        access = WriteAccess(env=offline_env(work / "home"))
        sock = bind("127.0.0.1", 0)
        server = build_server(root, "127.0.0.1", sock, access)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.02)
        address = access.address(f"http://127.0.0.1:{sock.getsockname()[1]}/")
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
                )
                pages = {
                    width: browser.new_page(
                        viewport={"width": width, "height": height}, color_scheme="light"
                    )
                    for width, height in WIDTHS.items()
                }
                for width, page in pages.items():
                    page.goto(address)
                    page.fill("#ask-topic", TOPIC)
                    page.fill("#ask-options", "A=Migrate now\nB=Stay on Redis")
                    page.fill("#ask-human", "alice")
                    page.screenshot(path=str(output / f"dashboard-ask-{width}.png"))
                page = pages[1280]
                page.click("#ask-submit")
                page.wait_for_url("**/d/council_*", timeout=120_000)
                page.wait_for_selector("#seat-alice form", timeout=120_000)
                for width, each in pages.items():
                    if each is not page:
                        each.goto(page.url)
                    each.wait_for_selector("#seat-alice form", timeout=120_000)
                    each.fill("#alice-headline", "Migrate, with a rollback plan")
                    each.fill("#alice-executive_summary", "Migrate now; keep Redis warm a week.")
                    each.locator("#seat-alice").screenshot(
                        path=str(output / f"dashboard-seat-{width}.png")
                    )
                browser.close()
        finally:
            server.should_exit = True
            thread.join(timeout=10)
            sock.close()
            # The run waits on alice: stopped as Ctrl-C would (it is in its own session).
            from dreamcontext_council.dashboard.run_process import stop_run

            for debate in root.council.iterdir() if root.council.is_dir() else []:
                if debate.is_dir():
                    stop_run(root, debate.name)
            time.sleep(1)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs")
