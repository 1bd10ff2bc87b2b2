"""POINTS: the one table of every number that changes the ranking, and the channel order.

The order of ``CHANNELS`` is the order components are listed in within a hit (after points).
The first eight channels and their points are the ranking contract (engine issue, section 5);
channels after them are additions that never change what the contract's channels mean.
"""

from __future__ import annotations

from types import MappingProxyType

POINTS = MappingProxyType(
    {
        "title-phrase": 10,  # once: the query's token sequence in the title or an alias
        "title-term": 5,  # per term that is a title token
        "alias-term": 4,  # per term that is an alias token but not a title token
        "tag-term": 4,  # per term equal to a tag or a segment of a hierarchical tag
        "body-term": 1,  # per occurrence, at most BODY_CAP per term
        "synonym-term": 2,  # title/alias; SYNONYM_MINOR in tag/body; once per (term, field)
        "stem-term": 1,  # per (term, field) matched only through the Porter stem
        "graph-edge": 2,  # hop 1; GRAPH_HOP2 at hop 2 (only with --graph)
        "prefix-term": 3,  # as-you-type: the last term is a prefix of a title/alias token
        "prefix-phrase": 8,  # as-you-type: the title (or an alias) starts with the text typed so far
    }
)

BODY_CAP = 3
SYNONYM_MINOR = 1
GRAPH_HOP2 = 1
GRAPH_MAX_HOPS = 2
PREFIX_ALIAS = 2  # prefix of an alias token only (not of a title token)
PREFIX_MIN_CHARS = 1  # shortest partial term that counts as a prefix

CHANNELS: tuple[str, ...] = tuple(POINTS)
CHANNEL_RANK = MappingProxyType({name: i for i, name in enumerate(CHANNELS)})

# Fields a term can match, in the order components name them.
FIELDS: tuple[str, ...] = ("title", "alias", "tag", "body")

# Related pages (hover "Related pages", `vaultlens related`): why two pages belong together.
RELATED_POINTS = MappingProxyType(
    {
        "links-to": 4,  # the page links to the candidate
        "linked-from": 4,  # the candidate links to the page
        "typed-edge": 3,  # per sources/related/depends_on predicate, either direction
        "shared-tag": 2,  # per tag both pages carry
        "co-cited": 1,  # per page that links to both; capped at RELATED_CAP
        "shared-link": 1,  # per page both link to; capped at RELATED_CAP
        "title-term": 1,  # per title token both titles share; capped at RELATED_CAP
    }
)
RELATED_CHANNELS: tuple[str, ...] = tuple(RELATED_POINTS)
RELATED_CHANNEL_RANK = MappingProxyType({name: i for i, name in enumerate(RELATED_CHANNELS)})
RELATED_CAP = 3
RELATED_FANOUT = 400  # a tag, link target or title token shared by more pages proposes no candidates
