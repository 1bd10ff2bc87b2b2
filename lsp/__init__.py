"""vaultlens language server: thin adapters from LSP messages to engine calls.

Must not: rank, boost, filter or sort results itself; everything it answers comes from engine/.
"""
