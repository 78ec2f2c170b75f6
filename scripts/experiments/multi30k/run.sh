#!/bin/sh
# One run of a Multi30k recipe, scored both ways (README.md beside this script):
#
#   sh scripts/experiments/multi30k/run.sh CONFIG SEED OUT [--torch] [--pair S-T] [--set KEY=VALUE]...
#
# s2s: trains CONFIG with seed SEED into OUT/s2s-seedSEED (its test.hyp is the greedy
# translation of the test split), translates the test sources again with the config's
# beam search (beam.hyp), and scores both with score.sh into OUT/s2s-seedSEED/scores.txt.
# --torch: the PyTorch reference instead (scripts/torch_reference.py train: the same
# config, data, subword models and time budget; it decodes with the config's beam), into
# OUT/torch-seedSEED. --pair S-T (en-fr, en-cs, ...) trains CONFIG's recipe unchanged on
# another pair of Multi30k's languages: every data file and the run's name are set to
# S and T. --set overrides go to both trainers. Run from the repository's top.
set -eu

[ $# -ge 3 ] || { sed -n '2,14p' "$0"; exit 2; }
config=$1 seed=$2 out=$3
shift 3
torch=0
pair=""
sets=""
while [ $# -gt 0 ]; do
    case "$1" in
        --torch) torch=1; shift ;;
        --pair) pair=${2:?--pair needs SRC-TGT}; shift 2 ;;
        --set) sets="$sets --set ${2:?--set needs KEY=VALUE}"; shift 2 ;;
        *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
# the data and the target language, as the config names them
value() { sed -n "s/^  $1: *//p" "$config" | head -1; }
test_src=$(value test_src)
tgt=$(value test_tgt)
if [ -n "$pair" ]; then
    s=${pair%-*} t=${pair#*-}
    data=$(dirname "$test_src")
    for split in train valid test; do
        file=$(basename "$(value "${split}_src")")
        file=${file%.*}
        sets="$sets --set data.${split}_src=$data/$file.$s --set data.${split}_tgt=$data/$file.$t"
    done
    sets="$sets --set name=multi30k-$s-$t"
    test_src="$data/$(basename "${test_src%.*}").$s"
    tgt="$data/$(basename "${tgt%.*}").$t"
fi
lang=${tgt##*.}
split=$(basename "$tgt" ".$lang")
mkdir -p "$out"

if [ "$torch" = 1 ]; then
    dir="$out/torch-seed$seed"
    # shellcheck disable=SC2086 # the --set words are meant to split
    /usr/bin/python3 scripts/torch_reference.py train "$config" --set "seed=$seed" $sets \
        --out "$dir" --s2s ./s2s > "$dir.log" 2>&1
    {
        echo "beam (test.txt: the config's beam size and alpha):"
        sh "$here/score.sh" "$dir/test.txt" "$lang" "$split"
    } > "$dir/scores.txt"
else
    dir="$out/s2s-seed$seed"
    # shellcheck disable=SC2086
    ./s2s train "$config" --set "seed=$seed" --set "run_dir=$dir" $sets > "$dir.log" 2>&1
    ./s2s translate --model "$dir/checkpoints/best.ckpt" < "$test_src" > "$dir/beam.hyp"
    {
        echo "greedy (test.hyp):"
        sh "$here/score.sh" "$dir/test.hyp" "$lang" "$split"
        echo "beam (beam.hyp):"
        sh "$here/score.sh" "$dir/beam.hyp" "$lang" "$split"
    } > "$dir/scores.txt"
fi
cat "$dir/scores.txt"
