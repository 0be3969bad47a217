"""File paths as reports print them: relative to what the user named when they can be."""

from __future__ import annotations

import os


def short_path(path: str, base: str | None = None) -> str:
    if base:
        try:
            rel = os.path.relpath(path, base if os.path.isdir(base) else os.path.dirname(base))
            if not rel.startswith(".."):
                return rel
        except ValueError:
            pass
    return path
