#!/bin/sh
# s2s explain on the demo model (issue 27): the text the README quotes, the JSON, and a
# screenshot of the HTML page, from a trained demo run.
#
#   sh scripts/experiments/explain/run.sh RUN_DIR OUT    RUN_DIR: a finished `make demo` run (runs/demo)
#
# Writes OUT/step3.txt (--step 3 of "the red car is small ." with the model's greedy
# translation), OUT/step3.json, OUT/step3.html and OUT/step3.png (headless Chromium,
# 1100 x 1400 pixels), and OUT/dot-example.txt. The README's figure is
# scripts/experiments/explain/step3.png of such a run.
set -eu
run=${1:?a run directory of configs/demo.yaml}
out=${2:?an output directory}
s2s=${S2S:-./s2s}
ckpt="$run/checkpoints/best.ckpt"
mkdir -p "$out"
sentence="the red car is small ."
echo "$sentence" | "$s2s" explain --model "$ckpt" --step 3 --max-cols 7 > "$out/step3.txt"
echo "$sentence" | "$s2s" explain --model "$ckpt" --step 3 --format json > "$out/step3.json"
echo "$sentence" | "$s2s" explain --model "$ckpt" --step 3 --format html > "$out/step3.html"
"$s2s" explain --example dot > "$out/dot-example.txt"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
/usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --user-data-dir="$profile" --window-size=1100,1400 \
    --screenshot="$(cd "$out" && pwd)/step3.png" "file://$(cd "$out" && pwd)/step3.html" \
    > /dev/null 2>&1
echo "wrote $out/step3.txt, step3.json, step3.html, step3.png, dot-example.txt"
