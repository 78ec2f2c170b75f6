#!/usr/bin/env python3
"""No two files of src/ call each other's functions, directly or round a loop.

The layers (check-layers.sh) keep includes pointing down between folders; this keeps
calls running one way between files, inside a folder too: a file that calls a function
of another file must not be called back by it, by way of any number of files. Reads
every src/*/*.c with its comments and strings taken out, takes the functions each one
defines (not static) and the names each one uses, draws an arrow from a file to every
other file whose function it names (called, or passed as a pointer), and reports each
circle: its files and the names that tie them. Exit 1 if there is one.

  python3 scripts/checks/check-calls.py              check src/
  python3 scripts/checks/check-calls.py --self-test  plant a call back up along an arrow of a
                                              copy of src/ (must be caught) and a mere
                                              mention in a comment (must not be)
"""
import os
import re
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                               re.S)
# a definition at the start of a line: return type and name, parameters, then the body
DEFINITION = re.compile(r"^([A-Za-z_][\w \t*]*?)\b([A-Za-z_]\w*)\s*\(([^;{}]*)\)\s*\{", re.M)
NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def code_of(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # keep a string's place (a function name in a string is no call)
    return COMMENT_OR_STRING.sub(lambda m: " " if not m.group(0).startswith('"') else '""', text)


def read_tree(src):
    """{file: code} of every src/*/*.c."""
    files = {}
    for folder in sorted(os.listdir(src)):
        path = os.path.join(src, folder)
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                if name.endswith(".c"):
                    files["%s/%s" % (folder, name)] = code_of(os.path.join(path, name))
    return files


def call_graph(files):
    """{file: {other file: [names of the other's functions it uses]}}."""
    defined_in = {}
    for f, code in files.items():
        for m in DEFINITION.finditer(code):
            head = m.group(1).split()
            if "static" not in head and m.group(2) not in ("if", "for", "while", "switch"):
                defined_in.setdefault(m.group(2), f)
    graph = {f: {} for f in files}
    for f, code in files.items():
        for name in sorted(set(NAME.findall(code))):
            g = defined_in.get(name)
            if g and g != f:
                graph[f].setdefault(g, []).append(name)
    return graph


def circles(graph):
    """The strongly connected groups of more than one file (Tarjan's algorithm)."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check(src, quiet=False):
    """Whether src/ is free of circles (printing each one found, unless quiet)."""
    graph = call_graph(read_tree(src))
    found = circles(graph)
    for group in found:
        if quiet:
            continue
        print("circle of %d files: %s" % (len(group), ", ".join(group)))
        for f in group:
            for g in sorted(graph[f]):
                if g in group:
                    print("  %s -> %s: %s" % (f, g, ", ".join(graph[f][g])))
    if not quiet:
        arrows = sum(len(v) for v in graph.values())
        print("check-calls: %d files of src/, %d arrows between them, %d circle%s"
              % (len(graph), arrows, len(found), "" if len(found) == 1 else "s"))
    return not found


def self_test():
    graph = call_graph(read_tree(os.path.join(ROOT, "src")))
    # an arrow a -> b of the real tree, and a function of a's for b to call back
    a, b = next((f, g) for f in sorted(graph) for g in sorted(graph[f]))
    with open(os.path.join(ROOT, "src", a), encoding="utf-8") as fh:
        back = next(m.group(2) for m in DEFINITION.finditer(code_of(fh.name))
                    if "static" not in m.group(1).split())
    if circles(graph):
        print("check-calls --self-test: the unplanted tree has circles already")
        return False
    ok = True
    for planted, must_catch in (
            ("\nvoid check_calls_planted(void);\nvoid check_calls_planted(void)\n{\n"
             "    (void)%s;\n}\n" % back, True),
            ("\n/* %s() is named here in a comment only */\n" % back, False)):
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "src")
            shutil.copytree(os.path.join(ROOT, "src"), copy)
            with open(os.path.join(copy, b), "a", encoding="utf-8") as fh:
                fh.write(planted)
            caught = not check(copy, quiet=True)
        right = caught == must_catch
        ok = ok and right
        print("planted in %s %s %s: %s" % (b, "a use of" if must_catch else "a comment naming",
                                           back, ("caught" if caught else "not reported")
                                           + ("" if right else "  WRONG")))
    return ok


def main():
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(0 if self_test() else 1)
    sys.exit(0 if check(os.path.join(ROOT, "src")) else 1)


if __name__ == "__main__":
    main()
