"""`make test`, the README's test command, run by the real make against stand-in tools.

The virtualenv is a temporary folder (VENV=...) whose ruff, mypy and pytest are small
scripts that record how they were called and exit as told, so each case checks what the
recipe does with their outcomes: pytest side by side with two workers per core, bytecode
written whatever the environment says, mypy beside it with its output shown afterwards, the
time printed, a failure of either failing the whole.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

TOOL = """#!/bin/sh
# Records its arguments and whether PYTHONDONTWRITEBYTECODE reached it, then says its word.
echo "$@" > "{log}/{name}.args"
echo "${{PYTHONDONTWRITEBYTECODE-unset}}" > "{log}/{name}.bytecode"
echo "{name} says its word"
exit "${{{code_var}:-0}}"
"""


def stand_ins(tmp_path: Path) -> Path:
    """A virtualenv folder whose tools are the recording scripts; it counts as set up."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name in ("ruff", "mypy", "pytest"):
        script = venv / "bin" / name
        code_var = f"{name.upper()}_EXIT"
        script.write_text(TOOL.format(log=tmp_path, name=name, code_var=code_var))
        script.chmod(0o755)
    (venv / ".installed").touch()  # newer than pyproject.toml: nothing to install
    return venv


def outside_make() -> dict[str, str]:
    """This environment without what an enclosing `make test` passes down (its flags, its
    level, a PYTEST_WORKERS it was given), so the inner make reads only the Makefile."""
    passed_down = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PYTEST_WORKERS"}
    return {k: v for k, v in os.environ.items() if k not in passed_down}


def make_test(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    venv = stand_ins(tmp_path)
    assert shutil.which("make"), "make is needed: apt-get install make"
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), "test", f"VENV={venv}"],
        env={**outside_make(), "CHROMIUM": "/bin/true", "PYTHONDONTWRITEBYTECODE": "1", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_make_test_runs_the_tests_side_by_side_and_prints_its_time(tmp_path: Path) -> None:
    done = make_test(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    workers = 2 * (os.cpu_count() or 1)
    assert (tmp_path / "pytest.args").read_text().split() == [
        "-q",
        "-n",
        str(workers),
        "--dist",
        "loadgroup",
    ]
    # The tests write bytecode; the environment's PYTHONDONTWRITEBYTECODE does not reach them.
    assert (tmp_path / "pytest.bytecode").read_text().strip() == "unset"
    assert (tmp_path / "ruff.args").exists() and (tmp_path / "mypy.args").exists()
    # mypy ran beside the tests; its word is shown after theirs, and the time last.
    out = done.stdout
    assert out.index("pytest says its word") < out.index("mypy says its word")
    assert out.rstrip().splitlines()[-1].startswith("make test: 0 min ")


@pytest.mark.parametrize("failing", ["MYPY_EXIT", "PYTEST_EXIT"])
def test_a_failure_of_mypy_or_pytest_fails_make_test_after_both_ran(
    tmp_path: Path, failing: str
) -> None:
    done = make_test(tmp_path, **{failing: "1"})
    assert done.returncode != 0
    assert "mypy says its word" in done.stdout and "pytest says its word" in done.stdout
    assert "make test: 0 min " in done.stdout


def test_a_lint_failure_stops_before_the_tests(tmp_path: Path) -> None:
    done = make_test(tmp_path, RUFF_EXIT="1")
    assert done.returncode != 0
    assert not (tmp_path / "pytest.args").exists()
    assert "make test: 0 min " in done.stdout


def test_a_chromium_that_is_not_a_program_is_named_in_one_line(tmp_path: Path) -> None:
    done = make_test(tmp_path, CHROMIUM=str(tmp_path / "no-chromium"))
    assert done.returncode != 0
    said = [line for line in done.stdout.splitlines() if "CHROMIUM=" in line]
    assert said == [
        f"make: CHROMIUM={tmp_path / 'no-chromium'} is not a program; point it at a "
        "chromium, or unset it to use Debian's"
    ]
    assert not (tmp_path / "pytest.args").exists()


FAILING_APT = """#!/bin/sh
echo "$0 $@" >> "{log}/apt.calls"
exit 100
"""
AS_GIVEN = """#!/bin/sh
[ "$1" = -n ] && shift
exec "$@"
"""


def test_a_chromium_apt_cannot_install_is_said_in_one_line(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    for name, text in (("apt-get", FAILING_APT.format(log=tmp_path)), ("sudo", AS_GIVEN)):
        (tools / name).write_text(text)
        (tools / name).chmod(0o755)
    venv = stand_ins(tmp_path)
    env = {k: v for k, v in outside_make().items() if k != "CHROMIUM"}
    done = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-C",
            str(REPO),
            "test",
            f"VENV={venv}",
            f"DEBIAN_CHROMIUM={tmp_path / 'no-chromium'}",
        ],
        env={**env, "PATH": f"{tools}:{env['PATH']}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "apt-get update -qq" in (tmp_path / "apt.calls").read_text()
    said = [line for line in done.stdout.splitlines() if line.startswith("make: could not")]
    assert said == [
        "make: could not install Debian's chromium for the browser tests with apt-get (it "
        "needs root or password-less sudo, and the network): run 'sudo apt-get install "
        "chromium', or set CHROMIUM=/path/to/chromium"
    ]
    assert not (tmp_path / "pytest.args").exists()


GROUPS = """
def pytest_collection_finish(session):
    for item in session.items:
        mark = item.get_closest_marker("xdist_group")
        print("ITEM", item.nodeid, mark.args[0] if mark else "-")
"""


def test_the_long_cases_are_handed_out_first_and_a_browser_module_is_one_group(
    tmp_path: Path,
) -> None:
    (tmp_path / "show_groups.py").write_text(GROUPS)
    files = [
        "tests/test_claims.py",
        "tests/dashboard/test_browser_layout.py",
        "tests/faults/test_kill_resume.py",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "show_groups", *files],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    items = [
        line.removeprefix("ITEM ").rsplit(" ", 1)
        for line in done.stdout.splitlines()
        if line.startswith("ITEM ")
    ]
    slow = "tests/faults/test_kill_resume.py::test_sigkill_at_random_moments_then_resume_finishes_cleanly"
    assert items[0] == [slow, "-"]
    browser = [i for i, (nodeid, _) in enumerate(items) if "test_browser_layout" in nodeid]
    assert browser == list(range(1, 1 + len(browser))) and len(browser) >= 2
    assert {items[i][1] for i in browser} == {"test_browser_layout"}
    rest = items[1 + len(browser) :]
    assert rest and all(n.startswith("tests/test_claims.py") and g == "-" for n, g in rest)
