"""The attached kernel backend (shared by the package and its fast paths)."""
from __future__ import annotations

state = {"backend": None, "reason": "no kernel backend attached"}
