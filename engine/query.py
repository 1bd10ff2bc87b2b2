"""Query: what to look for (terms, phrase tokens) and which pages may answer (filters)."""

from __future__ import annotations

from dataclasses import dataclass

from .model import Page
from .text import query_terms, tokenize

RANKS = ("default", "hybrid")  # the ranking modes: see README.md, Ranking


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed search.

    ``tokens`` is the query's token sequence (for the phrase channel); ``terms`` the same tokens
    without duplicates. ``prefix`` turns on as-you-type matching of the last, partial term.
    ``rank`` is ``default`` (the explained channel ranking) or ``hybrid`` (reciprocal rank fusion
    of that ranking with a BM25F arm and, when installed, a vector arm).
    """

    text: str
    terms: tuple[str, ...]
    tokens: tuple[str, ...]
    type: str | None = None
    folder: str | None = None
    tag: str | None = None
    graph: bool = False
    limit: int = 10
    prefix: bool = False
    rank: str = "default"

    @property
    def partial(self) -> str | None:
        """The last term when it may still be being typed (as-you-type mode only)."""
        if not self.prefix or not self.tokens or self.text[-1:].isspace():
            return None
        return self.tokens[-1]


def parse_query(
    text: str,
    *,
    type: str | None = None,  # noqa: A002 - the user-facing name of the filter
    folder: str | None = None,
    tag: str | None = None,
    graph: bool = False,
    limit: int = 10,
    prefix: bool = False,
    rank: str = "default",
) -> Query:
    """Build a Query from free text and filter options (ValueError for a filter that is not text,
    or a ``rank`` that is not one of RANKS)."""
    for name, value in (("type", type), ("folder", folder), ("tag", tag)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f'"{name}" must be a string')
    if rank not in RANKS:
        raise ValueError('"rank" must be ' + " or ".join(f'"{r}"' for r in RANKS))
    return Query(
        text=text,
        terms=query_terms(text),
        tokens=tuple(tokenize(text)),
        type=type or None,
        folder=normalize_folder(folder) if folder is not None else None,
        tag=tag.lstrip("#").casefold() if tag else None,
        graph=graph,
        limit=limit,
        prefix=prefix,
        rank=rank,
    )


def normalize_folder(folder: str) -> str:
    """A folder filter as a clean vault-relative prefix: ``./wiki//ai/`` -> ``wiki/ai``.

    A folder that climbs out of the vault (``../x``, ``/etc``) becomes ``"\\0"``, which no page
    path starts with, so it matches nothing and nothing outside the vault is read.
    """
    f = folder.strip().replace("\\", "/")
    if f.startswith("/"):
        return "\0"
    parts: list[str] = []
    for part in f.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            return "\0"
        parts.append(part)
    return "/".join(parts)


def passes_filters(page: Page, query: Query) -> bool:
    """Whether a page is a candidate under the query's filters (AND of type, folder, tag)."""
    if query.type is not None and page.type != query.type:
        return False
    if query.folder is not None and query.folder != "":
        if not page.path.startswith(query.folder + "/"):
            return False
    if query.tag is not None:
        want = query.tag
        if not any(t == want or t.startswith(want + "/") for t in page.tags):
            return False
    return True
