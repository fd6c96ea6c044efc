"""Read the `dreamcontext …` commands out of the skill pack and the docs, and check them
against the click command tree.

Two kinds of command are found in markdown:
- lines of ```bash blocks: commands an agent runs literally, one per line, a heredoc
  (`<<'EOF'` … `EOF`) giving the command its stdin;
- inline code spans that start with `dreamcontext ` (tables and prose), where
  `[--option …]` marks an optional part.
Placeholders are `<lowercase-words>` (see SKILL.md's table).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import click

REPO = Path(__file__).resolve().parents[2]
PACK_DIR = REPO / "skill-packs"
SKILL_MD = PACK_DIR / "council" / "SKILL.md"
PROTOCOL_MD = PACK_DIR / "council" / "debate-protocol.md"
PERSONA_MD = PACK_DIR / "agents" / "council-persona.md"
SYNTHESIZER_MD = PACK_DIR / "agents" / "council-synthesizer.md"

PLACEHOLDER = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)>")
_HEREDOC = re.compile(r"\s<<-?\s*'?([A-Za-z_]+)'?\s*$")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
_INLINE = re.compile(r"(?<!`)`(dreamcontext [^`]+)`(?!`)")
_IN_LINE = re.compile(r"(?:^|[\s(/])(dreamcontext )")
_METAVAR = re.compile(r"^[A-Z][A-Z_.]*$")

# Commands other engineers are still building: named in docs before they land.
PENDING = {("council", "run"), ("council", "serve"), ("council", "watch"), ("council", "export")}


@dataclass(frozen=True)
class PackCommand:
    """One command as written in a markdown file."""

    file: Path
    line: int
    section: str  # the nearest `## ` heading above it
    text: str  # the command line, without the heredoc
    stdin: str | None = None  # the heredoc body, if any
    inline: bool = False

    @property
    def where(self) -> str:
        return f"{self.file.relative_to(REPO)}:{self.line}"

    def placeholders(self) -> list[str]:
        return PLACEHOLDER.findall(self.text)


def bash_commands(path: Path, *, strict: bool = True) -> list[PackCommand]:
    """Every command line of the file's ```bash blocks, in order.

    Strict (the pack): every line of a bash block must be a `dreamcontext` command.
    Otherwise (docs): other lines are skipped and `VAR=value` prefixes dropped.
    """
    lines = path.read_text(encoding="utf-8").split("\n")
    commands: list[PackCommand] = []
    section = ""
    fence: str | None = None
    language = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        opened = _FENCE.match(line)
        if fence is None:
            if line.startswith("## "):
                section = line[3:].strip()
            if opened:
                fence, language = opened.group(2), opened.group(3)
            i += 1
            continue
        if line.strip().startswith(fence) and line.strip() == line.strip()[0] * len(line.strip()):
            fence = None
            i += 1
            continue
        if language != "bash" or not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        start = i
        if not strict:
            # Docs may use continuations, `VAR=value` prefixes and `$(...)` around a command.
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            found = _IN_LINE.search(line)
            if not found:
                i += 1
                continue
            line = line[found.start(1) :]
        if not line.startswith("dreamcontext "):
            raise AssertionError(
                f"{path.relative_to(REPO)}:{i + 1}: a bash block line that is not a "
                f"dreamcontext command: {line!r}"
            )
        heredoc = _HEREDOC.search(line)
        stdin = None
        text = line
        if heredoc:
            text = line[: heredoc.start()]
            body = []
            i += 1
            while i < len(lines) and lines[i] != heredoc.group(1):
                body.append(lines[i])
                i += 1
            if i == len(lines):
                raise AssertionError(f"{path.relative_to(REPO)}:{start + 1}: heredoc never ends")
            stdin = "\n".join(body) + "\n"
        commands.append(PackCommand(path, start + 1, section, text.strip(), stdin))
        i += 1
    if fence is not None:
        raise AssertionError(f"{path.relative_to(REPO)}: a code fence is never closed")
    return commands


def inline_commands(path: Path) -> list[PackCommand]:
    """Every inline code span starting with `dreamcontext `, outside fenced blocks."""
    found: list[PackCommand] = []
    fence: str | None = None
    section = ""
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        opened = _FENCE.match(line)
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(2)
            continue
        if line.startswith("## "):
            section = line[3:].strip()
        for match in _INLINE.finditer(line):
            found.append(PackCommand(path, number, section, match.group(1).strip(), inline=True))
    return found


def all_commands(path: Path) -> list[PackCommand]:
    """Bash-block and inline commands; bash blocks are strict only inside the pack."""
    strict = PACK_DIR in path.parents
    return bash_commands(path, strict=strict) + inline_commands(path)


def tokens(command: PackCommand) -> list[str]:
    """The command's words with placeholders replaced by a dummy word and [ ] dropped."""
    text = PLACEHOLDER.sub("X", command.text)
    if command.inline:
        text = text.replace("[", " ").replace("]", " ").replace(" | ", " ")
    lexer = shlex.shlex(text, posix=True, punctuation_chars="<>|;&")
    lexer.whitespace_split = True
    words = []
    for word in lexer:
        if word and set(word) <= set("<>|;&"):
            break  # a redirect or a pipe ends the command's own words
        words.append(word)
    return words


@dataclass(frozen=True)
class Problem:
    command: PackCommand
    message: str
    pending: bool = False  # the command is one other engineers have not landed yet

    def __str__(self) -> str:
        return f"{self.command.where}: `{self.command.text}`: {self.message}"


def check_command(root: click.Group, command: PackCommand) -> Problem | None:
    """None if every subcommand and --option the command names exists in the tree."""
    words = tokens(command)
    if not words or words[0] != "dreamcontext":
        return Problem(command, "does not start with `dreamcontext`")
    current: click.Command = root
    path: list[str] = []
    rest = words[1:]
    while isinstance(current, click.Group) and rest:
        word = rest[0]
        if word.startswith("-") or _METAVAR.match(word):
            break
        sub = current.commands.get(word)
        if sub is None:
            where = " ".join(["dreamcontext", *path])
            pending = tuple([*path, word]) in PENDING
            note = " (not built yet)" if pending else ""
            return Problem(command, f"`{where}` has no command `{word}`{note}", pending)
        current = sub
        path.append(word)
        rest = rest[1:]
    known = {"--help", "-h"}
    for param in current.params:
        if isinstance(param, click.Option):
            known.update(param.opts)
            known.update(param.secondary_opts)
    name = " ".join(["dreamcontext", *path])
    for word in rest:
        if word.startswith("-") and word != "-":
            option = word.split("=", 1)[0]
            if option not in known:
                return Problem(command, f"`{name}` has no option `{option}`")
    return None


def documented_files() -> list[Path]:
    """Every markdown file of the pack and the docs, and the README."""
    files = sorted(PACK_DIR.rglob("*.md")) + sorted((REPO / "docs").rglob("*.md"))
    readme = REPO / "README.md"
    return [*files, readme] if readme.is_file() else files


def command_path(root: click.Group, command: PackCommand) -> tuple[str, ...]:
    """The subcommand names the command walks through, e.g. ("council", "round", "start")."""
    current: click.Command = root
    path: list[str] = []
    for word in tokens(command)[1:]:
        if not isinstance(current, click.Group) or word.startswith("-"):
            break
        sub = current.commands.get(word)
        if sub is None:
            break
        current = sub
        path.append(word)
    return tuple(path)
