#!/bin/sh
# `make demo`: trains configs/demo.yaml (the toy-fr grammar) for about two minutes, then
# shows what the model learned and where everything is. Rerunning starts afresh.
set -eu
cd "$(dirname "$0")/../.."
[ -f corpora/toy-fr/train.src ] || ./s2s corpus toy-fr --out corpora/toy-fr
rm -rf runs/demo
echo "== training configs/demo.yaml (English -> French-like toy grammar, about 2 minutes)"
./s2s train configs/demo.yaml
echo
echo "== a few test sentences (source / translation / reference)"
for n in 1 2 3 4 5 6; do
    printf '  %s\n' "$(sed -n "${n}p" corpora/toy-fr/test.src)"
    printf '  -> %s\n' "$(sed -n "${n}p" runs/demo/test.hyp)"
    printf '     %s\n\n' "$(sed -n "${n}p" corpora/toy-fr/test.tgt)"
done
echo "== how the model attends, the first probe sentence at the end of training"
./s2s heatmap runs/demo/alignments.jsonl --format txt | sed -n '1,/^$/p'
echo "== scores on the 1000 test sentences"
./s2s eval --hyp runs/demo/test.hyp --ref corpora/toy-fr/test.tgt --metric bleu --metric exact
if command -v python3 > /dev/null; then   # the README's number beside this run's
    python3 scripts/checks/check-demo-numbers.py demo
fi
echo
echo "== where things are"
echo "  runs/demo/config.yaml          the effective config"
echo "  runs/demo/train.log            the training log"
echo "  runs/demo/metrics.jsonl        losses, BLEU and exact match over time"
echo "  runs/demo/checkpoints/         best.ckpt and last.ckpt"
echo "  runs/demo/test.hyp             the test set translated by best.ckpt"
echo "  runs/demo/alignments.jsonl     the probes' attention, dumped every 100 steps"
echo "  runs/demo/heatmaps/report.html open in a browser: watch the alignments form"
echo "  runs/demo/heatmaps/*.svg       each probe's heatmap at the last dump"
