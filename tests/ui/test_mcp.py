"""The app as an MCP server (Gradio's mcp_server, gradio[mcp]), driven by the real MCP client over streamable HTTP
against the served page (127.0.0.1 only): every listed tool is called and returns its result, which equals the same
computation done here; every example a tool's description offers validates against its input schema; bad input
comes back as one clear error."""

from __future__ import annotations

import ast
import asyncio
import json
import re

import jsonschema
import numpy as np
import pytest
from helpers import in_own_thread

from model.core.positional import sinusoidal_positional_encoding
from model.decoding.greedy import translate
from serving import trace_from_lean
from serving.translation import notices
from ui import api, build_demo, server

mcp = pytest.importorskip("mcp", reason="gradio[mcp] is in requirements.txt: pip install -r requirements.txt")

GERMAN = "Zwei Hunde spielen im Schnee."


def mcp_session(url: str, calls: list[tuple[str, dict]]) -> tuple[list, list]:
    """(the listed tools, the result of each (name, arguments) call), in one MCP client session."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async def run():
        async with streamablehttp_client(url) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = (await session.list_tools()).tools
                return tools, [await session.call_tool(name, arguments) for name, arguments in calls]

    return in_own_thread(asyncio.run, run())


@pytest.fixture(scope="module")
def served(tiny_checkpoint):
    demo = build_demo(tiny_checkpoint)
    server.launch(demo, host="127.0.0.1", prevent_thread_lock=True)
    yield demo
    loopback = getattr(demo.mcp_server_obj, "_client_instance", None)  # Gradio's client for queued tool calls
    if loopback is not None:
        loopback.close()  # its heartbeat would otherwise outlive the server
    demo.close()


def quoted(description: str) -> list[str]:
    """The values a description offers in double quotes ("de-en")."""
    return re.findall(r'"([^"]+)"', description)


def test_every_listed_tool_answers_with_its_result(served):
    checkpoint = served.runner.checkpoint
    calls = [
        ("translate", {"text": GERMAN, "direction": "de-en"}),
        ("translation_trace", {"text": GERMAN, "direction": "de-en"}),
        ("positional_encoding", {}),
        ("translate", {"text": GERMAN, "direction": "fr-en"}),
        ("translate", {"text": "   "}),
    ]
    tools, results = mcp_session(f"{served.local_url}gradio_api/mcp/", calls)
    listed = {tool.name: tool for tool in tools}
    assert set(listed) == set(api.TOOLS) == {name for name, _ in calls}  # every listed tool is called here

    expected = translate(checkpoint.model, checkpoint.tokenizer, GERMAN, "de-en")
    translated, traced, table, wrong_direction, empty = results
    assert not translated.isError and len(translated.content) == 1  # one object: the translation and its notices
    answer = ast.literal_eval(translated.content[0].text)
    assert answer == {"translation": expected.translation, "notices": list(notices(expected))}
    assert not traced.isError
    trace = trace_from_lean(traced.content[0].text)
    assert trace.output_ids == expected.output_ids and trace.source_tokens == expected.source_tokens
    np.testing.assert_allclose(trace.cross_attention, expected.cross_attention, atol=1e-4)
    config = checkpoint.config
    shown = ast.literal_eval(table.content[0].text)
    assert (shown["rows"], shown["d_model"]) == (config.max_positions, config.d_model)
    np.testing.assert_allclose(
        shown["table"], sinusoidal_positional_encoding(config.max_positions, config.d_model).numpy(), atol=1e-4
    )
    assert wrong_direction.isError and "'fr-en' is not one of ['de-en', 'en-de']" in wrong_direction.content[0].text
    assert empty.isError and 'The "text" parameter is empty' in empty.content[0].text  # the API's own words


def test_every_example_a_tool_description_offers_validates_against_its_schema(served):
    tools, _ = mcp_session(f"{served.local_url}gradio_api/mcp/", [])
    offered = 0
    for tool in tools:
        schema = tool.inputSchema
        assert tool.description, tool.name
        for name, prop in schema.get("properties", {}).items():
            assert prop.get("description"), (tool.name, name)
            for value in quoted(prop["description"]):
                jsonschema.validate({name: value}, {"type": "object", "properties": {name: prop}})
                offered += 1
            if "enum" in prop:  # and every value the schema accepts is offered in words
                assert set(prop["enum"]) <= set(quoted(prop["description"])), (tool.name, name)
    assert offered >= 4  # two directions for each of the two translation tools
    translate_schema = next(tool for tool in tools if tool.name == "translate").inputSchema
    # every parameter has a default (ui/api.py): a call without text is answered in words, not refused by the schema
    assert "required" not in translate_schema and translate_schema["properties"]["direction"]["enum"] == [
        "de-en",
        "en-de",
    ]
    assert "Attention Is All You Need" in next(tool for tool in tools if tool.name == "translate").description
    json.dumps(translate_schema)  # plain JSON: what an agent receives
