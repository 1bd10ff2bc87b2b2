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
from .query import RANKS, parse_query
from .render import dumps, hit_line, search_payload
from .cache import CacheOptions
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
    s.add_argument(
        "--rank", choices=RANKS, default="default",
        help="default: the explained channel ranking; hybrid: fuse it with BM25F and, with the "
        "embeddings extra, a vector arm (reciprocal rank fusion)",
    )
    s.add_argument("--since", metavar="WHEN", help="only pages updated (see --time-field) at or after WHEN: 30m, 2h, 7d, 4w or an ISO date/time")
    s.add_argument("--until", metavar="WHEN", help="only pages updated at or before WHEN (same forms as --since)")
    s.add_argument("--time-field", choices=("updated", "created"), default="updated", help="which time --since/--until read (default updated)")
    s.add_argument("--min-score", type=float, metavar="N", help="only hits scoring at least N")
    s.add_argument("--where", metavar="KEY=VALUE", action="append", default=[], help="frontmatter KEY equals VALUE (or a list holding it); repeatable, all must hold")
    s.add_argument("--context", metavar="PAGE", help="the page you are on (path, title, alias or [[link]]): hits one link away from it get a context-edge point")
    s.add_argument("--hints", action="store_true", help="add agent hints: sufficient, next_action, suggested_queries, …")

    j = sub.add_parser("jsonl", help="answer JSON-lines search requests on stdin, one result object per line")
    j.add_argument("--vault", metavar="DIR", help="the vault (default as for search)")
    j.add_argument("--limit", type=_positive_int, default=10, metavar="N", help="default limit per request")
    j.add_argument("--rank", choices=RANKS, default="default", help="default ranking mode per request")

    g = sub.add_parser("grep", help="regular expression over page bodies, in path and line order")
    g.add_argument("pattern", metavar="PATTERN", help="a regular expression (Python/regex syntax)")
    g.add_argument("--vault", metavar="DIR", help="the vault (default as for search)")
    g.add_argument("-i", "--ignore-case", action="store_true", help="match without regard to case")
    g.add_argument("--folder", metavar="F", help="only pages under this vault-relative folder")
    g.add_argument("--exclude", metavar="PREFIX", action="append", default=[], help="skip paths starting with PREFIX")
    g.add_argument("--frontmatter", action="store_true", help="search the frontmatter lines too")
    g.add_argument("--limit", type=_positive_int, default=100, metavar="N", help="at most N matches listed")
    g.add_argument("--json", action="store_true", help="print the result object as JSON")

    gl = sub.add_parser("glob", help="pages whose path matches a glob (**/*.md, wiki/ai/*)")
    gl.add_argument("pattern", metavar="PATTERN")
    gl.add_argument("--vault", metavar="DIR", help="the vault (default as for search)")
    gl.add_argument("--limit", type=_positive_int, default=None, metavar="N", help="at most N paths")
    gl.add_argument("--json", action="store_true", help="print the result object as JSON")

    r = sub.add_parser("read", help="a page at a level of detail: 0 abstract, 1 overview, 2 full text")
    r.add_argument("page", metavar="PAGE", help="a path, title, alias or [[link]]")
    r.add_argument("--vault", metavar="DIR", help="the vault (default as for search)")
    r.add_argument("--level", type=int, choices=(0, 1, 2), default=1, help="0, 1 or 2 (default 1)")
    r.add_argument("--json", action="store_true", help="print the result object as JSON")

    rel = sub.add_parser("related", help="the pages most related to a page, with reasons")
    rel.add_argument("page", metavar="PAGE", help="a path, title, alias or [[link]]")
    rel.add_argument("--vault", metavar="DIR", help="the vault (default as for search)")
    rel.add_argument("--limit", type=_positive_int, default=10, metavar="N", help="at most N pages (default 10)")
    rel.add_argument("--json", action="store_true", help="print the result object as JSON")

    ln = sub.add_parser("links", help="a page's outgoing links, incoming links and typed edges")
    ln.add_argument("page", metavar="PAGE", help="a path, title, alias or [[link]]")
    ln.add_argument("--vault", metavar="DIR", help="the vault (default as for search)")
    ln.add_argument("--json", action="store_true", help="print the result object as JSON")

    for command in sub.choices.values():  # every command that opens a vault
        if any("--vault" in action.option_strings for action in command._actions):
            command.add_argument(
                "--no-cache", action="store_true",
                help="read every page instead of the persistent index (.vaultlens/), and write none",
            )

    sub.add_parser("lsp", help="run the language server (see `vaultlens lsp --help`)", add_help=False)
    sub.add_parser("mcp", help="serve the vault to AI agents over MCP (see `vaultlens mcp --help`)", add_help=False)
    return parser


def _open(args: argparse.Namespace, root: str):
    """``open_vault`` with the persistent index unless ``--no-cache`` (or VAULTLENS_CACHE=0)."""
    return open_vault(root, cache=CacheOptions.from_env(enabled=not getattr(args, "no_cache", False)))


class _Vectors:
    """The vector arm for ``--rank hybrid``, opened on first use; without the embeddings extra,
    says once on stderr that hybrid runs its lexical arms only."""

    def __init__(self, vault) -> None:
        self.vault = vault
        self.index = None
        self.tried = False

    def get(self):
        if not self.tried:
            self.tried = True
            from .embed import open_vectors, unavailable

            reason = unavailable()
            if reason is not None:
                sys.stderr.write(f"vaultlens: --rank hybrid runs its lexical arms only: {reason}\n")
            else:
                self.index = open_vectors(self.vault, progress=_embed_progress)
        return self.index


def _embed_progress(done: int, total: int) -> None:
    sys.stderr.write(f"\rvaultlens: embedding pages {done}/{total}" + ("\n" if done == total else ""))
    sys.stderr.flush()


def cmd_search(args: argparse.Namespace) -> int:
    root = resolve_vault(args.vault)
    vault, _listing = _open(args, root)
    where = {}
    for pair in args.where:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--where takes KEY=VALUE, got {pair!r}")
        where[key.strip()] = value.strip()
    try:
        query = parse_query(
            args.query, type=args.type, folder=args.folder, tag=args.tag, graph=args.graph, limit=args.limit,
            rank=args.rank, since=args.since, until=args.until, time_field=args.time_field,
            min_score=args.min_score, where=where, hints=args.hints, context=args.context,
            mtime_of=_mtime_reader(root),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    hits = search(vault, query, _Vectors(vault).get() if args.rank == "hybrid" else None)
    out = sys.stdout
    if args.json:
        out.write(dumps(search_payload(vault, query, hits)) + "\n")
    else:
        from .hints import match_label

        top = hits[0].score if hits else 0
        for hit in hits:
            out.write(hit_line(hit, match_label(hit.score, top)) + "\n")
    return 0


def _mtime_reader(root: str):
    """Each page's modification time, for pages whose frontmatter gives no time."""
    from .scan import file_mtime

    return lambda rel: file_mtime(root, rel)


def cmd_jsonl(args: argparse.Namespace) -> int:
    """One vault load, then one JSON line in, one result object out (for scripts and evals).

    A request is ``{"query": …, "limit"?, "type"?, "folder"?, "tag"?, "graph"?, "rank"?}``; a bad
    one is answered with ``{"error": "…"}`` and the loop goes on.
    """
    import json

    root = resolve_vault(args.vault)
    vault, _listing = _open(args, root)
    vectors = _Vectors(vault)
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
            where = request.get("where") or {}
            if not isinstance(where, dict):
                raise ValueError('"where" must be an object of KEY: VALUE')
            query = parse_query(
                request["query"], type=request.get("type"), folder=request.get("folder"),
                tag=request.get("tag"), graph=bool(request.get("graph", False)), limit=limit,
                rank=request.get("rank", args.rank), since=request.get("since"), until=request.get("until"),
                time_field=request.get("time_field", "updated"), min_score=request.get("min_score"),
                where=where, hints=bool(request.get("hints", False)), context=request.get("context"),
                mtime_of=_mtime_reader(root),
            )
            hits = search(vault, query, vectors.get() if query.rank == "hybrid" else None)
            payload = search_payload(vault, query, hits)
        except ValueError as exc:
            payload = {"error": str(exc)}
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


def _frontmatter_lines(root: str, paths: list[str]) -> dict[str, list[str]]:
    """Each page's frontmatter lines as on disk (the engine's pages keep only the body)."""
    from .retrieve import frontmatter_lines
    from .scan import read_bytes

    out: dict[str, list[str]] = {}
    for path in paths:
        try:
            found = frontmatter_lines(read_bytes(root, path).decode("utf-8", errors="replace"))
        except OSError:
            continue
        if found is not None:
            out[path] = found
    return out


def _emit(args: argparse.Namespace, payload: dict, text_lines: list[str]) -> int:
    if args.json:
        sys.stdout.write(dumps(payload) + "\n")
    else:
        for line in text_lines:
            sys.stdout.write(line + "\n")
    return 0


def _retrieval(fn, *a, **kw):
    from .retrieve import RetrievalError

    try:
        return fn(*a, **kw)
    except RetrievalError as exc:
        raise UsageError(str(exc)) from None


def cmd_grep(args: argparse.Namespace) -> int:
    from .retrieve import grep

    root = resolve_vault(args.vault)
    vault, _listing = _open(args, root)
    fm = _frontmatter_lines(root, vault.sorted_paths()) if args.frontmatter else None
    payload = _retrieval(
        grep, vault, args.pattern, ignore_case=args.ignore_case, folder=args.folder,
        exclude=tuple(args.exclude), limit=args.limit, frontmatter=fm,
    )
    lines = [f"{m['file']}:{m['line']}:{m['column']}: {m['content']}" for m in payload["matches"]]
    if payload["truncated"]:
        sys.stderr.write(f"vaultlens: grep cut short: {payload['reason']}\n")
    return _emit(args, payload, lines)


def cmd_glob(args: argparse.Namespace) -> int:
    from .retrieve import glob

    root = resolve_vault(args.vault)
    vault, _listing = _open(args, root)
    payload = _retrieval(glob, vault, args.pattern, args.limit or 0)
    return _emit(args, payload, payload["files"])


def cmd_read(args: argparse.Namespace) -> int:
    from .retrieve import find_page, read
    from .scan import read_bytes

    root = resolve_vault(args.vault)
    vault, _listing = _open(args, root)
    full = None
    if args.level == 2:
        page = _retrieval(find_page, vault, args.page)
        try:
            full = read_bytes(root, page.path).decode("utf-8", errors="replace")
        except OSError as exc:
            raise UsageError(f"cannot read {page.path}: {exc.strerror or exc}") from None
    payload = _retrieval(read, vault, args.page, args.level, full)
    return _emit(args, payload, [payload["content"]])


def cmd_related(args: argparse.Namespace) -> int:
    from .retrieve import related_payload

    root = resolve_vault(args.vault)
    vault, _listing = _open(args, root)
    payload = _retrieval(related_payload, vault, args.page, args.limit)
    lines = [f"{hit['score']:>6}  [[{hit['title']}]]  ({hit['file']})  {hit['reasons']}" for hit in payload["hits"]]
    return _emit(args, payload, lines)


def cmd_links(args: argparse.Namespace) -> int:
    from .retrieve import links

    root = resolve_vault(args.vault)
    vault, _listing = _open(args, root)
    payload = _retrieval(links, vault, args.page)
    lines = [f"-> {o['file'] or '(unresolved) ' + o['target']}  [{o['kind']} {o['line']}:{o['column']}]"
             for o in payload["outgoing"]]
    lines += [f"<- {i['file']}  [{i['kind']} {i['line']}:{i['column']}]" for i in payload["incoming"]]
    lines += [f"{'->' if e['direction'] == 'out' else '<-'} {e['file'] or e['target']}  [{e['predicate']}]"
              for e in payload["edges"]]
    return _emit(args, payload, lines)


COMMANDS = {
    "search": cmd_search,
    "jsonl": cmd_jsonl,
    "grep": cmd_grep,
    "glob": cmd_glob,
    "read": cmd_read,
    "related": cmd_related,
    "links": cmd_links,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one engine command; returns the process exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _utf8_stdout()
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise UsageError("a command is required: search, grep, glob, read, related, links, jsonl, lsp (see vaultlens --help)")
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
