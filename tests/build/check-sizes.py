#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The size limits of src/ (docs/design/architecture.md, "Sizes"): no file over 800 lines, no
function body over 80. A function is a top-level brace block whose opening brace follows a
closing parenthesis (a definition), not an initialiser (`= {`) or a struct or enum body.
Comments, strings and character literals are blanked before braces are counted, so a brace in
either cannot confuse the count.

  check-sizes.py SOURCE_ROOT       every .c and .h under SOURCE_ROOT/src
  check-sizes.py --self-test       the checker on made-up files: it must find what is over a
                                   limit and pass what is not (a checker that passes everything
                                   would prove nothing)"""
import os
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80


def blank_non_code(src):
    """src with comments, string and character literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(src)

    def blank(text):
        return "".join(ch if ch == "\n" else " " for ch in text)

    while i < n:
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src[i] in "\"'":
            q, j = src[i], i + 1
            while j < n and src[j] != q and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            out.append(src[i])
            i += 1
            continue
        out.append(blank(src[i:j]))
        i = j
    return "".join(out)


def functions(src):
    """(first line, line count) of every top-level function body."""
    code = blank_non_code(src)
    depth, start, found = 0, None, []
    line, last = 1, ""
    for ch in code:
        if ch == "\n":
            line += 1
        elif ch == "{":
            if depth == 0:
                start = line if last == ")" else None
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0 and start is not None:
                found.append((start, line - start + 1))
                start = None
        if not ch.isspace():
            last = ch
    return found


def check(path, shown):
    with open(path, encoding="utf-8", errors="replace") as f:
        src = f.read()
    problems = []
    n_lines = src.count("\n")
    if n_lines > MAX_FILE_LINES:
        problems.append(f"{shown}: {n_lines} lines (at most {MAX_FILE_LINES}): split it by mechanism")
    for first, count in functions(src):
        if count > MAX_FUNCTION_LINES:
            problems.append(f"{shown}:{first}: a function of {count} lines "
                            f"(at most {MAX_FUNCTION_LINES}): split it")
    return problems


def self_test():
    import tempfile

    def body(n):  # a function whose body spans n lines, braces included
        return "int f(void) {\n" + "        x();\n" * (n - 2) + "}\n"

    cases = [
        ("function of 80 lines", body(80), 0),
        ("function of 81 lines", body(81), 1),
        ("table of 200 lines", "static const int t[] = {\n" + "1,\n" * 198 + "};\n", 0),
        ("braces in comments and strings", body(40) + "/* { */ const char *s = \"{\";\n"
         + "char c = '{';\n" + body(40), 0),
        ("file of 801 lines", "int x;\n" * 801, 1),
        ("attribute before the body", "_printf_(1, 2) int g(const char *f, ...)\n"
         + body(81)[len("int f(void) "):], 1),
    ]
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        for name, text, want in cases:
            p = os.path.join(d, "case.c")
            with open(p, "w") as f:
                f.write(text)
            got = len(check(p, name))
            if got != want:
                print(f"self-test: {name}: {got} problem(s), want {want}")
                failed += 1
    print(f"self-test: {len(cases) - failed} of {len(cases)} cases right")
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = argv[1]
    paths = []
    for d, _, files in os.walk(os.path.join(root, "src")):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                p = os.path.join(d, f)
                paths.append((p, os.path.relpath(p, root)))
    problems = [m for p, shown in sorted(paths) for m in check(p, shown)]
    for m in problems:
        print(m)
    print(f"{len(paths)} files checked, {len(problems)} over a limit")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
