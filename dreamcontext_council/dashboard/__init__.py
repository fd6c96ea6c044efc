"""The live dashboard: a read-only Starlette app over a `_dream_context/` root."""

from dreamcontext_council.dashboard.app import create_app
from dreamcontext_council.dashboard.server import serve

__all__ = ["create_app", "serve"]
