#!/usr/bin/env python3
"""Every file a comment or document names exists, so a rename cannot leave stale names.

Reads src/, tests/, scripts/, configs/, Makefile and every .md of the repository, finds
each name that ends in .c .h .py .sh .md or .yaml, and checks that it resolves to a file
of the repository: a name with a folder, as written, from the repository's top, from
the naming file's folder, or from src/ or tests/ (includes name "nn/ops.h"); a bare
name, as some file's name anywhere in the repository. Exempt: names of files a run or
a user creates, and placeholders (see EXEMPT). Prints each stale name with its file and
line and exits 1 if there is one.

  python3 scripts/checks/check-names.py             check the repository
  python3 scripts/checks/check-names.py --self-test plant stale names in a copy and fail
                                             unless each one is caught
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
READ = ["src", "tests", "scripts", "configs", "corpora", "Makefile", ".ci"]
TEXT_SUFFIXES = (".c", ".h", ".py", ".sh", ".md", ".yaml", ".txt", ".1", ".bash", ".mk", ".html")
# a path: folders, then a name of two characters or more before its suffix, not part of
# an expression (s.h.planes, r.h = h) or of a longer name
NAME = re.compile(r"(?<![\w./$%-])((?:[\w.-]+/)*[\w-][\w.-]+\.(?:c|h|py|sh|md|yaml))(?![\w/(\[]|\.\w)")

# Names of files that a run, a user or a test creates, and placeholders for them: they
# cannot exist in a clone. A name is exempt when it matches one of these.
EXEMPT = [
    r"^runs/",                     # a run's folder: runs/NAME/config.yaml
    r"^(dir|s)/",                  # a test's temporary folder
    r"^(config|resolved)\.yaml$",  # the copy of its config a run keeps
    r"(^|/|_)(NAME|RUN_DIR|OUT_DIR|OUT|DIR|FILE|CONFIG)(/|\.|_)",  # placeholders
    r"^(configs/)?(my|your|new|other)[\w-]*\.yaml$",  # a user's own config in examples
    r"^(PREFIX/)?share/s2s/",      # where make install puts the configs
    r"^/",                         # absolute paths (system files, /tmp)
    r"^build/",                    # what make builds
    r"^\.\./",                     # outside the repository, named only as provenance
]
# C's and POSIX's headers, which prose names too
SYSTEM_HEADERS = {
    f"{h}.h" for h in "assert complex ctype errno fenv float inttypes limits locale math "
    "setjmp signal stdarg stdbool stddef stdint stdio stdlib string tgmath time unistd "
    "fcntl dirent pthread".split()
}
# Names of files outside this repository that documents cite as sources (other
# projects' files: a reader looks them up there).
ELSEWHERE = {
    "torch_ref.py",       # the team's reference, which scripts/torch_reference.py checks against once
    "sacrebleu.py", "tokenizer_13a.py", "chrf.py", "bleu.py",  # sacreBLEU's sources
    "train.c", "llm.c",   # llm.c
    "kann.c", "kann.h",   # kann
    "yaml.h",             # libyaml's header
    "check.h", "cblas.h", "unistr.h", "uninorm.h", "unictype.h", "unicase.h",
    "mpi.h", "jpeglib.h", "png.h",
    "model.py", "decoders.py", "attention.py", "encoders.py", "loss.py", "training.py",  # Joey NMT
    "translator.py", "global_attention.py", "beam_search.py",  # OpenNMT-py
    "functional.py", "activation.py", "rnn.py", "transformer.py", "linear.py",  # PyTorch
    "fast_align.cc",
}


def repository_files(root):
    """The repository's files: git's list (tracked and untracked, not ignored), or in a
    copy without .git (an unpacked archive) every file but what builds and runs make."""
    out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                          "--exclude-standard"], capture_output=True, text=True)
    if out.returncode == 0:
        return [f for f in out.stdout.splitlines() if os.path.exists(os.path.join(root, f))]
    files = []
    for here, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not (here == root and d in ("build", "runs", ".git"))]
        files += [os.path.relpath(os.path.join(here, n), root) for n in names]
    return files


def files_to_read(root, files):
    for f in files:
        top = f.split("/")[0]
        if (top in READ or f.endswith(".md")) and f.endswith(TEXT_SUFFIXES + ("Makefile", "run")):
            if "/regress/" in f or "/seeds/" in f or f.startswith("corpora/") and not f.endswith(".md"):
                continue  # inputs the tests feed the parsers, not prose
            yield f


def resolves(name, naming_file, files, basenames, dirs):
    if any(re.search(p, name) for p in EXEMPT) or name in ELSEWHERE or name in SYSTEM_HEADERS:
        return True
    if naming_file.startswith("tests/") and "/" not in name and name.endswith(".yaml"):
        return True  # a config the test writes for itself
    if "/" not in name:
        return name in basenames
    here = os.path.dirname(naming_file)
    for base in ("", here, "src", "tests"):
        candidate = os.path.normpath(os.path.join(base, name))
        if candidate in files or candidate in dirs:
            return True
    return False


C_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def prose_of(path, line):
    """What of a line names files as a reader sees them: in C, the comments and the
    project's #include lines, not string literals (the files a test writes) or system
    headers."""
    if not path.endswith((".c", ".h")):
        return line
    if re.match(r'\s*#\s*include\s*<', line):
        return ""
    if re.match(r'\s*#\s*(include\s*"|error|warning)', line):
        return line.replace('"', " ")
    return C_STRING.sub('""', line)


def stale_names(root):
    files = set(repository_files(root))
    basenames = {os.path.basename(f) for f in files}
    dirs = {os.path.dirname(f) for f in files}
    found = []
    for f in sorted(files_to_read(root, files)):
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            for line_no, line in enumerate(fh, 1):
                line = prose_of(f, line)
                for m in NAME.finditer(line):
                    name = m.group(1).rstrip(".")
                    if not name.endswith((".c", ".h", ".py", ".sh", ".md", ".yaml")):
                        continue
                    if not resolves(name, f, files, basenames, dirs):
                        found.append(f"{f}:{line_no}: names {name}, which is not a file of the repository")
    return found


def check(root):
    found = stale_names(root)
    for line in found:
        print(line)
    if found:
        print(f"check-names: {len(found)} stale name{'s' if len(found) != 1 else ''} "
              "(rename the mention, or list a file runs create in scripts/checks/check-names.py EXEMPT)")
        return 1
    print("check-names: every file named in src/, tests/, scripts/ and the documents exists")
    return 0


def self_test():
    """A stale name in a comment, an include, a script and a document is each caught,
    and the unplanted copy is clean."""
    gone = "no_such_file"  # put together here, so that this file names no stale file
    plants = [
        ("src/base/error.c", f"/* see nn/{gone}.c */\n"),
        ("src/base/mem.h", f"#include \"base/{gone}.h\"\n"),
        ("src/nn/real.h", f"#error \"{gone}.h is for the double build\"\n"),
        ("scripts/checks/check-layers.sh", f"# run scripts/{gone}.sh first\n"),
        ("README.md", f"See [the old notes](src/{gone}.md).\n"),
        ("configs/demo.yaml", f"# like configs/{gone}.yaml\n"),
    ]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "repo")
        # the working tree as it is (a copy without .git: its files are all it has)
        for f in repository_files(ROOT):
            dst = os.path.join(copy, f)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.join(ROOT, f), dst)
        if stale_names(copy):
            print("check-names --self-test: the unplanted copy already has stale names")
            return 1
        for path, text in plants:
            target = os.path.join(copy, path)
            with open(target) as fh:
                original = fh.read()
            with open(target, "a") as fh:
                fh.write(text)
            found = stale_names(copy)
            with open(target, "w") as fh:
                fh.write(original)
            if len(found) != 1 or not found[0].startswith(path + ":"):
                print(f"check-names --self-test: planted {text.strip()!r} in {path}: got {found}")
                failures += 1
    if failures:
        return 1
    print(f"check-names --self-test: each of {len(plants)} planted stale names caught")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if sys.argv[1:]:
        sys.exit(__doc__)
    sys.exit(check(ROOT))
