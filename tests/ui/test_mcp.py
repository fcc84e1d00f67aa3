"""The app as an MCP server (Gradio's mcp_server, gradio[mcp]): an LLM agent lists its tools through the
MCP endpoint, with a description for every parameter of translate. The server listens on 127.0.0.1 only."""

from __future__ import annotations

import asyncio

import pytest
from helpers import in_own_thread

from ui import build_demo, server

mcp = pytest.importorskip("mcp", reason="gradio[mcp] is in requirements.txt: pip install -r requirements.txt")


def list_tools(url: str) -> list:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async def tools():
        async with streamablehttp_client(url) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return (await session.list_tools()).tools

    return in_own_thread(asyncio.run, tools())


def test_the_mcp_endpoint_lists_translate_with_every_parameter_described(tiny_checkpoint):
    demo = build_demo(tiny_checkpoint)
    server.launch(demo, host="127.0.0.1", prevent_thread_lock=True)
    try:
        tools = {tool.name: tool for tool in list_tools(f"{demo.local_url}gradio_api/mcp/")}
    finally:
        demo.close()
    assert {"translate", "positional_encoding"} <= set(tools)
    schema = tools["translate"].inputSchema
    assert set(schema["properties"]) == {"text", "direction"} and schema["required"] == ["text"]
    assert all(prop["description"] for prop in schema["properties"].values())
    assert "de-en" in schema["properties"]["direction"]["description"]
    assert "Attention Is All You Need" in tools["translate"].description
