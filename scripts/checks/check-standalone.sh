#!/bin/sh
# The repository stands alone: a user's clone has nothing beside it, so no file may
# read, run or even name the team's shared folder. Exits 1 and names each file that
# does. (The folder's name is put together at run time, so this file does not name it.)
set -eu
cd "$(dirname "$0")/../.."
name="../""shared"
found=$(grep -rlF -- "$name" src tests scripts configs corpora Makefile README.md .ci 2>/dev/null || true)
if [ -n "$found" ]; then
    echo "check-standalone: these files name $name, which a clone does not have:"
    echo "$found" | sed 's/^/  /'
    exit 1
fi
echo "check-standalone: no file names $name"
