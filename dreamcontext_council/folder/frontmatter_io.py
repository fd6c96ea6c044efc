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
    data = plain_block(block)
    if data is not None:
        return data, body.strip()
    from dreamcontext_council.folder import strict_yaml  # frontmatter outside the plain subset

    try:
        data = strict_yaml.load(block)
    except strict_yaml.YamlRefused as exc:
        raise FormatError(f"{where}: the frontmatter {exc}.") from None
    except strict_yaml.yaml_error() as exc:
        problem = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise FormatError(
            f"{where} has malformed frontmatter ({problem}); fix the YAML between the --- lines."
        ) from exc
    except Exception as exc:
        # PyYAML's constructors raise what they meet: ValueError for a date such as
        # 2026-13-45, KeyError for `!!bool x`, AttributeError for `!!timestamp x`.
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


# -- the plain subset, read without PyYAML ----------------------------------------------
#
# Reading a board must not wait ~20 ms for PyYAML to import. The frontmatter this tool writes
# (and what the Node tool writes) is a flat subset of YAML: `key: scalar`, lists of scalars,
# lists of flat maps, a long string folded with `>-`. `plain_block` reads exactly that subset
# and returns None for anything else, which PyYAML then reads; where it answers, it answers as
# PyYAML would (a property test compares the two).

_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: (.*))?")
_ITEM_LINE = re.compile(r"( *)- (.*)")
_FIELD_LINE = re.compile(r"( +)([A-Za-z_][A-Za-z0-9_-]*):(?: (.*))?")
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
# A float as this tool writes one (`120.0`); exponents, `_` and `.inf` go to PyYAML.
_FLOAT = re.compile(r"[-+]?[0-9]+\.[0-9]*")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_NULLS = {"", "~", "null", "Null", "NULL"}
_BOOLS = {
    **dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
}
# First characters after which YAML may resolve a plain scalar to something else, or reads
# an indicator; such scalars go to PyYAML.
_NOT_PLAIN_START = set("-?:,[]{}#&*!|>'\"%@`+.0123456789<=~ \t")
_UNSURE = object()


def _scalar(text: str) -> Any:
    """One scalar as PyYAML's safe loader reads it, or _UNSURE."""
    text = text.rstrip(" ")
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    if text == "[]":
        return []
    if text.startswith("'"):
        inner = text[1:-1]
        if len(text) < 2 or not text.endswith("'") or "'" in inner.replace("''", ""):
            return _UNSURE
        return inner.replace("''", "'") if inner.isprintable() else _UNSURE
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _DATE.fullmatch(text):
        try:
            return dt.date.fromisoformat(text).isoformat()
        except ValueError:
            return _UNSURE
    if text[0] in _NOT_PLAIN_START or ": " in text or " #" in text or text.endswith(":"):
        return _UNSURE
    if not text.isprintable() or "\t" in text:
        return _UNSURE
    return text


def _unsure_key(name: str) -> bool:
    # `yes:` or `null:` is a bool or None key to YAML, not text.
    return name in _BOOLS or name in _NULLS


def _sequence(lines: list[str], i: int) -> tuple[list[Any], int] | None:
    """The block sequence starting at lines[i] (scalars or flat maps), and the next line."""
    items: list[Any] = []
    indent: str | None = None
    while i < len(lines) and (item := _ITEM_LINE.fullmatch(lines[i])):
        if indent is None:
            indent = item.group(1)
        elif item.group(1) != indent:
            return None
        text = item.group(2)
        i += 1
        if text[:1] in (" ", "\t"):
            return None
        first = _FIELD_LINE.fullmatch(" " + text)
        if first is None:  # a scalar item
            value = _scalar(text)
            if value is _UNSURE or isinstance(value, list):
                return None
            items.append(value)
            continue
        fields = [first]  # a flat map: its other fields sit two columns in from the dash
        while i < len(lines) and (field := _FIELD_LINE.fullmatch(lines[i])):
            if field.group(1) != indent + "  ":
                break
            fields.append(field)
            i += 1
        entry: dict[str, Any] = {}
        for field in fields:
            name = field.group(2)
            value = _scalar(field.group(3) or "")
            if name in entry or _unsure_key(name) or value is _UNSURE or isinstance(value, list):
                return None
            entry[name] = value
        items.append(entry)
    return items, i


def _flat_map(lines: list[str], i: int) -> tuple[dict[str, Any], int] | None:
    """The block mapping of scalars starting at lines[i] (all at one indent), and the next line."""
    entry: dict[str, Any] = {}
    indent: str | None = None
    while i < len(lines) and (field := _FIELD_LINE.fullmatch(lines[i])):
        if indent is None:
            indent = field.group(1)
        elif field.group(1) != indent:
            break
        name = field.group(2)
        value = _scalar(field.group(3) or "")
        if name in entry or _unsure_key(name) or value is _UNSURE or isinstance(value, list):
            return None
        entry[name] = value
        i += 1
    return entry, i


def _folded(lines: list[str], i: int) -> tuple[str, int] | None:
    """The lines of a `>-` scalar starting at lines[i] (js-yaml writes a long string so), all
    at one indent, joined by spaces as YAML folds them; and the next line."""
    parts: list[str] = []
    indent = -1
    while i < len(lines) and lines[i][:1] == " ":
        text = lines[i].lstrip(" ")
        if indent < 0:
            indent = len(lines[i]) - len(text)
        # A blank, more indented or tab-led line folds otherwise; trailing blanks stay in.
        if len(lines[i]) - len(text) != indent or not text or text[0] == "\t":
            return None
        if not text.isprintable() or text != text.rstrip(" \t"):
            return None
        parts.append(text)
        i += 1
    return (" ".join(parts), i) if parts else None


def plain_block(block: str) -> dict[str, Any] | None:
    """The frontmatter as a dict when it is in the plain subset, else None (ask PyYAML)."""
    data: dict[str, Any] = {}
    lines = block.strip("\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        key_line = _KEY_LINE.fullmatch(line)
        if not key_line or _unsure_key(key_line.group(1)):
            return None
        key, rest = key_line.group(1), key_line.group(2)
        if key in data:
            return None  # a duplicate key: the strict loader refuses it with a clear error
        if rest == ">-":
            folded = _folded(lines, i)
            if folded is None:
                return None
            data[key], i = folded
            continue
        if rest is not None and rest.strip(" "):
            value = _scalar(rest)
            if value is _UNSURE:
                return None
            data[key] = value
            continue
        if i < len(lines) and _FIELD_LINE.fullmatch(lines[i]):
            fields = _flat_map(lines, i)
            if fields is None:
                return None
            data[key], i = fields
            if i < len(lines) and lines[i][:1] in (" ", "\t"):
                return None  # something nested deeper, or at another indent
            continue
        found = _sequence(lines, i)
        if found is None:
            return None
        items, i = found
        if i < len(lines) and lines[i][:1] in (" ", "\t"):
            return None  # something nested that this subset does not read
        data[key] = items or None
    return data


def _plain(value: Any) -> Any:
    # YAML turns an unquoted 2026-11-30 into a date; the format keeps dates as strings.
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


# A top-level entry's YAML depends only on its key and value, and a debate rewrites the
# same frontmatter many times with one or two values changed: each entry is emitted once.
_ENTRIES: dict[tuple[str, str], tuple[str, bool]] = {}
_ENTRIES_KEPT = 4096
_DOCUMENT_END = "...\n"


def dump_meta(meta: dict[str, Any]) -> str:
    """The YAML between the --- lines, keys in the given order: what PyYAML writes for
    the whole of `meta`, with each entry emitted once and reused."""
    if not meta or not all(isinstance(key, str) for key in meta):
        return _dump(meta)
    entries = [_dump_entry(key, value) for key, value in meta.items()]
    text = "".join(entry for entry, _ in entries)
    # PyYAML closes a document whose last value ends in a kept line break with `...`.
    return text + _DOCUMENT_END if entries[-1][1] else text


def _dump_entry(key: str, value: Any) -> tuple[str, bool]:
    """The YAML of one entry, and whether it closed its document with `...`."""
    # repr tells apart what YAML writes differently (1, True, "1", 1.0; lists and tuples).
    memo = (key, repr(value))
    entry = _ENTRIES.get(memo)
    if entry is None:
        text = _dump({key: value})
        # A value ending in a kept line break (`|+`) closes its document with `...`; entries
        # are joined into one document, where that marker would end it early.
        # The marker is a line of its own; a last line of the value reads `  ...` indented.
        ended = text.endswith("\n" + _DOCUMENT_END)
        entry = (text[: -len(_DOCUMENT_END)] if ended else text, ended)
        if len(_ENTRIES) >= _ENTRIES_KEPT:
            _ENTRIES.clear()
        _ENTRIES[memo] = entry
    return entry


def _dump(meta: dict[str, Any]) -> str:
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


def render_over(previous: str, meta: dict[str, Any], body: str) -> str:
    """`render(meta, body)`, written over `previous` so its comments and layout stay.

    When only top-level one-line values change (or keys are added) and the body is the same,
    those lines are rewritten in place (a comment after an old value stays after the new
    one) and added keys go at the end of the block; anything else, or a result that would
    not read back as `meta`, is rendered anew.
    """
    fresh = render(meta, body)
    if "#" not in previous:
        return fresh  # nothing a fresh render would lose
    found = _block_lines(previous)
    if found is None:
        return fresh
    lines, end = found
    try:
        old_meta, old_body = parse(previous, "previous")
        wanted = parse(fresh, "rendered")
    except FormatError:
        return fresh
    if old_body != wanted[1] or not set(old_meta) <= set(meta):
        return fresh
    added: list[str] = []
    for key, value in meta.items():
        if key in old_meta and old_meta[key] == wanted[0][key]:
            continue
        line = dump_meta({key: value}).rstrip("\n")
        if "\n" in line:
            return fresh
        if key not in old_meta:
            added.append(line)
            continue
        at = _value_line(lines, end, key)
        if at is None:
            return fresh
        comment = re.search(r"[ \t]+#.*$", lines[at][len(key) + 1 :])
        lines[at] = line + (comment.group(0) if comment else "")
    text = "\n".join([*lines[:end], *added, *lines[end:]])
    try:
        if parse(text, "rewritten") != wanted:
            return fresh
    except FormatError:
        return fresh
    return text


def _block_lines(text: str) -> tuple[list[str], int] | None:
    """The document's lines and the index of the line closing its frontmatter."""
    lines = text.split("\n")
    if not lines or not _BOUNDARY.fullmatch(lines[0]):
        return None
    end = next((i for i in range(1, len(lines)) if _BOUNDARY.fullmatch(lines[i])), None)
    return (lines, end) if end is not None else None


def _value_line(lines: list[str], end: int, key: str) -> int | None:
    """The line of top-level `key:` when its value sits on that line alone."""
    at = next(
        (i for i in range(1, end) if re.match(rf"{re.escape(key)}:(?:[ \t]|$)", lines[i])), None
    )
    if at is None or not lines[at][len(key) + 1 :].split("#", 1)[0].strip():
        return None  # absent, or a block value on the lines below
    following = lines[at + 1] if at + 1 < end else ""
    if following[:1] in (" ", "\t", "-"):
        return None  # a continued value
    return at
