/* cmd_eval.c: `s2s eval`: BLEU, chrF and exact match of translations against references
 * (report/metrics.h), overall and by source length. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "cli/command.h"
#include "gen/gen.h"
#include "report/metrics.h"
#include "text/textfile.h"

static const char EVAL_USAGE[] =
    "usage: s2s eval --hyp FILE --ref FILE [--metric bleu|chrf|exact]... [--lowercase]\n"
    "                [--tokenize 13a|none] [--src FILE --by-length WIDTH]\n"
    "\n"
    "Scores translations (one a line) against references (one a line, same order) and\n"
    "prints one line per metric on stdout: BLEU and chrF2 exactly as sacreBLEU 2.6.0\n"
    "computes them by default (BLEU: 13a tokenization, exp smoothing; chrF: character\n"
    "6-grams, beta 2), and the exact-match rate in percent. --lowercase lowercases both\n"
    "sides first (sacreBLEU's -lc). --tokenize none: BLEU's tokens are the text's own,\n"
    "cut at whitespace only, for text tokenized beforehand (sacreBLEU's -tok none, the\n"
    "BLEU of multi-bleu.perl; default 13a). Default metric: bleu.\n"
    "\n"
    "With --src (the sources, same order) and --by-length WIDTH, the metrics are also\n"
    "computed for each group of sentences by source length in words (whitespace-\n"
    "separated): 1 to WIDTH, WIDTH+1 to 2 WIDTH, ..., one line per group and metric:\n"
    "  length 11-20 (284 sentences): BLEU = ...\n";

/* How the text is compared: lowercased or not, BLEU's tokenization. */
typedef struct {
    int lowercase;
    BleuTokenize tokenize;
} Scoring;

/* Prints each metric of order (0 bleu, 1 exact, 2 chrf) for n sentences, each line
 * after prefix. */
static void print_metrics(const char *prefix, const char *const *hyps, const char *const *refs,
                          int n, const int *order, int n_order, const Scoring *how)
{
    const int lowercase = how->lowercase;
    for (int k = 0; k < n_order; k++) {
        if (order[k] == 0) {
            Bleu b;
            char line[256];
            bleu_corpus_tokenized(&b, hyps, refs, n, lowercase, how->tokenize);
            bleu_format(&b, line, sizeof line);
            printf("%s%s\n", prefix, line);
        } else if (order[k] == 2) {
            printf("%schrF2 = %.2f\n", prefix, chrf_corpus(hyps, refs, n, lowercase));
        } else {
            printf("%sexact = %.2f (%d sentence%s)\n", prefix, exact_match(hyps, refs, n, lowercase),
                   n, plural(n));
        }
    }
}

static int count_words(const char *s)
{
    int n = 0;
    for (int in_word = 0; *s; s++) {
        int space = *s == ' ' || *s == '\t';
        n += !space && !in_word;
        in_word = !space;
    }
    return n;
}

/* The metrics of each group of sentences by source length (see EVAL_USAGE). */
static void print_by_length(const TextFile *src, const TextFile *hyp, const TextFile *ref,
                            long width, const int *order, int n_order, const Scoring *how)
{
    int longest = 0;
    int *words = xmalloc_array((size_t)src->n, sizeof(int));
    for (int k = 0; k < src->n; k++) {
        words[k] = count_words(src->lines[k]);
        longest = words[k] > longest ? words[k] : longest;
    }
    const char **h = xmalloc_array((size_t)src->n, sizeof(char *));
    const char **r = xmalloc_array((size_t)src->n, sizeof(char *));
    for (long lo = 1; lo <= longest; lo += width) {
        long hi = lo + width - 1;
        int n = 0;
        for (int k = 0; k < src->n; k++)
            if (words[k] >= lo && words[k] <= hi) {
                h[n] = hyp->lines[k];
                r[n] = ref->lines[k];
                n++;
            }
        if (!n)
            continue;
        char prefix[96];
        snprintf(prefix, sizeof prefix, "length %ld-%ld (%d sentence%s): ", lo, hi, n, plural(n));
        print_metrics(prefix, h, r, n, order, n_order, how);
    }
    free(words);
    free(h);
    free(r);
}

int cmd_eval(int argc, char **argv)
{
    const char *hyp_path = NULL, *ref_path = NULL, *src_path = NULL;
    Scoring how = {0, BLEU_TOKENIZE_13A};
    int metrics = 0; /* bit 0: bleu, bit 1: exact, bit 2: chrf */
    int order[8], n_order = 0;
    long width = 0;
    enum { HELP, LOWERCASE, HYP, REF, SRC, BY_LENGTH, METRIC, TOKENIZE };
    static const CmdOption OPTS[] = {
        [HELP] = {"--help", 0}, [LOWERCASE] = {"--lowercase", 0}, [HYP] = {"--hyp", 1},
        [REF] = {"--ref", 1}, [SRC] = {"--src", 1}, [BY_LENGTH] = {"--by-length", 1},
        [METRIC] = {"--metric", 1}, [TOKENIZE] = {"--tokenize", 1}, {NULL, 0}};
    for (int a = 0; a < argc; a++) {
        const char *value = NULL;
        char *end;
        int m;
        switch (cmd_option("eval", OPTS, argc, argv, &a, &value)) {
        case -2:
            return EXIT_USAGE;
        case -1:
            return cmd_usage_error("eval: unexpected argument `%s` (see s2s eval --help)", argv[a]);
        case HELP:
            fputs(EVAL_USAGE, stdout);
            return EXIT_OK;
        case LOWERCASE:
            how.lowercase = 1;
            break;
        case TOKENIZE:
            if (strcmp(value, "13a") && strcmp(value, "none"))
                return cmd_usage_error("--tokenize: expected 13a or none, got `%s`", value);
            how.tokenize = strcmp(value, "none") ? BLEU_TOKENIZE_13A : BLEU_TOKENIZE_NONE;
            break;
        case HYP:
            hyp_path = value;
            break;
        case REF:
            ref_path = value;
            break;
        case SRC:
            src_path = value;
            break;
        case BY_LENGTH:
            width = strtol(value, &end, 10);
            if (*end || end == value || width < 1 || width > 100000)
                return cmd_usage_error("--by-length: expected a width from 1 to 100000 words, "
                                       "got `%s`", value);
            break;
        case METRIC:
            m = !strcmp(value, "bleu") ? 0 : !strcmp(value, "exact") ? 1
                : !strcmp(value, "chrf") ? 2 : -1;
            if (m < 0)
                return cmd_usage_error("--metric: expected bleu, chrf or exact, got `%s`", value);
            if (!(metrics & (1 << m)) && n_order < 8)
                order[n_order++] = m;
            metrics |= 1 << m;
            break;
        }
    }
    if (!hyp_path || !ref_path)
        return cmd_usage_error("%s", "eval needs --hyp FILE and --ref FILE (see s2s eval --help)");
    if (!src_path != !width)
        return cmd_usage_error("%s", "--src and --by-length go together (see s2s eval --help)");
    if (!n_order)
        order[n_order++] = 0;
    TextFile hyp = {0}, ref = {0}, src = {0};
    Error err;
    int rc = EXIT_USAGE;
    if (textfile_read(&hyp, hyp_path, &err) < 0 || textfile_read(&ref, ref_path, &err) < 0 ||
        (src_path && textfile_read(&src, src_path, &err) < 0))
        goto done;
    if (ref.n == 0) {
        error_set(&err, "reference file `%s` is empty", ref_path);
        goto done;
    }
    if (hyp.n != ref.n || (src_path && src.n != ref.n)) {
        int bad_hyp = hyp.n != ref.n;
        const int n = bad_hyp ? hyp.n : src.n;
        error_set(&err, "`%s` has %d line%s but `%s` has %d; each %s needs its reference on the "
                  "same line", bad_hyp ? hyp_path : src_path, n, plural(n), ref_path, ref.n,
                  bad_hyp ? "translation" : "source");
        goto done;
    }
    print_metrics("", (const char *const *)hyp.lines, (const char *const *)ref.lines, hyp.n, order,
                  n_order, &how);
    if (src_path)
        print_by_length(&src, &hyp, &ref, width, order, n_order, &how);
    rc = cmd_flush_stdout() == 0 ? EXIT_OK : EXIT_IO;
done:
    textfile_free(&hyp);
    textfile_free(&ref);
    textfile_free(&src);
    return rc == EXIT_USAGE ? cmd_error(&err, EXIT_USAGE) : rc;
}
