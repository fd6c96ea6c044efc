"""Where an export goes and in which format, checked before the debate is read.

`-o debate.md` says the format by its extension; `--format` wins when both are given.
"""

from __future__ import annotations

from pathlib import Path

from dreamcontext_council.errors import UsageError

FORMATS = ("html", "json", "md")
"""What `export` writes (views/export.py)."""
SUFFIXES = {".html": "html", ".htm": "html", ".json": "json", ".md": "md", ".markdown": "md"}
STDOUT = Path("-")


def export_format(fmt: str | None, output: Path | None) -> str:
    """The format asked for: `fmt` when given, else the one `output`'s extension names.

    UsageError, in one line saying what to pass, when neither says one."""
    if fmt is not None:
        return fmt
    known = ", ".join(sorted(SUFFIXES))
    if output is None or output == STDOUT:
        raise UsageError(
            f"Say the format: pass --format {'|'.join(FORMATS)}, or -o FILE ending in {known}."
        )
    found = SUFFIXES.get(output.suffix.lower())
    if found is None:
        raise UsageError(
            f"Cannot tell the format of {output.name} from its extension (known: {known}); "
            f"pass --format {'|'.join(FORMATS)}."
        )
    return found


def check_output(output: Path) -> None:
    """UsageError, in one line, when `output` cannot be written as a file: its folder is
    missing or not a folder, or the name is a folder itself. Nothing is made."""
    folder = output.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise UsageError(
            f"Cannot write {output}: the folder {folder} {what}; make it first "
            f"(mkdir -p {folder}) or pass another -o."
        )
    if output.is_dir():
        raise UsageError(f"Cannot write {output}: it is a folder; pass -o with a file name.")
