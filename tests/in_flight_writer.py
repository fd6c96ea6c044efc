"""A call in progress kept by a real separate process, as `council run` keeps one.

Run as a program (`python tests/in_flight_writer.py ROOT DEBATE_ID SLUG ROUND [EVERY]`) it
starts an `InFlightCall` for the persona and obeys one command a line on stdin, answering
`ok` on stdout after each:

  add <json text>      the call receives that text (the file is written at once)
  burst <n>            n pieces of text, each written to the file at once
  wait                 the seat waits for its person (`waiting`)
  append <json entry>  the persona's entry for the round lands through the function
                       `report append` calls, then the call ends (its file goes)
  end                  the call ends

`Writer` starts it and sends the commands, from the tests' side.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import TracebackType

HERE = Path(__file__).resolve()


class Writer:
    """The writing process, started by `with Writer(root, debate_id, slug):`."""

    def __init__(
        self, root: Path, debate_id: str, slug: str, number: int = 1, every: float = 0.0
    ) -> None:
        self.args = [str(root), debate_id, slug, str(number), str(every)]
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> Writer:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE), *self.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.read_ok()  # the file is there
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        process = self.process
        if process is None:
            return
        if process.stdin:
            process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def read_ok(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line == "ok\n", f"the writer said {line!r}"

    def send(self, command: str, value: object = None) -> None:
        """One command; returns once the writer has done it."""
        assert self.process is not None and self.process.stdin is not None
        argument = "" if value is None else " " + json.dumps(value)
        self.process.stdin.write(command + argument + "\n")
        self.process.stdin.flush()
        self.read_ok()

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid


def main(argv: list[str]) -> None:
    from dreamcontext_council.engine.protocol.cross_exam import append_entry
    from dreamcontext_council.folder.in_flight import WAITING, InFlightCall
    from dreamcontext_council.folder.paths import Root

    root, debate_id, slug, number, every = Root(Path(argv[0])), argv[1], argv[2], argv[3], argv[4]
    folder = root.debate(debate_id).folder
    call = InFlightCall(
        folder, within=folder, persona=slug, phase="round", round=int(number), every=float(every)
    )
    call.start()
    print("ok", flush=True)
    for line in sys.stdin:
        command, _, rest = line.rstrip("\n").partition(" ")
        value = json.loads(rest) if rest else None
        if command == "add":
            call.add(str(value))
            call.flush()
        elif command == "burst":
            for i in range(int(str(value))):
                call.add(f"piece {i}. ")
                call.flush()
        elif command == "wait":
            call.set_state(WAITING)
        elif command == "append":
            append_entry(root, debate_id, slug, str(value), number=int(number))
            call.end()
        elif command == "end":
            call.end()
        else:
            raise SystemExit(f"unknown command {command}")
        print("ok", flush=True)
    call.end()


if __name__ == "__main__":
    main(sys.argv[1:])
