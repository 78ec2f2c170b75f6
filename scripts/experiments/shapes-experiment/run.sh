#!/bin/sh
# Captioning the shapes corpus (issue 28): configs/shapes.yaml's model of then (base, below)
# with at most 5 minutes of
# training (training.max_time 300; run it on a machine otherwise idle), and the same
# model changed one way at a time: attention none (the context is the mean cell), hard
# attention, the context gate, the doubly stochastic term at the paper's lambda = 1.
# For each: the steps it made and its training seconds, test exact match of `s2s
# translate --beam 5` (best.ckpt, token for token against test.tgt) and attention
# correctness of `s2s align --ground` on the 500 test captions, overall and by word kind
# (size, colour and shape words, and `it`). Then attention supervision (lambda 1, from
# train.ground), soft and hard. The default and the supervised model also run with seeds 2
# and 3.
#
#   sh scripts/experiments/shapes-experiment/run.sh OUT          (about 75 minutes on 2 cores)
#   ROWS="supervised hard" sh scripts/experiments/shapes-experiment/run.sh OUT   (those rows alone)
#
# Needs corpora/shapes (make demo-image writes it). Results: scripts/experiments/shapes-experiment/README.md.
set -eu
out=${1:?an output directory}
s2s=$(cd "$(dirname "${S2S:-./s2s}")" && pwd)/$(basename "${S2S:-./s2s}")
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
[ -f corpora/shapes/train.src ] || "$s2s" corpus shapes --out corpora/shapes
mkdir -p "$out"
out=$(cd "$out" && pwd)
# the model of configs/shapes.yaml these rows measured (issue 28), before issue 45 changed
# it: three conv blocks (an 8 x 8 grid), no self-attention layer
base="--set model.conv_channels=[16,32,64] --set model.self_attention_layers=0"
row() { # NAME [--set KEY=VALUE]...: one run and its line of the table
    name=$1
    shift
    run="$out/$name"
    rm -rf "$run"
    "$s2s" train configs/shapes.yaml --set run_dir="$run" --set training.max_time=300 \
        --set alignments.every=0 $base "$@" > /dev/null 2>&1
    (cd corpora/shapes && "$s2s" translate --model "$run/checkpoints/best.ckpt" --beam 5 \
        < test.src > "$run/test.beam5" 2> /dev/null)
    exact=$("$s2s" eval --hyp "$run/test.beam5" --ref corpora/shapes/test.tgt --metric exact |
        sed -n 's/^exact = \([0-9.]*\).*/\1%/p')
    (cd corpora/shapes && "$s2s" align --model "$run/checkpoints/best.ckpt" --src test.src \
        --tgt test.tgt --ground test.ground --out "$run/test-align.jsonl" \
        2> "$run/ground.txt" > /dev/null) || true
    steps=$(grep -o 'at step [0-9]*, epoch [0-9.]*, [0-9.]*s' "$run/train.log" |
        sed 's/at step \([0-9]*\), epoch [0-9.]*, \([0-9.]*\)s/\1 (\2 s)/')
    kinds=$(python3 "$here/by_kind.py" "$run/test-align.jsonl" corpora/shapes/test.ground)
    scores=$(grep -o 'pointing=[0-9.na/]* mass=[0-9.na/]*' "$run/ground.txt" |
        sed 's/pointing=//; s/ mass=/ | /')
    echo "| $name | $steps | $exact | ${scores:-- | -} | $kinds |"
}
wanted() { # NAME: in ROWS (all rows when ROWS is unset)
    case " ${ROWS:-$1} " in *" $1 "*) return 0 ;; esac
    return 1
}
supervised="--set training.attention_supervision=1" # configs/shapes.yaml names train.ground
echo "| model | steps (seconds) | test exact (beam 5) | pointing | mass | pointing: size, colour, shape, it |"
echo "| --- | --- | --- | --- | --- | --- |"
! wanted default || row default
! wanted none || row none --set model.attention=none
! wanted hard || row hard --set model.attention_mode=hard
! wanted gate || row gate --set model.context_gate=true
! wanted doubly-stochastic || row doubly-stochastic --set training.doubly_stochastic=1
! wanted supervised || row supervised $supervised
! wanted supervised-hard || row supervised-hard $supervised --set model.attention_mode=hard
! wanted default-seed2 || row default-seed2 --set seed=2
! wanted default-seed3 || row default-seed3 --set seed=3
! wanted supervised-seed2 || row supervised-seed2 $supervised --set seed=2
! wanted supervised-seed3 || row supervised-seed3 $supervised --set seed=3
