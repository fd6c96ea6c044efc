"""Model providers: one async interface, one module per provider.

Nothing is imported here on purpose, so that starting the CLI never loads the
`anthropic` or `openai` SDKs; import the module you need, e.g.
`dreamcontext_council.engine.providers.registry`.
"""
