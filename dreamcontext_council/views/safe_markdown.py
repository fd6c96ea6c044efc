"""Markdown to HTML for untrusted model output: no raw HTML, safe links, citation links.

Citations (`risk-auditor R1`, `growth-cfo R1+R2`) become links to the matrix cell of that
persona and round, and `**slug**:` mentions become chips linking to the persona. Both are
made on markdown-it's token stream, so the text they wrap is escaped like any other text.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache, lru_cache
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markupsafe import Markup

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_ROUND_CITE = re.compile(r"R(\d+)")
# Characters browsers drop or ignore inside a URL scheme ("java\tscript:").
_INVISIBLE = re.compile(r"[\x00-\x20\x7f]+")


def safe_href(url: str) -> bool:
    """Allow only http, https and mailto links and same-page `#anchors`."""
    cleaned = _INVISIBLE.sub("", url)
    if cleaned.startswith("#"):
        return True
    try:
        scheme = urlsplit(cleaned).scheme.lower()
    except ValueError:
        return False
    return scheme in SAFE_SCHEMES and not cleaned.lower().startswith(("//", "\\"))


def cell_anchor(slug: str, number: int) -> str:
    """The id of the matrix cell of one persona in one round."""
    return f"cell-{slug}-{number}"


def persona_anchor(slug: str) -> str:
    """The id of a persona's transcript section."""
    return f"persona-{slug}"


@dataclass(frozen=True)
class LinkTargets:
    """What citations and mentions may link to on the page being rendered."""

    personas: frozenset[str]
    rounds: frozenset[int]

    @classmethod
    def of(cls, personas: Collection[str], rounds: Collection[int]) -> LinkTargets:
        return cls(frozenset(personas), frozenset(rounds))

    def citation_pattern(self) -> re.Pattern[str] | None:
        """The pattern of `slug R1+R2` citations, built once per set of personas."""
        return _citation_pattern(self.personas)


@lru_cache(maxsize=64)
def _citation_pattern(personas: frozenset[str]) -> re.Pattern[str] | None:
    if not personas:
        return None
    names = "|".join(re.escape(p) for p in sorted(personas, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])({names}) (R\d+(?:\+R\d+)*)(?![\w-])")


def _link(href: str, css: str, text: str) -> list[Token]:
    opening = Token("link_open", "a", 1, attrs={"href": href, "class": css})
    return [opening, Token("text", "", 0, content=text), Token("link_close", "a", -1)]


def _text(content: str) -> Token:
    return Token("text", "", 0, content=content)


def _cite(token: Token, pattern: re.Pattern[str], targets: LinkTargets) -> list[Token]:
    """Split one text token around its citations."""
    out: list[Token] = []
    position = 0
    for match in pattern.finditer(token.content):
        slug = match.group(1)
        numbers = [int(n) for n in _ROUND_CITE.findall(match.group(2))]
        if not all(n in targets.rounds for n in numbers):
            continue
        if match.start() > position:
            out.append(_text(token.content[position : match.start()]))
        for i, number in enumerate(numbers):
            label = f"{slug} R{number}" if i == 0 else f"R{number}"
            if i:
                out.append(_text("+"))
            out += _link("#" + cell_anchor(slug, number), "cite", label)
        position = match.end()
    if not out:
        return [token]
    if position < len(token.content):
        out.append(_text(token.content[position:]))
    return out


def _mentions(children: list[Token], targets: LinkTargets) -> list[Token]:
    """`**slug**:` (a bold persona slug followed by a colon) becomes a persona chip."""
    out: list[Token] = []
    i = 0
    while i < len(children):
        window = children[i : i + 4]
        if (
            len(window) == 4
            and window[0].type == "strong_open"
            and window[1].type == "text"
            and window[1].content in targets.personas
            and window[2].type == "strong_close"
            and window[3].type == "text"
            and window[3].content.startswith(":")
        ):
            slug = window[1].content
            out += _link("#" + persona_anchor(slug), "chip persona-chip", slug)
            out.append(window[3])
            i += 4
            continue
        out.append(children[i])
        i += 1
    return out


def _heading_floor(state: StateCore) -> None:
    """Headings above the floor are shown at it: a round entry's text cannot pose as the
    page's own `<h1>`/`<h2>` (a round heading), whatever a hand-edited file holds."""
    floor = state.env.get("heading_floor", 1) if isinstance(state.env, dict) else 1
    for token in state.tokens:
        if token.type in ("heading_open", "heading_close") and int(token.tag[1]) < floor:
            token.tag = f"h{floor}"


def _council_links(state: StateCore) -> None:
    targets = state.env.get("targets") if isinstance(state.env, dict) else None
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children = block.children
        # A second line of defence behind validateLink: drop any unsafe href that got through.
        for child in children:
            if child.type == "link_open" and not safe_href(str(child.attrGet("href") or "")):
                child.attrSet("href", "#")
        if not isinstance(targets, LinkTargets):
            continue
        children = _mentions(children, targets)
        pattern = state.env.get("pattern")
        if pattern is not None:
            linked: list[Token] = []
            inside_link = 0
            for child in children:
                inside_link += child.type == "link_open"
                inside_link -= child.type == "link_close"
                if child.type == "text" and not inside_link:
                    linked += _cite(child, pattern, targets)
                else:
                    linked.append(child)
            children = linked
        block.children = children


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.disable("image")  # a remote image is a request to a third party; show the link text
    md.validateLink = safe_href  # type: ignore[method-assign]
    md.core.ruler.push("council_links", _council_links)
    md.core.ruler.push("heading_floor", _heading_floor)
    return md


class RenderedCache:
    """Rendered markdown by its source text, what it may link to and its heading floor.

    Keyed by the text itself, not by the file it came from: an edit that keeps a file's
    size and mtime still renders anew, and the same entry read twice renders once. Least
    recently used texts go first once the sources held pass `limit` characters."""

    def __init__(self, limit: int = 16_000_000) -> None:
        self.limit = limit
        self._held = 0
        self._items: OrderedDict[tuple[str, LinkTargets | None, int], Markup] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, LinkTargets | None, int]) -> Markup | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, LinkTargets | None, int], html: Markup) -> None:
        if len(key[0]) > self.limit:
            return
        with self._lock:
            if key not in self._items:
                self._held += len(key[0])
            self._items[key] = html
            while self._held > self.limit:
                old, _ = self._items.popitem(last=False)
                self._held -= len(old[0])

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._held = 0

    def __len__(self) -> int:
        return len(self._items)


_RENDERED = RenderedCache()


# Round entries and persona panels sit under the page's round and persona headings.
ENTRY_HEADING_FLOOR = 3


def render_markdown(
    text: str, targets: LinkTargets | None = None, *, heading_floor: int = 1
) -> Markup:
    """Safe HTML for untrusted markdown: raw HTML is shown as text, links are checked, and
    no heading renders above `<h{heading_floor}>`."""
    key = (text, targets, heading_floor)
    found = _RENDERED.get(key)
    if found is None:
        pattern = targets.citation_pattern() if targets is not None else None
        env = {"targets": targets, "heading_floor": heading_floor, "pattern": pattern}
        found = Markup(_parser().render(text, env))
        _RENDERED.put(key, found)
    return found
