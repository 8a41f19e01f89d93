#!/usr/bin/env python3
"""extract_examples.py DOC SECTION LANG OUTDIR: each ```LANG block of DOC's "## SECTION" section
into OUTDIR/example_N.LANG, exactly as written, so the docs' examples run in CI."""
import pathlib
import sys

doc, section, lang, outdir = sys.argv[1:5]
lines = pathlib.Path(doc).read_text(encoding="utf-8").splitlines()
inside_section = False
block = None
count = 0
for line in lines:
    if line.startswith("## "):
        inside_section = line[3:].strip() == section
        continue
    if not inside_section:
        continue
    if block is None and line.strip() == "```" + lang:
        block = []
    elif block is not None and line.strip() == "```":
        count += 1
        pathlib.Path(outdir, f"example_{count}.{lang}").write_text("\n".join(block) + "\n", encoding="utf-8")
        block = None
    elif block is not None:
        block.append(line)
if count == 0:
    sys.exit(f"extract_examples.py: no ```{lang} block under '## {section}' in {doc}")
print(f"extract_examples.py: {count} example(s) from {doc}", file=sys.stderr)
