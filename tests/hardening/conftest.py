"""Fixtures of the hardening suite: the hostile-input generator is importable as ``hostile``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
