"""What the `council run` benchmarks share: the stub's answers, a roster, a stub in its own process.

The local stub server (tests/stub_server.py, 127.0.0.1 only) answers every persona
call as the scripted provider would and says CONTINUE to every convergence check, so
a debate runs every round it plans.

Run as a script, it serves in this process until its standard input closes, after
printing the port on its first line; `StubProcess` starts it so, which keeps the
stub's CPU out of the measured process:

    python bench/council_stub.py --latency 0.5
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import subprocess
import sys
from pathlib import Path
from types import TracebackType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from stub_server import StubServer, prompt_text  # noqa: E402

from dreamcontext_council.engine.providers.scripted import (  # noqa: E402
    scripted_text,
    task_from_text,
)

# socketserver listens with a backlog of 5: the sixth connection opened at the same
# moment waits for a SYN retry (a whole second), which is the stub's cost, not ours.
http.server.ThreadingHTTPServer.request_queue_size = 512

BENCH_MODEL = "openai:bench-model"


def responder(request_json: dict[str, Any]) -> str:
    """Persona answers as the scripted provider gives them; the check always says CONTINUE."""
    task = task_from_text(prompt_text(request_json))
    return "CONTINUE" if task.get("phase") == "check" else scripted_text(task)


def bench_env(work: Path, *, drop: tuple[str, ...] = ("ANTHROPIC_", "OPENAI_")) -> dict[str, str]:
    """This process's environment for a measured run under `work`: without the variables
    that start with `drop`, and with a config folder of its own (`XDG_CONFIG_HOME`), so
    the trust file each run records its `--base-url` in starts empty instead of holding
    every earlier run's folders."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["XDG_CONFIG_HOME"] = str(work / "config")
    return env


def export_revision(rev: str, into: Path) -> Path:
    """The tree of an older revision of this repository, written to `into`."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True
    ).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def write_roster(folder: Path, count: int, model: str) -> str:
    """A roster file of `count` personas on `model`; returns its path."""
    path = folder / "roster.json"
    roster = [
        {
            "slug": f"persona-{i}",
            "model": model,
            "aspects": ["cost", "risk", "time"],
            "body": f"You are persona {i}. You weigh cost, risk and time before anything else.",
        }
        for i in range(1, count + 1)
    ]
    path.write_text(json.dumps(roster), encoding="utf-8")
    return str(path)


class StubProcess:
    """The stub server in a child process, answering after `latency` seconds.

    `openai_url` is its base URL for the openai provider.
    """

    def __init__(self, latency: float, *, keep_alive: bool = False) -> None:
        self.latency = latency
        self.keep_alive = keep_alive
        self.port = 0
        self._process: subprocess.Popen[str] | None = None

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> StubProcess:
        self._process = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--latency",
                str(self.latency),
                *(["--keep-alive"] if self.keep_alive else []),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        first = self._process.stdout.readline().split()
        if len(first) != 2 or first[0] != "port":
            self._process.kill()
            raise SystemExit(f"the stub server did not start: {first!r}")
        self.port = int(first[1])
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._process is not None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per answer")
    parser.add_argument(
        "--keep-alive", action="store_true", help="keep connections open, as real providers do"
    )
    args = parser.parse_args()
    with StubServer(
        responder=responder, default_delay_s=args.latency, keep_alive=args.keep_alive
    ) as stub:
        print(f"port {stub.port}", flush=True)
        sys.stdin.read()  # serve until the parent closes our standard input


if __name__ == "__main__":
    main()
