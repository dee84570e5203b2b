#!/usr/bin/env python3
"""Extracts every ```swift block from the README and the DocC articles into one Swift file.

Each block becomes the body of its own `async throws` function, so that blocks can use `await`, `try`
and the stand-ins in Prelude.swift. A `func` declared at a block's top level becomes a local function
there, so it is marked `@Sendable`, as a top-level function in a real file is. A block right after a `<!-- not compiled -->` line is skipped:
that marks the few blocks that are not Swift source on their own (a Package.swift fragment).
Usage: extract.py OUTPUT FILE...
"""
import re
import sys

out, files = sys.argv[1], sys.argv[2:]
functions = []
for path in files:
    lines = open(path, encoding="utf-8").read().split("\n")
    index, skip_next = 0, False
    while index < len(lines):
        line = lines[index]
        if line.strip() == "<!-- not compiled -->":
            skip_next = True
        elif line.strip() == "```swift":
            end = index + 1
            while lines[end].strip() != "```":
                end += 1
            if not skip_next:
                body = [("@Sendable " + l if l.startswith("func ") else l)
                        for l in lines[index + 1:end] if not l.startswith("import ")]
                name = re.sub(r"\W", "_", path) + f"_line_{index + 1}"
                functions.append(
                    f"// {path}:{index + 1}\nfunc {name}() async throws {{\n"
                    + "\n".join("  " + l for l in body) + "\n}\n")
            skip_next = False
            index = end
        elif line.strip():
            skip_next = skip_next and line.strip().startswith("<!--")
        index += 1

with open(out, "w", encoding="utf-8") as file:
    file.write(
        "import Dispatch\nimport Foundation\nimport ResultPromise\n"
        + "#if canImport(FoundationNetworking)\n  import FoundationNetworking\n#endif\n\n"
        + "\n".join(functions))
print(f"{len(functions)} code blocks from {len(files)} files")
