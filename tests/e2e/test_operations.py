"""Every operation of ``engine/ops.py`` on its four surfaces: the command line, ``jsonl``,
``wiki/*`` over LSP and the MCP tool. Each surface is the real thing (a ``python -m vaultlens.lsp``
process, the language server over stdio, the MCP server over stdio with the SDK's client).

For every operation: the four take the same parameters (each in its own spelling), and for the
same arguments they return the same result object. The cases give every parameter a value
other than its default at least once, so an argument one surface drops or misreads shows.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import REPO, SERVER_ENV, to_plain
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient
from test_mcp import error_text, payload, session_in_own_task  # skips this module without the MCP SDK

from vaultlens.engine.cli import build_parser
from vaultlens.engine.embed import unavailable
from vaultlens.engine.operation import Operation
from vaultlens.engine.ops import BY_NAME, OPERATIONS

pytestmark = pytest.mark.asyncio(loop_scope="module")

# (operation, arguments by parameter name); the page names and patterns find something
CASES: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "graph rag"}),
    ("search", {"query": "compost soil", "folder": "garden", "limit": 3, "hints": True}),
    ("search", {"query": "retrieval -chunking", "tag": "ai", "graph": True, "since": "2020-01-01",
                "until": "2099-01-01", "time_field": "created", "where": {"type": "concept"}, "min_score": 1}),
    ("search", {"query": "rag", "type": "concept", "context": "Graph RAG", "rank": "hybrid", "limit": 4}),
    ("search", {"query": "Compo", "prefix": True}),
    ("search", {"query": "graph rag", "since": "2025-05-15", "until": "2025-05-15"}),  # a date: the whole day
    ("search", {"query": "", "tag": "ai", "folder": ["ai/rag", "sources"], "sort": "updated"}),  # a listing
    ("search", {"query": "compost", "user": "alice"}),  # a per-user scope (issue 22)
    ("search", {"query": "rag", "sort": "title", "limit": 3}),
    ("search", {"query": "graph rag", "explain": "summary", "hints": True, "hints_threshold": 0.9}),
    ("search", {"query": "compost", "explain": "none", "rank": "hybrid", "hints": True}),
    # OpenViking's names: after/before/node_limit are since/until/limit, updated_at is updated
    ("search", {"query": "retrieval", "after": "2020-01-01", "before": "2099-01-01", "node_limit": 3,
                "time_field": "updated_at", "graph": True, "graph_filtered": True, "no_timing": True}),
    ("grep", {"pattern": "compost(ing)?", "ignore_case": True, "limit": 5}),
    ("grep", {"pattern": "^(tags|type):", "frontmatter": True, "exclude": ["ai/", "daily/"]}),
    ("grep", {"pattern": "RAG", "folder": "ai", "no_timing": True}),
    ("glob", {"pattern": "ai/**/*.md", "limit": 4}),
    ("glob", {"pattern": "**", "no_timing": True}),
    ("read", {"page": "Graph RAG", "level": 0}),
    ("read", {"page": "[[RAG]]", "no_timing": True}),
    ("read", {"page": "garden/Composting.md", "level": 2}),
    ("related", {"page": "Composting", "limit": 4}),
    ("related", {"page": "ai/rag/graph-rag.md", "no_timing": True}),
    ("links", {"page": "Composting"}),
    ("links", {"page": "Graph RAG", "no_timing": True}),
    ("mentions", {"page": "Aphids", "limit": 5}),
    ("mentions", {"page": "garden/Soil Health.md"}),
]


def cli_argv(op: Operation, arguments: dict[str, Any]) -> list[str]:
    """``vaultlens NAME …`` saying what ``arguments`` say, in the flags the parser was built with."""
    argv = [op.name]
    for param in op.params:
        if param.name not in arguments:
            continue
        value = arguments[param.name]
        if param.required:
            argv.append(str(value))
        elif param.kind is bool:
            assert value is True, "the command line says only yes to a flag that is off by default"
            argv.append(param.flag)
        elif param.kind is list or param.repeatable and isinstance(value, list):
            argv += [item for v in value for item in (param.flag, v)]
        elif param.kind is dict:
            argv += [item for k, v in value.items() for item in (param.flag, f"{k}={v}")]
        else:
            argv += [param.flag, str(value)]
    return argv


def wiki_params(op: Operation, arguments: dict[str, Any]) -> dict[str, Any]:
    return {p.key: arguments[p.name] for p in op.params if p.name in arguments}


def mcp_arguments(op: Operation, arguments: dict[str, Any]) -> dict[str, Any]:
    """The same arguments for the tool: where the tool's default differs (search hints), say the
    other surfaces' default explicitly."""
    out = dict(arguments)
    for param in op.params:
        if param.name not in out and param.agent_default != param.initial:
            out[param.name] = param.initial
    return out


async def run(*argv: str, stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vaultlens.lsp", *argv, cwd=str(REPO), env=SERVER_ENV,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate(stdin)
    return proc.returncode or 0, out, err


async def cli_json(root: Path, argv: list[str]) -> dict[str, Any]:
    status, out, err = await run(*argv, "--vault", str(root), "--json")
    assert status == 0, (argv, err.decode())
    return json.loads(out.decode("utf-8"))


async def jsonl(root: Path, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One ``vaultlens jsonl`` process answering every request, in order."""
    lines = "".join(json.dumps(r) + "\n" for r in requests).encode("utf-8")
    status, out, err = await run("jsonl", "--vault", str(root), stdin=lines)
    assert status == 0, err.decode()
    answers = [json.loads(line) for line in out.decode("utf-8").splitlines()]
    assert len(answers) == len(requests)
    return answers


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def mcp(shared_vault: Path) -> AsyncIterator[Any]:
    """One MCP session on ``shared_vault``."""
    async for session in session_in_own_task(shared_vault):
        yield session


async def test_the_cases_cover_every_parameter_of_every_operation():
    for op in OPERATIONS:
        given = [args for name, args in CASES if name == op.name]
        assert given, f"no case for {op.name}"
        for param in op.params:
            assert any(param.name in a and a[param.name] != param.initial for a in given), (op.name, param.name)


def accepted(message: str) -> set[str]:
    found = re.search(r"\(accepted: ([^)]*)\)", message)
    assert found, message
    return set(found.group(1).split(", "))


async def test_every_surface_takes_the_same_parameters(shared_client: LanguageClient, shared_vault: Path, mcp):
    tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
    assert set(tools) == set(BY_NAME)
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    unknown = [{"command": op.name, "no_such_parameter": 1} for op in OPERATIONS]
    jsonl_errors = await jsonl(shared_vault, unknown)
    for op, answer in zip(OPERATIONS, jsonl_errors):
        names = {p.name for p in op.params}
        # the command line: one argument per parameter, besides the flags every command has
        dests = {a.dest for a in commands[op.name]._actions} - {"help", "vault", "json", "format", "no_cache"}
        assert dests == names, op.name
        # jsonl: the keys are the parameter names
        assert accepted(answer["error"]) == names | {"command"}, op.name
        # wiki/NAME: the camelCase keys (and uri, which picks the vault)
        with pytest.raises(JsonRpcInvalidParams) as caught:
            await shared_client.protocol.send_request_async(f"wiki/{op.name}", {"noSuchParameter": 1, "uri": (shared_vault / "Home.md").as_uri()})
        assert accepted(caught.value.message) == {p.key for p in op.params} | {"uri"}, op.name
        # MCP: the tool's input schema, the same names, the same required ones
        schema = tools[op.name].input_schema
        assert set(schema["properties"]) == names, op.name
        assert set(schema.get("required", [])) == {p.name for p in op.params if p.required}, op.name
        got = await mcp.call_tool(op.name, {"no_such_parameter": 1})
        assert "unknown argument(s): no_such_parameter" in error_text(got)


async def test_every_surface_gives_the_same_result(shared_client: LanguageClient, shared_vault: Path, mcp):
    ops = [BY_NAME[name] for name, _ in CASES]
    from_cli = await asyncio.gather(*(cli_json(shared_vault, cli_argv(op, args)) for op, (_, args) in zip(ops, CASES)))
    from_jsonl = await jsonl(shared_vault, [{"command": name, **args} for name, args in CASES])
    for op, (name, args), want, by_jsonl in zip(ops, CASES, from_cli, from_jsonl):
        by_wiki = to_plain(await shared_client.protocol.send_request_async(f"wiki/{name}", wiki_params(op, args)))
        by_mcp = payload(await mcp.call_tool(name, mcp_arguments(op, args)))
        assert want["command"] == name
        assert by_jsonl == want, (name, args, "jsonl")
        # with the embeddings extra the servers build vectors in the background: a hybrid answer
        # may come before them (lexical arms) or after (the CLI's, which embeds first)
        if args.get("rank") != "hybrid" or unavailable() is not None:
            assert by_wiki == want, (name, args, "wiki")
            assert by_mcp == want, (name, args, "mcp")
    # the cases find something: no equality here is between two empty answers
    lists = {"search": "hits", "grep": "matches", "glob": "files", "related": "hits", "links": "incoming",
             "mentions": "mentions"}
    for (name, args), want in zip(CASES, from_cli):
        if name in lists:
            assert want[lists[name]], (name, args)
        else:
            assert want["content"], (name, args)


async def test_aliases_answer_as_their_targets_on_every_surface(shared_client: LanguageClient, shared_vault: Path, mcp):
    op = BY_NAME["search"]
    spelled = {"query": "retrieval", "after": "2020-01-01", "before": "2099-01-01", "node_limit": 2}
    plain = {"query": "retrieval", "since": "2020-01-01", "until": "2099-01-01", "limit": 2}
    want = await cli_json(shared_vault, cli_argv(op, plain))
    assert len(want["hits"]) == 2
    assert await cli_json(shared_vault, cli_argv(op, spelled)) == want
    assert (await jsonl(shared_vault, [spelled]))[0] == want
    assert to_plain(await shared_client.protocol.send_request_async("wiki/search", wiki_params(op, spelled))) == want
    assert payload(await mcp.call_tool("search", mcp_arguments(op, spelled))) == want
    clash = await jsonl(shared_vault, [{"query": "x", "since": "7d", "after": "2d"}])
    assert clash[0]["error"] == '"since" and its alias "after" are given different values: give one'
    # glob: OpenViking's `matches` beside `files`
    listed = await cli_json(shared_vault, ["glob", "ai/**"])
    assert listed["matches"] == listed["files"] and listed["files"]


async def test_search_results_carry_their_time_unless_turned_off(shared_vault: Path):
    import os

    env = {**SERVER_ENV, "VAULTLENS_TIMING": "on"}
    for argv in (["search", "retrieval"], ["search", "retrieval", "--no-timing"]):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "vaultlens.lsp", *argv, "--vault", str(shared_vault), "--json", cwd=str(REPO),
            env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, _err = await proc.communicate()
        got = json.loads(out)
        if "--no-timing" in argv:
            assert "time" not in got
        else:
            assert isinstance(got["time"], float) and 0 <= got["time"] < 60
            assert list(got)[-1] == "time"  # outside everything else, the one field that varies
    assert os.environ["VAULTLENS_TIMING"] == "off"  # the tests' own setting (tests/conftest.py)


async def test_a_bad_argument_is_an_error_on_every_surface(shared_client: LanguageClient, shared_vault: Path, mcp):
    bad = [("search", {"query": "x", "limit": 0}), ("read", {"page": "Graph RAG", "level": 7}),
           ("links", {"page": "No Such Page"}), ("grep", {"pattern": "("})]
    answers = await jsonl(shared_vault, [{"command": name, **args} for name, args in bad])
    for (name, args), by_jsonl in zip(bad, answers):
        op = BY_NAME[name]
        status, out, err = await run(*cli_argv(op, args), "--vault", str(shared_vault), "--json")
        assert (status, out) == (2, b"") and err.decode().startswith("vaultlens: error: "), (name, args)
        assert list(by_jsonl) == ["error"], (name, args)
        with pytest.raises(JsonRpcInvalidParams) as caught:
            await shared_client.protocol.send_request_async(f"wiki/{name}", wiki_params(op, args))
        mcp_message = error_text(await mcp.call_tool(name, args))
        if name != "search":  # the engine's own message, word for word (the limit is each surface's check)
            assert by_jsonl["error"] == caught.value.message == mcp_message, (name, args)
            assert err.decode() == f"vaultlens: error: {mcp_message}\n" or name == "read", (name, args)


async def test_on_wiki_a_page_may_be_named_by_its_document(shared_client: LanguageClient, shared_vault: Path):
    """A page parameter takes a document URI, and a required page left out is the ``uri`` document."""
    rel = "ai/rag/graph-rag.md"
    uri = (shared_vault / rel).as_uri()

    async def wiki(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return to_plain(await shared_client.protocol.send_request_async(method, params))

    assert await wiki("wiki/read", {"uri": uri, "level": 0}) == await cli_json(shared_vault, ["read", rel, "--level", "0"])
    assert await wiki("wiki/links", {"page": uri}) == await cli_json(shared_vault, ["links", rel])
    assert await wiki("wiki/related", {"uri": uri, "limit": 3}) == await cli_json(shared_vault, ["related", rel, "--limit", "3"])
    with_context = await wiki("wiki/search", {"query": "retrieval", "context": uri})
    assert with_context == await cli_json(shared_vault, ["search", "retrieval", "--context", rel])
    assert with_context["query_plan"]["context"] == rel
    # a document of the vault that is no page: nothing is related to it (an editor shows "none yet")
    other = (shared_vault / "notes.txt").as_uri()
    assert await wiki("wiki/related", {"uri": other}) == {"command": "related", "vault": "vault", "page": "notes.txt", "hits": []}
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await shared_client.protocol.send_request_async("wiki/read", {"level": 1})
    assert '"page" or "uri" is required' in caught.value.message
