#!/bin/sh
# The design table of issue 45 (README.md, "Why the attention looked away"): configs/shapes.yaml's
# model as it was before (base, below) trained for 6000 steps (steps, not seconds: the measurements ran two at a time, one
# thread each; this script runs them one after the other), by s2s (one setting changed a row) and by the PyTorch
# reference (scripts/torch_reference.py train; reference_variants.py for the choices s2s
# has no setting for). Each row: test exact match (beam 5) and, from the test captions'
# teacher-forced attention, where_it_looks.py's pointing and mass by kind of word.
#
#   sh scripts/experiments/shapes-experiment/design.sh OUT     (about 70 minutes)
#   ROWS="s2s-sa1-g16 ref-noctxin" sh scripts/experiments/shapes-experiment/design.sh OUT
#
# Needs corpora/shapes (s2s corpus shapes --out corpora/shapes) and, for the ref rows,
# python3-torch, python3-yaml and python3-pil.
set -eu
out=${1:?an output directory}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
s2s=$(pwd)/s2s
[ -f corpora/shapes/train.src ] || "$s2s" corpus shapes --out corpora/shapes
mkdir -p "$out"
out=$(cd "$out" && pwd)
n=${STEPS:-6000} # STEPS=50 for a quick try of the script itself
steps="--set training.max_steps=$n --set training.max_time=0 --set training.valid_every=$((n < 1000 ? n : 1000))"
# the model configs/shapes.yaml had before issue 45 changed it, which every row changes
# (or not) one way: three conv blocks (an 8 x 8 grid), no self-attention layer
base="--set model.conv_channels=[16,32,64] --set model.self_attention_layers=0"
row() { # NAME PROGRAM(s2s|ref) VARIANT [--set K=V]...
    name=$1 program=$2 variant=$3
    shift 3
    run="$out/$name"
    rm -rf "$run"
    mkdir -p "$run"
    if [ "$program" = s2s ]; then
        "$s2s" train configs/shapes.yaml --set run_dir="$run" $steps --set training.threads=1 \
            --set alignments.every=0 $base "$@" > "$run/log" 2>&1
        (cd corpora/shapes &&
            "$s2s" translate --model "$run/checkpoints/best.ckpt" --beam 5 < test.src \
                > "$run/test.beam5" 2> /dev/null &&
            "$s2s" align --model "$run/checkpoints/best.ckpt" --src test.src --tgt test.tgt \
                --ground test.ground --out "$run/test-align.jsonl" > /dev/null 2>&1)
        exact=$("$s2s" eval --hyp "$run/test.beam5" --ref corpora/shapes/test.tgt --metric exact |
            sed -n 's/^exact = \([0-9.]*\).*/\1/p')
    else
        VARIANT=$variant OPENBLAS_NUM_THREADS=1 /usr/bin/python3 "$here/reference_variants.py" \
            configs/shapes.yaml $steps --set training.log_every=500 $base "$@" --s2s "$s2s" \
            --out "$run" > "$run/log" 2>&1
        exact=$(sed -n 's/.*test_exact=\([0-9.]*\).*/\1/p' "$run/log")
    fi
    echo "== $name: test exact $exact%"
    /usr/bin/python3 "$here/where_it_looks.py" "$run/test-align.jsonl" corpora/shapes/test.ground
}
wanted() { case " ${ROWS:-$1} " in *" $1 "*) return 0 ;; esac; return 1; }
{
    ! wanted s2s-default || row s2s-default s2s ""
    ! wanted ref-default || row ref-default ref ""
    ! wanted ref-s0zero || row ref-s0zero ref s0zero
    ! wanted ref-noctxin || row ref-noctxin ref noctxin
    ! wanted ref-torchinit || row ref-torchinit ref torchinit
    ! wanted ref-torchinit-noctxin || row ref-torchinit-noctxin ref torchinit,noctxin
    ! wanted s2s-nogrid || row s2s-nogrid s2s "" --set model.grid_positions=false
    ! wanted s2s-grid4 || row s2s-grid4 s2s "" --set "model.conv_channels=[16,32,64,64]"
    ! wanted s2s-sa1 || row s2s-sa1 s2s "" --set model.self_attention_layers=1
    ! wanted s2s-sa2 || row s2s-sa2 s2s "" --set model.self_attention_layers=2
    ! wanted s2s-sa1-g16 || row s2s-sa1-g16 s2s "" --set model.self_attention_layers=1 \
        --set "model.conv_channels=[16,32]"
    ! wanted s2s-sa1-g16-heads2 || row s2s-sa1-g16-heads2 s2s "" --set model.self_attention_layers=1 \
        --set "model.conv_channels=[16,32]" --set model.attention_heads=2
    ! wanted s2s-sa1-g16-wide || row s2s-sa1-g16-wide s2s "" --set model.self_attention_layers=1 \
        --set "model.conv_channels=[32,64]"
    ! wanted s2s-sa1-g16-lr2 || row s2s-sa1-g16-lr2 s2s "" --set model.self_attention_layers=1 \
        --set "model.conv_channels=[16,32]" --set training.learning_rate=0.002
    ! wanted s2s-g16 || row s2s-g16 s2s "" --set "model.conv_channels=[16,32]"
    ! wanted ref-sa1-g16 || row ref-sa1-g16 ref "" --set model.self_attention_layers=1 \
        --set "model.conv_channels=[16,32]"
    ! wanted ref-sa1-g16-localkeys || row ref-sa1-g16-localkeys ref localkeys \
        --set model.self_attention_layers=1 --set "model.conv_channels=[16,32]"
    ! wanted ref-lastunpooled || row ref-lastunpooled ref lastunpooled \
        --set "model.conv_channels=[16,64]"
    ! wanted ref-lastunpooled-sa1 || row ref-lastunpooled-sa1 ref lastunpooled \
        --set "model.conv_channels=[16,64]" --set model.self_attention_layers=1
} 2>&1
