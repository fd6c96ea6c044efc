"""Regenerate docs/cli-reference.md from the click commands: `python scripts/gen_cli_reference.py`."""

from __future__ import annotations

import sys
from pathlib import Path

from dreamcontext_council.cli.reference import REFERENCE_PATH, main

if __name__ == "__main__":
    sys.exit(main([str(Path(__file__).resolve().parents[1] / REFERENCE_PATH)]))
