"""Hostile text on the terminal, and the dashboard's Host check.

A model (or a hand-edited, cloned debate folder) controls headlines, stance labels,
summaries and a `command:` program's stderr. Printed, none of its control characters may
reach the terminal raw: they are shown as escapes (`\\x1b`), and rich markup in them stays
text. The dashboard on any loopback address serves only requests that name it.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import pty
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from council_run import roster_file
from debate_story import (
    REPO,
    Chair,
    as_from_a_terminal,
    council_argv,
    council_environment,
    inprocess_runner,
    start_process,
    subprocess_runner,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from offline import clean_environment

from dreamcontext_council.dashboard.hosts import allowed_hosts, is_loopback
from dreamcontext_council.errors import EXIT_STOPPED
from dreamcontext_council.views.terminal import printable, printable_json

# An OSC window title, clear screen, CR, BS, a C1 CSI, a right-to-left override, rich markup.
HOSTILE = (
    "\x1b]0;pwned\x07\x1b[2J\r\x08\x9b31m\u202e[link=file:///etc/passwd]x[/link][blink]b[/blink]"
)
# What must never reach the terminal: the raw controls (U+FFFD: a lone C1 byte, 0x9b).
RAW = ("\x1b", "\x9b", "\r", "\x07", "\x08", "\u202e", "\ufffd")
SHOWN_TITLE = "\\x1b]0;pwned\\x07"
SHOWN_MARKUP = "[link=file:///etc/passwd]x[/link]"
TERMINAL_ENV = {"TERM": "xterm-256color", "COLUMNS": "200", "LINES": "60"}


def assert_shown_not_obeyed(text: str, where: str) -> None:
    raw = [c for c in RAW if c in text]
    assert not raw, f"{where}: raw control characters {raw!r} in {text!r}"


def strings(data: object) -> list[str]:
    """Every string in decoded JSON."""
    if isinstance(data, str):
        return [data]
    values = data.values() if isinstance(data, dict) else data if isinstance(data, list) else []
    return [text for value in values for text in strings(value)]


# -- the pure function ------------------------------------------------------------------


def test_printable_shows_every_control_but_newline_and_tab() -> None:
    assert printable("a\tb\nc") == "a\tb\nc"
    assert printable("title \x1b]0;x\x07") == "title \\x1b]0;x\\x07"
    assert printable("over\rwrite\x08\x7f") == "over\\x0dwrite\\x08\\x7f"
    assert printable("line\r\nnext") == "line\nnext"
    assert printable("\x9b2J \u202eevil\u2066") == "\\x9b2J \\u202eevil\\u2066"
    assert printable("naïve — 🙂 \u05e9\u05dc\u05d5\u05dd") == "naïve — 🙂 \u05e9\u05dc\u05d5\u05dd"
    assert printable(printable(HOSTILE)) == printable(HOSTILE)


UNPRINTABLE = {chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]}
UNPRINTABLE |= set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_printable_leaves_no_control_but_newline_and_tab(text: str) -> None:
    shown = printable(text)
    assert not UNPRINTABLE & set(shown)
    assert printable(shown) == shown
    if not UNPRINTABLE & set(text):
        assert shown == text
    assert json.loads(printable_json(json.dumps(text, ensure_ascii=False))) == text
    assert not UNPRINTABLE & set(printable_json(json.dumps(text, ensure_ascii=False)))


def test_printable_json_escapes_losslessly() -> None:
    dumped = json.dumps({"h": HOSTILE}, ensure_ascii=False)
    safe = printable_json(dumped)
    assert_shown_not_obeyed(safe, "json")
    assert json.loads(safe) == {"h": HOSTILE}


# -- a debate a hostile model (or a cloned folder) wrote -------------------------------


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, str]:
    """Round 1 done, round 2 running; a headline, a stance label, a summary and the round
    log carry HOSTILE, written straight into the files as a cloned folder could."""
    root = tmp_path / "_dream_context"
    chair = Chair(inprocess_runner(root), root)
    debate_id = chair.new(personas=("risk-auditor", "growth-cfo"))
    chair.play_round(debate_id, 1, {"risk-auditor": ("A", 60), "growth-cfo": ("B", 55)})
    chair.ok("round", "start", debate_id, "2")
    folder = chair.folder(debate_id)
    verdicts = json.loads((folder / "verdicts.json").read_text(encoding="utf-8"))
    verdicts["rounds"]["1"]["risk-auditor"]["headline"] = "said " + HOSTILE
    for option in verdicts["options"]:
        option["label"] = option["label"] + " " + HOSTILE
    (folder / "verdicts.json").write_text(json.dumps(verdicts), encoding="utf-8")
    for slug in ("risk-auditor", "growth-cfo"):
        report = folder / slug / "report.md"
        text = report.read_text(encoding="utf-8").replace(
            f"{slug} thinks round 1", f"{slug} {HOSTILE} thinks round 1"
        )
        report.write_text(text, encoding="utf-8", newline="")
    with (folder / "round-log.md").open("a", encoding="utf-8", newline="") as log:
        log.write(f"\n- note {HOSTILE}\n")
    return root, debate_id


@pytest.mark.parametrize(
    "command",
    [
        ["board", "{id}"],
        ["board", "{id}", "--round", "1", "--plain"],
        ["summaries", "{id}", "1"],
        ["round-context", "{id}", "growth-cfo"],
        ["show", "{id}"],
        ["export", "{id}", "--format", "md", "-o", "-"],
        ["export", "{id}", "--format", "html", "-o", "-"],
    ],
)
def test_printing_commands_show_model_controls_as_escapes(
    hostile: tuple[Path, str], tmp_path: Path, command: list[str]
) -> None:
    root, debate_id = hostile
    run = subprocess_runner(tmp_path, root)
    done = run(*[a.format(id=debate_id) for a in command], env={"NO_COLOR": "1"})
    assert done.code == 0, done.err
    assert_shown_not_obeyed(done.out + done.err, " ".join(command))
    assert SHOWN_TITLE in done.out


@pytest.mark.parametrize(
    "command", [["board", "{id}", "--json"], ["export", "{id}", "--format", "json", "-o", "-"]]
)
def test_json_output_escapes_controls_and_keeps_the_text(
    hostile: tuple[Path, str], tmp_path: Path, command: list[str]
) -> None:
    root, debate_id = hostile
    done = subprocess_runner(tmp_path, root)(*[a.format(id=debate_id) for a in command])
    assert done.code == 0, done.err
    assert_shown_not_obeyed(done.out, " ".join(command))
    assert "said " + HOSTILE in strings(json.loads(done.out))


def test_an_export_written_to_a_file_is_safe_to_cat(
    hostile: tuple[Path, str], tmp_path: Path
) -> None:
    root, debate_id = hostile
    run = subprocess_runner(tmp_path, root)
    for fmt in ("md", "html", "json"):
        target = tmp_path / f"debate.{fmt}"
        done = run("export", debate_id, "--format", fmt, "-o", str(target))
        assert done.code == 0, done.err
        written = target.read_bytes().decode("utf-8")
        assert_shown_not_obeyed(written, f"export --format {fmt} -o")
        if fmt == "json":
            assert "said " + HOSTILE in strings(json.loads(written))
        else:
            assert SHOWN_TITLE in written


def test_every_command_prints_through_the_one_choke_point() -> None:
    """A new print in a command cannot forget the escaping: only `cli.base.echo` prints."""
    offenders = []
    for path in sorted((REPO / "dreamcontext_council" / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "echo" and path.name == "base.py":
                node.body = []  # the choke point itself
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = ast.unparse(node.func)
            if name in {"print", "click.echo", "click.secho", "echo_via_pager"} or name.endswith(
                (".write", ".show")
            ):
                offenders.append(f"{path.name}:{node.lineno} {name}")
    assert offenders == []


# -- watch: through a pipe and on a terminal -------------------------------------------


def read_terminal(controller: int, marker: bytes, seconds: float, seen: bytes = b"") -> bytes:
    deadline = time.monotonic() + seconds
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.1)
        if ready:
            try:
                seen += os.read(controller, 65536)
            except OSError:
                break
    return seen


@pytest.fixture
def terminal() -> Iterator[tuple[int, int]]:
    """A pseudo-terminal: (the side the test reads, the side the command writes)."""
    controller, child = pty.openpty()
    try:
        yield controller, child
    finally:
        for fd in (controller, child):
            with contextlib.suppress(OSError):
                os.close(fd)


def assert_terminal_safe(seen: bytes) -> None:
    """The tool's own colours and cursor moves may be there; the model's sequences not."""
    for sequence in (b"\x1b]0;pwned", b"\x1b[2J", b"\xc2\x9b", "\u202e".encode(), b"\x1b]8;"):
        assert sequence not in seen, f"{sequence!r} reached the terminal"
    assert b"\x1b[5m" not in seen  # [blink] was not read as markup


def test_watch_through_a_pipe_shows_escapes(hostile: tuple[Path, str], tmp_path: Path) -> None:
    root, debate_id = hostile
    process = start_process(
        ["watch", debate_id], cwd=tmp_path, env=council_environment(root, {"NO_COLOR": "1"})
    )
    try:
        assert process.stdout is not None
        out = b""
        while b"\xe2\x95\xb0" not in out:  # the board's last line, ╰
            line = process.stdout.readline()
            assert line, "watch ended before printing the board"
            out += line
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=10)
    text = out.decode("utf-8", "replace") + err.decode("utf-8", "replace")
    assert_shown_not_obeyed(text, "watch")
    assert SHOWN_TITLE in text


def watch_on_a_terminal(
    child: int, root: Path, debate_id: str, cwd: Path
) -> subprocess.Popen[bytes]:
    """`council watch` with the pseudo-terminal's side `child` as its controlling terminal."""
    return subprocess.Popen(
        council_argv("watch", debate_id),
        stdin=child,
        stdout=child,
        stderr=child,
        cwd=cwd,
        env=council_environment(root, TERMINAL_ENV),
        start_new_session=True,
        preexec_fn=as_from_a_terminal,
    )


def ctrl_c_ends_it(process: subprocess.Popen[bytes], controller: int, seen: bytes) -> bytes:
    """Ctrl-C to a watch: it exits 0 and shows the cursor again; what the terminal showed."""
    process.send_signal(signal.SIGINT)
    code = process.wait(timeout=10)
    seen = read_terminal(controller, b"\x1b[?25h", 2, seen)
    assert code == 0, seen.decode("utf-8", "replace")[-2000:]
    return seen


def test_watch_on_a_terminal_shows_escapes(
    hostile: tuple[Path, str], tmp_path: Path, terminal: tuple[int, int]
) -> None:
    root, debate_id = hostile
    controller, child = terminal
    process = watch_on_a_terminal(child, root, debate_id, tmp_path)
    try:
        seen = read_terminal(controller, b"Ctrl-C to stop", 20)
        assert b"Ctrl-C to stop" in seen, seen.decode("utf-8", "replace")
        seen = ctrl_c_ends_it(process, controller, seen)
    finally:
        if process.poll() is None:
            process.kill()
    assert_terminal_safe(seen)
    assert SHOWN_TITLE.encode() in seen


@pytest.mark.parametrize("after", [b"\x1b", b"Ctrl-C"], ids=["mid-frame", "after-frame"])
def test_ctrl_c_at_any_moment_of_a_frame_ends_watch_cleanly(
    hostile: tuple[Path, str], tmp_path: Path, terminal: tuple[int, int], after: bytes
) -> None:
    """Ctrl-C as the first frame starts to arrive, or once it is whole: exit 0, the cursor
    shown again, nothing but the display on the terminal."""
    root, debate_id = hostile
    controller, child = terminal
    process = watch_on_a_terminal(child, root, debate_id, tmp_path)
    try:
        seen = read_terminal(controller, after, 20)
        assert after in seen, seen.decode("utf-8", "replace")
        seen = ctrl_c_ends_it(process, controller, seen)
    finally:
        if process.poll() is None:
            process.kill()
    assert b"\x1b[?25h" in seen
    assert b"Aborted" not in seen and b"Error" not in seen


# -- run: progress, the final board and a failed command's stderr ----------------------

HOSTILE_PERSONA = f"""\
import sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
HOSTILE = {HOSTILE!r}
task = task_from_text(sys.stdin.read())
text = scripted_text(task)
if task.get("phase") == "check":
    text = "\\x1b]0;pwned\\x07[blink]b[/blink]"
elif task.get("phase") != "synthesis":
    text = "\\n".join(
        "headline: said " + HOSTILE if line.startswith("headline:") else line
        for line in text.split("\\n")
    )
sys.stdout.write(text)
"""
# Short, so the failure line (cut at 80 characters) still carries the stderr.
FAILING_PERSONA = (
    "import sys\nsys.stdin.read()\n"
    "sys.stderr.write('\\x1b]0;pwned\\x07[blink]b[/blink]')\nsys.exit(1)\n"
)


@pytest.fixture
def hostile_roster(tmp_path: Path) -> tuple[Path, list[str]]:
    """A workdir with two hostile `command:` personas and one that fails; the run's args."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "h.py").write_text(HOSTILE_PERSONA, encoding="utf-8")
    (workdir / "f.py").write_text(FAILING_PERSONA, encoding="utf-8")
    hostile_model = f"command:{sys.executable} h.py"
    # The third persona dissents (as the scripted one does), so round 2 needs a check.
    models = {"alpha": "command:python3 f.py", "beta": hostile_model, "gamma": hostile_model}
    roster = roster_file(workdir / "roster.json", models)
    args = [
        "run", "--topic", "Go or not?", "--options", "A=Go,B=Wait", "--personas", roster,
        "--rounds", "3",
        "--check-model", hostile_model, "--synth-model", "scripted",
    ]  # fmt: skip
    return workdir, args


def run_environment(root: Path, extra: dict[str, str]) -> dict[str, str]:
    """No developer key or base URL: the hostile programs are the only models."""
    env = clean_environment(os.environ, root.parent / "home")
    return env | {"DREAMCONTEXT_ROOT": str(root), **extra}


def test_run_progress_through_a_pipe_shows_escapes(
    hostile_roster: tuple[Path, list[str]], tmp_path: Path
) -> None:
    workdir, args = hostile_roster
    root = tmp_path / "_dream_context"
    done = subprocess.run(
        council_argv(*args),
        cwd=workdir,
        env=run_environment(root, {"NO_COLOR": "1"}),
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    text = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, text
    assert_shown_not_obeyed(text, "run")
    assert "alpha: failed" in text and "[blink]b[/blink]" in text  # the stderr, as text
    assert "Convergence check after round 2: \\x1b]0;pwned\\x07" in text
    assert SHOWN_TITLE in text


def test_a_run_whose_every_command_fails_shows_their_stderr_as_escapes(
    hostile_roster: tuple[Path, list[str]], tmp_path: Path
) -> None:
    workdir, _ = hostile_roster
    root = tmp_path / "_dream_context"
    failing = {slug: "command:python3 f.py" for slug in ("alpha", "beta")}
    roster = roster_file(workdir / "failing.json", failing)
    done = subprocess.run(
        council_argv("run", "--topic", "Go or not?", "--personas", roster, "--rounds", "2"),
        cwd=workdir,
        env=run_environment(root, {"NO_COLOR": "1"}),
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == EXIT_STOPPED, err
    assert_shown_not_obeyed(done.stdout.decode("utf-8", "replace") + err, "run error")
    [error] = [line for line in err.splitlines() if line.startswith("Error: ")]
    assert "Every persona failed in round 1" in error
    assert f"exit code 1: {SHOWN_TITLE}[blink]b[/blink]" in error


def test_run_progress_on_a_terminal_shows_escapes(
    hostile_roster: tuple[Path, list[str]], tmp_path: Path, terminal: tuple[int, int]
) -> None:
    workdir, args = hostile_roster
    root = tmp_path / "_dream_context"
    controller, child = terminal
    process = subprocess.Popen(
        council_argv(*args),
        stdin=child,
        stdout=child,
        stderr=child,
        cwd=workdir,
        env=run_environment(root, TERMINAL_ENV),
        start_new_session=True,
        preexec_fn=as_from_a_terminal,
    )
    seen = b""
    try:
        deadline = time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            seen = read_terminal(controller, b"\x00never", 0.5, seen)
        assert process.wait(timeout=10) == 0, seen.decode("utf-8", "replace")
        seen = read_terminal(controller, b"\x00never", 0.5, seen)
    finally:
        if process.poll() is None:
            process.kill()
    assert b"\x1b[" in seen  # it did draw the live table (the tool's own sequences)
    assert_terminal_safe(seen)
    assert b"[blink]b[/blink]" in seen
    assert SHOWN_TITLE.encode() in seen


# -- the dashboard's Host check --------------------------------------------------------


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@contextlib.contextmanager
def serving(root: Path, tmp_path: Path, *args: str) -> Iterator[tuple[str, list[bytes]]]:
    """`council serve --port 0 ARGS` as a real process: (its URL, its stderr once stopped)."""
    process = start_process(
        ["serve", "--port", "0", *args], cwd=tmp_path, env=council_environment(root, None)
    )
    stderr: list[bytes] = []
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode("utf-8")
        assert " at http://" in line, line + process.communicate(timeout=10)[1].decode()
        url = line.rsplit(" at ", 1)[1].strip().split("?", 1)[0]  # without the write token
        deadline = time.monotonic() + 10
        while True:
            try:
                httpx.get(url, timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the dashboard did not answer"
                time.sleep(0.1)
        yield url, stderr
    finally:
        process.send_signal(signal.SIGINT)
        try:
            _, err = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        stderr.append(err)
    assert process.returncode == 0, err.decode("utf-8", "replace")


@pytest.mark.parametrize(
    ("host", "names"),
    [
        ("127.0.0.2", ["127.0.0.2", "localhost"]),
        ("127.1.2.3", ["127.1.2.3"]),
        ("localhost", ["127.0.0.1", "localhost"]),
        ("::1", ["[::1]", "localhost"]),
    ],
)
def test_serve_on_any_loopback_address_answers_only_its_own_names(
    hostile: tuple[Path, str], tmp_path: Path, host: str, names: list[str]
) -> None:
    if host == "::1" and not ipv6_loopback():
        pytest.skip("this machine has no IPv6 loopback (::1)")
    root, debate_id = hostile
    with serving(root, tmp_path, "--host", host) as (url, _):
        port = url.rstrip("/").rsplit(":", 1)[1]
        for name in names:
            for header in (name, f"{name}:{port}"):
                page = httpx.get(url + f"d/{debate_id}", headers={"host": header}, timeout=5)
                assert page.status_code == 200, header
        for header in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example"):
            refused = httpx.get(url + f"d/{debate_id}", headers={"host": header}, timeout=5)
            assert refused.status_code == 400, header
            assert "Migrate now" not in refused.text


def test_serve_on_a_remote_address_needs_allow_remote(
    hostile: tuple[Path, str], tmp_path: Path
) -> None:
    root, _ = hostile
    done = subprocess_runner(tmp_path, root)("serve", "--host", "0.0.0.0", "--port", "0")
    assert done.code == 2
    assert done.out == ""
    [line] = done.err.splitlines()
    assert line.startswith("Error: --host 0.0.0.0 ") and "--allow-remote" in line


def test_serve_with_allow_remote_warns(hostile: tuple[Path, str], tmp_path: Path) -> None:
    root, debate_id = hostile
    with serving(root, tmp_path, "--host", "0.0.0.0", "--allow-remote") as (url, stderr):
        port = url.rstrip("/").rsplit(":", 1)[1]
        page = httpx.get(f"http://127.0.0.1:{port}/d/{debate_id}", timeout=5)
        assert page.status_code == 200
    warning = stderr[0].decode("utf-8")
    assert warning.startswith("Warning: the dashboard on 0.0.0.0 is reachable from other machines")


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.255.0.9", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.20", False),
        ("localhost.evil.example", False),
        ("my-laptop", False),
    ],
)
def test_which_addresses_are_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    assert (allowed_hosts(host) is None) is not loopback
