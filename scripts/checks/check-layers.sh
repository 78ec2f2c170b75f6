#!/bin/sh
# The layers of src/ (src/README.md, "Layout"): a file may include headers of its own folder and
# of the folders below it, never above. Every project include names its folder
# ("base/error.h"), so the rule is a table lookup. Of cli/, only the commands that train
# (TRAINING_COMMANDS) include train/: the others read what a run left through run/.
# Prints each include that points up or sideways, and exits 1 if there is one.
#
#   sh scripts/checks/check-layers.sh [SRC_DIR]     check a tree (default: src)
#   sh scripts/checks/check-layers.sh --self-test   plant bad includes in a copy of src/ and
#                                            fail unless each one is caught
set -eu

# the files of cli/ that may include train/ as well: the commands that train
TRAINING_COMMANDS="cmd_train.c cmd_bench.c"

# folder: the folders its files may include (itself included)
allowed() {
    case "$1" in
    base) echo "base" ;;
    text) echo "base text" ;;
    nn) echo "base nn" ;;
    model) echo "base nn model" ;;
    data) echo "base text nn model data" ;;
    gen) echo "base text nn model data gen" ;;
    decode) echo "base text nn model data decode" ;;
    report) echo "base text nn model data report" ;;
    run) echo "base text nn model data run" ;;
    train) echo "base text nn model data gen decode report run train" ;;
    cli) echo "base text nn model data gen decode report run cli" ;;
    *) echo "" ;;
    esac
}

check() {
    src=$1
    bad=0
    for dir in "$src"/*/; do
        folder=$(basename "$dir")
        ok=$(allowed "$folder")
        if [ -z "$ok" ]; then
            echo "$dir: a folder the layer table does not know (scripts/checks/check-layers.sh)"
            bad=1
            continue
        fi
        for file in "$dir"*.c "$dir"*.h; do
            [ -f "$file" ] || continue
            ok_here=$ok
            if [ "$folder" = cli ] && echo " $TRAINING_COMMANDS " | grep -q " ${file##*/} "; then
                ok_here="$ok train"
            fi
            # every #include "..." with its line number
            grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" |
                sed 's/^\([0-9]*\):.*"\(.*\)".*/\1 \2/' > "$tmp/includes" || true
            while read -r line path; do
                target=${path%%/*}
                if [ "$target" = "$path" ]; then
                    echo "$file:$line: #include \"$path\" names no folder (write \"$folder/$path\")"
                    bad=1
                elif ! echo " $ok_here " | grep -q " $target "; then
                    echo "$file:$line: $folder/ includes \"$path\": $target/ is not below $folder/ (allowed: $ok_here)"
                    bad=1
                fi
            done < "$tmp/includes"
        done
    done
    for file in "$src"/*.c "$src"/*.h; do
        [ -f "$file" ] && { echo "$file: outside every layer folder"; bad=1; }
    done
    return $bad
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = "--self-test" ]; then
    here=$(dirname "$0")
    # each case: file to edit, include to add, what the report must say
    status=0
    for case in "base/error.c|text/tokenize.h|base/ includes \"text/tokenize.h\"" \
                "nn/ops.c|model/model.h|nn/ includes \"model/model.h\"" \
                "model/model_forward.c|data/vocab.h|model/ includes \"data/vocab.h\"" \
                "report/metrics.c|run/config.h|report/ includes \"run/config.h\"" \
                "run/config.c|train/optim.h|run/ includes \"train/optim.h\"" \
                "cli/cmd_translate.c|train/trainer.h|cli/ includes \"train/trainer.h\"" \
                "decode/beam.c|report/links.h|decode/ includes \"report/links.h\"" \
                "train/trainer.c|cli/command.h|train/ includes \"cli/command.h\"" \
                "text/json.c|json.h|names no folder"; do
        file=${case%%|*}
        rest=${case#*|}
        include=${rest%%|*}
        expect=${rest#*|}
        rm -rf "$tmp/src"
        cp -r "$here/../../src" "$tmp/src"
        printf '#include "%s"\n' "$include" >> "$tmp/src/$file"
        if out=$(check "$tmp/src"); then
            echo "check-layers self-test: #include \"$include\" in $file was not caught"
            status=1
        elif ! echo "$out" | grep -qF "$expect"; then
            echo "check-layers self-test: #include \"$include\" in $file: expected \"$expect\", got: $out"
            status=1
        fi
    done
    [ $status = 0 ] && echo "check-layers self-test: 9 planted includes caught"
    exit $status
fi

if check "${1:-src}"; then
    echo "check-layers: every include points to its own layer or a lower one"
else
    exit 1
fi
