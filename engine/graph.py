"""walk_typed_edges: the deterministic breadth-first walk behind ``--graph``.

From all keyword hits (hop 0) over ``sources``, ``related``, ``depends_on`` (in that order) up
to ``GRAPH_MAX_HOPS`` hops. Each hop's frontier is processed predicate by predicate, pages in
sorted path order, targets in sorted title order; the first visit wins, so a page reached from
several seeds records the nearest hop and, on a tie, the earliest predicate.

A seed (a keyword hit) that another seed reaches is recorded too, once, at its nearest hop: the
walk augments a keyword hit it reaches as it adds a page it discovers (the LLM-wiki contract:
"pages discovered by the walk appear as additional hits, or augment existing hits"). A seed is
never credited for reaching itself (``a -> b -> a``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .vault import TYPED_EDGES, Vault
from .weights import GRAPH_MAX_HOPS


@dataclass(frozen=True, slots=True)
class Reached:
    """A page the walk reached: at which hop, over which predicate, from which page."""

    path: str
    hop: int
    predicate: str
    source: str
    seed: bool = False  # a keyword hit itself, reached from another one


def walk_typed_edges(
    vault: Vault,
    seeds: Iterable[str],
    allowed: Callable[[str], bool] = lambda _p: True,
    max_hops: int = GRAPH_MAX_HOPS,
    *,
    seeds_reached: bool = False,
) -> list[Reached]:
    """Pages reached from ``seeds`` (and, with ``seeds_reached``, the seeds another seed
    reaches: ``Reached.seed``), in the order they were reached.

    ``allowed`` filters which pages may be reached (the search's filters, when the walk is
    asked to keep to them); a page that is not allowed is neither recorded nor walked through.
    """
    seed_set = set(seeds)
    visited = set(seed_set)
    origin = {path: path for path in seed_set}  # the seed each walked page was first reached from
    credited: set[str] = set()
    frontier = sorted(visited)
    reached: list[Reached] = []
    for hop in range(1, max_hops + 1):
        next_frontier: list[str] = []
        for predicate in TYPED_EDGES:
            for source in frontier:
                for target in vault.edge_targets(source, predicate):
                    if target in seed_set:
                        if seeds_reached and target not in credited and origin[source] != target:
                            credited.add(target)
                            reached.append(Reached(target, hop, predicate, source, seed=True))
                        continue
                    if target in visited or not allowed(target):
                        continue
                    visited.add(target)
                    origin[target] = origin[source]
                    reached.append(Reached(target, hop, predicate, source))
                    next_frontier.append(target)
        frontier = sorted(next_frontier)
        if not frontier:
            break
    return reached
