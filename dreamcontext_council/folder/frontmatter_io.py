"""Frontmatter documents: strict parsing and plain, stable YAML for the Node tool to read."""

from __future__ import annotations

import datetime as dt
import re
from functools import cache
from typing import Any

from dreamcontext_council.errors import FormatError

# The boundary gray-matter and python-frontmatter use: a line of three or more dashes.
_BOUNDARY = re.compile(r"^-{3,}\s*$", re.MULTILINE)
# Line breaks YAML knows besides \n (NEL, LINE and PARAGRAPH SEPARATOR).
_OTHER_BREAKS = "\x85\u2028\u2029"


@cache
def _yaml() -> Any:
    # PyYAML loads a dozen modules; commands that read no frontmatter (list) skip them.
    import yaml

    return yaml


@cache
def _loader() -> Any:
    yaml = _yaml()
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def _dumper() -> Any:
    yaml = _yaml()

    class PlainDumper(yaml.SafeDumper):  # type: ignore[name-defined]
        """Block-style YAML with indented lists, as gray-matter writes it."""

        def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
            super().increase_indent(flow, False)

    def plain_str(dumper: Any, value: str) -> Any:
        style = "|" if "\n" in value else None
        if any(char in value for char in _OTHER_BREAKS):
            style = '"'  # PyYAML folds these breaks in plain or single-quoted text; escape them
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    PlainDumper.add_representer(str, plain_str)
    return PlainDumper


def parse(text: str, where: str) -> tuple[dict[str, Any], str]:
    """Split a document into (frontmatter dict, body); FormatError names `where` on failure.

    A document without a frontmatter block is all body. The block must be a YAML mapping
    with text keys; a block that is not a mapping reads as no frontmatter.
    """
    if not text.startswith("---"):
        return {}, text
    text = text.strip()
    if not _BOUNDARY.match(text):
        return {}, text
    parts = _BOUNDARY.split(text, 2)
    if len(parts) < 3:
        return {}, text  # an opening --- with no closing one: all body
    _, block, body = parts
    yaml = _yaml()
    try:
        data = yaml.load(block, Loader=_loader())
    except yaml.YAMLError as exc:
        problem = str(exc).splitlines()[0]
        raise FormatError(
            f"{where} has malformed frontmatter ({problem}); fix the YAML between the --- lines."
        ) from exc
    except (ValueError, OverflowError, RecursionError) as exc:
        # e.g. a date such as 2026-13-45 that YAML resolves but cannot build
        raise FormatError(
            f"{where} has malformed frontmatter ({type(exc).__name__}: {exc}); fix the YAML "
            "between the --- lines."
        ) from exc
    if not isinstance(data, dict):
        return {}, body.strip()
    if not all(isinstance(key, str) for key in data):
        raise FormatError(
            f"{where} has frontmatter keys that are not text; fix the YAML between the --- lines."
        )
    meta = {key: _plain(value) for key, value in data.items()}
    return meta, body.strip()


def _plain(value: Any) -> Any:
    # YAML turns an unquoted 2026-11-30 into a date; the format keeps dates as strings.
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def dump_meta(meta: dict[str, Any]) -> str:
    """The YAML between the --- lines, keys in the given order."""
    text: str = _yaml().dump(
        meta,
        Dumper=_dumper(),
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100_000,
    )
    return text


def render(meta: dict[str, Any], body: str) -> str:
    """A frontmatter document: `---`, YAML, `---`, a blank line, the body, a final newline."""
    return f"---\n{dump_meta(meta)}---\n\n{body.strip(chr(10))}\n"
