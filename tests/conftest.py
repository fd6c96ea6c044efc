"""Shared fixtures: a workspace with a `_dream_context/` root, the CLI (as a real process and
in-process), a chair that holds debates, and a private copy of the Node tool's reference debate."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from debate_story import (
    REFERENCE,
    Chair,
    Reference,
    Runner,
    inprocess_runner,
    subprocess_runner,
    writable_copy,
)

from dreamcontext_council.folder.paths import Root


@pytest.fixture(autouse=True)
def no_terminal_size_inherited(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests' own processes and the commands they run see no COLUMNS or LINES unless a
    test sets them: pytest-xdist's workers set COLUMNS=80 and LINES=24, which would make
    every board a terminal's width instead of a pipe's."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """An empty working directory with no `_dream_context/` at or above it."""
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def root_path(workdir: Path) -> Path:
    """Where the workspace's `_dream_context/` lives (created by the first `new`)."""
    return workdir / "_dream_context"


@pytest.fixture
def council(workdir: Path, root_path: Path) -> Runner:
    """`python -m dreamcontext_council council ARGS` as a real subprocess → (code, out, err)."""
    return subprocess_runner(workdir, root_path)


@pytest.fixture
def cli(root_path: Path) -> Runner:
    """The same CLI in-process through click's CliRunner → (code, out, err)."""
    return inprocess_runner(root_path)


@pytest.fixture
def chair(cli: Runner, root_path: Path) -> Chair:
    """Holds debates through the in-process CLI."""
    return Chair(cli, root_path)


@pytest.fixture
def root(root_path: Path) -> Root:
    """The workspace root as the library sees it."""
    return Root(root_path)


def copy_story(story: tuple[Path, str], root_path: Path) -> str:
    """Copy a story built once into this test's workspace; returns its debate id."""
    built, debate_id = story
    shutil.copytree(built, root_path)
    return debate_id


@pytest.fixture(scope="session")
def running_story(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Built once: three personas in round 2 of 2, risk-auditor's verdict and report in."""
    built = tmp_path_factory.mktemp("running") / "_dream_context"
    chair = Chair(inprocess_runner(built), built)
    debate_id = chair.new()
    chair.play_round(
        debate_id,
        1,
        {"risk-auditor": ("A", 60), "growth-cfo": ("A", 60), "user-advocate": ("B", 55)},
    )
    chair.ok("round", "start", debate_id, "2")
    chair.submit(debate_id, "risk-auditor", 2, "A", 70)
    return built, debate_id


@pytest.fixture
def running(running_story: tuple[Path, str], root_path: Path) -> str:
    """A copy of the running story in this test's workspace; returns its debate id."""
    return copy_story(running_story, root_path)


@pytest.fixture(scope="session")
def debated_story(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Built once: the reference story replayed by our commands, both rounds complete."""
    built = tmp_path_factory.mktemp("debated") / "_dream_context"
    debate_id = Chair(inprocess_runner(built), built).reference_story()
    return built, debate_id


@pytest.fixture
def debated(debated_story: tuple[Path, str], root_path: Path) -> str:
    """A copy of the debated story in this test's workspace; returns its debate id."""
    return copy_story(debated_story, root_path)


@pytest.fixture(scope="session")
def finished_story(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Built once: the reference story replayed by our commands, closed and promoted."""
    built = tmp_path_factory.mktemp("finished") / "_dream_context"
    chair = Chair(inprocess_runner(built), built)
    debate_id = chair.reference_story()
    chair.ok(
        "research", "add", debate_id, "risk-auditor", "postgres write throughput",
        "--body", "Postgres 16 handles 40k small writes/s on the platform cluster.",
    )  # fmt: skip
    chair.close(debate_id)
    chair.ok("promote", debate_id)
    return built, debate_id


@pytest.fixture
def finished(finished_story: tuple[Path, str], root_path: Path) -> str:
    """A copy of the finished story in this test's workspace; returns its debate id."""
    return copy_story(finished_story, root_path)


@pytest.fixture
def fixture_root(tmp_path: Path) -> Reference:
    """Copy tests/fixtures/reference-debate to tmp (the original is never written)."""
    target = writable_copy(REFERENCE, tmp_path / "reference-debate")
    return Reference(target / "_dream_context", target / "expected")


@pytest.fixture
def ref_cli(fixture_root: Reference) -> Runner:
    """The in-process CLI pointed at the copied reference debate."""
    return inprocess_runner(fixture_root.root)


@pytest.fixture
def ref_council(fixture_root: Reference, workdir: Path) -> Runner:
    """The subprocess CLI pointed at the copied reference debate."""
    return subprocess_runner(workdir, fixture_root.root)


# -- the long cases start first, a browser module runs on one worker ------------------------
#
# pytest-xdist hands tests out in collection order, so a long case collected last runs alone at
# the end while the other workers sit idle: the slow cases go first, then the browser's, then
# the rest in their usual order. Each browser module is one group (run with `--dist
# loadgroup`), so its chromium starts once rather than once on every worker. This runs before
# xdist's own hook, which reads the groups.


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def weight(item: pytest.Item) -> int:
        if item.get_closest_marker("slow"):
            return 0
        return 1 if item.get_closest_marker("browser") else 2

    for item in items:
        if item.get_closest_marker("browser") and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(item.path.stem))
    items.sort(key=weight)


# -- skips are failures unless expected ----------------------------------------------------
#
# A test that skips because a file or a tool is missing proves nothing, and `-q` hides it.
# Only a test marked `may_skip` may skip; any other skip fails the run and is listed.

_UNEXPECTED_SKIPS: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail") and "may_skip" not in report.keywords:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _UNEXPECTED_SKIPS.append(f"{report.nodeid}: {reason}")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _UNEXPECTED_SKIPS:
        terminalreporter.section("unexpected skips (each one fails the run)")
        for line in _UNEXPECTED_SKIPS:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _UNEXPECTED_SKIPS and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
