"""The engine: runs a debate with models. Its sub-packages, lowest first: providers,
model_calls, prompting, research, protocol, setup (docs/architecture.md)."""
