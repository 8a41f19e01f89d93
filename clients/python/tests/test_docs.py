"""Every Python example in docs/clients.md, run as written against the real stack.

An example is any ```python block in the "## Python" section; each runs in a fresh interpreter
with GATEWAY_URL and BOOKING_CONTROL_URL pointing at the stack, and must exit 0. A comment
`# a b c` on a line of its own right after a print() call, or at the end of a print() line,
is the output that print must give (`…` and `...` match anything).
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from . import stack

DOC = stack.REPO / "docs/clients.md"
SRC = Path(__file__).resolve().parents[1] / "src"


def python_examples() -> list[tuple[int, str]]:
    """(line number, code) of each ```python block under "## Python"."""
    lines = DOC.read_text().splitlines()
    start = lines.index("## Python")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    examples, opened = [], None
    for number in range(start, end):
        line = lines[number]
        if opened is None and line.strip() == "```python":
            opened = number + 1
        elif opened is not None and line.strip() == "```":
            examples.append((opened + 1, "\n".join(lines[opened:number]) + "\n"))
            opened = None
    return examples


def expected_output(code: str) -> list[str]:
    """The printed lines the example's comments promise, in order."""
    promised, lines = [], code.splitlines()
    for index, line in enumerate(lines):
        if "print(" not in line:
            continue
        trailing = re.search(r"\)\s*#\s*(.+)$", line)
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if trailing:
            promised.append(trailing.group(1).strip())
        elif following.startswith("#"):
            promised.append(following.lstrip("#").strip())
    return promised


def matches(pattern: str, line: str) -> bool:
    parts = re.split(r"…|\.\.\.", pattern)
    return re.fullmatch(".*".join(re.escape(part) for part in parts), line) is not None


class Examples(unittest.TestCase):
    def test_every_python_example_runs_as_written(self):
        S = stack.shared()
        examples = python_examples()
        self.assertGreaterEqual(len(examples), 4, "the Python section's examples were not found")
        env = {**os.environ, "GATEWAY_URL": S.url, "BOOKING_CONTROL_URL": S.booking_control_url,
               "PYTHONPATH": str(SRC)}
        for line, code in examples:
            with self.subTest(example=f"docs/clients.md:{line}"):
                with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
                    script.write(code)
                self.addCleanup(os.unlink, script.name)
                done = subprocess.run([sys.executable, script.name], env=env, text=True,
                                      capture_output=True, timeout=300)
                self.assertEqual(done.returncode, 0, f"docs/clients.md:{line} failed:\n"
                                 f"{done.stderr}")
                printed = done.stdout.splitlines()
                promised = expected_output(code)
                self.assertEqual(len(printed), len(promised), f"docs/clients.md:{line} printed "
                                 f"{printed}, its comments promise {promised}")
                for want, got in zip(promised, printed):
                    self.assertTrue(matches(want, got), f"docs/clients.md:{line}: printed "
                                    f"{got!r}, its comment says {want!r}")


if __name__ == "__main__":
    unittest.main()
