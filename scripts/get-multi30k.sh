#!/bin/sh
# Prepares Multi30k task 1 (Elliott et al. 2016: image descriptions in English with
# German, French and Czech translations) in corpora/multi30k/, for the multi30k configs:
#
#   corpora/multi30k/{train,val,test_2016_flickr,test_2017_flickr,test_2017_mscoco}.L
#       the raw sentences, one a line, for each language L the split has (en de fr cs;
#       the 2017 tests have no cs)
#   corpora/multi30k/tok/SPLIT.lc.norm.tok.L
#       the dataset's own lowercased, punctuation-normalised, Moses-tokenized copies: the
#       references the papers' BLEU is computed against
#   corpora/multi30k/moses/{tokenizer,share/nonbreaking_prefixes}/
#       the snapshot of Moses's scripts the dataset made those copies with (its
#       scripts/moses-3a0631a: lowercase.perl, normalize-punctuation.perl, tokenizer.perl),
#       which scripts/experiments/multi30k/score.sh runs on translations the same way
#
#   scripts/get-multi30k.sh                download the files from github.com/multi30k/dataset
#   scripts/get-multi30k.sh --from DIR     use a checkout of that repository (DIR holds
#                                          data/task1/raw/*.gz and data/task1/tok/*)
#   scripts/get-multi30k.sh --out DIR      write somewhere else
#
# Every file's line count is checked against the dataset's (train 29000, val 1014,
# test_2016_flickr 1000, test_2017_flickr 1000, test_2017_mscoco 461). The data is never
# committed to this repository; it is for research use (the dataset's README).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out="$here/../corpora/multi30k"
from=""
base="https://raw.githubusercontent.com/multi30k/dataset/master"
while [ $# -gt 0 ]; do
    case "$1" in
        --from) from=${2:?--from needs a directory}; shift 2 ;;
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "get-multi30k: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ -n "$from" ]; then
    [ -d "$from/data/task1/raw" ] && [ -d "$from/data/task1/tok" ] && [ -d "$from/scripts/moses-3a0631a" ] || {
        echo "get-multi30k: $from is not a checkout of multi30k/dataset (no data/task1/raw, data/task1/tok or scripts/moses-3a0631a)" >&2
        exit 2
    }
fi
mkdir -p "$out/tok"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fetch RELATIVE DEST: RELATIVE (a path in the dataset's repository) from the checkout or
# the web, into DEST
fetch() {
    if [ -n "$from" ]; then
        [ -f "$from/$1" ] || { echo "get-multi30k: $from/$1 is missing" >&2; exit 1; }
        cp "$from/$1" "$2"
    elif command -v curl >/dev/null 2>&1; then
        curl -fsSL -o "$2" "$base/$1"
    else
        wget -q -O "$2" "$base/$1"
    fi
}

# the splits, their sizes and languages
for entry in train:29000:"en de fr cs" val:1014:"en de fr cs" \
             test_2016_flickr:1000:"en de fr cs" test_2017_flickr:1000:"en de fr" \
             test_2017_mscoco:461:"en de fr"; do
    split=${entry%%:*}
    rest=${entry#*:}
    lines=${rest%%:*}
    for lang in ${rest#*:}; do
        fetch "data/task1/raw/$split.$lang.gz" "$tmp/$split.$lang.gz"
        gzip -dc "$tmp/$split.$lang.gz" > "$tmp/$split.$lang"
        fetch "data/task1/tok/$split.lc.norm.tok.$lang" "$tmp/$split.lc.norm.tok.$lang"
        for f in "$tmp/$split.$lang" "$tmp/$split.lc.norm.tok.$lang"; do
            n=$(wc -l < "$f")
            [ "$n" -eq "$lines" ] || {
                echo "get-multi30k: $(basename "$f") has $n lines, the dataset's has $lines" >&2
                exit 1
            }
        done
        mv "$tmp/$split.$lang" "$out/$split.$lang"
        mv "$tmp/$split.lc.norm.tok.$lang" "$out/tok/$split.lc.norm.tok.$lang"
    done
done
moses="scripts/moses-3a0631a"
mkdir -p "$out/moses/tokenizer" "$out/moses/share/nonbreaking_prefixes"
for f in tokenizer.perl lowercase.perl normalize-punctuation.perl basic-protected-patterns; do
    fetch "$moses/tokenizer/$f" "$out/moses/tokenizer/$f"
done
for lang in en de fr cs; do
    fetch "$moses/share/nonbreaking_prefixes/nonbreaking_prefix.$lang" \
        "$out/moses/share/nonbreaking_prefixes/nonbreaking_prefix.$lang"
done
chmod +x "$out/moses/tokenizer/"*.perl
cat > "$out/ATTRIBUTION" <<'NOTE'
Multi30k task 1 (https://github.com/multi30k/dataset): D. Elliott, S. Frank, K. Sima'an
and L. Specia, "Multi30K: Multilingual English-German Image Descriptions", 2016, and the
WMT 2017 and 2018 multimodal tasks' test sets; English descriptions of Flickr30k (P. Young
et al. 2014). For research use, as the dataset's README says. moses/: the dataset's
snapshot of the Moses SMT toolkit's scripts (github.com/moses-smt/mosesdecoder, LGPL 2.1).
NOTE
echo "get-multi30k: wrote $(cd "$out" && pwd): 5 splits, raw and tok/, and moses/"
