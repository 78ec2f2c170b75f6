#!/usr/bin/env python3
"""Runs s2s's checks side by side, as many at once as there are cores, and says what each
took: the engine of `make test`, `make asan`, `make valgrind` and `make ci-full`.

    scripts/checks/run-checks.py [options] GROUP...

Groups (src/README.md, "Where each check runs"):
    static      the checks of the tree: nothing outside it named, the layers of src/,
                calls between its files one way, every named file exists, every
                command line the documents show still runs as written, sizes, that
                every mutant still applies (each with its self-test)
    unit        the Check suites of the test binary, one process per suite
    outcomes    the training outcomes and the numerical core (Check tags `outcome
                cores`) under one OpenBLAS core type per family of kernels (--cores),
                then their margins as a table
    crosscheck  the C model against PyTorch, and the PyTorch reference against finite
                differences

Options:
    --jobs N        checks at once (default: the cores, nproc)
    --build DIR     where the test binaries are (default build)
    --prog PATH     the s2s the tests run (default ./s2s)
    --wrap CMD      run each suite's process under CMD (make valgrind-full: valgrind ...)
    --suites "A B"  for unit: only these suites (make valgrind: the tour)
    --cores WHICH   for outcomes: `families` (default: one core type for each family of
                    kernels the CPU runs, but the family the default run already
                    covers), `all` (every core type the CPU runs), or a list "A B"
    --no-default    for outcomes' table: no column of the default kernels (when the
                    unit group has not run)

A family is what the kernels compute, not what they are called: build/blas_family
(tests/blas/blas_family.c) hashes the bits of every kind of product s2s asks of OpenBLAS
under each core type, and core types with one hash are one family. The default kernels
(those of the environment, as it is) are the unit group's, so `families` leaves their
family out.

Each check's output goes to DIR/checks/NAME.log; a line per check says how it ended and
how long it took; a failure shows its failing lines and where its log is. The checks
start longest first (by the last run's times in the same mode -- s2s as it is, or under
valgrind -- kept in DIR/checks/times.json), so that no long one starts last. Exits 1 if
any check failed.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = "/usr/bin/python3"  # Debian's, where python3-torch is
CORE_TYPES = ["Prescott", "Nehalem", "Sandybridge", "Haswell", "Zen", "SkylakeX", "Cooperlake"]
# the flags /proc/cpuinfo must list for each core type's kernels (else SIGILL)
CORE_FLAGS = {
    "Prescott": ["pni"],
    "Nehalem": ["sse4_2"],
    "Sandybridge": ["avx"],
    "Haswell": ["avx2", "fma"],
    "Zen": ["avx2", "fma"],
    "SkylakeX": ["avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl"],
    "Cooperlake": ["avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512_bf16"],
}
# Seconds, for the first run's order only (later runs order by their own times).
FIRST_GUESS = {"unit gradcheck": 35, "unit gradcheck_self": 26, "unit gradcheck_tatoeba": 29,
               "unit variants": 42, "unit mpi": 20, "unit faults": 19,
               "crosscheck selfcheck": 28, "unit shapes": 10, "unit images": 9}


class Check:
    def __init__(self, group, name, argv, env=None, wrap=None):
        self.group, self.name, self.argv = group, name, argv
        self.env = dict(os.environ, **(env or {}))
        self.wrap = wrap
        self.key = "%s %s" % (group, name)
        self.log = None
        self.seconds = 0.0
        self.code = None
        self.summary = ""


def run_quiet(argv, env=None):
    p = subprocess.run(argv, cwd=ROOT, env=dict(os.environ, **(env or {})),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode, p.stdout.decode("utf-8", "replace")


# ---------------------------------------------------------------------------- the groups

def static_checks(opts):
    steps = [
        ("standalone", ["sh", "scripts/checks/check-standalone.sh"]),
        ("layers", ["sh", "scripts/checks/check-layers.sh"]),
        ("layers-self-test", ["sh", "scripts/checks/check-layers.sh", "--self-test"]),
        ("calls", [PYTHON, "scripts/checks/check-calls.py"]),
        ("calls-self-test", [PYTHON, "scripts/checks/check-calls.py", "--self-test"]),
        ("names", [PYTHON, "scripts/checks/check-names.py"]),
        ("names-self-test", [PYTHON, "scripts/checks/check-names.py", "--self-test"]),
        ("sizes", [PYTHON, "scripts/checks/check-sizes.py"]),
        ("sizes-self-test", [PYTHON, "scripts/checks/check-sizes.py", "--self-test"]),
        ("commands", [PYTHON, "scripts/checks/check-commands.py", "--prog", opts["prog"]]),
        ("commands-self-test", [PYTHON, "scripts/checks/check-commands.py", "--prog", opts["prog"],
                                "--self-test"]),
        ("mutants-apply", [PYTHON, "scripts/checks/mutate.py", "--check"]),
    ]
    return [Check("static", name, argv) for name, argv in steps]


def test_env(opts):
    return {"OPENBLAS_NUM_THREADS": "1", "S2S_BIN": opts["prog"],
            "S2S_FAULTS_BIN": "./%s/s2s-faults" % opts["build"]}


def unit_checks(opts):
    binary = "./%s/check_s2s" % opts["build"]
    code, out = run_quiet([binary, "--list"])
    if code != 0:
        sys.exit("run-checks: %s --list failed:\n%s" % (binary, out))
    suites = out.split()
    if opts["suites"]:
        unknown = [s for s in opts["suites"].split() if s not in suites]
        if unknown:
            sys.exit("run-checks: no suite %s in %s --list" % (", ".join(unknown), binary))
        suites = opts["suites"].split()
    checks = []
    for suite in suites:
        env = dict(test_env(opts), CK_RUN_SUITE=suite)
        checks.append(Check("unit", suite, [binary], env, opts["wrap"]))
    return checks


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        return set(f.read().split())


def family_of(core):
    """The core OpenBLAS names and the hash of what its kernels compute, under
    OPENBLAS_CORETYPE=core (None: the kernels the unit group runs, the environment's
    OPENBLAS_CORETYPE if it sets one, else OpenBLAS's own choice)."""
    env = dict(os.environ)
    if core:
        env["OPENBLAS_CORETYPE"] = core
    p = subprocess.run(["./build/blas_family"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    code, out = p.returncode, p.stdout.decode("utf-8", "replace")
    fields = out.split()
    if code != 0 or len(fields) != 2:
        sys.exit("run-checks: build/blas_family failed under OPENBLAS_CORETYPE=%s:\n%s"
                 % (core, out))
    return fields[0], fields[1]


def outcome_cores(which):
    """The core types to run, and a line for each saying which family it stands for."""
    flags = cpu_flags()
    runnable = [c for c in CORE_TYPES if all(f in flags for f in CORE_FLAGS[c])]
    if which not in ("all", "families"):
        runnable = which.split()
    default_name, default_family = family_of(None)
    families, notes = {}, []
    for core in runnable:
        name, family = family_of(core)
        # OpenBLAS built for one CPU ignores OPENBLAS_CORETYPE: seven runs of one kernel,
        # reported as seven
        if name.lower() != core.lower():
            sys.exit("run-checks: OPENBLAS_CORETYPE=%s is not honoured (OpenBLAS runs %s)"
                     % (core, name))
        families.setdefault(family, []).append(core)
    if which != "families":
        return runnable, ["%s: run as asked" % " ".join(runnable)]
    chosen = []
    for family, cores in families.items():
        same = " = ".join(cores)
        if family == default_family:
            notes.append("%s: the default kernels' family (%s), run by the unit group"
                         % (same, default_name))
        else:
            chosen.append(cores[0])
            notes.append("%s: one family, run as %s" % (same, cores[0]) if len(cores) > 1
                         else "%s: its own family" % same)
    return chosen, notes


def outcome_checks(opts, cores):
    binary = "./%s/check_s2s" % opts["build"]
    checks = []
    for core in cores:
        env = dict(test_env(opts), OPENBLAS_CORETYPE=core, CK_INCLUDE_TAGS="outcome cores")
        env.pop("CK_EXCLUDE_TAGS", None)
        checks.append(Check("outcomes", core, [binary], env, opts["wrap"]))
    return checks


def crosscheck_checks(opts):
    env = {"OPENBLAS_NUM_THREADS": "1"}
    b = opts["build"]
    return [Check("crosscheck", "pytorch",
                  [PYTHON, "scripts/checks/crosscheck.py", "--s2s", opts["prog"],
                   "--dump", "%s/crosscheck_dump" % b, "--dump", "%s/crosscheck_dump_f64" % b], env),
            Check("crosscheck", "selfcheck", [PYTHON, "scripts/torch_reference.py", "selfcheck"],
                  env)]


# ------------------------------------------------------------------------- running them

def check_summary(check, text):
    """What a check's output says of it, and whether it ran anything."""
    if check.group in ("unit", "outcomes"):
        m = re.findall(r"Checks: (\d+), Failures: (\d+), Errors: (\d+)", text)
        if not m:
            return "no summary from Check", False
        n = int(m[-1][0])
        filtered = check.env.get("CK_INCLUDE_TAGS") or check.env.get("CK_EXCLUDE_TAGS")
        if n == 0 and not filtered:
            return "ran no test (does the suite's name in check_main.c match its suite?)", False
        return "%d checks" % n, True
    return "", True


def failing_lines(check, text):
    """The lines that say what failed: Check's failures, and the one-line summaries of
    AddressSanitizer, UBSan and valgrind (whose whole reports are in the log)."""
    lines = [l for l in text.splitlines()
             if re.search(r":[FE]:|^SUMMARY: |runtime error: |^==\d+== ERROR|^valgrind: ", l)]
    return lines[:20] if lines else text.splitlines()[-25:]


def run_one(check, log_dir):
    check.log = os.path.join(log_dir, check.key.replace(" ", "-") + ".log")
    argv = (shlex.split(check.wrap) if check.wrap else []) + check.argv
    start = time.time()
    with open(check.log, "wb") as log:
        p = subprocess.run(argv, cwd=ROOT, env=check.env, stdout=log, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL)
    check.seconds = time.time() - start
    with open(check.log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    check.summary, ran = check_summary(check, text)
    check.code = p.returncode if ran else (p.returncode or 1)
    return text


def run_all(checks, jobs, log_dir, times):
    checks.sort(key=lambda c: -times.get(c.key, FIRST_GUESS.get(c.key, 1.0)))
    pending = list(checks)
    lock = threading.Lock()
    failed = []

    def worker():
        while True:
            with lock:
                if not pending:
                    return
                check = pending.pop(0)
            text = run_one(check, log_dir)
            with lock:
                ok = check.code == 0
                print("%-4s %6.1f s  %s%s" % ("ok" if ok else "FAIL", check.seconds, check.key,
                                             " (%s)" % check.summary if check.summary else ""),
                      flush=True)
                if not ok:
                    failed.append(check)
                    for line in failing_lines(check, text):
                        print("     | " + line)
                    print("     | exit %d; the whole output: %s" % (check.code, check.log),
                          flush=True)

    threads = [threading.Thread(target=worker) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failed


# ------------------------------------------------------------------ the margins' table

def variants_bar(paths):
    for path in paths:
        if path and os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                m = re.search(r"^outcome variant.*\((bar [0-9.]+)\)", f.read(), re.M)
            if m:
                return m.group(1)
    return None


def outcome_lines(path):
    """check name -> its value, from the `outcome NAME: ... ratio R (bar B)` or
    `... after S of T steps` lines the outcome tests print."""
    values = {}
    if not os.path.exists(path):
        return values
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.startswith("outcome "):
                continue
            name = line[len("outcome "):].split(":", 1)[0]
            m = re.search(r"ratio ([0-9.]+)", line)
            s = re.search(r"after (\d+) of (\d+) ", line)
            values[name] = m.group(1) if m else "%s of %s steps" % s.groups() if s else "?"
    return values


def margins_table(columns, bar):
    """columns: (title, {check: value}); Markdown, one row per check; bar: the variants'
    bar as their lines state it."""
    names = []
    for _, values in columns:
        names += [n for n in values if n not in names]
    out = ["| check | " + " | ".join(t for t, _ in columns) + " |",
           "| --- |" + " --- |" * len(columns)]
    for name in names:
        out.append("| %s | %s |" % (name, " | ".join(v.get(name, "?") for _, v in columns)))
    ratios = [float(v[n]) for _, v in columns for n in v if n.startswith("variant")
              and re.match(r"^[0-9.]+$", v[n])]
    if ratios:
        out.append("")
        out.append("largest loss ratio over every variant and core type: %.3f (%s)"
                   % (max(ratios), bar or "bar ?"))
    return "\n".join(out)


def main():
    args = sys.argv[1:]
    opts = {"jobs": os.cpu_count() or 1, "build": "build", "prog": "./s2s", "wrap": None,
            "cores": "families", "default": True, "suites": None}
    groups = []
    while args:
        a = args.pop(0)
        if a in ("--jobs", "--build", "--prog", "--wrap", "--cores", "--suites"):
            if not args:
                sys.exit("run-checks: %s needs a value" % a)
            opts[a[2:]] = args.pop(0)
        elif a == "--no-default":
            opts["default"] = False
        elif a in ("static", "unit", "outcomes", "crosscheck"):
            groups.append(a)
        else:
            sys.exit(__doc__)
    if not groups:
        sys.exit(__doc__)
    jobs = int(opts["jobs"])
    log_dir = os.path.join(ROOT, opts["build"], "checks")
    os.makedirs(log_dir, exist_ok=True)
    # the last run's seconds of each check, apart for each way of running the tests (a
    # suite under valgrind takes 50 times its own time)
    times_path = os.path.join(log_dir, "times.json")
    mode = "%s %s" % (opts["prog"], shlex.split(opts["wrap"])[0] if opts["wrap"] else "")
    try:
        with open(times_path) as f:
            every_mode = json.load(f)
    except (OSError, ValueError):
        every_mode = {}
    if not all(isinstance(t, dict) for t in every_mode.values()):
        every_mode = {}  # an older file, one mode's times without its mode
    times = every_mode.setdefault(mode, {})

    checks, cores = [], []
    if "static" in groups:
        checks += static_checks(opts)
    if "unit" in groups:
        checks += unit_checks(opts)
    if "outcomes" in groups:
        cores, notes = outcome_cores(opts["cores"])
        for note in notes:
            print("outcomes: " + note)
        checks += outcome_checks(opts, cores)
    if "crosscheck" in groups:
        checks += crosscheck_checks(opts)

    start = time.time()
    failed = run_all(checks, jobs, log_dir, times)
    for c in checks:
        times[c.key] = round(c.seconds, 2)
    with open(times_path, "w") as f:
        json.dump(every_mode, f, indent=0, sort_keys=True)

    if "outcomes" in groups:
        columns = []
        if opts["default"] and "unit" in groups:
            merged = {}
            for c in checks:
                if c.group == "unit":
                    merged.update(outcome_lines(c.log))
            columns.append(("default (%s)" % family_of(None)[0], merged))
        by_core = {c.name: c for c in checks if c.group == "outcomes"}
        for core in cores:  # in CORE_TYPES' order, oldest kernels first
            columns.append((core, outcome_lines(by_core[core].log)))
        print()
        print(margins_table(columns, variants_bar(c.log for c in checks)))
        print()

    total = sum(int(m.group(1)) for c in checks
                for m in [re.match(r"(\d+) checks", c.summary)] if m)
    print("run-checks: %s: %d of %d passed%s, %.0f s on %d jobs"
          % (" ".join(groups), len(checks) - len(failed), len(checks),
             " (%d Check tests)" % total if total else "", time.time() - start, jobs))
    if failed:
        print("run-checks: FAILED: " + ", ".join(c.key for c in failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
