"""vaultlens engine: parse a vault into a page graph and rank pages with explained scores.

Must not: import pygls, lsprotocol or the ``lsp`` package, or need an event loop.
"""

__version__ = "0.1.0"
