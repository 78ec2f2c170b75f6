#!/bin/sh
# Scores translations of a Multi30k split both ways issue 44 asks for:
#   sacreBLEU   the translations as they are (cased, detokenized) against the raw
#               references: BLEU and chrF exactly as sacreBLEU computes them (s2s eval),
#               with sacreBLEU's signature
#   tokenized   the papers' convention: the translations lowercased, punctuation-
#               normalised and Moses-tokenized (escaping on) as the dataset's own tok/
#               files were, with the same snapshot of Moses's scripts, then BLEU on those
#               tokens with no further tokenization (multi-bleu.perl's, s2s eval
#               --tokenize none) against tok/SPLIT.lc.norm.tok.LANG
#
#   sh scripts/experiments/multi30k/score.sh HYP LANG [SPLIT] [--data DIR] [--s2s PATH]
#
# LANG is the target language (en de fr cs), SPLIT the split translated (default
# test_2016_flickr), DIR what scripts/get-multi30k.sh wrote (default corpora/multi30k),
# its moses/ included. Prints two lines:
#   sacreBLEU BLEU = ... | chrF2 = ... | nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0
#   tokenized BLEU = ...
set -eu

here=$(cd "$(dirname "$0")" && pwd)
data="$here/../../../corpora/multi30k"
s2s="$here/../../../s2s"
split=test_2016_flickr
hyp=""
lang=""
while [ $# -gt 0 ]; do
    case "$1" in
        --data) data=${2:?--data needs a directory}; shift 2 ;;
        --s2s) s2s=${2:?--s2s needs a path}; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) echo "score.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *)
            if [ -z "$hyp" ]; then hyp=$1
            elif [ -z "$lang" ]; then lang=$1
            else split=$1
            fi
            shift ;;
    esac
done
[ -n "$hyp" ] && [ -n "$lang" ] || { echo "score.sh: usage: score.sh HYP LANG [SPLIT] (see --help)" >&2; exit 2; }
ref="$data/$split.$lang"
tokref="$data/tok/$split.lc.norm.tok.$lang"
moses="$data/moses/tokenizer"
for f in "$hyp" "$ref" "$tokref" "$moses/tokenizer.perl"; do
    [ -f "$f" ] || { echo "score.sh: $f is missing (scripts/get-multi30k.sh writes $data)" >&2; exit 2; }
done
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

bleu=$("$s2s" eval --hyp "$hyp" --ref "$ref" --metric bleu)
chrf=$("$s2s" eval --hyp "$hyp" --ref "$ref" --metric chrf)
echo "sacreBLEU $bleu | $chrf | nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"

perl "$moses/lowercase.perl" < "$hyp" | perl "$moses/normalize-punctuation.perl" -l "$lang" |
    perl "$moses/tokenizer.perl" -l "$lang" -q > "$tmp"
echo "tokenized $("$s2s" eval --hyp "$tmp" --ref "$tokref" --metric bleu --tokenize none)"
