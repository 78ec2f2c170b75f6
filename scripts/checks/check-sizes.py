#!/usr/bin/env python3
"""Sizes a reader can hold in mind: no file of src/ over 600 lines, no function of the
numerical core (src/nn/, src/model/) over 60, its signature and braces included, and a
README.md for users of at most 300 lines (measurements and tables go to scripts/, the
developers' matters to src/README.md). Functions are found as the project writes them:
the body's braces at the start of a line. Prints each one over its limit and exits 1 if
there is one.

  python3 scripts/checks/check-sizes.py             check src/ and README.md
  python3 scripts/checks/check-sizes.py --self-test plant a long function, a long file and a long
                                             README in a copy and fail unless each is
                                             caught (and the limits themselves pass)
"""
import glob
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILE_LINES = 600
FUNCTION_LINES = 60
README_LINES = 300
CORE = ("nn", "model")


def functions(lines):
    """(first line, last line, signature) of each function definition, 1-based."""
    out, start = [], None
    for i, line in enumerate(lines):
        if line.startswith("{") and start is None:
            # the signature: the lines above up to a blank line, a comment or a statement
            j = i
            while j > 0 and lines[j - 1].strip() and not lines[j - 1].startswith(
                    ("}", "/*", " *", "#")) and not lines[j - 1].rstrip().endswith((";", "*/")):
                j -= 1
            start = j
        elif line.startswith("}") and start is not None:
            out.append((start + 1, i + 1, lines[start].strip()))
            start = None
    return out


def line_count(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    return len(lines) - (lines[-1] == "")


def oversized(src):
    """What is over its limit in src/ and the README.md beside it."""
    found = []
    readme = os.path.join(os.path.dirname(src), "README.md")
    if os.path.exists(readme) and line_count(readme) > README_LINES:
        found.append(f"README.md: {line_count(readme)} lines (at most {README_LINES}: move "
                     f"measurements to scripts/, developers' matters to src/README.md)")
    for path in sorted(glob.glob(os.path.join(src, "*", "*.[ch]"))):
        rel = os.path.relpath(path, os.path.dirname(src))
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        n = len(lines) - (lines[-1] == "")
        if n > FILE_LINES:
            found.append(f"{rel}: {n} lines (at most {FILE_LINES}: split it along its jobs)")
        if os.path.basename(os.path.dirname(path)) in CORE and path.endswith(".c"):
            for first, last, signature in functions(lines):
                if last - first + 1 > FUNCTION_LINES:
                    found.append(f"{rel}:{first}: {signature.split('(')[0]}: "
                                 f"{last - first + 1} lines (at most {FUNCTION_LINES} in src/nn and src/model)")
    return found


def check(src):
    found = oversized(src)
    for line in found:
        print(line)
    if found:
        return 1
    print(f"check-sizes: no file of src/ over {FILE_LINES} lines, no function of src/nn "
          f"and src/model over {FUNCTION_LINES}, README.md within {README_LINES}")
    return 0


def self_test():
    long_function = "static int planted(void)\n{\n" + "    (void)0;\n" * FUNCTION_LINES + "    return 0;\n}\n"
    plants = [("model/params.c", long_function, "model/params.c:"),
              ("nn/ops.c", long_function, "nn/ops.c:"),
              ("text/json.c", "/* filler */\n" * FILE_LINES, "text/json.c:")]
    failures = 0
    before = set(oversized(os.path.join(ROOT, "src")))  # the planted must be the new ones
    with tempfile.TemporaryDirectory() as tmp:
        for path, text, expect in plants:
            copy = os.path.join(tmp, "src")
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(os.path.join(ROOT, "src"), copy)
            with open(os.path.join(copy, path), "a", encoding="utf-8") as f:
                f.write(text)
            found = [f for f in oversized(copy) if f not in before]
            if len(found) != 1 or not found[0].startswith("src/" + expect):
                print(f"check-sizes --self-test: planted in {path}: got {found}")
                failures += 1
        # a function of exactly the limit passes
        shutil.rmtree(copy)
        shutil.copytree(os.path.join(ROOT, "src"), copy)
        with open(os.path.join(copy, "model/params.c"), "a", encoding="utf-8") as f:
            f.write("static int planted(void)\n{\n" + "    (void)0;\n" * (FUNCTION_LINES - 4)
                    + "    return 0;\n}\n")
        if set(oversized(copy)) - before:
            print("check-sizes --self-test: a function of exactly 60 lines was reported")
            failures += 1
        # a README of the limit passes, one line more does not
        for lines, caught in ((README_LINES, False), (README_LINES + 1, True)):
            with open(os.path.join(tmp, "README.md"), "w", encoding="utf-8") as f:
                f.write("a line\n" * lines)
            found = [f for f in oversized(copy) if f.startswith("README.md")]
            if bool(found) != caught:
                print(f"check-sizes --self-test: a README of {lines} lines: got {found}")
                failures += 1
    if failures:
        return 1
    print(f"check-sizes --self-test: each of {len(plants) + 1} planted oversizes caught, "
          f"the limits themselves pass")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if sys.argv[1:]:
        sys.exit(__doc__)
    sys.exit(check(os.path.join(ROOT, "src")))
