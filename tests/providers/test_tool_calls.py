"""A persona's turn with MCP tools: the real SDKs call tools through the local stub server.

The toolbox here is a small stand-in of our own `ToolBox` protocol that answers from
a table and records every call it receives; everything between it and the stub
server (request shapes, the loop, budgets, retries) is the real code.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from stub_server import RecordedRequest, StubResponse, StubServer, tool_results

from dreamcontext_council.engine.providers.base import (
    Completion,
    Prompt,
    ProviderCallError,
)
from dreamcontext_council.engine.providers.command_provider import CommandProvider
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.engine.providers.registry import ProviderSet
from dreamcontext_council.engine.providers.retry import RetryPolicy
from dreamcontext_council.engine.providers.scripted import ScriptedProvider
from dreamcontext_council.engine.providers.tool_turn import BUDGET_SPENT
from dreamcontext_council.engine.providers.tools import ToolBox, ToolCall, ToolOutcome, ToolSpec
from dreamcontext_council.errors import ProviderError

from .conftest import ProviderFactory, SleepRecorder, completed

MODEL = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-4o-mini"}
LOOKUP = ToolSpec(
    name="table__lookup",
    description="Look a key up in the project's table.",
    input_schema={
        "type": "object",
        "properties": {"key": {"type": "string"}},
        "required": ["key"],
    },
)


class TableToolBox:
    """Answers `table__lookup` from a dict and records each call it is handed."""

    def __init__(self, table: Mapping[str, str], max_calls: int = 4) -> None:
        self.specs = (LOOKUP,)
        self.max_calls = max_calls
        self.table = dict(table)
        self.calls: list[ToolCall] = []

    async def call(self, call: ToolCall) -> ToolOutcome:
        self.calls.append(call)
        key = str(call.arguments.get("key"))
        if key not in self.table:
            return ToolOutcome(f"lookup failed: no key {key!r}", is_error=True)
        return ToolOutcome(self.table[key], note=f"lookup-{key}")


def tool_prompt(toolbox: ToolBox) -> Prompt:
    return Prompt(
        system="You are the Empiricist.",
        user="How big is the table?",
        max_tokens=200,
        tools=toolbox,
    )


def ask(provider_factory: ProviderFactory, toolbox: ToolBox, **options: Any) -> Completion:
    provider = provider_factory(**options)
    return completed(provider, tool_prompt(toolbox), MODEL[provider.name])


def offered_tools(request: RecordedRequest) -> list[str]:
    """The names of the tools a request lists, in either API's shape."""
    tools = request.json.get("tools") or []
    if request.api == "anthropic":
        return [tool["name"] for tool in tools]
    return [tool["function"]["name"] for tool in tools]


def forbids_tools(request: RecordedRequest) -> bool:
    """Whether a request forbids tool calls (`tool_choice` none, in its API's shape)."""
    choice = request.json.get("tool_choice")
    return choice == ({"type": "none"} if request.api == "anthropic" else "none")


def calls_asked(request: RecordedRequest) -> list[tuple[str, str, Any]]:
    """(id, name, arguments) of the tool calls in the assistant turns a request sends back."""
    asked: list[tuple[str, str, Any]] = []
    for message in request.json["messages"]:
        if message["role"] != "assistant":
            continue
        if request.api == "anthropic":
            asked.extend(
                (b["id"], b["name"], b["input"])
                for b in message["content"]
                if b["type"] == "tool_use"
            )
        else:
            asked.extend(
                (c["id"], c["function"]["name"], c["function"]["arguments"])
                for c in message.get("tool_calls") or []
            )
    return asked


# -- one call, then the answer ----------------------------------------------------------


def test_one_tool_call_then_an_answer_is_one_completion_with_summed_usage(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(
        StubResponse.tool_calls(
            [("table__lookup", {"key": "rows"})], input_tokens=100, output_tokens=20
        ),
        StubResponse.reply(
            "The table has 42 rows [lookup-rows].",
            model="served-model-9",
            input_tokens=150,
            output_tokens=30,
        ),
    )
    toolbox = TableToolBox({"rows": "42"})

    completion = ask(sdk_provider, toolbox)

    assert completion.text == "The table has 42 rows [lookup-rows]."
    assert completion.tool_calls == 1
    assert completion.usage.input_tokens == 250
    assert completion.usage.output_tokens == 50
    assert completion.model == "served-model-9"
    assert completion.attempts == 2
    assert [(c.name, dict(c.arguments)) for c in toolbox.calls] == [
        ("table__lookup", {"key": "rows"})
    ]
    first, second = stub.requests
    assert offered_tools(first) == offered_tools(second) == ["table__lookup"]
    assert not forbids_tools(first) and not forbids_tools(second)
    [(call_id, name, _)] = calls_asked(second)
    assert call_id == toolbox.calls[0].id and name == "table__lookup"
    [result] = tool_results(second.json)
    assert (result.call_id, result.content) == (call_id, "42")
    assert result.is_error in (False, None)


def test_the_tools_and_the_results_have_each_apis_own_shape(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(StubResponse.tool_calls([("table__lookup", {"key": "rows"})]), "42 rows.")

    ask(sdk_provider, TableToolBox({"rows": "42"}))

    first, second = stub.requests
    messages = second.json["messages"]
    if first.api == "anthropic":
        assert first.json["tools"] == [
            {
                "name": "table__lookup",
                "description": LOOKUP.description,
                "input_schema": LOOKUP.input_schema,
            }
        ]
        call_id = messages[1]["content"][0]["id"]
        assert messages[0] == {"role": "user", "content": "How big is the table?"}
        assert messages[1] == {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": call_id,
                    "name": "table__lookup",
                    "input": {"key": "rows"},
                }
            ],
        }
        assert messages[2] == {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": "42", "is_error": False}
            ],
        }
    else:
        assert first.json["tools"] == [
            {
                "type": "function",
                "function": {
                    "name": "table__lookup",
                    "description": LOOKUP.description,
                    "parameters": LOOKUP.input_schema,
                },
            }
        ]
        call_id = messages[2]["tool_calls"][0]["id"]
        assert messages[2] == {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "table__lookup", "arguments": '{"key": "rows"}'},
                }
            ],
        }
        assert messages[3] == {"role": "tool", "tool_call_id": call_id, "content": "42"}


def test_text_the_model_says_before_its_calls_goes_back_with_them(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(
        StubResponse.tool_calls([("table__lookup", {"key": "rows"})], text="Let me check."),
        "42 rows.",
    )

    completion = ask(sdk_provider, TableToolBox({"rows": "42"}))

    assert completion.text == "42 rows."
    assistant = [m for m in stub.requests[1].json["messages"] if m["role"] == "assistant"]
    if stub.requests[1].api == "anthropic":
        assert assistant[0]["content"][0] == {"type": "text", "text": "Let me check."}
    else:
        assert assistant[0]["content"] == "Let me check."


# One reply asking three lookups at once, of this table.
THREE_LOOKUPS = [("table__lookup", {"key": key}) for key in ("rows", "columns", "owner")]
TABLE = {"rows": "42", "columns": "7", "owner": "Ada"}


def test_several_calls_in_one_reply_run_in_order_and_each_gets_its_result(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(
        StubResponse.tool_calls(THREE_LOOKUPS),
        "42 rows, 7 columns, owned by Ada.",
    )
    toolbox = TableToolBox(TABLE)

    completion = ask(sdk_provider, toolbox)

    assert completion.tool_calls == 3
    assert [c.arguments["key"] for c in toolbox.calls] == ["rows", "columns", "owner"]
    second = stub.requests[1]
    asked_ids = [call_id for call_id, _, _ in calls_asked(second)]
    results = tool_results(second.json)
    assert [r.call_id for r in results] == asked_ids == [c.id for c in toolbox.calls]
    assert [r.content for r in results] == ["42", "7", "Ada"]


def test_a_conversation_of_several_replies_keeps_every_turn(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(
        StubResponse.tool_calls([("table__lookup", {"key": "rows"})]),
        StubResponse.tool_calls([("table__lookup", {"key": "columns"})]),
        "42 by 7.",
    )
    toolbox = TableToolBox({"rows": "42", "columns": "7"})

    completion = ask(sdk_provider, toolbox)

    assert completion.text == "42 by 7."
    assert completion.tool_calls == 2
    third = stub.requests[2]
    assert [name for _, name, _ in calls_asked(third)] == ["table__lookup", "table__lookup"]
    assert [r.content for r in tool_results(third.json)] == ["42", "7"]


# -- the budget -------------------------------------------------------------------------


def test_calls_past_the_budget_are_answered_spent_and_the_next_request_forbids_tools(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(
        StubResponse.tool_calls(THREE_LOOKUPS),
        "42 by 7; the owner I could not check.",
    )
    toolbox = TableToolBox(TABLE, max_calls=2)

    completion = ask(sdk_provider, toolbox)

    assert completion.tool_calls == 2
    assert [c.arguments["key"] for c in toolbox.calls] == ["rows", "columns"]
    first, second = stub.requests
    assert not forbids_tools(first)
    assert forbids_tools(second)
    assert offered_tools(second) == ["table__lookup"]  # still listed: the history names it
    results = tool_results(second.json)
    assert [r.content for r in results[:2]] == ["42", "7"]
    assert BUDGET_SPENT in results[2].content
    if second.api == "anthropic":
        assert results[2].is_error is True


def test_a_server_that_ignores_tool_choice_none_is_cut_off_at_max_calls_plus_two(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.responder = lambda request: StubResponse.tool_calls(
        [("table__lookup", {"key": "rows"})], text="Still looking."
    )
    toolbox = TableToolBox({"rows": "42"}, max_calls=2)

    completion = ask(sdk_provider, toolbox)

    assert completion.text == "Still looking."
    assert completion.tool_calls == 2
    assert len(toolbox.calls) == 2
    assert len(stub.requests) == 4
    assert [forbids_tools(r) for r in stub.requests] == [False, False, True, True]
    assert BUDGET_SPENT in tool_results(stub.requests[3].json)[-1].content


def test_a_model_that_never_stops_calling_and_never_says_anything_fails_plainly(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.responder = lambda request: StubResponse.tool_calls([("table__lookup", {"key": "rows"})])
    toolbox = TableToolBox({"rows": "42"}, max_calls=1)

    with pytest.raises(ProviderCallError) as caught:
        ask(sdk_provider, toolbox)

    message = str(caught.value)
    assert "kept calling tools" in message and "tool_choice none" in message
    assert "\n" not in message
    assert len(stub.requests) == 3
    assert len(toolbox.calls) == 1


def test_a_budget_of_zero_forbids_tools_from_the_first_request(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    toolbox = TableToolBox({"rows": "42"}, max_calls=0)

    completion = ask(sdk_provider, toolbox)

    assert completion.text == "stub answer"
    assert completion.tool_calls == 0
    [request] = stub.requests
    assert forbids_tools(request)
    assert offered_tools(request) == ["table__lookup"]


# -- what goes wrong --------------------------------------------------------------------


def test_a_tool_error_goes_back_marked_as_an_error(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(StubResponse.tool_calls([("table__lookup", {"key": "nope"})]), "No such key.")
    toolbox = TableToolBox({"rows": "42"})

    completion = ask(sdk_provider, toolbox)

    assert completion.text == "No such key."
    assert completion.tool_calls == 1
    [result] = tool_results(stub.requests[1].json)
    assert "lookup failed: no key 'nope'" in result.content
    if stub.requests[1].api == "anthropic":
        assert result.is_error is True
    else:
        assert result.content.startswith("error: ")


def test_arguments_that_are_not_an_object_never_reach_the_toolbox(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(
        StubResponse.tool_calls([("table__lookup", "[1, 2]"), ("table__lookup", {"key": "rows"})]),
        "42 rows.",
    )
    toolbox = TableToolBox({"rows": "42"})

    completion = ask(sdk_provider, toolbox)

    assert completion.tool_calls == 1
    assert [c.arguments for c in toolbox.calls] == [{"key": "rows"}]
    bad, good = tool_results(stub.requests[1].json)
    assert "not a JSON object" in bad.content and bad.content.startswith("error: ")
    assert good.content == "42"


def test_malformed_openai_arguments_get_an_error_result(
    stub: StubServer, fast_retry: RetryPolicy
) -> None:
    from dreamcontext_council.engine.providers.openai_provider import OpenAIProvider

    stub.enqueue(
        StubResponse.tool_calls([("table__lookup", '{"key": "rows"')]), "I could not look."
    )
    toolbox = TableToolBox({"rows": "42"})
    provider = OpenAIProvider(base_url=stub.openai_url, retry=fast_retry, env={})

    completion = completed(provider, tool_prompt(toolbox), "gpt-4o-mini")

    assert completion.text == "I could not look."
    assert completion.tool_calls == 0
    assert toolbox.calls == []
    second = stub.requests[1]
    # The malformed arguments go back exactly as the model sent them.
    [(_, _, arguments)] = calls_asked(second)
    assert arguments == '{"key": "rows"'
    [result] = tool_results(second.json)
    assert result.content.startswith("error: the arguments of table__lookup are not valid JSON")


def test_a_rate_limit_mid_conversation_repeats_the_request_not_the_tool_call(
    sdk_provider: ProviderFactory, stub: StubServer, sleeps: SleepRecorder
) -> None:
    stub.enqueue(
        StubResponse.tool_calls([("table__lookup", {"key": "rows"})], input_tokens=10),
        StubResponse.error(429, headers={"Retry-After": "3"}),
        StubResponse.reply("42 rows.", input_tokens=20),
    )
    toolbox = TableToolBox({"rows": "42"})

    completion = ask(sdk_provider, toolbox)

    assert completion.text == "42 rows."
    assert len(toolbox.calls) == 1
    assert completion.tool_calls == 1
    assert completion.attempts == 3
    assert completion.usage.input_tokens == 30
    assert sleeps.waits == [3.0]
    first, refused, retried = stub.requests
    assert tool_results(first.json) == []
    assert refused.json == retried.json
    assert len(tool_results(retried.json)) == 1


def test_a_reply_with_neither_text_nor_calls_is_retried_as_an_empty_answer(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(StubResponse.reply(""), StubResponse.reply("42 rows."))

    completion = ask(sdk_provider, TableToolBox({"rows": "42"}))

    assert completion.text == "42 rows."
    assert completion.attempts == 2
    assert completion.tool_calls == 0


# -- without tools nothing changes ------------------------------------------------------


def test_a_prompt_without_tools_sends_the_same_request_as_before(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    provider = sdk_provider()
    prompt = Prompt(system="You are the Empiricist.", user="How big is the table?", max_tokens=200)

    completion = completed(provider, prompt, MODEL[provider.name])

    assert completion.tool_calls == 0
    [request] = stub.requests
    if request.api == "anthropic":
        assert request.json == {
            "model": MODEL["anthropic"],
            "max_tokens": 200,
            "messages": [{"role": "user", "content": "How big is the table?"}],
            "system": "You are the Empiricist.",
        }
    else:
        assert request.json == {
            "model": MODEL["openai"],
            "messages": [
                {"role": "system", "content": "You are the Empiricist."},
                {"role": "user", "content": "How big is the table?"},
            ],
            "max_tokens": 200,
        }


def test_without_tools_a_reply_of_only_tool_calls_is_no_answer(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(StubResponse.tool_calls([("table__lookup", {"key": "rows"})]), "Plain answer.")
    provider = sdk_provider()

    completion = completed(provider, Prompt(system="", user="Answer."), MODEL[provider.name])

    assert completion.text == "Plain answer."
    assert completion.attempts == 2


# -- providers that cannot call tools ----------------------------------------------------


def test_the_command_provider_refuses_tools_before_running_anything(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    command = shlex.join(
        [sys.executable, "-c", f"open({str(marker)!r}, 'w').write('x'); print('hi')"]
    )
    provider = CommandProvider(timeout_s=5.0)

    with pytest.raises(ProviderError) as caught:
        asyncio.run(provider.complete(tool_prompt(TableToolBox({})), command))

    assert str(caught.value) == (
        "the command: provider cannot call MCP tools; run without --tools, "
        "or give this persona an anthropic: or openai: model"
    )
    assert not marker.exists()


def test_the_scripted_provider_refuses_tools() -> None:
    with pytest.raises(ProviderError, match=r"^the scripted provider cannot call MCP tools;"):
        asyncio.run(ScriptedProvider().complete(tool_prompt(TableToolBox({})), "scripted"))


@pytest.mark.parametrize(
    ("model", "can"),
    [
        ("sonnet", True),
        ("openai:gpt-4o", True),
        ("command:claude -p", False),
        ("scripted", False),
    ],
)
def test_the_pre_flight_knows_which_models_can_call_tools(model: str, can: bool) -> None:
    providers = ProviderSet(env={})
    spec = parse_model(model)

    assert providers.supports_tools(spec) is can
    if can:
        providers.refuse_tools(spec)
    else:
        with pytest.raises(ProviderError, match="cannot call MCP tools"):
            providers.refuse_tools(spec)


def test_the_table_toolbox_is_a_toolbox() -> None:
    assert isinstance(TableToolBox({}), ToolBox)


def test_a_call_to_a_tool_that_is_not_a_function_gets_an_error_and_stays_in_the_history() -> None:
    from openai.types.chat import ChatCompletion

    from dreamcontext_council.engine.providers.openai_provider import read_chat_completion

    custom = {"id": "call_c1", "type": "custom", "custom": {"name": "grep", "input": "x"}}
    response = ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {"role": "assistant", "content": None, "tool_calls": [custom]},
                }
            ],
        }
    )

    reply = read_chat_completion(response, "gpt-4o-mini")

    [call] = reply.tool_calls
    assert (call.id, call.name) == ("call_c1", "grep")
    assert reply.argument_errors == {
        "call_c1": "'grep' is not a function; only functions are offered"
    }
    assert reply.assistant_turn["tool_calls"] == [custom]


def test_a_chat_completion_is_read_from_its_json_object_as_from_the_sdk_model() -> None:
    from openai.types.chat import ChatCompletion

    from dreamcontext_council.engine.providers.openai_provider import read_chat_completion

    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "grep", "arguments": '{"pattern": "x"}'},
    }
    custom = {"id": "call_c1", "type": "custom", "custom": {"name": "sed", "input": "x"}, "x": None}
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "served-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "Looking.",
                    "tool_calls": [call, custom],
                },
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }

    from_json = read_chat_completion(body, "asked-model")
    from_model = read_chat_completion(ChatCompletion.model_validate(body), "asked-model")

    assert from_json == from_model
    assert (from_json.text, from_json.model) == ("Looking.", "served-model")
    assert (from_json.input_tokens, from_json.output_tokens) == (12, 3)
    assert [c.arguments for c in from_json.tool_calls] == [{"pattern": "x"}, {}]
    assert from_json.assistant_turn["tool_calls"][1] == {
        "id": "call_c1",
        "type": "custom",
        "custom": {"name": "sed", "input": "x"},
    }


def test_a_chat_completion_whose_usage_is_not_a_number_is_malformed() -> None:
    from dreamcontext_council.engine.providers.diagnosis import AttemptFailed
    from dreamcontext_council.engine.providers.openai_provider import read_chat_completion

    body = {
        "choices": [{"message": {"content": "hi"}}],
        "usage": {"prompt_tokens": "many", "completion_tokens": 1},
    }

    with pytest.raises(AttemptFailed, match="did not match the API schema"):
        read_chat_completion(body, "m")
