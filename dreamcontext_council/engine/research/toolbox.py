"""The tools one persona may call in one round, each call kept as a research note.

`PersonaToolBox` is the `ToolBox` a provider's tool loop is given. It denies a name the
run does not offer (a model can be talked into asking for anything) and every call past
the turn's budget, runs the rest on the `ToolServers` under a timeout, and writes every
call, denied ones too, as a note in the persona's `researches/` through the same
`add_research` the `research add` command uses. The model gets the (cut) result headed
`[research note <slug>]` so the persona can cite it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dreamcontext_council.actions.submissions import add_research
from dreamcontext_council.engine.providers.tools import ToolCall, ToolOutcome, ToolSpec
from dreamcontext_council.engine.research.servers import ToolServers
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules import tool_note

RecordOutcome = Literal["ok", "error", "timeout", "denied"]
BUDGET_SPENT = "tool-call budget for this turn is spent; answer now"


@dataclass(frozen=True)
class ToolRecord:
    """One call a persona made, as the run's accounting and live table see it."""

    persona: str
    round: int
    tool: str
    arguments: Mapping[str, Any]
    outcome: RecordOutcome
    latency_s: float
    note: str
    result_bytes: int


class PersonaToolBox:
    """The `ToolBox` of one persona in one round."""

    def __init__(
        self,
        servers: ToolServers,
        root: Root,
        debate_id: str,
        persona: str,
        round: int,
        *,
        max_calls: int,
        timeout_s: float,
        result_limit: int = tool_note.RESULT_LIMIT,
        on_record: Callable[[ToolRecord], None] | None = None,
    ) -> None:
        self.specs: tuple[ToolSpec, ...] = servers.specs
        self.max_calls = max_calls
        self.calls = 0
        self._servers = servers
        self._root = root
        self._debate_id = debate_id
        self._persona = persona
        self._round = round
        self._timeout_s = timeout_s
        self._result_limit = result_limit
        self._on_record = on_record

    async def call(self, call: ToolCall) -> ToolOutcome:
        """Run one call (allowlist, budget, timeout) and record it; never raises for a tool."""
        self.calls += 1  # counted before any wait, so parallel calls cannot overdraw
        objected = isinstance(call.arguments, Mapping)
        arguments: Mapping[str, Any] = call.arguments if objected else {"given": call.arguments}
        served = self._servers.served(call.name)
        called_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        started = time.monotonic()
        outcome: RecordOutcome
        if served is None:
            text, outcome = f"{call.name} is not a tool you may call in this debate.", "denied"
        elif self.calls > self.max_calls:
            text, outcome = BUDGET_SPENT, "denied"
        elif not objected:
            text, outcome = "The arguments must be a JSON object; call the tool again.", "error"
        else:
            reply = await self._servers.reply(served.spec.name, arguments, self._timeout_s)
            text, outcome = reply.text, reply.outcome
        latency = time.monotonic() - started
        result = tool_note.cut(tool_note.clean(text), self._result_limit)
        tool = served.tool if served else call.name
        server = served.server if served else "(none: not offered)"
        # Its lock and fsync stay off the event loop, where other calls are being read.
        note = await asyncio.to_thread(
            add_research,
            self._root,
            self._debate_id,
            self._persona,
            tool_note.topic(tool, arguments, outcome),
            tool_note.body(
                tool=tool,
                server=server,
                round=self._round,
                outcome=outcome,
                arguments=arguments,
                result=result,
                limit=self._result_limit,
                called_at=called_at,
                latency_s=latency,
            ),
            unique=True,
        )
        if self._on_record is not None:
            self._on_record(
                ToolRecord(
                    self._persona,
                    self._round,
                    call.name,
                    dict(arguments),
                    outcome,
                    latency,
                    note.slug,
                    result.total,
                )
            )
        cut_notice = f"\n[cut at {result.notice}]" if result.was_cut else ""
        return ToolOutcome(
            f"[research note {note.slug}]\n{result.text}{cut_notice}",
            is_error=outcome != "ok",
            note=note.slug,
        )
