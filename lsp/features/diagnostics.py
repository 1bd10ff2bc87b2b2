"""Diagnostics: pushed (``textDocument/publishDiagnostics``) and pulled (``textDocument/diagnostic``).

When the client can pull (it declares ``textDocument.diagnostic``), open pages are answered by
pull and nothing is pushed for them; otherwise they are pushed on every change. Pages that are
not open are pushed after the start-up scan when ``diagnostics.scope`` is ``vault`` (the
default). A change to one page re-checks only the pages it can affect (the pages that link to
it by either name, the pages sharing a title or alias with it), and a page is pushed again
only when its findings differ from what was last sent. ``lsp/sync.py`` calls ``on_page``,
``on_indexed`` and ``on_settings``.

Must not: decide what is wrong with a page; ``engine.diagnose`` does.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time

from lsprotocol import types
from pygls.capabilities import get_capability

from vaultlens.engine.diagnose import Finding, Rules, diagnose, pages_affected
from vaultlens.engine.model import Page

from ..convert import to_lsp_range
from ..idle import PAUSE, SLICE, STARVE, quiet
from ..server import VaultServer, VaultState
from . import mentions
from .changes import open_documents, texts_for, to_location, uri_of, wait_indexed

log = logging.getLogger("vaultlens")
SOURCE = "vaultlens"
# The push after the scan is background work (``lsp/idle.py``: while the client is quiet, in
# slices of SLICE seconds, pausing at once when a message is waiting).
# seconds without a change before changed pages are checked again: a pause in typing, not the
# gap between two keystrokes (a check of one page's link suggestions takes ~9 ms at 100,000
# pages, on the event loop: at 0.05 s it ran between keystrokes and the next one's answer waited)
DEBOUNCE = 0.3
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


def _published(state: VaultState) -> dict[str, tuple[str, tuple[Finding, ...]]]:
    """What was last pushed per page: (uri, findings). Kept on the vault state."""
    return state.published_diagnostics


def pulls(ls: VaultServer) -> bool:
    """Whether the client asks for diagnostics itself (pull model)."""
    return get_capability(ls.client_capabilities, "text_document.diagnostic", None) is not None


def _rules(state: VaultState) -> Rules:
    severity = state.settings.unresolved_severity
    return Rules(unresolved=None if severity == "off" else severity)


def findings(ls: VaultServer, state: VaultState, rel: str, docs: dict | None = None) -> tuple[Finding, ...]:
    """The findings of one page under the vault's settings (none when diagnostics are off);
    ``docs``: ``open_documents``, when the caller has it (pushing the vault, page by page)."""
    if not state.settings.diagnostics_enabled:
        return ()
    return diagnose(state.vault, rel, _rules(state), texts_for(ls, state, docs)) + mentions.findings(state, rel)


def to_diagnostic(state: VaultState, finding: Finding, docs: dict) -> types.Diagnostic:
    """One finding as an LSP diagnostic (its code, the places involved as related information)."""
    return types.Diagnostic(
        range=to_lsp_range(finding.span),
        severity=_SEVERITY[finding.severity],
        code=finding.code,
        source=SOURCE,
        message=finding.message,
        related_information=[
            types.DiagnosticRelatedInformation(location=to_location(state, loc, docs), message=loc.path)
            for loc in finding.related
        ]
        or None,
    )


def publish(ls: VaultServer, state: VaultState, rel: str, docs: dict) -> None:
    """Push one page's findings if they changed since the last push (an empty list clears)."""
    cache = _published(state)
    is_open = rel in state.open_docs
    if state.workspace_findings is not None and not is_open:
        _keep_for_workspace(ls, state, rel, docs)  # the client pulls closed pages itself
        return
    wanted: tuple[Finding, ...] = ()
    if rel in state.vault.pages and not (is_open and pulls(ls)):
        if is_open or state.settings.diagnostics_scope == "vault":
            wanted = findings(ls, state, rel, docs)
    previous = cache.get(rel)
    if previous is None and not wanted:
        return
    uri = uri_of(state, rel, docs)
    if previous is not None and previous[1] == wanted and previous[0] == uri:
        return
    if previous is not None and previous[0] != uri:  # the page's URI changed (a buffer opened)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=previous[0], diagnostics=[]))
    if wanted:
        cache[rel] = (uri, wanted)
    else:
        cache.pop(rel, None)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=[to_diagnostic(state, f, docs) for f in wanted])
    )


def _refresh(ls: VaultServer) -> None:
    """Ask a pulling client to pull again (other pages may have changed its answers)."""
    if pulls(ls) and get_capability(ls.client_capabilities, "workspace.diagnostics.refresh_support", False):
        ls.workspace_diagnostic_refresh(None)


def on_page(ls: VaultServer, state: VaultState, rel: str, before: Page | None) -> None:
    """After page ``rel`` changed (``before`` is what it was): re-check the pages it affects once
    the changes pause for DEBOUNCE seconds, so a keystroke's answer (completion, hover) never
    waits for diagnostics and a burst of edits is checked once, from the page as it was before
    the burst's first change."""
    if not state.indexed.is_set():
        return  # the push after the scan covers everything
    pending = _pending(state)
    first = not pending
    pending.setdefault(rel, before)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not in the server's loop (a direct call): check at once
        check_pending(ls, state)
        return
    if first:
        state.diagnostics_since = loop.time()
    timer = state.diagnostics_timer
    if timer is not None:
        timer.cancel()
    state.diagnostics_timer = loop.call_later(DEBOUNCE, flush, ls, state)


def _pending(state: VaultState) -> dict[str, Page | None]:
    return state.pending_diagnostics


def flush(ls: VaultServer, state: VaultState) -> None:
    """The debounced re-check (see ``on_page``): later when a message is waiting (it goes first:
    a change re-arms the wait, a request is answered), unless the oldest change waits since
    STARVE seconds (a client that never pauses still gets its diagnostics)."""
    waiting = getattr(ls, "input_pending", None)  # (set by the stdio transport)
    loop = asyncio.get_running_loop()
    if waiting is not None and waiting() and loop.time() - state.diagnostics_since < STARVE:
        state.diagnostics_timer = loop.call_later(PAUSE, flush, ls, state)
        return
    check_pending(ls, state)


def check_pending(ls: VaultServer, state: VaultState) -> None:
    """Re-check now the pages changed since the last check (a pull asks for this first: its
    answer is the pages as they are)."""
    if state.diagnostics_timer is not None:
        state.diagnostics_timer.cancel()
    state.diagnostics_timer = None
    pending, state.pending_diagnostics = state.pending_diagnostics, {}
    for rel in sorted(pending):
        _recheck(ls, state, rel, pending[rel])


def _names_changed(state: VaultState, before: Page | None, after: Page | None) -> bool:
    """Whether a page gained or lost a name (title, alias, file name) a mention can use."""
    names = [state.vault.page_keys(p) if p is not None else set() for p in (before, after)]
    return names[0] != names[1]


def _recheck(ls: VaultServer, state: VaultState, rel: str, before: Page | None) -> None:
    try:
        docs = open_documents(ls, state)
        after = state.vault.get(rel)
        affected = set(pages_affected(state.vault, before, after)) | {rel}
        if state.settings.link_suggestions != "off" and _names_changed(state, before, after):
            affected |= state.open_docs & set(state.vault.pages)  # their link suggestions may name it now, or no more
        for path in sorted(affected):
            publish(ls, state, path, docs)
        if state.workspace_findings is not None or any(p in state.open_docs and p != rel for p in affected):
            _refresh(ls)
    except Exception:  # noqa: BLE001 - diagnostics must never break keeping the index live
        log.exception("diagnostics for %s failed", rel)


async def publish_vault(ls: VaultServer, state: VaultState) -> None:
    """Push every page's findings (in short slices, so the server keeps answering meanwhile)."""
    await wait_indexed(state)
    try:
        await quiet(ls)
        # a diagnosis reads where every link resolves: after a warm start, their stored parts
        # restored a slice at a time first (``lsp/idle.py`` may be doing it too), not all at once
        while state.vault.prepare_links():
            await asyncio.sleep(PAUSE if ls.input_pending() else 0)
            await quiet(ls)
        paths = sorted(set(state.vault.pages) | set(_published(state)))
        docs = open_documents(ls, state)
        deadline = time.perf_counter() + SLICE
        for path in paths:
            publish(ls, state, path, docs)
            if time.perf_counter() > deadline or ls.input_pending():
                await asyncio.sleep(PAUSE)
                await quiet(ls)
                docs = open_documents(ls, state)
                deadline = time.perf_counter() + SLICE
        _refresh(ls)
        if get_capability(ls.client_capabilities, "workspace.code_lens.refresh_support", False):
            ls.workspace_code_lens_refresh(None)
    except Exception:  # noqa: BLE001 - a failed push must not take the server down
        log.exception("publishing the vault's diagnostics failed")


def on_indexed(ls: VaultServer, state: VaultState) -> None:
    """After the start-up scan: push the whole vault (in a task)."""
    ls.index_tasks.append(asyncio.ensure_future(publish_vault(ls, state)))


def on_settings(ls: VaultServer, state: VaultState) -> None:
    """After the settings changed: push again (a re-index pushes on its own when it ends)."""
    if state.indexed.is_set():
        on_indexed(ls, state)


# --- workspace/diagnostic: the pull of every page -----------------------------------------------
# Once a client pulls the workspace, closed pages are no longer pushed: their findings are kept
# in ``state.workspace_findings`` (filled on the first pull, then kept current by ``publish``
# exactly as pushing is, page by page) and each report carries a ``resultId``, a hash of the
# page's URI and findings, so a page whose findings did not change reports ``unchanged``.
# Open pages are left to ``textDocument/diagnostic`` when the client pulls those too.


def result_id(uri: str, found: tuple[Finding, ...]) -> str:
    """A report's ``resultId``: the same findings for the same URI give the same id, in any process."""
    return hashlib.sha256(repr((uri, found)).encode("utf-8", "surrogatepass")).hexdigest()[:20]


def _keep_for_workspace(ls: VaultServer, state: VaultState, rel: str, docs: dict) -> None:
    """Record a closed page's findings for the next workspace pull (and clear what was pushed)."""
    keep = state.workspace_findings
    assert keep is not None
    wanted: tuple[Finding, ...] = ()
    if rel in state.vault.pages and state.settings.diagnostics_scope == "vault":
        wanted = findings(ls, state, rel, docs)
    if wanted:
        keep[rel] = wanted
    else:
        keep.pop(rel, None)
    previous = _published(state).pop(rel, None)
    if previous is not None:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=previous[0], diagnostics=[]))


async def _fill_workspace(ls: VaultServer, state: VaultState) -> None:
    """The first workspace pull: every closed page's findings, in short slices."""
    state.workspace_findings = {}
    docs = open_documents(ls, state)
    deadline = time.perf_counter() + SLICE
    for rel in sorted(set(state.vault.pages) | set(_published(state))):
        if rel not in state.open_docs:
            _keep_for_workspace(ls, state, rel, docs)
        if time.perf_counter() > deadline:
            await asyncio.sleep(PAUSE)
            docs = open_documents(ls, state)
            deadline = time.perf_counter() + SLICE


async def workspace_report(
    ls: VaultServer, previous: dict[str, str]
) -> list[types.WorkspaceFullDocumentDiagnosticReport | types.WorkspaceUnchangedDocumentDiagnosticReport]:
    """Every page's report across the vaults, sorted by URI: ``unchanged`` where ``previous``
    (URI -> resultId) holds the current id, a full report where findings exist or the client
    has an older id, nothing for a page without findings the client never heard of."""
    items: list[types.WorkspaceFullDocumentDiagnosticReport | types.WorkspaceUnchangedDocumentDiagnosticReport] = []
    for root in sorted(ls.vaults):
        state = ls.vaults[root]
        await wait_indexed(state)
        if state.pending_diagnostics:
            check_pending(ls, state)  # (the debounced re-check now: the pages as they are)
        if state.workspace_findings is None:
            await _fill_workspace(ls, state)
        keep = state.workspace_findings or {}
        docs = open_documents(ls, state)
        for rel in sorted(state.vault.pages):
            is_open = rel in state.open_docs
            if is_open and pulls(ls):
                continue  # answered by textDocument/diagnostic
            found = findings(ls, state, rel, docs) if is_open else keep.get(rel, ())
            uri = uri_of(state, rel, docs)
            version = docs[rel].version if rel in docs else None
            rid = result_id(uri, found)
            if previous.get(uri) == rid:
                items.append(types.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, version=version, result_id=rid))
            elif found or uri in previous:
                items.append(types.WorkspaceFullDocumentDiagnosticReport(
                    uri=uri, version=version, result_id=rid, items=[to_diagnostic(state, f, docs) for f in found]
                ))
    items.sort(key=lambda item: item.uri)
    return items


def register(server: VaultServer) -> None:
    """Register ``textDocument/diagnostic`` (the pull model; pushing is driven by ``lsp/sync.py``)
    and ``workspace/diagnostic``."""

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    async def workspace_diagnostic(ls: VaultServer, params: types.WorkspaceDiagnosticParams) -> types.WorkspaceDiagnosticReport:
        previous = {p.uri: p.value for p in params.previous_result_ids or []}
        return types.WorkspaceDiagnosticReport(items=await workspace_report(ls, previous))

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False),
    )
    async def diagnostic(
        ls: VaultServer, params: types.DocumentDiagnosticParams
    ) -> types.RelatedFullDocumentDiagnosticReport | types.RelatedUnchangedDocumentDiagnosticReport:
        found = ls.state_for_uri(params.text_document.uri)
        if found is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        state, rel = found
        await wait_indexed(state)
        docs = open_documents(ls, state)
        got = findings(ls, state, rel, docs)
        rid = result_id(params.text_document.uri, got)  # as the workspace pull's: unchanged when equal
        if params.previous_result_id == rid:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
        return types.RelatedFullDocumentDiagnosticReport(
            result_id=rid, items=[to_diagnostic(state, f, docs) for f in got]
        )
