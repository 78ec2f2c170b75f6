#!/usr/bin/env python3
"""Every s2s command line the documents show still runs as written.

Reads every .md of the repository and the man page, takes the code in them (fenced and
indented blocks, `spans`; a trailing backslash continues a line) and checks each
`s2s COMMAND ...` and `make TARGET` it finds against the program and the Makefile:
  - COMMAND is one of `s2s --help`'s commands;
  - each --option is one that `s2s COMMAND --help` lists (or --help);
  - each `--set KEY=VALUE` names a key of `s2s config` (KEY in capitals: a placeholder);
  - TARGET is a target of the Makefile.
A renamed option or key, or a command a document still shows the old way, is reported
with its file and line, exit 1. What a command prints is the tests' business, not this.

  python3 scripts/checks/check-commands.py --prog ./s2s              check the repository
  python3 scripts/checks/check-commands.py --prog ./s2s --self-test  plant stale lines in a
                                                               copy; fail unless each
                                                               one is caught
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP_DIRS = {"build", "runs", ".git", "corpus"}   # corpus: the fuzzers' inputs
# s2s, perhaps with a path (./s2s, ../../s2s, /usr/bin/s2s), then its first argument
PROGRAM = re.compile(r"(\S*/)?(?<![\w=-])s2s\s+(\S+)(.*)$")
# what may come before a command on its line: nothing, a shell separator, a prompt,
# variable assignments, or a program that runs another (mpirun -np 2 s2s train ...)
COMMAND_START = re.compile(r"(^|.*(\||;|&&|\(|\$|`))\s*([A-Z_]+=\S*\s+)*$"
                           r"|^\s*(mpirun|sudo|time|valgrind)\b.*$")
MAKE = re.compile(r"(?:^|(?<=[\s`(|;&]))make\s+([a-z][\w-]*)")
SHELL_END = re.compile(r"\s(?:\||;|&&|\|\||#|>|<|2>)|`")


def documents(root):
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".md") or name == "s2s.1":
                yield os.path.join(top, name)


def code_lines(path):
    """(line number, text) of each line of code in a document: fenced or indented
    blocks, and the `spans` of prose lines; continued lines joined."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    fenced, out, held, held_at = False, [], "", 0
    man = path.endswith(".1")
    for k, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if man:
            if not (line.startswith(".B ") or line.startswith("s2s ")):
                continue
            text = line[3 if line.startswith(".B ") else 0:].replace("\\-", "-").replace("\\fB", "").replace("\\fR", "") \
                       .replace("\\fI", "").replace("\\fP", "")
            codes = [text]
        elif fenced or line.startswith("    "):
            codes = [line]
        else:
            codes = re.findall(r"`([^`]+)`", line)
        for code in codes:
            if held:
                code, at = held + " " + code.strip(), held_at
            else:
                at = k
            if code.rstrip().endswith("\\"):
                held, held_at = code.rstrip()[:-1], at
                continue
            held = ""
            out.append((at, code))
    return out


def help_options(prog, command):
    run = subprocess.run([prog, command, "--help"], capture_output=True, text=True)
    return set(re.findall(r"--[a-z][a-z0-9-]*", run.stdout + run.stderr)) | {"--help"}


def commands_of(prog):
    text = subprocess.run([prog, "--help"], capture_output=True, text=True).stdout
    block = text.split("commands:", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.split("\n") if line.startswith("  ")]


def config_keys(prog):
    text = subprocess.run([prog, "config"], capture_output=True, text=True, check=True).stdout
    keys, section = set(), None
    for line in text.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, _, value = line.strip().partition(":")
        if line.startswith("  "):
            keys.add("%s.%s" % (section, key))
        elif value.strip():
            keys.add(key)
        else:
            section = key
    return keys


def make_targets(root):
    """The targets of the Makefile and of the files it includes."""
    with open(os.path.join(root, "Makefile"), encoding="utf-8") as f:
        text = f.read()
    for included in re.findall(r"^include\s+(\S+)", text, re.M):
        with open(os.path.join(root, included), encoding="utf-8") as f:
            text += "\n" + f.read()
    targets = set(re.findall(r"^([a-z][\w-]*)\s*:(?!=)", text, re.M))
    for phony in re.findall(r"^\.PHONY:((?:.*\\\n)*.*)", text, re.M):
        targets |= set(phony.replace("\\\n", " ").split())
    return targets


def check(root, prog):
    commands = commands_of(prog)
    options = {c: help_options(prog, c) for c in commands}
    keys, targets = config_keys(prog), make_targets(root)
    stale, seen = [], 0
    for path in documents(root):
        where = os.path.relpath(path, root)
        for at, code in code_lines(path):
            for match in PROGRAM.finditer(code):
                path, command, rest = match.groups()
                if "=" in (path or "") or not COMMAND_START.match(code[:match.start()]):
                    continue              # S2S=./s2s sh ..., or s2s named in a sentence
                if command.startswith("-") and command in ("--help", "--version"):
                    seen += 1
                    continue
                if not re.fullmatch(r"[a-z]+", command):
                    continue              # `s2s` followed by prose or a placeholder
                seen += 1
                if command not in options:
                    stale.append((where, at, "`s2s %s`: no such command (%s)"
                                  % (command, " ".join(commands))))
                    continue
                end = SHELL_END.search(rest)
                words = (rest[:end.start()] if end else rest).split()
                for k, word in enumerate(words):
                    option = word.strip("[]()'\"").split("=", 1)[0]
                    if option.startswith("--") and re.fullmatch(r"--[a-z][a-z0-9-]*", option) \
                            and option not in options[command]:
                        stale.append((where, at, "`s2s %s %s`: not an option of s2s %s"
                                      % (command, option, command)))
                    if word == "--set" and k + 1 < len(words):
                        key = words[k + 1].split("=", 1)[0].strip("'\"")
                        if re.fullmatch(r"[a-z_]+(\.[a-z_0-9]+)*", key) and key not in keys:
                            stale.append((where, at, "`--set %s`: no such config key" % key))
            for target in MAKE.findall(code):
                seen += 1
                if target not in targets:
                    stale.append((where, at, "`make %s`: no such target in the Makefile"
                                  % target))
    for where, at, what in stale:
        print("%s:%d: %s" % (where, at, what))
    print("check-commands: %d command lines in the documents, %d stale" % (seen, len(stale)))
    return not stale


# Each planted line must be reported: one stale thing of each kind.
PLANTED = [
    "    s2s translate --model m.ckpt --beem 5 < in.txt\n",
    "    ./s2s train configs/demo.yaml --set training.learning_rat=0.1\n",
    "    s2s translat --model m.ckpt\n",
    "Run `make tset` first.\n",
    "    s2s heatmap a.jsonl \\\n        --steps all\n",
]


def self_test(prog):
    ok = True
    for line in PLANTED:
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(os.path.join(ROOT, "Makefile"), tmp)
            os.makedirs(os.path.join(tmp, "tests", "fuzz"))
            shutil.copy(os.path.join(ROOT, "tests", "fuzz", "fuzz.mk"),
                        os.path.join(tmp, "tests", "fuzz"))
            with open(os.path.join(tmp, "README.md"), "w", encoding="utf-8") as f:
                f.write("A document.\n\n" + line)
            with open(os.devnull, "w") as quiet:
                saved, sys.stdout = sys.stdout, quiet
                try:
                    caught = not check(tmp, prog)
                finally:
                    sys.stdout = saved
        print("planted %-60r %s" % (line.strip(), "caught" if caught else "MISSED"))
        ok = ok and caught
    return ok


def main():
    args = sys.argv[1:]
    prog = args[args.index("--prog") + 1] if "--prog" in args else os.path.join(ROOT, "s2s")
    prog = os.path.abspath(prog)
    if "--self-test" in args:
        sys.exit(0 if self_test(prog) else 1)
    sys.exit(0 if check(ROOT, prog) else 1)


if __name__ == "__main__":
    main()
