"""YAML from untrusted files: no aliases, no duplicate keys, bounded depth and size.

PyYAML's safe loader still expands aliases: a few hundred bytes of nested aliases (the
"billion laughs") build a document that takes gigabytes to walk. Here the document is
composed into nodes first (linear in the text) and checked before anything is built: an
alias (a node met twice), a mapping with the same key twice, or nesting deeper than
`MAX_DEPTH` is refused with a one-line `YamlRefused` naming the problem.
"""

from __future__ import annotations

from functools import cache
from typing import Any

# Far above what a debate's frontmatter or a roster holds; far below what would be slow.
MAX_CHARS = 1_000_000
MAX_DEPTH = 64


class YamlRefused(ValueError):
    """YAML that is well formed but refused: aliases, duplicate keys, too deep or too large."""


@cache
def _yaml() -> Any:
    # PyYAML loads a dozen modules; commands that read no YAML skip them.
    import yaml

    return yaml


@cache
def _loader() -> Any:
    yaml = _yaml()
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(base):  # type: ignore[misc, valid-type]
        """The safe loader, checking the composed document before it constructs it."""

        def get_single_data(self) -> Any:
            node = self.get_single_node()
            if node is None:
                return None
            check_nodes(node)
            return self.construct_document(node)

    return StrictLoader


def load(text: str) -> Any:
    """The one YAML document in `text`; yaml.YAMLError or YamlRefused when it is not acceptable."""
    if len(text) > MAX_CHARS:
        raise YamlRefused(f"is {len(text):,} characters, over the {MAX_CHARS:,} limit; shorten it")
    return _yaml().load(text, Loader=_loader())


def yaml_error() -> type[Exception]:
    """PyYAML's base error class (imported on first use)."""
    error: type[Exception] = _yaml().YAMLError
    return error


def check_nodes(top: Any) -> None:
    """Refuse an alias, a duplicate key or nesting over MAX_DEPTH in a composed document."""
    yaml = _yaml()
    seen: set[int] = set()
    stack = [(top, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            raise YamlRefused("uses an alias (*name); write the value out in full")
        seen.add(id(node))
        if depth > MAX_DEPTH:
            raise YamlRefused(f"is nested more than {MAX_DEPTH} levels deep; flatten it")
        if isinstance(node, yaml.MappingNode):
            keys: set[tuple[str, str]] = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if (key.tag, key.value) in keys:
                        raise YamlRefused(f"has the duplicate key '{key.value}'; keep one of them")
                    keys.add((key.tag, key.value))
                stack += [(key, depth + 1), (value, depth + 1)]
        elif isinstance(node, yaml.SequenceNode):
            stack += [(item, depth + 1) for item in node.value]
