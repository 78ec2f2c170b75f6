#!/usr/bin/env python3
"""Mutation testing of s2s: does the suite catch the bugs we fear?

Applies each mutation of scripts/checks/mutations.txt to src/ -- one small deliberate bug,
given as an exact piece of code and its replacement -- builds the program and the
tests in build/mutate, and runs the suite: first the suites the mutation names (most
mutants die there in seconds; `crosscheck` is the PyTorch cross-check, `cores` the
training outcomes and the numerical core under every OpenBLAS core type:
scripts/checks/run-checks.py's outcomes), then, if it
survived them, the whole of `make test`. A mutant that only the whole suite kills is
said to be caught outside its suites: the area's own tests missed it. The tree is
restored after each mutant, whatever happens (Ctrl-C included).

Before any mutant, the unmutated tree must pass `make test` and every suite the list
names (a suite that fails anyway would kill every mutant, and prove nothing): else it
refuses, exit 3. Prints one line per mutant and the survivors at the end; exits 1 if
any survived, 2 if a mutation no longer applies (its code changed: update the list).

    scripts/checks/mutate.py                 # every mutation (make mutate)
    scripts/checks/mutate.py clip masks      # only those whose name contains one of these
    scripts/checks/mutate.py --check         # only that each mutation still applies (make test)
"""
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIST = os.path.join(ROOT, "scripts", "checks", "mutations.txt")
BUILD = "build/mutate"


def parse(path):
    """The mutations: blocks of `key: value` lines separated by blank lines; `find:`
    and `replace:` may continue on lines that start with `| `."""
    mutations, block, key = [], {}, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for raw in lines + [""]:
        if raw.startswith("#"):
            continue
        if not raw.strip():
            if block:
                mutations.append(block)
            block, key = {}, None
            continue
        if raw.startswith("| ") or raw == "|":
            block[key] += "\n" + raw[2:]
            continue
        key, _, value = raw.partition(":")
        block[key.strip()] = value[1:] if value.startswith(" ") else value
    for m in mutations:
        for need in ("name", "file", "find", "replace", "suites", "why"):
            if need not in m:
                sys.exit("mutations.txt: mutation %r has no `%s:`" % (m.get("name"), need))
        # the edits: find/replace, and find2/replace2 for a bug that takes two
        m["edits"] = [(m["find"], m["replace"])]
        if "find2" in m:
            m["edits"].append((m["find2"], m["replace2"]))
    return mutations


def run(cmd, env=None, timeout=1800):
    """Runs cmd; returns its exit code and output (124 if it ran out of time: a mutant
    that makes a test hang is caught by it)."""
    full = dict(os.environ, **(env or {}))
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=full, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout,
                           shell=isinstance(cmd, str))
    except subprocess.TimeoutExpired as e:
        return 124, (e.output or b"").decode("utf-8", "replace") + "\n(timed out)"
    return p.returncode, p.stdout.decode("utf-8", "replace")


def build():
    return run(["make", "-s", "-j2", "B=" + BUILD, "PROG=%s/s2s" % BUILD,
                "%s/s2s" % BUILD, "%s/s2s-faults" % BUILD, "%s/check_s2s" % BUILD,
                "build/blas_family"])


def suite_fails(name):
    if name == "cores":  # the numerical core and the training outcomes, every core type
        code, out = run(["/usr/bin/python3", "scripts/checks/run-checks.py", "--build", BUILD,
                         "--prog", "./%s/s2s" % BUILD, "--cores", "all", "--no-default",
                         "outcomes"])
        return code != 0
    if name == "crosscheck":
        code, out = run(["make", "-s", "B=" + BUILD, "PROG=%s/s2s" % BUILD, "crosscheck"])
        return code != 0
    env = {"OPENBLAS_NUM_THREADS": "1", "S2S_BIN": "./%s/s2s" % BUILD,
           "S2S_FAULTS_BIN": "./%s/s2s-faults" % BUILD, "CK_RUN_SUITE": name}
    code, out = run(["./%s/check_s2s" % BUILD], env)
    return code != 0


def whole_suite_fails():
    code, out = run(["make", "-s", "B=" + BUILD, "PROG=%s/s2s" % BUILD, "test"])
    return code != 0


def stale_mutations(mutations):
    """Those whose code is no longer in their file exactly once (or whose file is gone)."""
    out = []
    for m in mutations:
        path = os.path.join(ROOT, m["file"])
        if not os.path.isfile(path):
            out.append(m)
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if any(text.count(find) != 1 for find, _ in m["edits"]):
            out.append(m)
    return out


def check_applies():
    """make test's part: a refactoring that moves a mutant's code must move the mutant
    too, or the bug it stands for goes untested."""
    mutations = parse(LIST)
    stale = stale_mutations(mutations)
    for m in stale:
        print("mutate --check: %s no longer applies: its code is not in %s exactly once"
              % (m["name"], m["file"]))
    if stale:
        sys.exit(2)
    print("mutate --check: each of %d mutations applies to its file" % len(mutations))


def main():
    if sys.argv[1:] == ["--check"]:
        return check_applies()
    wanted = sys.argv[1:]
    mutations = [m for m in parse(LIST)
                 if not wanted or any(w in m["name"] for w in wanted)]
    code, out = build()
    if code:
        sys.exit("mutate: the unmutated tree does not build:\n" + out)
    # else a failure would be blamed on the mutants: every one would count as killed
    if whole_suite_fails():
        print("mutate: make test fails on the unmutated tree; fix that first", file=sys.stderr)
        sys.exit(3)
    red = sorted(name for name in {s for m in mutations for s in m["suites"].split()}
                 if suite_fails(name))
    if red:
        print("mutate: on the unmutated tree these suites already fail: %s; fix that first"
              % " ".join(red), file=sys.stderr)
        sys.exit(3)
    survivors, stale, outside = [], [], []
    started = time.time()
    for k, m in enumerate(mutations, 1):
        path = os.path.join(ROOT, m["file"])
        with open(path, encoding="utf-8") as f:
            original = f.read()
        if any(original.count(find) != 1 for find, _ in m["edits"]):
            print("%2d/%d %-34s NO LONGER APPLIES (its code is not in %s exactly once)"
                  % (k, len(mutations), m["name"], m["file"]), flush=True)
            stale.append(m)
            continue
        t0 = time.time()
        try:
            mutant = original
            for find, replace in m["edits"]:
                mutant = mutant.replace(find, replace)
            with open(path, "w", encoding="utf-8") as f:
                f.write(mutant)
            code, out = build()
            if code:
                verdict = "DOES NOT BUILD"
                stale.append(m)
            else:
                caught_by = next((s for s in m["suites"].split() if suite_fails(s)), None)
                if caught_by is None and whole_suite_fails():
                    caught_by = "make test"
                    outside.append(m)
                verdict = "killed by %s" % caught_by if caught_by else "SURVIVED"
                if not caught_by:
                    survivors.append(m)
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(original)
        print("%2d/%d %-34s %-28s %4.0fs" % (k, len(mutations), m["name"], verdict,
                                             time.time() - t0), flush=True)
    build()  # leave build/mutate matching the tree
    print("\n%d mutants, %d killed, %d survived, %d stale; %.0f minutes"
          % (len(mutations), len(mutations) - len(survivors) - len(stale), len(survivors),
             len(stale), (time.time() - started) / 60))
    for m in outside:
        if m not in survivors:
            print("OUTSIDE  %s: killed by make test, not by its suites (%s)"
                  % (m["name"], m["suites"]))
    for m in survivors:
        print("SURVIVOR %s (%s): %s" % (m["name"], m["file"], m["why"]))
    for m in stale:
        print("STALE    %s (%s): update scripts/checks/mutations.txt" % (m["name"], m["file"]))
    sys.exit(2 if stale else 1 if survivors else 0)


if __name__ == "__main__":
    main()
