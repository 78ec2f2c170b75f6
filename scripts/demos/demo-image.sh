#!/bin/sh
# `make demo-image`: captioning with attention over the picture (Show, Attend and Tell):
# writes the shapes corpus (corpora/shapes, once), trains configs/shapes.yaml for about
# five minutes, captions a few test pictures with beam search, scores where the attention
# looks against the words' boxes, and draws it over the pictures. Rerunning starts afresh.
set -eu
cd "$(dirname "$0")/../.."
[ -f corpora/shapes/train.src ] || ./s2s corpus shapes --out corpora/shapes
rm -rf runs/shapes
echo "== training configs/shapes.yaml (captioning 64 x 64 scenes of shapes, about 5 minutes)"
./s2s train configs/shapes.yaml
echo
echo "== a few test pictures (picture / caption, beam 5 / reference)"
head -n 6 corpora/shapes/test.src | (cd corpora/shapes &&
    ../../s2s translate --model ../../runs/shapes/checkpoints/best.ckpt --beam 5 \
        --out-alignments ../../runs/shapes/test-captions.jsonl) > runs/shapes/test-captions.txt
for n in 1 2 3 4 5 6; do
    printf '  corpora/shapes/%s\n' "$(sed -n "${n}p" corpora/shapes/test.src)"
    printf '  -> %s\n' "$(sed -n "${n}p" runs/shapes/test-captions.txt)"
    printf '     %s\n\n' "$(sed -n "${n}p" corpora/shapes/test.tgt)"
done
echo "== where each word looked, drawn over the pictures (one SVG each)"
./s2s heatmap runs/shapes/test-captions.jsonl --format svg --step all --out runs/shapes/captions
echo
echo "== where the attention looks, against the boxes of the 500 test captions' words"
(cd corpora/shapes && ../../s2s align --model ../../runs/shapes/checkpoints/best.ckpt \
    --src test.src --tgt test.tgt --ground test.ground > /dev/null)
if command -v python3 > /dev/null; then   # the README's numbers beside this run's
    python3 scripts/checks/check-demo-numbers.py demo-image
fi
echo
echo "== exact match of the 500 test captions (greedy, as training wrote them)"
./s2s eval --hyp runs/shapes/test.hyp --ref corpora/shapes/test.tgt --metric exact
echo
echo "== where things are"
echo "  runs/shapes/train.log              the training log (valid_pointing, valid_mass)"
echo "  runs/shapes/captions/*.svg         the six captions, each word's attention over its picture"
echo "  runs/shapes/heatmaps/report.html   open in a browser: watch where the words look, over training"
echo "  runs/shapes/checkpoints/best.ckpt  the model: s2s translate --model ... < pictures.txt"
