"""Command groups that import a command's module only when that command runs.

`dreamcontext council board` must not pay for the engine, the SDKs or the dashboard, so each
command module registers itself on first use. Listing the commands (help, completion, or
reading `group.commands`) loads them all.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import click

from dreamcontext_council.cli.base import CouncilGroup

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values


class CommandModules:
    """Which module registers which command, and loading them once each.

    A module is loaded by calling its registrar with the two groups: `register(cli, council)`,
    or a one-group registrar such as `register_reading(council)`.
    """

    def __init__(self) -> None:
        self.homes: dict[tuple[str, str], str] = {}  # (group, command) -> module
        self.registrars: dict[str, Callable[[click.Group, click.Group], None]] = {}
        self.loaded: set[str] = set()
        self.groups: dict[str, click.Group] = {}

    def add(
        self,
        module: str,
        commands: dict[str, tuple[str, ...]],
        registrar: str = "register",
        *,
        one_group: str | None = None,
    ) -> None:
        """`module` registers `commands` ({group name: command names}) via `registrar`."""
        for group, names in commands.items():
            for name in names:
                self.homes[group, name] = module

        def register(cli: click.Group, council: click.Group) -> None:
            try:
                loaded = importlib.import_module(module)
            except ModuleNotFoundError as exc:
                if exc.name != module:
                    raise
                return  # a later layer's module that is not installed here
            function = getattr(loaded, registrar)
            if one_group is None:
                function(cli, council)
            else:
                function({"cli": cli, "council": council}[one_group])

        self.registrars[module] = register

    def load(self, module: str) -> None:
        if module in self.loaded:
            return
        self.loaded.add(module)
        self.registrars[module](self.groups["cli"], self.groups["council"])

    def load_for(self, group: str, name: str) -> None:
        """Load the module of one command, or every module when the name is unknown."""
        module = self.homes.get((group, name))
        if module is not None:
            self.load(module)
        else:
            self.load_all()

    def load_all(self) -> None:
        for module in list(self.registrars):
            self.load(module)


class _Commands(dict[str, click.Command]):
    """A group's command table that loads every command module before it is read whole."""

    def __init__(self, modules: CommandModules) -> None:
        super().__init__()
        self.modules = modules

    def _full(self) -> None:
        self.modules.load_all()

    def __getitem__(self, name: str) -> click.Command:
        self._full()
        return super().__getitem__(name)

    def __contains__(self, name: object) -> bool:
        self._full()
        return super().__contains__(name)

    def __iter__(self) -> Iterator[str]:
        self._full()
        return super().__iter__()

    def __len__(self) -> int:
        self._full()
        return super().__len__()

    def get(self, name: str, default: Any = None) -> Any:
        self._full()
        return super().get(name, default)

    def keys(self) -> dict_keys[str, click.Command]:
        self._full()
        return super().keys()

    def values(self) -> dict_values[str, click.Command]:
        self._full()
        return super().values()

    def items(self) -> dict_items[str, click.Command]:
        self._full()
        return super().items()


class LazyGroup(CouncilGroup):
    """A CouncilGroup whose commands come from modules loaded on demand."""

    def __init__(self, *args: Any, modules: CommandModules, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.modules = modules
        self.table = _Commands(modules)
        self.commands = self.table
        modules.groups[self.name or ""] = self

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found: click.Command | None = dict.get(self.table, cmd_name)
        if found is None:
            self.modules.load_for(self.name or "", cmd_name)
            found = dict.get(self.table, cmd_name)
        return found
