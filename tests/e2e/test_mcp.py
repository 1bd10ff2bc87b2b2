"""``vaultlens mcp`` end to end: the MCP SDK's own client over stdio against ``python -m vaultlens.lsp mcp``.

Each tool's structured result must equal what the matching CLI command prints with ``--json``
(both parsed), and its text must be that object as compact JSON. Engine errors come back as tool errors
with the CLI's message; the server answers the next call. Files written on disk show up in the
following calls. The read-only tests share one server on ``shared_vault``; the tests that write
files start their own on ``vault``, a private copy (both fixtures in conftest.py).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

pytest.importorskip(
    "mcp.server.mcpserver",
    reason="the mcp SDK (2.x) is not installed: pip install 'vaultlens[mcp]'",
)

from e2e_support import EXAMPLE_VAULT, REPO, SERVER_ENV, SHARED
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from vaultlens.engine.query import RANKS, parse_query

pytestmark = pytest.mark.asyncio(loop_scope="module")

CALL_TIMEOUT = 20.0
TOOLS = {"search", "read", "related", "links", "grep", "glob", "mentions"}


@asynccontextmanager
async def mcp_session(root: Path, *flags: str, mode: str = "auto") -> AsyncIterator[Client]:
    """A client session with a fresh ``python -m vaultlens.lsp mcp --vault ROOT`` (opened and closed in one task,
    as the SDK's anyio scopes require, so this is a context manager rather than a fixture).

    ``mode="legacy"`` speaks the initialize handshake of the clients deployed today (2025-11-25);
    ``auto`` negotiates the newest protocol the SDK knows.
    """
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vaultlens.lsp", "mcp", "--vault", str(root), *flags],
        cwd=str(REPO),
        env={"PYTHONPATH": SERVER_ENV["PYTHONPATH"], "VAULTLENS_TIMING": "off"},
    )
    async with Client(params, read_timeout_seconds=CALL_TIMEOUT, mode=mode) as client:
        yield client


async def session_in_own_task(root: Path) -> AsyncIterator[Client]:
    """A session on ``root`` for a fixture to yield: a task of its own enters and leaves it, since
    the SDK's anyio scopes must close in the task that opened them, and a fixture's set-up and
    tear-down run in different tasks."""
    ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def own() -> None:
        async with mcp_session(root) as client:
            ready.set_result(client)
            await done.wait()

    owner = asyncio.create_task(own())
    await asyncio.wait({owner, ready}, return_when=asyncio.FIRST_COMPLETED)
    if owner.done():
        owner.result()  # the server did not start: raise why
    yield ready.result()
    done.set()
    await owner


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(shared_vault: Path) -> AsyncIterator[Client]:
    """One session on ``shared_vault`` for the read-only tests (which never write to it)."""
    async for session in session_in_own_task(shared_vault):
        yield session


async def cli(root: Path, *args: str) -> tuple[int, str, str]:
    """``python -m vaultlens.lsp ARGS --vault ROOT``: exit status, stdout, stderr."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vaultlens.lsp",
        *args,
        "--vault",
        str(root),
        cwd=str(REPO),
        env=SERVER_ENV,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    return proc.returncode or 0, out.decode("utf-8"), err.decode("utf-8")


async def cli_json(root: Path, *args: str) -> tuple[dict[str, Any], str]:
    status, out, err = await cli(root, *args, "--json")
    assert status == 0, err
    return json.loads(out), out


def payload(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error, result.structured_content
    return " ".join(block.text for block in result.content if block.type == "text")


# (tool, arguments, the same request on the command line)
CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    # hints and the summary breakdown are the defaults for agents: `vaultlens search --hints --explain summary`
    ("search", {"query": "graph rag"}, ["search", "graph rag", "--hints", "--explain", "summary"]),
    (
        "search",
        {"query": "compost soil", "folder": "garden", "limit": 3, "hints": False},
        ["search", "compost soil", "--folder", "garden", "--limit", "3", "--explain", "summary"],
    ),
    (
        "search",
        {"query": "retrieval -chunking", "tag": "ai", "graph": True, "since": "2020-01-01",
         "where": {"type": "concept"}, "min_score": 5, "explain": "full"},
        ["search", "retrieval -chunking", "--tag", "ai", "--graph", "--since", "2020-01-01",
         "--where", "type=concept", "--min-score", "5", "--hints"],
    ),
    ("read", {"page": "Graph RAG", "level": 0}, ["read", "Graph RAG", "--level", "0"]),
    ("read", {"page": "[[RAG]]"}, ["read", "[[RAG]]"]),
    (
        "read",
        {"page": "garden/Composting.md", "level": 2},
        ["read", "garden/Composting.md", "--level", "2"],
    ),
    ("related", {"page": "Composting", "limit": 4}, ["related", "Composting", "--limit", "4"]),
    ("links", {"page": "Composting"}, ["links", "Composting"]),
    (
        "grep",
        {"pattern": "compost(ing)?", "ignore_case": True, "limit": 5},
        ["grep", "compost(ing)?", "-i", "--limit", "5"],
    ),
    (
        "grep",
        {"pattern": "^(tags|type):", "frontmatter": True, "exclude": ["ai/", "daily/"]},
        ["grep", "^(tags|type):", "--frontmatter", "--exclude", "ai/", "--exclude", "daily/"],
    ),
    ("glob", {"pattern": "ai/**/*.md", "limit": 4}, ["glob", "ai/**/*.md", "--limit", "4"]),
]


async def test_tools_have_schemas_and_answer_as_the_cli_does(client: Client, shared_vault: Path):
    expected = await asyncio.gather(*(cli_json(shared_vault, *argv) for _, _, argv in CASES))
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 60, tool.name
        assert tool.input_schema["type"] == "object" and tool.input_schema["properties"], tool.name
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        assert tool.annotations and tool.annotations.read_only_hint, tool.name
    search = tools["search"].input_schema
    assert search["required"] == ["query"]
    assert (
        search["properties"]["limit"]["default"] == 10
        and search["properties"]["limit"]["minimum"] == 1
    )
    assert search["properties"]["graph"]["type"] == "boolean"
    assert search["properties"]["rank"]["enum"] == list(RANKS)
    options = set(inspect.signature(parse_query).parameters) - {"text", "now", "mtime_of", "operators"}
    missing = options - set(search["properties"])
    assert not missing, (
        f"parse_query options the MCP `search` tool does not offer: {sorted(missing)} (lsp/mcp_server.py)"
    )
    assert tools["read"].input_schema["properties"]["level"]["enum"] == [0, 1, 2]
    assert tools["grep"].input_schema["properties"]["exclude"]["type"] == "array"

    for (name, arguments, argv), (want, text) in zip(CASES, expected):
        result = await client.call_tool(name, arguments)
        assert payload(result) == want, (name, arguments)
        # the text block is the CLI's object as compact JSON (an agent's context is small)
        assert result.content[0].text == json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
    # the cases find something, so no equality is between two empty answers
    assert all(want["hits"] for want, _ in expected[:3])
    assert expected[5][0]["content"].startswith("---")  # level 2 is the whole file
    assert (
        expected[7][0]["incoming"] and expected[8][0]["count"] > 5 and expected[9][0]["count"] > 3
    )
    assert any(
        m["content"].startswith("tags:") for m in expected[9][0]["matches"]
    )  # frontmatter searched
    assert expected[10][0]["count"] > len(expected[10][0]["files"]) == 4


async def test_pages_are_resources_and_search_is_a_template(client: Client, shared_vault: Path):
    vault = shared_vault
    want, _ = await cli_json(vault, "search", "compost")
    pages, _ = await cli_json(vault, "glob", "**/*.md")
    listed = (await client.list_resources()).resources
    assert [r.name for r in listed] == pages["files"]
    by_name = {r.name: r for r in listed}
    page = by_name["ai/Evaluation Metrics.md"]
    assert page.uri == "vault://ai/Evaluation%20Metrics.md"
    assert page.mime_type == "text/markdown" and page.title
    read = await client.read_resource(page.uri)
    assert read.contents[0].text == (vault / "ai" / "Evaluation Metrics.md").read_text(
        encoding="utf-8"
    )

    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["vault://search/{query}"]
    found = await client.read_resource("vault://search/compost")
    assert found.contents[0].mime_type == "application/json"
    assert json.loads(found.contents[0].text) == want


async def test_bad_arguments_are_tool_errors_and_the_server_lives_on(
    client: Client, shared_vault: Path
):
    vault = shared_vault
    checks = [
        ("search", {}, '"query" is required'),
        ("search", {"query": "x", "limit": 0}, '"limit"'),
        ("search", {"query": "x", "max_results": 3}, "unknown argument(s): max_results"),
        (
            "read",
            {"page": "Graph RAG", "level": 7},
            "level must be 0 (abstract), 1 (overview) or 2 (full text)",
        ),
        ("read", {"page": "No Such Page"}, "no page matches 'No Such Page'"),
        ("links", {"page": "[[Nowhere]]"}, "no page matches"),
        ("grep", {"pattern": "("}, "pattern does not compile"),
        ("glob", {"pattern": "*", "limit": "many"}, '"limit"'),
    ]
    for name, arguments, message in checks:
        result = await client.call_tool(name, arguments)
        assert message in error_text(result), (name, arguments, error_text(result))
    # the engine's messages are the CLI's, word for word
    for name, arguments, argv in [
        ("read", {"page": "No Such Page"}, ["read", "No Such Page"]),
        ("grep", {"pattern": "("}, ["grep", "("]),
    ]:
        status, _, err = await cli(vault, *argv)
        assert status == 2
        assert err == f"vaultlens: error: {error_text(await client.call_tool(name, arguments))}\n"
    ok = payload(await client.call_tool("glob", {"pattern": "*.md"}))
    assert ok["files"] == ["Home.md"]


NEW_PAGE = "---\ntags: [zoology]\n---\n# Quokka Field Notes\n\nQuokkas live on Rottnest Island.\n"


async def hits_for(client: Client, query: str) -> list[str]:
    return [
        hit["file"] for hit in payload(await client.call_tool("search", {"query": query}))["hits"]
    ]


async def test_a_page_written_on_disk_shows_up_in_the_next_call_when_polling(vault: Path):
    async with mcp_session(vault, "--poll", mode="legacy") as client:
        assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
        assert await hits_for(client, "quokka") == []
        (vault / "inbox" / "Quokka Field Notes.md").write_text(NEW_PAGE, encoding="utf-8")
        assert await hits_for(client, "quokka") == ["inbox/Quokka Field Notes.md"]
        names = [r.name for r in (await client.list_resources()).resources]
        assert "inbox/Quokka Field Notes.md" in names
        (vault / "inbox" / "Quokka Field Notes.md").unlink()
        assert await hits_for(client, "quokka") == []


async def settle(client: Client, query: str, want: list[str], seconds: float = 10.0) -> list[str]:
    """The query's hit files once they equal ``want`` (the watcher batches for a few ms), or at the deadline."""
    deadline = time.monotonic() + seconds
    while (got := await hits_for(client, query)) != want and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return got


async def test_the_watcher_keeps_answers_current(vault: Path):
    pytest.importorskip("watchfiles")
    async with mcp_session(vault) as client:
        assert await hits_for(client, "quokka") == []
        (vault / "zoo").mkdir()
        (vault / "zoo" / "Quokka Field Notes.md").write_text(NEW_PAGE, encoding="utf-8")
        assert await settle(client, "quokka", ["zoo/Quokka Field Notes.md"]) == [
            "zoo/Quokka Field Notes.md"
        ]
        want, _ = await cli_json(vault, "search", "quokka", "--hints", "--explain", "summary")
        assert payload(await client.call_tool("search", {"query": "quokka"})) == want

        (vault / "zoo").rename(vault / "zoology")  # a folder move names only the folder
        assert await settle(client, "quokka", ["zoology/Quokka Field Notes.md"]) == [
            "zoology/Quokka Field Notes.md"
        ]
        (vault / "zoology" / "Quokka Field Notes.md").unlink()
        assert await settle(client, "quokka", []) == []
        assert await hits_for(client, "rottnest") == []  # and nothing of it is left in the index


async def python(*argv: str, env: dict[str, str] = SERVER_ENV) -> tuple[int, str]:
    """``python ARGV`` from the repo root with stdin closed: exit status and stderr."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *argv,
        cwd=str(REPO),
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    return proc.returncode or 0, err.decode("utf-8")


async def test_search_does_not_import_the_sdk_and_a_missing_sdk_is_one_line(tmp_path: Path):
    probe = (
        "import sys; from vaultlens.lsp.__main__ import main; status = main(['glob', '*.md', '--vault', sys.argv[1]]);"
        "assert status == 0; assert 'mcp' not in sys.modules, 'vaultlens glob imported the SDK'"
    )
    status, err = await python("-c", probe, str(EXAMPLE_VAULT))
    assert status == 0, err
    # an `mcp` without the 2.x server API (absent, or 1.x) stands in for a missing SDK
    fake = tmp_path / "fake"
    (fake / "mcp").mkdir(parents=True)
    (fake / "mcp" / "__init__.py").write_text("", encoding="utf-8")
    env = {**SERVER_ENV, "PYTHONPATH": os.pathsep.join([str(fake), SERVER_ENV["PYTHONPATH"]])}
    status, err = await python("-m", "vaultlens.lsp", "mcp", "--vault", str(EXAMPLE_VAULT), env=env)
    assert status == 2
    assert err.count("\n") == 1 and "pip install 'vaultlens[mcp]'" in err, err


TASKS_VAULT = SHARED / "vaults" / "obsidian-tasks"
AGENT_QUESTIONS = (
    "how do I set a priority on a task?",
    "why are tasks inside my callouts missing from query results?",
    "What CSS classes and data attributes does tasks add to rendered task lines?",
)


@pytest.mark.skipif(not TASKS_VAULT.is_dir(), reason="needs ../shared/vaults/obsidian-tasks")
@pytest.mark.timeout(120)
async def test_a_five_hit_agent_search_is_compact_and_its_hints_name_pages():
    """The MCP default (explain summary, hints) on a real vault: 5 hits fit in 3 KB of text, each
    hit keeps its score, title, link, file, snippet and top channels; `full` is the whole
    breakdown; and the hints mean the same under --rank hybrid as under the default ranking."""
    async with mcp_session(TASKS_VAULT) as client:
        for question in AGENT_QUESTIONS:
            sizes = {}
            for explain in ("full", "summary", "none"):
                result = await client.call_tool("search", {"query": question, "limit": 5, "explain": explain})
                sizes[explain] = len(result.content[0].text.encode("utf-8"))
            default = await client.call_tool("search", {"query": question, "limit": 5})
            answer = payload(default)
            assert len(default.content[0].text.encode("utf-8")) == sizes["summary"] <= 3072, (question, sizes)
            assert sizes["none"] < sizes["summary"] < sizes["full"] / 2, sizes  # full: every component of every hit
            for hit in answer["hits"]:
                assert {"score", "title", "wikilink", "file", "snippet", "channels"} <= set(hit)
                assert "matched" not in hit and 1 <= len(hit["channels"]) <= 3
                assert sum(c["points"] for c in hit["channels"]) <= hit["score"] + 1e-6
            hints = answer["hints"]
            files = [h["file"] for h in answer["hits"]]
            assert not set(hints["suggested_queries"]) & {h["title"] for h in answer["hits"]}
            if hints["sufficient"]:
                assert hints["next_action"] == "synthesize" and hints["read"][0] == files[0]
            else:
                assert hints["read"] == [] and hints["next_action"] in ("refine", "expand")
            hybrid = payload(await client.call_tool("search", {"query": question, "limit": 5, "rank": "hybrid"}))
            if hybrid["hits"][0]["file"] == files[0]:  # the same top page: the same judgement of it
                same = ("sufficient", "max_score", "evidence")
                assert {k: hybrid["hints"][k] for k in same} == {k: hints[k] for k in same}, question
        # a page's exact title is enough on both rankings (hybrid's max_score was ~0.001 for everything)
        for rank in RANKS:
            exact = payload(await client.call_tool("search", {"query": "Priority", "rank": rank}))
            assert exact["hints"]["sufficient"] and exact["hints"]["max_score"] >= 0.5, rank
            assert exact["hints"]["read"][0] == exact["hits"][0]["file"] == "Getting Started/Priority.md"
