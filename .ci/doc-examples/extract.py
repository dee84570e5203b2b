#!/usr/bin/env python3
"""Extracts every ```swift block from the README and the DocC articles into one Swift file.

Each block becomes the body of its own `async throws` function, so that blocks can use `await`, `try`
and the stand-ins in Prelude.swift. A `func` declared at a block's top level becomes a local function
there, so it is marked `@Sendable`, as a top-level function in a real file is. A block right after a `<!-- not compiled -->` line is skipped:
that marks the few blocks that are not Swift source on their own (a Package.swift fragment).
A block right after a `<!-- fails with: MESSAGE -->` line is code that must not compile (the Troubleshooting
article's): it is written, at top level, to its own file `N.swift` in FAILING, with MESSAGE in `N.note`;
`check` compiles each alone with Prelude.swift and expects that error, word for word.
A block right after a `<!-- for a library at iOS 12, vendored with: FAMILY,... -->` line is code a library
writes over a private copy of those families: it is compiled as the others are, and, with `--apple DIR`, also
written at top level (imports kept) to `DIR/N.swift`, with the families in `DIR/N.note`, for the Apple
type-check (`.ci/apple/check`) to compile with that copy at iOS 12 and macOS 10.13.
Usage: extract.py [--apple DIR] OUTPUT FAILING FILE...
"""
import os
import re
import sys

arguments = sys.argv[1:]
apple_dir = None
if arguments[:1] == ["--apple"]:
    apple_dir, arguments = arguments[1], arguments[2:]
out, failing_dir, files = arguments[0], arguments[1], arguments[2:]
functions = []
failing = []
for_library = []
for path in files:
    lines = open(path, encoding="utf-8").read().split("\n")
    index, skip_next, expect, families = 0, False, None, None
    while index < len(lines):
        line = lines[index]
        if line.strip() == "<!-- not compiled -->":
            skip_next = True
        elif line.strip().startswith("<!-- fails with:"):
            expect = line.strip()[len("<!-- fails with:"):-len("-->")].strip()
        elif line.strip().startswith("<!-- for a library at iOS 12, vendored with:"):
            families = line.strip()[len("<!-- for a library at iOS 12, vendored with:"):-len("-->")].strip()
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
                if families is not None:
                    for_library.append((f"// {path}:{index + 1}", lines[index + 1:end], families))
            skip_next, expect, families = False, None, None
            index = end
        elif line.strip():
            skip_next = skip_next and line.strip().startswith("<!--")
            expect = expect if line.strip().startswith("<!--") else None
            families = families if line.strip().startswith("<!--") else None
        index += 1

with open(out, "w", encoding="utf-8") as file:
    file.write(
        "import Dispatch\nimport Foundation\nimport ResultPromise\n"
        + "#if canImport(FoundationNetworking)\n  import FoundationNetworking\n#endif\n\n"
        + "\n".join(functions))


def write_apart(folder, blocks, prelude):
    """Writes each (origin, body, note) to FOLDER/N.swift, the body below its origin and `prelude`, with the
    note (an expected error, a family list) in FOLDER/N.note."""
    os.makedirs(folder, exist_ok=True)
    for number, (origin, body, note) in enumerate(blocks):
        with open(os.path.join(folder, f"{number}.swift"), "w", encoding="utf-8") as file:
            file.write(f"{origin}\n{prelude}" + "\n".join(body) + "\n")
        with open(os.path.join(folder, f"{number}.note"), "w", encoding="utf-8") as file:
            file.write(note)


write_apart(failing_dir, failing, "import Dispatch\nimport Foundation\nimport ResultPromise\n\n")
if apple_dir is not None:
    write_apart(apple_dir, for_library, "")
print(f"{len(functions)} code blocks, {len(failing)} that must fail and {len(for_library)} for a library at iOS 12, "
      f"from {len(files)} files")
