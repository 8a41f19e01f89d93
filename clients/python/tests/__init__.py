"""The client's tests: pure rules (test_retry, test_lease, test_wire, test_errors) and the
client against a real gateway, PostgreSQL and demo providers (stack.py starts them)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
