"""The command line over the engine: ``vaultlens search …`` (and the other engine commands).

Errors (a missing vault, bad flags) print one line on stderr and exit with status 2. No hits is
not an error. ``--json`` output is byte-identical for the same vault and query on any machine.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import __version__
from .query import parse_query
from .render import dumps, hit_line, search_payload
from .scan import open_vault
from .search import search

EXIT_USAGE = 2


class UsageError(Exception):
    """A problem with how vaultlens was called: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def find_vault(start: str) -> str:
    """The nearest ancestor of ``start`` holding ``.obsidian/``, else ``start`` itself."""
    here = os.path.abspath(start)
    probe = here
    while True:
        if os.path.isdir(os.path.join(probe, ".obsidian")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return here
        probe = parent


def resolve_vault(arg: str | None) -> str:
    """The vault directory to use, checked to exist and be readable."""
    root = arg if arg is not None else find_vault(os.getcwd())
    if not os.path.exists(root):
        raise UsageError(f"vault not found: {root}")
    if not os.path.isdir(root):
        raise UsageError(f"vault is not a directory: {root}")
    if not os.access(root, os.R_OK | os.X_OK):
        raise UsageError(f"vault is not readable: {root}")
    return root


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every engine subcommand."""
    parser = _Parser(prog="vaultlens", description="Search and serve an Obsidian-style Markdown vault.")
    parser.add_argument("--version", action="version", version=f"vaultlens {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    s = sub.add_parser("search", help="rank the vault's pages for a query, with every point explained")
    s.add_argument("query", metavar="QUERY", help="words to look for")
    s.add_argument("--vault", metavar="DIR", help="the vault (default: nearest folder holding .obsidian/, else .)")
    s.add_argument("--type", metavar="T", help="only pages whose frontmatter type is T")
    s.add_argument("--folder", metavar="F", help="only pages under this vault-relative folder")
    s.add_argument("--tag", metavar="G", help="only pages tagged G (or a tag under G/)")
    s.add_argument("--graph", action="store_true", help="also rank pages reached over typed edges")
    s.add_argument("--limit", type=_positive_int, default=10, metavar="N", help="at most N hits (default 10)")
    s.add_argument("--json", action="store_true", help="print the result object as JSON")

    j = sub.add_parser("jsonl", help="answer JSON-lines search requests on stdin, one result object per line")
    j.add_argument("--vault", metavar="DIR", help="the vault (default as for search)")
    j.add_argument("--limit", type=_positive_int, default=10, metavar="N", help="default limit per request")

    sub.add_parser("lsp", help="run the language server (see `vaultlens lsp --help`)", add_help=False)
    return parser


def cmd_search(args: argparse.Namespace) -> int:
    root = resolve_vault(args.vault)
    vault, _listing = open_vault(root)
    query = parse_query(
        args.query, type=args.type, folder=args.folder, tag=args.tag, graph=args.graph, limit=args.limit
    )
    hits = search(vault, query)
    out = sys.stdout
    if args.json:
        out.write(dumps(search_payload(vault, query, hits)) + "\n")
    else:
        for hit in hits:
            out.write(hit_line(hit) + "\n")
    return 0


def cmd_jsonl(args: argparse.Namespace) -> int:
    """One vault load, then one JSON line in, one result object out (for scripts and evals).

    A request is ``{"query": …, "limit"?, "type"?, "folder"?, "tag"?, "graph"?}``; a bad one is
    answered with ``{"error": "…"}`` and the loop goes on.
    """
    import json

    root = resolve_vault(args.vault)
    vault, _listing = open_vault(root)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if not isinstance(request, dict) or not isinstance(request.get("query"), str):
                raise ValueError('a request is a JSON object with a string "query"')
            limit = request.get("limit", args.limit)
            if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
                raise ValueError('"limit" must be a whole number of at least 1')
            query = parse_query(
                request["query"], type=request.get("type"), folder=request.get("folder"),
                tag=request.get("tag"), graph=bool(request.get("graph", False)), limit=limit,
            )
            payload = search_payload(vault, query, search(vault, query))
        except ValueError as exc:
            payload = {"error": str(exc)}
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


COMMANDS = {"search": cmd_search, "jsonl": cmd_jsonl}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one engine command; returns the process exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _utf8_stdout()
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise UsageError("a command is required: search, lsp (see vaultlens --help)")
        return COMMANDS[args.command](args)
    except UsageError as exc:
        sys.stderr.write(f"vaultlens: error: {exc}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        return 0


def _utf8_stdout() -> None:
    """Write UTF-8 whatever the locale says, so output bytes are the same everywhere."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(encoding="utf-8", newline="\n")
            except (ValueError, OSError):  # pragma: no cover - detached or closed stream
                pass
