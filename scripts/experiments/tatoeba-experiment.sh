#!/bin/sh
# The Tatoeba recipe's table: s2s and the PyTorch reference (scripts/torch_reference.py
# train) trained on the same data by the same config (configs/tatoeba-fr-en.yaml unless
# CONFIG says otherwise) for the same wall-clock budgets, each from several seeds, and
# their test scores as a user gets them:
#   s2s train CONFIG --set seed=S --set training.max_time=B --set training.epochs=0
#   s2s translate --model RUN/checkpoints/best.ckpt < test source      (no options)
# then both the translations and the references tokenized and lowercased by
# `s2s tokenize --lowercase` and scored by `s2s eval` (sacreBLEU's BLEU and chrF, exact
# match). The reference decodes with the same beam search and length normalisation
# (the config's translate section) and writes tokens, scored the same way.
#
# usage: scripts/experiments/tatoeba-experiment.sh OUT_DIR
#   environment (defaults in brackets):
#     SEEDS ["1 2 3"]   BUDGETS, seconds of training ["180 900"]
#     SYSTEMS ["s2s torch"]   CONFIG [configs/tatoeba-fr-en.yaml]
#     PAIR ["fr-en"]: SOURCE-TARGET languages of corpora/tatoeba-eng-fra/small-*.{en,fr}
#       (en-fr runs the recipe unchanged in the other direction)
#     DATA [corpora/tatoeba-eng-fra/small]: the files' prefix (PREFIX-train.fr, ...)
#     SETS: more --set overrides for every run, e.g. SETS="training.threads=2"
#     S2S [./s2s]
# Each run is OUT_DIR/SYSTEM-BUDGET-sSEED (a run that has its scores is not run again, so
# an interrupted experiment goes on where it stopped); the table is OUT_DIR/table.md.
# Run it on an otherwise idle machine: the budgets are wall-clock time.
set -eu

out=${1:?usage: scripts/experiments/tatoeba-experiment.sh OUT_DIR (see the comment at the top)}
seeds=${SEEDS:-1 2 3}
budgets=${BUDGETS:-180 900}
systems=${SYSTEMS:-s2s torch}
recipe=configs/tatoeba-fr-en.yaml
config=${CONFIG:-$recipe}
pair=${PAIR:-fr-en}
data=${DATA:-corpora/tatoeba-eng-fra/small}
s2s=${S2S:-./s2s}
src=${pair%-*}
tgt=${pair#*-}
here=$(cd "$(dirname "$0")" && pwd)
for f in train valid test; do
    for l in "$src" "$tgt"; do
        [ -f "$data-$f.$l" ] || { echo "tatoeba-experiment: no $data-$f.$l (scripts/get-tatoeba.sh prepares it)" >&2; exit 2; }
    done
done
mkdir -p "$out"

# what every run of both systems shares: the data, the seed, the budget alone stopping it
sets() { # SEED BUDGET
    printf '%s\n' "data.train_src=$data-train.$src" "data.train_tgt=$data-train.$tgt" \
        "data.valid_src=$data-valid.$src" "data.valid_tgt=$data-valid.$tgt" \
        "data.test_src=$data-test.$src" "data.test_tgt=$data-test.$tgt" \
        "seed=$1" "training.max_time=$2" "training.epochs=0" "training.max_steps=0" \
        ${SETS:-}
}

"$s2s" tokenize --lowercase < "$data-test.$tgt" > "$out/ref.tok"

for budget in $budgets; do
    for seed in $seeds; do
        for system in $systems; do
            run="$out/$system-$budget-s$seed"
            [ -f "$run/scores.txt" ] && continue
            rm -rf "$run"
            mkdir -p "$run"
            args=""
            for s in $(sets "$seed" "$budget"); do
                args="$args --set $s"
            done
            echo "tatoeba-experiment: $system, $budget s, seed $seed -> $run"
            case $system in
                s2s)
                    # shellcheck disable=SC2086
                    "$s2s" train "$config" --set "run_dir=$run/run" $args > "$run/train.out" 2>&1
                    "$s2s" translate --model "$run/run/checkpoints/best.ckpt" \
                        < "$data-test.$src" > "$run/test.out" 2> "$run/translate.err"
                    steps=$(sed -n 's/^done: .* at step \([0-9]*\),.*/\1/p' "$run/run/train.log") ;;
                torch)
                    # shellcheck disable=SC2086
                    /usr/bin/python3 "$here/../torch_reference.py" train "$config" $args \
                        --s2s "$s2s" --out "$run" > "$run/train.out" 2>&1
                    cp "$run/test.txt" "$run/test.out" # its detokenized text, as s2s translate writes
                    steps=$(sed -n 's/^RESULT .*"steps": *\([0-9]*\).*/\1/p' "$run/train.out") ;;
                *) echo "tatoeba-experiment: unknown system $system (s2s, torch)" >&2; exit 2 ;;
            esac
            "$s2s" tokenize --lowercase < "$run/test.out" > "$run/test.tok"
            "$s2s" eval --hyp "$run/test.tok" --ref "$out/ref.tok" --metric bleu --metric chrf \
                --metric exact > "$run/eval.txt"
            bleu=$(sed -n 's/^BLEU = \([0-9.]*\).*/\1/p' "$run/eval.txt")
            chrf=$(sed -n 's/^chrF2 = \([0-9.]*\).*/\1/p' "$run/eval.txt")
            exact=$(sed -n 's/^exact = \([0-9.]*\).*/\1/p' "$run/eval.txt")
            echo "$system $budget $seed $bleu $chrf $exact $steps" > "$run/scores.txt"
            echo "tatoeba-experiment: BLEU $bleu, chrF $chrf, exact $exact% after $steps steps"
        done
    done
done

# the table: a row per system and budget, means over the seeds and BLEU's range
cat "$out"/*/scores.txt | sort -k2,2n -k1,1 -k3,3n | awk -v pair="$pair" -v config="$config" '
    { key = $1 " " $2; if (!(key in n)) order[++rows] = key
      n[key]++; bleu[key] += $4; chrf[key] += $5; exact[key] += $6; steps[key] += $7
      lo[key] = (n[key] == 1 || $4 < lo[key]) ? $4 : lo[key]
      hi[key] = (n[key] == 1 || $4 > hi[key]) ? $4 : hi[key]
      seeds[key] = seeds[key] (n[key] > 1 ? " / " : "") $4 }
    END {
      printf "Tatoeba %s (%s), test set, tokenized lowercased BLEU\n\n", pair, config
      print "| system | budget | seeds | BLEU mean (range) | per seed | chrF | exact % | steps |"
      print "|---|---|---|---|---|---|---|---|"
      for (r = 1; r <= rows; r++) {
        k = order[r]; split(k, part, " ")
        printf "| %s | %s s | %d | %.2f (%.2f-%.2f) | %s | %.2f | %.1f | %.0f |\n", \
          part[1] == "torch" ? "PyTorch reference" : "s2s", part[2], n[k], bleu[k] / n[k], \
          lo[k], hi[k], seeds[k], chrf[k] / n[k], exact[k] / n[k], steps[k] / n[k]
      }
    }' > "$out/table.md"
cat "$out/table.md"
