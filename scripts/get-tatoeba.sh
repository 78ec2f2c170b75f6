#!/bin/sh
# Prepares the Tatoeba English-French "small set" (the PyTorch seq2seq tutorial's
# filter, split into train/valid/test; see tatoeba-split.py) in corpora/tatoeba-eng-fra/,
# for configs/tatoeba-fr-en.yaml, and the whole corpus split by the same rule
# ({train,valid,test}.{en,fr}, for configs/tatoeba-full-fr-en.yaml).
#
#   scripts/get-tatoeba.sh                 download manythings.org's fra-eng.zip and split it
#   scripts/get-tatoeba.sh --from DIR      use a local copy: DIR holds either the split files
#                                          small-{train,valid,test}.{en,fr} (and the whole
#                                          corpus's {train,valid,test}.{en,fr}, if there) or
#                                          eng-fra.tsv
#   scripts/get-tatoeba.sh --out DIR       write somewhere else
#
# The data is CC-BY 2.0 FR (Tatoeba, tatoeba.org, via www.manythings.org/anki). It is
# never committed to this repository. The scores in the README come from the export of
# 2017-09-29; a fresh download is a later export, so its splits and scores differ.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out="$here/../corpora/tatoeba-eng-fra"
from=""
url="https://www.manythings.org/anki/fra-eng.zip"
while [ $# -gt 0 ]; do
    case "$1" in
        --from) from=${2:?--from needs a directory}; shift 2 ;;
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "get-tatoeba: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
[ -z "$from" ] || [ ! -d "$from" ] || from=$(cd "$from" && pwd)
files="small-train.en small-train.fr small-valid.en small-valid.fr small-test.en small-test.fr"

if [ -n "$from" ] && [ -f "$from/small-train.en" ]; then
    whole="train.en train.fr valid.en valid.fr test.en test.fr"
    copied="the small set"
    if [ -f "$from/train.en" ]; then
        files="$files $whole"
        copied="the small set and the whole corpus"
    fi
    for f in $files; do
        cp "$from/$f" "$out/$f"
    done
    if [ -f "$from/SHA256SUMS" ]; then
        # check the copies against the source's checksums (only the files copied)
        (cd "$out" && grep -E " ((small-)?(train|valid|test)\.(en|fr))$" "$from/SHA256SUMS" |
            while read -r sum name; do [ ! -f "$name" ] || echo "$sum  $name"; done |
            sha256sum -c --quiet -) ||
            { echo "get-tatoeba: checksum mismatch after copying from $from" >&2; exit 1; }
    fi
    echo "get-tatoeba: copied $copied from $from to $out"
else
    if [ -n "$from" ]; then
        tsv="$from/eng-fra.tsv"
        [ -f "$tsv" ] || { echo "get-tatoeba: $from has neither small-train.en nor eng-fra.tsv" >&2; exit 2; }
    else
        tmp=$(mktemp -d)
        trap 'rm -rf "$tmp"' EXIT
        echo "get-tatoeba: downloading $url"
        if command -v curl >/dev/null 2>&1; then
            curl -fsSL -A "Mozilla/5.0 (s2s get-tatoeba.sh)" -o "$tmp/fra-eng.zip" "$url"
        else
            wget -q -U "Mozilla/5.0 (s2s get-tatoeba.sh)" -O "$tmp/fra-eng.zip" "$url"
        fi
        (cd "$tmp" && unzip -q -o fra-eng.zip fra.txt)
        cut -f1,2 "$tmp/fra.txt" > "$tmp/eng-fra.tsv"
        tsv="$tmp/eng-fra.tsv"
    fi
    python3 "$here/tatoeba-split.py" "$tsv" "$out"
fi
cat > "$out/ATTRIBUTION" <<'NOTE'
Sentence pairs from the Tatoeba Project (https://tatoeba.org), licensed CC-BY 2.0 FR
(https://creativecommons.org/licenses/by/2.0/fr/), as exported by www.manythings.org/anki.
Attribution: www.manythings.org/anki and tatoeba.org.
NOTE
