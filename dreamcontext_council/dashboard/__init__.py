"""The live dashboard: a Starlette app over a `_dream_context/` root, read-only but for its
own page's write path (dashboard/write_path.py)."""

from dreamcontext_council.dashboard.app import create_app
from dreamcontext_council.dashboard.server import serve

__all__ = ["create_app", "serve"]
