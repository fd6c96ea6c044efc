"""The script that takes docs/dashboard-in-flight.png still runs: a round in progress, in
Debian's chromium, as a 1280-pixel-wide PNG."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import CHROMIUM, REPO

pytestmark = pytest.mark.browser


def test_the_in_flight_screenshot_script_draws_a_round_in_progress(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"no chromium at {CHROMIUM}: apt-get install chromium, or set CHROMIUM=/path")
    output = tmp_path / "in-flight.png"
    script = REPO / "scripts" / "dashboard_in_flight_screenshot.py"
    done = subprocess.run(
        [sys.executable, str(script), str(output)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = output.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 1280 and height > 300
