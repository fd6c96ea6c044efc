"""Where the shipped templates and skill packs live, installed or in a checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2

_PACKAGE = Path(__file__).resolve().parent


def _shipped(name: str) -> Path:
    # A wheel carries the folder inside the package; a source checkout has it beside it.
    inside = _PACKAGE / name
    return inside if inside.is_dir() else _PACKAGE.parent / name


def templates_dir() -> Path:
    """The folder of Jinja templates for files and prompts."""
    return _shipped("templates")


def skill_packs_dir() -> Path:
    """The folder of installable skill packs."""
    return _shipped("skill-packs")


@cache
def environment() -> jinja2.Environment:
    """Templates for markdown files and prompts: strict, never autoescaped."""
    import jinja2  # only commands that render a file pay for it

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # shipped with the package: never changed under a running process
    )


def render(template: str, **values: object) -> str:
    """Render one template from templates/ with the given values."""
    return environment().get_template(template).render(**values)
