"""How an operation is declared: its parameters, once, and the one function that answers it.

``engine/ops.py`` declares every operation with these classes. Each surface is built from the
declarations and adds only its own spelling and transport: the command line (``engine/cli.py``:
a subcommand per operation, and the ``jsonl`` loop), the language server (``lsp/features/wiki.py``:
a ``wiki/<name>`` request per operation) and the MCP server (``lsp/mcp_server.py``: a tool per
operation). So a parameter's name, type, default, help and checks are written in one place, and
every surface returns the same result object for the same arguments.

Must not: know any protocol. ``check_object`` is here because two surfaces (``jsonl`` and
``wiki/*``) take the arguments as one JSON object; MCP checks them against the schema built from
the same parameters.
"""

from __future__ import annotations

import functools

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .vault import Vault

KINDS = (str, bool, int, float, list, dict)  # list: of strings; dict: string keys to values
_SAME = object()


class ParamError(ValueError):
    """Arguments that do not fit an operation's parameters; the message names the parameter."""


class DocumentPath(str):
    """A page named by the document it is in (a surface turned the document's URI into this
    vault-relative path): taken as that very path, never looked up as a title or alias."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


@dataclass(frozen=True)
class Param:
    """One parameter of an operation, with how each surface spells and checks it.

    ``name`` is the Python keyword of ``Operation.run``, the ``jsonl`` key and the MCP argument;
    ``key`` the ``wiki/*`` param (``name`` in camelCase unless given); ``flag`` the CLI option
    (``--`` and ``name`` with dashes unless given). A required parameter is a positional
    argument on the command line. ``help`` is the CLI's help and the MCP schema's description.
    """

    name: str
    kind: type  # one of KINDS
    help: str
    default: Any = None  # never a mutable value: a list parameter's default is [] on every surface
    required: bool = False
    choices: tuple[Any, ...] = ()
    checked_by_run: bool = False  # ``run`` checks ``choices`` itself, in words that say what each means
    minimum: int | None = None
    page: bool = False  # names a page: ``wiki/*`` also takes a document URI for it
    expects: str = ""  # what a wrong value is told it must be (default: from ``kind``)
    key: str = ""
    flag: str = ""
    short: str = ""  # a one-letter CLI option besides ``flag`` ("-i")
    metavar: str = ""
    mcp_default: Any = _SAME  # the MCP tool's default where agents are better served by another
    repeatable: bool = False  # a string parameter that also takes a list of them, meaning "any of"
    alias_for: str = ""  # another spelling of that parameter (OpenViking's names): see ``alias``

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise TypeError(f"{self.name}: kind must be one of {KINDS}")
        if self.repeatable and self.kind is not str:
            raise TypeError(f"{self.name}: only a string parameter is repeatable")
        if self.required and self.default is not None:
            raise TypeError(f"{self.name}: a required parameter has no default")
        derived = {
            "key": self.key or _camel(self.name),
            "flag": self.flag or "--" + self.name.replace("_", "-"),
            "metavar": self.metavar or self.name.upper(),
            "expects": self.expects or self._expects(),
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    def _expects(self) -> str:
        if self.choices and not self.checked_by_run:
            return " or ".join(json.dumps(c) for c in self.choices)
        if self.repeatable:
            return "a string or a list of strings"
        if self.kind is int and self.minimum is not None:
            return f"a whole number of at least {self.minimum}"
        return {str: "a string", bool: "true or false", int: "a whole number", float: "a number",
                list: "a list of strings", dict: "an object"}[self.kind]

    @property
    def initial(self) -> Any:
        """The value when the caller gives none (a fresh list for a list parameter)."""
        return [] if self.kind is list else self.default

    @property
    def agent_default(self) -> Any:
        """The MCP tool's default."""
        return self.initial if self.mcp_default is _SAME else self.mcp_default

    def check(self, value: Any, spelled: str) -> Any:
        """``value`` as ``run`` takes it, or ParamError saying what ``spelled`` must be."""
        kind = self.kind
        if kind is list and isinstance(value, str):
            value = [value]  # one prefix for a list of prefixes
        if kind is dict and not isinstance(value, dict) and hasattr(value, "_asdict"):
            value = dict(value._asdict())  # a JSON object some transports hand over as a namedtuple
        if kind is list and isinstance(value, tuple):
            value = list(value)
        if self.repeatable and isinstance(value, (list, tuple)):
            ok = bool(value) and all(isinstance(item, str) for item in value)
            if not ok:
                raise ParamError(f'"{spelled}" must be {self.expects}')
            return list(value)
        if kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, kind)
        if ok and kind is list:
            ok = all(isinstance(item, str) for item in value)
        if ok and self.minimum is not None:
            ok = value >= self.minimum
        if ok and self.choices and not self.checked_by_run:
            ok = value in self.choices
        if not ok:
            tail = f' ("{spelled}" is required)' if self.required else ""
            raise ParamError(f'"{spelled}" must be {self.expects}{tail}')
        return value


def alias(name: str, target: Param, why: str, **spelling: Any) -> Param:
    """A second name for ``target`` on every surface (``after`` for ``since``): no default of
    its own, and ``Operation.run`` hands its value to ``target``; the two given different values
    is a ParamError. ``spelling`` may set ``key``/``flag``/``metavar``."""
    return Param(
        name, target.kind, f"Same as `{target.name}` ({why}).", minimum=target.minimum, choices=target.choices,
        checked_by_run=target.checked_by_run, expects=target.expects, alias_for=target.name, **spelling,
    )


def _with_aliases(run: Callable[..., dict[str, Any]], params: tuple[Param, ...]) -> Callable[..., dict[str, Any]]:
    """``run`` taking each alias's value as its target's (a target left at its default yields)."""
    by_name = {p.name: p for p in params}
    pairs = [(p.name, by_name[p.alias_for]) for p in params if p.alias_for]

    @functools.wraps(run)  # its signature is ``run``'s (inspect follows __wrapped__)
    def run_with_aliases(source: Source, *args: Any, **arguments: Any) -> dict[str, Any]:
        for name, target in pairs:
            value = arguments.pop(name, None)
            if value is None:
                continue
            given = arguments.get(target.name)
            if given is not None and given != target.initial and given != value:
                raise ParamError(f'"{target.name}" and its alias "{name}" are given different values: give one')
            arguments[target.name] = value
        return run(source, *args, **arguments)

    return run_with_aliases


def _no_note(payload: dict[str, Any]) -> str | None:
    return None


@dataclass(frozen=True)
class Operation:
    """One thing vaultlens answers, on every surface: ``run(source, **arguments)`` gives the
    result object (what ``vaultlens NAME --json`` prints), or raises ValueError with a message
    for the caller (the CLI prints it after ``vaultlens: error:``, the servers send it back)."""

    name: str
    title: str  # a few words (the MCP tool's title)
    description: str  # the first line is the summary (CLI help); all of it is for agents (MCP)
    params: tuple[Param, ...]
    run: Callable[..., dict[str, Any]]
    result: str  # the name of the result object's shape in engine/results.py (the MCP output schema)
    text: Callable[[dict[str, Any]], list[str]]  # the CLI's lines without --json
    note: Callable[[dict[str, Any]], str | None] = _no_note  # a line for stderr, e.g. "cut short"
    plain: Callable[[dict[str, Any]], list[str]] | None = None  # ``--format plain`` lines (None: ``text``)

    def __post_init__(self) -> None:
        names = {p.name for p in self.params}
        for p in self.params:
            if p.alias_for and (p.alias_for not in names or p.required):
                raise TypeError(f"{self.name}: alias {p.name} names no optional parameter {p.alias_for!r}")
        if any(p.alias_for for p in self.params):
            object.__setattr__(self, "run", _with_aliases(self.run, self.params))

    @property
    def summary(self) -> str:
        return self.description.split("\n", 1)[0]

    @property
    def page_param(self) -> Param | None:
        """The required parameter naming a page, if there is one."""
        return next((p for p in self.params if p.page and p.required), None)

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.initial for p in self.params}


@dataclass(frozen=True)
class Source:
    """The vault an operation answers from, and what it reads besides the index: each surface
    gives its own (the disk for the CLI and MCP, open buffers first for the language server)."""

    vault: Vault
    root: str
    text: Callable[[str], str | None]  # a page's whole file; None: use the indexed body; OSError: unreadable
    vectors: Callable[[], Any] | None = None  # the vector arm of rank hybrid (None: lexical arms only)
    hints_threshold: float | None = None  # the surface's hintsThreshold setting (None: the vault's, else 0.5)


def disk_source(vault: Vault, root: str, vectors: Callable[[], Any] | None = None) -> Source:
    """A source whose page texts are the files on disk."""
    from .scan import read_bytes

    return Source(vault, root, lambda path: read_bytes(root, path).decode("utf-8", errors="replace"), vectors)


def check_object(
    op: Operation,
    data: Mapping[str, Any],
    *,
    spell: Callable[[Param], str] = lambda p: p.name,
    also: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Arguments given as a JSON object (keys spelled by ``spell``), checked, as ``run`` takes
    them; ``also`` names keys the surface itself reads. A missing key (or null) is its default."""
    by_key = {spell(p): p for p in op.params}
    unknown = sorted(set(data) - set(by_key) - set(also))
    if unknown:
        raise ParamError(
            f"unknown parameter(s): {', '.join(unknown)} (accepted: {', '.join([*by_key, *also])})"
        )
    out: dict[str, Any] = {}
    for key, param in by_key.items():
        value = data.get(key)
        if value is None:
            if param.required:
                raise ParamError(f'"{key}" is required and must be {param.expects}')
            out[param.name] = param.initial
        else:
            out[param.name] = param.check(value, key)
    return out
