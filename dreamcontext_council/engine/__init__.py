"""The engine: rounds, providers, synthesis, compression and the claims ledger."""
