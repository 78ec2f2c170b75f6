#!/bin/sh
# One row at the issue's budget (issue 45): configs/shapes.yaml, changed by the --set
# arguments, trained 300 s on a shapes corpus (default corpora/shapes; any folder `s2s
# corpus shapes` wrote, of any look), then its test captions by beam 5 (exact match), the
# test captions' teacher-forced attention scored against test.ground (pointing, mass)
# and where_it_looks.py's split by kind of word. Timed: run it with nothing beside it.
#
#   sh scripts/experiments/shapes-experiment/budget.sh OUT NAME [CORPUS_DIR] [--set K=V]...
set -eu
out=${1:?an output directory} name=${2:?a row name}
shift 2
corpus=corpora/shapes
case "${1:-}" in --set | "") ;; *) corpus=$1 && shift ;; esac
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
s2s=$(pwd)/s2s
[ -f "$corpus/train.src" ] || { echo "budget.sh: no $corpus/train.src (s2s corpus shapes --out $corpus)" >&2; exit 2; }
corpus=$(cd "$corpus" && pwd)
mkdir -p "$out"
run=$(cd "$out" && pwd)/$name
rm -rf "$run"
data=""
for split in train valid test; do
    data="$data --set data.${split}_src=$corpus/$split.src --set data.${split}_tgt=$corpus/$split.tgt"
    data="$data --set data.${split}_ground=$corpus/$split.ground"
done
"$s2s" train configs/shapes.yaml --set run_dir="$run" --set training.max_time=300 \
    --set alignments.every=0 $data "$@" > "$run.log" 2>&1
(cd "$corpus" && "$s2s" translate --model "$run/checkpoints/best.ckpt" --beam 5 < test.src \
    > "$run/test.beam5" 2> /dev/null)
exact=$("$s2s" eval --hyp "$run/test.beam5" --ref "$corpus/test.tgt" --metric exact |
    sed -n 's/^exact = \([0-9.]*\).*/\1%/p')
(cd "$corpus" && "$s2s" align --model "$run/checkpoints/best.ckpt" --src test.src --tgt test.tgt \
    --ground test.ground --out "$run/test-align.jsonl" 2> "$run/ground.txt" > /dev/null)
steps=$(grep -o 'at step [0-9]*' "$run/train.log" | head -1)
echo "== $name ($corpus): test exact $exact, $steps; $(grep -o 'pointing=.*' "$run/ground.txt")"
/usr/bin/python3 "$here/where_it_looks.py" "$run/test-align.jsonl" "$corpus/test.ground"
