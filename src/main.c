/* main.c: the s2s command line: parses the command, runs it, prints errors, and maps
 * failures to the exit codes of INTERFACE.md. The only file that exits. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "config.h"
#include "corpus.h"
#include "error.h"
#include "gen.h"
#include "metrics.h"
#include "modelcheck.h"
#include "textfile.h"
#include "tokenize.h"
#include "train.h"
#include "vocab.h"

#define S2S_VERSION "0.1.0"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_IO = 3, EXIT_DIVERGED = 4 };

static const char USAGE[] =
    "usage: s2s COMMAND [ARGS]\n"
    "\n"
    "s2s trains and runs RNN encoder-decoder translation models with Bahdanau\n"
    "attention, and shows how their alignments form.\n"
    "\n"
    "commands:\n"
    "  train      train a model: s2s train CONFIG.yaml [--set KEY=VALUE]... [--resume RUN_DIR]\n"
    "  gradcheck  check every gradient of the configured model by finite differences\n"
    "  corpus     write a synthetic corpus with gold alignments: s2s corpus NAME --out DIR\n"
    "  eval       score translations: s2s eval --hyp FILE --ref FILE [--metric bleu|exact]\n"
    "  config     print every config key with its default (--doc: as a Markdown table)\n"
    "  tokenize   split stdin into tokens as training does, one line per line\n"
    "\n"
    "options:\n"
    "  --help      show this help (s2s COMMAND --help for a command)\n"
    "  --version   show the version\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "s2s: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return EXIT_USAGE;
}

static int print_error(const Error *err, int code)
{
    fprintf(stderr, "s2s: error: %s\n", err->msg);
    return code;
}

/* Loads CONFIG with its --set overrides and validates it. args: everything after the
 * command; other options are left to the caller through *rest (or refused when rest
 * is NULL). Returns 0 or an exit code. */
static int load_config(Config *cfg, int argc, char **argv, const char *usage,
                       const char **resume, long *samples)
{
    const char *path = NULL;
    config_defaults(cfg);
    Error err;
    /* The file first, then the overrides in order, whatever their position. */
    for (int a = 0; a < argc; a++) {
        if (!strcmp(argv[a], "--help")) {
            fputs(usage, stdout);
            return -1;
        } else if (!strcmp(argv[a], "--set") || (resume && !strcmp(argv[a], "--resume")) ||
                   (samples && !strcmp(argv[a], "--samples"))) {
            if (++a == argc)
                return usage_error("%s needs a value", argv[a - 1]);
        } else if (argv[a][0] == '-' && argv[a][1]) {
            return usage_error("unknown option `%s`", argv[a]);
        } else if (path) {
            return usage_error("one config file only (got a second: `%s`)", argv[a]);
        } else {
            path = argv[a];
        }
    }
    if (!path)
        return usage_error("%s", "missing CONFIG.yaml (see --help)");
    if (config_load(cfg, path, &err) < 0)
        return print_error(&err, EXIT_USAGE);
    for (int a = 0; a < argc; a++) {
        if (!strcmp(argv[a], "--set") && config_set(cfg, argv[++a], &err) < 0)
            return print_error(&err, EXIT_USAGE);
        if (resume && !strcmp(argv[a], "--resume"))
            *resume = argv[++a];
        if (samples && !strcmp(argv[a], "--samples")) {
            char *end;
            *samples = strtol(argv[++a], &end, 10);
            if (*end || *samples < 0)
                return usage_error("--samples: expected a count >= 0, got `%s`", argv[a]);
        }
    }
    if (config_validate(cfg, &err) < 0)
        return print_error(&err, EXIT_USAGE);
    return 0;
}

/* ---- s2s train ---------------------------------------------------------------------------- */

static const char TRAIN_USAGE[] =
    "usage: s2s train CONFIG.yaml [--set SECTION.KEY=VALUE]... [--resume RUN_DIR]\n"
    "\n"
    "Trains the model CONFIG.yaml describes (every key: configs/README.md). The run\n"
    "directory gets config.yaml (the effective config), train.log, metrics.jsonl and\n"
    "checkpoints/last.ckpt and best.ckpt. --resume continues the run saved in RUN_DIR\n"
    "exactly where it stopped (settings that shape the model or the training must not\n"
    "change; stopping and logging settings may).\n"
    "\n"
    "Exit codes: 0 done; 2 bad config, data or checkpoint; 3 cannot write; 4 diverged;\n"
    "130/143 stopped by SIGINT/SIGTERM after saving checkpoints/last.ckpt.\n";

static volatile sig_atomic_t signal_received, saving_checkpoint;

/* First SIGINT/SIGTERM: finish the step, save, exit. A second one before saving has
 * started: exit at once, leaving the checkpoints as they are. */
static void on_stop_signal(int sig)
{
    if (signal_received && !saving_checkpoint)
        _exit(128 + sig);
    signal_received = sig;
}

static int cmd_train(int argc, char **argv)
{
    Config cfg;
    const char *resume = NULL;
    int rc = load_config(&cfg, argc, argv, TRAIN_USAGE, &resume, NULL);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    TrainSignals signals = {&signal_received, &saving_checkpoint};
    Error err;
    int outcome = train_run(&cfg, resume, &signals, &err);
    switch (outcome) {
    case TRAIN_OK:
        return EXIT_OK;
    case TRAIN_SIGNALLED:
        return 128 + (int)signal_received;
    case TRAIN_IO_ERROR:
        return print_error(&err, EXIT_IO);
    case TRAIN_DIVERGED:
        return print_error(&err, EXIT_DIVERGED);
    default:
        return print_error(&err, EXIT_USAGE);
    }
}

/* ---- s2s gradcheck ------------------------------------------------------------------------ */

static const char GRADCHECK_USAGE[] =
    "usage: s2s gradcheck CONFIG.yaml [--set SECTION.KEY=VALUE]... [--samples N]\n"
    "\n"
    "Builds the model CONFIG.yaml describes (vocabularies from its training data) in\n"
    "double precision and checks its gradients by finite differences on the first three\n"
    "training pairs (cut to 10 tokens a side). Every tensor is checked: all of its\n"
    "elements when it has at most N (default 20; 0: all), else N elements with non-zero\n"
    "gradients and two with zero ones. Prints the worst relative error per tensor; exits\n"
    "0 if every error is at most 1e-6, 1 otherwise.\n";

enum { GRADCHECK_PAIRS = 3, GRADCHECK_MAX_WORDS = 10 };

static int cmd_gradcheck(int argc, char **argv)
{
    Config cfg;
    long samples = 20;
    int rc = load_config(&cfg, argc, argv, GRADCHECK_USAGE, NULL, &samples);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    CorpusSpec spec = {
        .src_path = cfg.data.train_src[0] ? cfg.data.train_src : NULL,
        .tgt_path = cfg.data.train_tgt[0] ? cfg.data.train_tgt : NULL,
        .tsv_path = cfg.data.train_tsv[0] ? cfg.data.train_tsv : NULL,
        .tsv_reverse = cfg.data.tsv_reverse,
        .level = cfg.data.level == CONFIG_LEVEL_CHAR ? LEVEL_CHAR : LEVEL_WORD,
        .lowercase = cfg.data.lowercase, .max_length = cfg.data.max_length,
        .max_line_bytes = cfg.data.max_line_bytes};
    Vocab src_counts, tgt_counts, src_vocab, tgt_vocab;
    vocab_init(&src_counts);
    vocab_init(&tgt_counts);
    Corpus corpus;
    Error err;
    if (corpus_read(&corpus, &spec, &src_counts, &tgt_counts, 1, "training", &err) < 0) {
        corpus_free(&corpus);
        vocab_free(&src_counts);
        vocab_free(&tgt_counts);
        return print_error(&err, EXIT_USAGE);
    }
    vocab_build(&src_vocab, &src_counts, (int)cfg.data.src_vocab_size, (int)cfg.data.src_min_freq);
    vocab_build(&tgt_vocab, &tgt_counts, (int)cfg.data.tgt_vocab_size, (int)cfg.data.tgt_min_freq);
    corpus_remap(&corpus, &src_counts, &src_vocab, &tgt_counts, &tgt_vocab);
    int n = corpus.n < GRADCHECK_PAIRS ? corpus.n : GRADCHECK_PAIRS;
    const int *src[GRADCHECK_PAIRS], *tgt[GRADCHECK_PAIRS];
    int src_n[GRADCHECK_PAIRS], tgt_n[GRADCHECK_PAIRS];
    for (int k = 0; k < n; k++) {
        src[k] = corpus.ids + corpus.src_start[k];
        tgt[k] = corpus.ids + corpus.tgt_start[k];
        src_n[k] = corpus.src_len[k] < GRADCHECK_MAX_WORDS ? corpus.src_len[k] : GRADCHECK_MAX_WORDS;
        tgt_n[k] = corpus.tgt_len[k] < GRADCHECK_MAX_WORDS ? corpus.tgt_len[k] : GRADCHECK_MAX_WORDS;
    }
    Batch bt;
    batch_init(&bt, n, GRADCHECK_MAX_WORDS + 1, GRADCHECK_MAX_WORDS + 1);
    batch_fill(&bt, n, src, src_n, tgt, tgt_n);
    Dims d = {src_vocab.size, tgt_vocab.size, (int)cfg.model.embedding_size,
              (int)cfg.model.encoder_size, (int)cfg.model.decoder_size,
              (int)cfg.model.attention_size, (int)cfg.model.readout_size};
    double worst = modelcheck_run(&d, &bt, (uint64_t)cfg.seed, samples);
    batch_free(&bt);
    corpus_free(&corpus);
    vocab_free(&src_counts);
    vocab_free(&tgt_counts);
    vocab_free(&src_vocab);
    vocab_free(&tgt_vocab);
    return worst <= 1e-6 ? EXIT_OK : EXIT_FAILED;
}

/* ---- s2s tokenize ------------------------------------------------------------------ */

static const char TOKENIZE_USAGE[] =
    "usage: s2s tokenize [--level word|char] [--lowercase] < text > tokens\n"
    "\n"
    "Writes each line of stdin split into tokens exactly as training splits corpus\n"
    "lines, tokens separated by single spaces. Use it to prepare references for\n"
    "scoring. Invalid UTF-8 gives an empty line and a warning with the line number.\n";

static int cmd_tokenize(int argc, char **argv)
{
    TokenLevel level = LEVEL_WORD;
    int lowercase = 0;
    for (int a = 0; a < argc; a++) {
        if (!strcmp(argv[a], "--help")) {
            fputs(TOKENIZE_USAGE, stdout);
            return EXIT_OK;
        } else if (!strcmp(argv[a], "--lowercase")) {
            lowercase = 1;
        } else if (!strcmp(argv[a], "--level") && a + 1 < argc) {
            a++;
            if (!strcmp(argv[a], "word"))
                level = LEVEL_WORD;
            else if (!strcmp(argv[a], "char"))
                level = LEVEL_CHAR;
            else
                return usage_error("--level: expected word or char, got `%s`", argv[a]);
        } else {
            return usage_error("tokenize: unexpected argument `%s` (see s2s tokenize --help)",
                               argv[a]);
        }
    }
    Tokens tokens = {0};
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long line_no = 0;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        line_no++;
        if (len > 0 && line[len - 1] == '\n')
            len--;
        if (len > 0 && line[len - 1] == '\r')
            len--;
        size_t bad_at, bad_len;
        if (utf8_validate(line, (size_t)len, &bad_at, &bad_len) < 0) {
            fprintf(stderr, "s2s: warning: stdin:%ld: invalid UTF-8 at byte %zu; wrote an "
                    "empty line\n", line_no, bad_at + 1);
            putchar('\n');
            continue;
        }
        int n = tokenize_line(&tokens, line, (size_t)len, level, lowercase);
        for (int k = 0; k < n; k++) {
            if (k > 0)
                putchar(' ');
            fputs(tokens_get(&tokens, k), stdout);
        }
        putchar('\n');
    }
    free(line);
    tokens_free(&tokens);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("s2s: error: writing stdout");
        return EXIT_IO;
    }
    return EXIT_OK;
}

/* ---- s2s corpus ------------------------------------------------------------------------------ */

static const char CORPUS_USAGE[] =
    "usage: s2s corpus NAME --out DIR [--size N] [--seed S]\n"
    "\n"
    "Writes a synthetic parallel corpus with gold word alignments: DIR/{train,valid,test}\n"
    "with .src and .tgt (one tokenized sentence a line) and .align (Pharaoh links j-i,\n"
    "0-based source-target token indices). Valid and test hold 1000 pairs each, never\n"
    "seen in train; --size sets the training pairs. The same seed (default 1) gives the\n"
    "same corpus everywhere. Tasks (corpora/README.md describes each):\n";

static int cmd_corpus(int argc, char **argv)
{
    const char *name = NULL, *out = NULL;
    long size = -1, seed = 1;
    for (int a = 0; a < argc; a++) {
        if (!strcmp(argv[a], "--help")) {
            int n;
            const GenTask *tasks = gen_tasks(&n);
            fputs(CORPUS_USAGE, stdout);
            for (int k = 0; k < n; k++)
                printf("  %-8s %s (default size %d)\n", tasks[k].name, tasks[k].about,
                       tasks[k].default_train);
            return EXIT_OK;
        } else if ((!strcmp(argv[a], "--out") || !strcmp(argv[a], "--size") ||
                    !strcmp(argv[a], "--seed")) && a + 1 < argc) {
            const char *opt = argv[a++];
            if (!strcmp(opt, "--out")) {
                out = argv[a];
                continue;
            }
            char *end;
            long v = strtol(argv[a], &end, 10);
            if (*end || !*argv[a] || v < (opt[2] == 's' && opt[3] == 'i' ? 1 : 0) || v > 100000000)
                return usage_error(!strcmp(opt, "--size") ? "--size: expected a count from 1 to 100000000, got `%s`"
                                                          : "--seed: expected a number from 0 to 100000000, got `%s`",
                                   argv[a]);
            if (!strcmp(opt, "--size"))
                size = v;
            else
                seed = v;
        } else if (argv[a][0] == '-') {
            return usage_error("corpus: unknown option `%s` (see s2s corpus --help)", argv[a]);
        } else if (name) {
            return usage_error("corpus: one task only (got a second: `%s`)", argv[a]);
        } else {
            name = argv[a];
        }
    }
    if (!name || !out)
        return usage_error("%s", "corpus needs a task NAME and --out DIR (see s2s corpus --help)");
    const GenTask *task = gen_find(name);
    if (!task) {
        int n;
        const GenTask *tasks = gen_tasks(&n);
        char list[256] = "";
        for (int k = 0; k < n; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "", tasks[k].name);
        fprintf(stderr, "s2s: error: unknown corpus `%s` (expected one of: %s)\n", name, list);
        return EXIT_USAGE;
    }
    Error err;
    if (gen_write(task, out, size > 0 ? (int)size : task->default_train, (uint64_t)seed, &err) < 0)
        return print_error(&err, EXIT_IO);
    fprintf(stderr, "s2s corpus: wrote %s (%ld training pairs, 1000 validation, 1000 test, seed %ld) "
            "to %s\n", name, size > 0 ? size : (long)task->default_train, seed, out);
    return EXIT_OK;
}

/* ---- s2s eval -------------------------------------------------------------------------------- */

static const char EVAL_USAGE[] =
    "usage: s2s eval --hyp FILE --ref FILE [--metric bleu|exact]... [--lowercase]\n"
    "\n"
    "Scores translations (one a line) against references (one a line, same order) and\n"
    "prints one line per metric on stdout: BLEU exactly as sacreBLEU 2.6.0 computes it by\n"
    "default (13a tokenization, exp smoothing), and the exact-match rate in percent.\n"
    "--lowercase lowercases both sides first (sacreBLEU's -lc). Default metric: bleu.\n";

static int cmd_eval(int argc, char **argv)
{
    const char *hyp_path = NULL, *ref_path = NULL;
    int lowercase = 0, metrics = 0; /* bit 0: bleu, bit 1: exact, in the order given */
    int order[8], n_order = 0;
    for (int a = 0; a < argc; a++) {
        if (!strcmp(argv[a], "--help")) {
            fputs(EVAL_USAGE, stdout);
            return EXIT_OK;
        } else if (!strcmp(argv[a], "--lowercase")) {
            lowercase = 1;
        } else if ((!strcmp(argv[a], "--hyp") || !strcmp(argv[a], "--ref") ||
                    !strcmp(argv[a], "--metric")) && a + 1 < argc) {
            const char *opt = argv[a++];
            if (!strcmp(opt, "--hyp"))
                hyp_path = argv[a];
            else if (!strcmp(opt, "--ref"))
                ref_path = argv[a];
            else {
                int m = !strcmp(argv[a], "bleu") ? 0 : !strcmp(argv[a], "exact") ? 1 : -1;
                if (m < 0)
                    return usage_error("--metric: expected bleu or exact, got `%s`", argv[a]);
                if (!(metrics & (1 << m)) && n_order < 8)
                    order[n_order++] = m;
                metrics |= 1 << m;
            }
        } else {
            return usage_error("eval: unexpected argument `%s` (see s2s eval --help)", argv[a]);
        }
    }
    if (!hyp_path || !ref_path)
        return usage_error("%s", "eval needs --hyp FILE and --ref FILE (see s2s eval --help)");
    if (!n_order)
        order[n_order++] = 0;
    TextFile hyp = {0}, ref = {0};
    Error err;
    int rc = EXIT_USAGE;
    if (textfile_read(&hyp, hyp_path, &err) < 0 || textfile_read(&ref, ref_path, &err) < 0)
        goto done;
    if (ref.n == 0) {
        error_set(&err, "reference file `%s` is empty", ref_path);
        goto done;
    }
    if (hyp.n != ref.n) {
        error_set(&err, "`%s` has %d lines but `%s` has %d; each translation needs its reference "
                  "on the same line", hyp_path, hyp.n, ref_path, ref.n);
        goto done;
    }
    for (int k = 0; k < n_order; k++) {
        if (order[k] == 0) {
            Bleu b;
            char line[256];
            bleu_corpus(&b, (const char *const *)hyp.lines, (const char *const *)ref.lines, hyp.n,
                        lowercase);
            bleu_format(&b, line, sizeof line);
            puts(line);
        } else {
            printf("exact = %.2f (%d sentences)\n",
                   exact_match((const char *const *)hyp.lines, (const char *const *)ref.lines, hyp.n),
                   hyp.n);
        }
    }
    rc = fflush(stdout) == 0 ? EXIT_OK : EXIT_IO;
done:
    textfile_free(&hyp);
    textfile_free(&ref);
    return rc == EXIT_USAGE ? print_error(&err, EXIT_USAGE) : rc;
}

/* ---- s2s config ------------------------------------------------------------------------ */

static const char CONFIG_USAGE[] =
    "usage: s2s config [--doc]\n"
    "\n"
    "Prints a config with every key at its default value: a starting point for your\n"
    "own. With --doc, prints the table of keys of configs/README.md instead.\n";

static int cmd_config(int argc, char **argv)
{
    int doc = 0;
    for (int a = 0; a < argc; a++) {
        if (!strcmp(argv[a], "--help")) {
            fputs(CONFIG_USAGE, stdout);
            return EXIT_OK;
        } else if (!strcmp(argv[a], "--doc")) {
            doc = 1;
        } else {
            return usage_error("config: unexpected argument `%s` (see s2s config --help)", argv[a]);
        }
    }
    if (doc) {
        puts("| key | type | default | range | meaning |");
        puts("| --- | --- | --- | --- | --- |");
        for (int k = 0; k < config_n_keys(); k++) {
            char *row = config_key_doc_row(k);
            puts(row);
            free(row);
        }
    } else {
        Config cfg;
        config_defaults(&cfg);
        char *yaml = config_to_yaml(&cfg);
        fputs(yaml, stdout);
        free(yaml);
    }
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_IO;
}

/* ---- dispatch ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(USAGE, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        fputs(USAGE, stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("s2s %s\n", S2S_VERSION);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "train"))
        return cmd_train(argc - 2, argv + 2);
    if (!strcmp(cmd, "gradcheck"))
        return cmd_gradcheck(argc - 2, argv + 2);
    if (!strcmp(cmd, "corpus"))
        return cmd_corpus(argc - 2, argv + 2);
    if (!strcmp(cmd, "eval"))
        return cmd_eval(argc - 2, argv + 2);
    if (!strcmp(cmd, "config"))
        return cmd_config(argc - 2, argv + 2);
    if (!strcmp(cmd, "tokenize"))
        return cmd_tokenize(argc - 2, argv + 2);
    return usage_error("unknown command `%s` (see s2s --help)", cmd);
}
