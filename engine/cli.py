"""The command line over the engine: ``vaultlens search …``, one subcommand per operation of
``engine/ops.py``, and ``vaultlens jsonl`` (the same operations as JSON-lines requests).

Errors (a missing vault, bad flags) print one line on stderr and exit with status 2. No hits is
not an error. ``--json`` output is byte-identical for the same vault and query on any machine.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from . import __version__
from .cache import CacheOptions
from .operation import Operation, Param, Source, check_object, disk_source
from .ops import ADD, BY_NAME, OPERATIONS, WRITES
from .query import RANKS
from .render import dumps
from .scan import load_vault, open_vault

EXIT_USAGE = 2
FORMATS = ("text", "plain", "json")


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


def _at_least(minimum: int):
    """An argparse type: a whole number of at least ``minimum``."""

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a number of at least {minimum}, got {value}")
        return value

    return convert


_positive_int = _at_least(1)
VAULT_HELP = "The vault (default: the nearest folder holding .obsidian/, else the working directory)."


def build_parser() -> argparse.ArgumentParser:
    """The argument parser: one subcommand per operation (``engine/ops.py``), and ``jsonl``."""
    parser = _Parser(prog="vaultlens", description="Search and serve an Obsidian-style Markdown vault.")
    parser.add_argument("--version", action="version", version=f"vaultlens {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for op in OPERATIONS:
        command = sub.add_parser(op.name, help=_escape(op.summary), description=_escape(op.summary))
        for param in op.params:
            _add_param(command, param)
        command.add_argument("--vault", metavar="DIR", help=VAULT_HELP)
        command.add_argument("--json", action="store_true", help="Print the result object as JSON (--format json).")
        command.add_argument(
            "--format", choices=FORMATS, default=None,
            help="text: lines for people (default); plain: exactly `score  [[Title]]  (path)` per search hit, "
            "nothing else, for scripts; json: the result object.",
        )
        _add_no_cache(command)

    for op in WRITES:
        if op is ADD:
            continue
        command = sub.add_parser(op.name.replace("_", "-"), help=_escape(op.summary), description=_escape(op.summary))
        for param in op.params:
            _add_param(command, param)
        command.add_argument("--vault", metavar="DIR", help=VAULT_HELP)
        command.add_argument("--json", action="store_true", help="Print the result object as JSON.")
        command.add_argument("--format", choices=("text", "json"), default=None, help=argparse.SUPPRESS)
        _add_no_cache(command)
    _add_add(sub)

    j = sub.add_parser(
        "jsonl", help="Answer JSON-lines requests on stdin, one result object per line.",
        description='Answer JSON-lines requests on stdin, one result object per line: {"query": …} searches, '
        '{"command": NAME, …} runs another command; the keys are its parameters, with _ for -.',
    )
    j.add_argument("--vault", metavar="DIR", help=VAULT_HELP)
    j.add_argument("--limit", type=_positive_int, metavar="N", help="The default limit per request.")
    j.add_argument("--rank", choices=RANKS, help="The default ranking mode per request.")
    _add_no_cache(j)

    sub.add_parser("lsp", help="Run the language server (see `vaultlens lsp --help`).", add_help=False)
    sub.add_parser("mcp", help="Serve the vault to AI agents over MCP (see `vaultlens mcp --help`).", add_help=False)
    return parser


def _escape(text: str) -> str:
    return text.replace("%", "%%")  # argparse %-formats help texts


def _noted(text: str, note: str) -> str:
    """``text`` with ``(note)`` before its final full stop."""
    return f"{text[:-1]} ({note})." if text.endswith(".") else f"{text} ({note})"


def _add_param(command: argparse.ArgumentParser, param: Param) -> None:
    """One parameter as an argparse argument: positional when required, else its flag."""
    help_text = _escape(param.help)
    if param.required:
        command.add_argument(param.name, metavar=param.metavar, help=help_text)
        return
    names = [param.short, param.flag] if param.short else [param.flag]
    if param.kind is bool:
        command.add_argument(*names, dest=param.name, action="store_true", help=help_text)
        return
    if param.repeatable:
        command.add_argument(*names, dest=param.name, action="append", default=None, metavar=param.metavar,
                             help=_noted(help_text, "repeatable"))
        return
    if param.kind in (list, dict):
        command.add_argument(*names, dest=param.name, action="append", default=[], metavar=param.metavar,
                             help=_noted(help_text, "repeatable"))
        return
    kind = _at_least(param.minimum) if param.minimum is not None else param.kind
    extra: dict[str, Any] = {"choices": param.choices} if param.choices else {"metavar": param.metavar}
    if param.default is not None:
        help_text = _noted(help_text, f"default: {param.default}")
    command.add_argument(*names, dest=param.name, type=kind, default=param.default, help=help_text, **extra)


def _add_no_cache(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--no-cache", action="store_true",
        help="Read every page instead of the persistent index (a file per vault in the user cache folder, "
        "or VAULTLENS_CACHE_DIR), and write none.",
    )


def _arguments(op: Operation, args: argparse.Namespace) -> dict[str, Any]:
    """The parsed flags as ``op.run`` takes them (``--where KEY=VALUE`` pairs become a mapping)."""
    out: dict[str, Any] = {}
    for param in op.params:
        value = getattr(args, param.name)
        if param.kind is dict:
            pairs = {}
            for pair in value:
                key, sep, text = pair.partition("=")
                if not sep or not key.strip():
                    raise UsageError(f"{param.flag} takes KEY=VALUE, got {pair!r}")
                pairs[key.strip()] = text.strip()
            value = pairs
        if param.repeatable and value is not None and len(value) == 1:
            value = value[0]  # one --folder is the string the other surfaces send
        out[param.name] = value
    return out


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


def _source(args: argparse.Namespace) -> Source:
    """The vault the command names, opened, with its pages' files read from disk."""
    root = resolve_vault(args.vault)
    vault, _listing = _open(args, root)
    return _disk_source(vault, root)


def _disk_source(vault, root: str) -> Source:
    for warning in vault.vocabulary.warnings:  # as the servers log them: synonyms are partly off
        sys.stderr.write(f"vaultlens: warning: {warning}\n")
    return disk_source(vault, root, _Vectors(vault).get)


def _answer(op: Operation, args: argparse.Namespace) -> tuple[Any, Any]:
    """The payload of a read-only operation, and the load to commit once it is printed.

    The persistent index answers before the vault is listed (``load_vault(check_later=True)``;
    from 20,000 pages the listing runs in a worker process meanwhile); then the files are
    compared with it, and when any page changed since it was stored, those pages are read again
    and the operation runs again. So the answer printed is always the checked vault's."""
    root = resolve_vault(args.vault)
    options = CacheOptions.from_env(enabled=not getattr(args, "no_cache", False))
    loaded = load_vault(root, cache=options, check_later=True)
    source = _disk_source(loaded.vault, root)
    arguments = _arguments(op, args)
    payload: Any = None
    answered = False
    try:
        payload, answered = op.run(source, **arguments), True
    except Exception:  # noqa: BLE001 - said by the run on the checked vault, if it fails there too
        pass
    changed = loaded.check()
    if changed or not answered:
        loaded.apply(changed)
        try:
            payload = op.run(source, **arguments)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return payload, loaded


def run_operation(op: Operation, args: argparse.Namespace) -> int:
    """``vaultlens NAME …``: the operation's result object as JSON (``--json``) or as lines."""
    loaded = None
    if op in OPERATIONS:  # read-only: answered from the index while the listing is checked
        payload, loaded = _answer(op, args)
    else:
        source = _source(args)
        try:
            payload = op.run(source, **_arguments(op, args))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    note = op.note(payload)
    if note:
        sys.stderr.write(f"vaultlens: {note}\n")
    form = "json" if args.json else args.format or "text"
    if form == "json":
        sys.stdout.write(dumps(payload) + "\n")
    else:
        for line in (op.plain or op.text)(payload) if form == "plain" else op.text(payload):
            sys.stdout.write(line + "\n")
    if loaded is not None:
        sys.stdout.flush()  # the answer first; the index is stored again (if anything changed) after
        loaded.commit()
    return 0


def cmd_jsonl(args: argparse.Namespace) -> int:
    """One vault load, then one JSON line in, one result object out (for scripts and evals).

    A request is an operation's arguments as a JSON object, ``{"query": …, "limit"?, …}`` for a
    search or ``{"command": "grep", "pattern": …}`` for another; ``--limit`` and ``--rank`` give
    the defaults. A bad request is answered with ``{"error": "…"}`` and the loop goes on.
    """
    import json

    source = _source(args)
    defaults = {name: value for name, value in (("limit", args.limit), ("rank", args.rank)) if value is not None}
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            payload = jsonl_answer(json.loads(line), source, defaults)
        except ValueError as exc:
            payload = {"error": str(exc)}
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


def jsonl_answer(request: Any, source: Source, defaults: dict[str, Any] | None = None) -> dict[str, Any]:
    """The result object for one ``jsonl`` request (ValueError for a bad one)."""
    if not isinstance(request, dict):
        raise ValueError('a request is a JSON object: {"query": …} to search, or {"command": NAME, …}')
    name = request.get("command", "search")
    op = BY_NAME.get(name) if isinstance(name, str) else None
    if op is None:
        raise ValueError('"command" must be one of ' + ", ".join(BY_NAME))
    data = {key: value for key, value in request.items() if key != "command"}
    for name, value in (defaults or {}).items():
        if data.get(name) is None and any(p.name == name for p in op.params):
            data[name] = value
    return op.run(source, **check_object(op, data, also=("command",)))


WRITE_COMMANDS = {op.name.replace("_", "-"): op for op in WRITES if op is not ADD}
EXIT_DECLINED = 1


def _add_add(sub: Any) -> None:
    """``vaultlens add REF``: written by hand (not generated from ``ops.ADD``) because it shows the
    page and asks before writing; the engine calls are the ``add`` tool's (``engine.capture``)."""
    command = sub.add_parser(
        "add", help="Capture a URL, a local file or standard input (-) as a page, with its provenance.",
        description="Capture one document as a page: a URL (http/https), a local file (Markdown, HTML, text) or - "
        "for standard input. Shows the page and asks before writing it to the capture folder.",
    )
    command.add_argument("ref", metavar="REF", help="A URL, a file path, or - for standard input.")
    for param in ADD.params[1:]:
        if param.name != "dry_run":
            _add_param(command, param)
    command.add_argument("--dry-run", dest="dry_run", action="store_true", help="Show the page; write nothing.")
    command.add_argument("-y", "--yes", action="store_true", help="Write without asking.")
    command.add_argument("--vault", metavar="DIR", help=VAULT_HELP)
    command.add_argument("--json", action="store_true", help="Print what was (or would be) written as JSON.")
    _add_no_cache(command)


def _ask(question: str, from_tty: bool) -> bool:
    """A yes from the person at the terminal (standard input, or /dev/tty when stdin is the page)."""
    sys.stderr.write(question)
    sys.stderr.flush()
    try:
        if from_tty:
            with open("/dev/tty", encoding="utf-8") as tty:
                answer = tty.readline()
        else:
            answer = sys.stdin.readline()
    except OSError:
        answer = ""
    if not answer:
        sys.stderr.write("\n")
    return answer.strip().lower() in ("y", "yes")


def cmd_add(args: argparse.Namespace) -> int:
    """``vaultlens add REF``: capture, show, ask, write (atomically); exit 2 for a capture error."""
    from . import capture

    source = _source(args)
    settings = capture.capture_settings(source.root)
    stdin = sys.stdin.buffer.read() if args.ref == "-" else None
    try:
        doc = capture.load(args.ref, args.max_bytes or settings.max_bytes, stdin)
        cap = capture.capture(source.vault, source.root, doc, folder=args.folder, slug=args.slug, update=args.update,
                              user=args.user)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    show = sys.stderr if args.json else sys.stdout
    if not (args.json and (args.yes or args.dry_run)):
        show.write(cap.text if cap.text.endswith("\n") else cap.text + "\n")
        show.write(f"\n-- {'replaces' if cap.replaces else 'new page'} {cap.path}; type: {cap.meta['type']} ({cap.why})\n")
        if cap.related:
            show.write("-- suggested links (in `related`, not put into the text):\n")
            for c in cap.related:
                show.write(f"   {c['link']}  ({c['file']}; {c['mentions']} mention{'s' if c['mentions'] != 1 else ''} "
                           f"of {c['name']!r})\n")
        for line in _links_lines(cap.links):
            show.write(line + "\n")
        show.flush()
    version = None
    if not args.dry_run:
        if not args.yes and not _ask(f"Write {cap.path}? [y/N] ", from_tty=args.ref == "-"):
            sys.stderr.write("vaultlens: nothing written\n")
            return EXIT_DECLINED
        try:
            version = capture.write_capture(source.vault, source.root, cap)
        except (ValueError, OSError) as exc:
            raise UsageError(f"{exc}") from None
        if not args.json:
            sys.stdout.write(f"wrote {cap.path}\n")
    if args.json:
        sys.stdout.write(dumps(capture.payload(source.vault, cap, version)) + "\n")
    return 0


def _links_lines(report: list[dict[str, Any]]) -> list[str]:
    bad = [e for e in report if e["status"] in ("unresolved", "ambiguous", "alias")]
    return [f"-- link {e['target']!r} (line {e['line']}): {e['status']}" for e in bad]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one engine command; returns the process exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _utf8_stdout()
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            names = ", ".join([*BY_NAME, "add", *WRITE_COMMANDS, "jsonl", "lsp"])
            raise UsageError(f"a command is required: {names} (see vaultlens --help)")
        if args.command == "jsonl":
            return cmd_jsonl(args)
        if args.command == "add":
            return cmd_add(args)
        if args.command in WRITE_COMMANDS:
            return run_operation(WRITE_COMMANDS[args.command], args)
        return run_operation(BY_NAME[args.command], args)
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
