"""Frontmatter documents: strict parsing and plain, stable YAML for the Node tool to read."""

from __future__ import annotations

import datetime as dt
from typing import Any

import frontmatter
import yaml

from dreamcontext_council.errors import FormatError


class _PlainDumper(yaml.SafeDumper):
    """Block-style YAML with indented lists, as gray-matter writes it."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _plain_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_PlainDumper.add_representer(str, _plain_str)


def parse(text: str, where: str) -> tuple[dict[str, Any], str]:
    """Split a document into (frontmatter dict, body); FormatError names `where` on failure."""
    if not text.startswith("---"):
        return {}, text
    try:
        post = frontmatter.loads(text)
    except yaml.YAMLError as exc:
        problem = str(exc).splitlines()[0]
        raise FormatError(
            f"{where} has malformed frontmatter ({problem}); fix the YAML between the --- lines."
        ) from exc
    meta = {key: _plain(value) for key, value in post.metadata.items()}
    return meta, post.content


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
    return yaml.dump(
        meta,
        Dumper=_PlainDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100_000,
    )


def render(meta: dict[str, Any], body: str) -> str:
    """A frontmatter document: `---`, YAML, `---`, a blank line, the body, a final newline."""
    return f"---\n{dump_meta(meta)}---\n\n{body.strip(chr(10))}\n"
