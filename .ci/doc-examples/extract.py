#!/usr/bin/env python3
"""Extracts every ```swift block from the README and the DocC articles into one Swift file.

Each block becomes the body of its own `async throws` function, so that blocks can use `await`, `try`
and the stand-ins in Prelude.swift. A `func` declared at a block's top level becomes a local function
there, so it is marked `@Sendable`, as a top-level function in a real file is. A block right after a `<!-- not compiled -->` line is skipped:
that marks the few blocks that are not Swift source on their own (a Package.swift fragment).
A block right after a `<!-- fails with: MESSAGE -->` line is code that must not compile (the Troubleshooting
article's): it is written, at top level, to its own file `N.swift` in FAILING, with MESSAGE in `N.expect`;
`check` compiles each alone with Prelude.swift and expects that error, word for word.
Usage: extract.py OUTPUT FAILING FILE...
"""
import os
import re
import sys

out, failing_dir, files = sys.argv[1], sys.argv[2], sys.argv[3:]
functions = []
failing = []
for path in files:
    lines = open(path, encoding="utf-8").read().split("\n")
    index, skip_next, expect = 0, False, None
    while index < len(lines):
        line = lines[index]
        if line.strip() == "<!-- not compiled -->":
            skip_next = True
        elif line.strip().startswith("<!-- fails with:"):
            expect = line.strip()[len("<!-- fails with:"):-len("-->")].strip()
        elif line.strip() == "```swift":
            end = index + 1
            while lines[end].strip() != "```":
                end += 1
            if expect is not None:
                failing.append((f"// {path}:{index + 1}", lines[index + 1:end], expect))
            elif not skip_next:
                body = [("@Sendable " + l if l.startswith("func ") else l)
                        for l in lines[index + 1:end] if not l.startswith("import ")]
                name = re.sub(r"\W", "_", path) + f"_line_{index + 1}"
                functions.append(
                    f"// {path}:{index + 1}\nfunc {name}() async throws {{\n"
                    + "\n".join("  " + l for l in body) + "\n}\n")
            skip_next, expect = False, None
            index = end
        elif line.strip():
            skip_next = skip_next and line.strip().startswith("<!--")
            expect = expect if line.strip().startswith("<!--") else None
        index += 1

with open(out, "w", encoding="utf-8") as file:
    file.write(
        "import Dispatch\nimport Foundation\nimport ResultPromise\n"
        + "#if canImport(FoundationNetworking)\n  import FoundationNetworking\n#endif\n\n"
        + "\n".join(functions))
os.makedirs(failing_dir, exist_ok=True)
for number, (origin, body, expect) in enumerate(failing):
    with open(os.path.join(failing_dir, f"{number}.swift"), "w", encoding="utf-8") as file:
        file.write(f"{origin}\nimport Dispatch\nimport Foundation\nimport ResultPromise\n\n" + "\n".join(body) + "\n")
    with open(os.path.join(failing_dir, f"{number}.expect"), "w", encoding="utf-8") as file:
        file.write(expect)
print(f"{len(functions)} code blocks and {len(failing)} that must fail, from {len(files)} files")
