/* cmd_corpus.c: `s2s corpus`: one of the synthetic corpora of src/gen/ written to a folder,
 * with its gold alignments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/command.h"
#include "gen/gen.h"
#include "gen/shapes.h"

static const char CORPUS_USAGE[] =
    "usage: s2s corpus NAME --out DIR [--size N] [--seed S]\n"
    "       s2s corpus shapes --out DIR [--size N] [--seed S] [--picture PIXELS] [--grid G]\n"
    "                  [--colours NAME,NAME...] [--shapes NAME,NAME...]\n"
    "\n"
    "Writes a synthetic parallel corpus with gold word alignments: DIR/{train,valid,test}\n"
    "with .src and .tgt (one tokenized sentence a line) and .align (Pharaoh links j-i,\n"
    "0-based source-target token indices). Valid and test hold 1000 pairs each, never\n"
    "seen in train; --size sets the training pairs. The same seed (default 1) gives the\n"
    "same corpus everywhere. Tasks (corpora/README.md describes each):\n";

/* text on lines of at most width columns (words are not cut), each after indent */
static void print_wrapped(const char *text, const char *indent, int width)
{
    int col = 0;
    for (const char *p = text; *p;) {
        int word = (int)strcspn(p, " ");
        if (col && col + 1 + word > width) {
            putchar('\n');
            col = 0;
        }
        if (!col)
            col = printf("%s", indent);
        else
            col += printf(" ");
        col += printf("%.*s", word, p);
        p += word;
        p += strspn(p, " ");
    }
    putchar('\n');
}

/* A comma-separated list of names (of name(0), name(1), ... NULL) into indices: the count,
 * or -1 for a name not in the list (why names it) or more than cap of them. */
static int parse_names(const char *value, const char *(*name)(int), int *out, int cap,
                       char *why, size_t why_cap)
{
    int n = 0;
    for (const char *p = value;; p++) {
        const size_t len = strcspn(p, ",");
        int found = -1;
        for (int k = 0; name(k); k++)
            if (strlen(name(k)) == len && !strncmp(p, name(k), len))
                found = k;
        if (found < 0) {
            snprintf(why, why_cap, "`%.*s` is not one", (int)len, p);
            return -1;
        }
        if (n == cap) {
            snprintf(why, why_cap, "more than %d", cap);
            return -1;
        }
        out[n++] = found;
        p += len;
        if (!*p)
            return n;
    }
}

/* The names of name(0), name(1), ... as "a, b, c". */
static void name_list(const char *(*name)(int), char *out, size_t cap)
{
    out[0] = '\0';
    for (int k = 0; name(k); k++)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", k ? ", " : "", name(k));
}

/* --colours or --shapes: their names into look's indices; a usage error's exit, or 0. */
static int look_names(const char *option, const char *value, const char *(*name)(int),
                      int *list, int *n, int cap)
{
    char why[128], names[128], said[400];
    const int got = parse_names(value, name, list, cap, why, sizeof why);
    if (got < 0) {
        name_list(name, names, sizeof names);
        snprintf(said, sizeof said, "%s: expected names from %s, comma-separated (%s)", option,
                 names, why);
        return cmd_usage_error("%s", said);
    }
    *n = got;
    return 0;
}

int cmd_corpus(int argc, char **argv)
{
    const char *name = NULL, *out = NULL;
    long size = -1, seed = 1;
    ShapesLook look;
    shapes_default_look(&look);
    int look_set = 0;
    enum { HELP, OUT, SIZE, SEED, PICTURE, GRID, COLOURS, FORMS };
    static const CmdOption OPTS[] = {[HELP] = {"--help", 0},     [OUT] = {"--out", 1},
                                     [SIZE] = {"--size", 1},     [SEED] = {"--seed", 1},
                                     [PICTURE] = {"--picture", 1}, [GRID] = {"--grid", 1},
                                     [COLOURS] = {"--colours", 1}, [FORMS] = {"--shapes", 1},
                                     {NULL, 0}};
    for (int a = 0; a < argc; a++) {
        const char *value = NULL;
        char *end;
        const int opt = cmd_option("corpus", OPTS, argc, argv, &a, &value);
        switch (opt) {
        case -2:
            return EXIT_USAGE;
        case -1:
            if (name)
                return cmd_usage_error("corpus: one task only (got a second: `%s`)", argv[a]);
            name = argv[a];
            break;
        case HELP: {
            int n;
            const GenTask *tasks = gen_tasks(&n);
            fputs(CORPUS_USAGE, stdout);
            for (int k = 0; k < n; k++) {
                printf("  %s (default size %d)\n", tasks[k].name, tasks[k].default_train);
                print_wrapped(tasks[k].about, "      ", 86);
            }
            char colours[128], forms[128], about[1400];
            name_list(shapes_colour_name, colours, sizeof colours);
            name_list(shapes_form_name, forms, sizeof forms);
            printf("  shapes (default size %d)\n", SHAPES_DEFAULT_TRAIN);
            snprintf(about, sizeof about,
                     "captioning, for the image encoder: 64 x 64 PNG scenes of 1 to 4 shapes "
                     "(square, circle, triangle; red, green, blue, yellow; small, big) on a "
                     "3 x 3 grid, one caption each naming every shape and where it lies "
                     "from the one before; DIR/SPLIT.src holds the images' paths (under "
                     "DIR/images), .tgt the captions, .ground each caption word's box "
                     "x0,y0,x1,y1 in pixels or - (size, colour and shape words have one); "
                     "500 validation and test scenes each. Other scenes: --picture (its "
                     "side, 32 to %d), --grid (2 to %d, cells of at least %d pixels), "
                     "--colours (2 or more of %s), --shapes (2 or more of %s)",
                     SHAPES_MAX_SIDE, SHAPES_MAX_GRID, SHAPES_MIN_CELL, colours, forms);
            print_wrapped(about, "      ", 86);
            return EXIT_OK;
        }
        case OUT:
            out = value;
            break;
        case SIZE:
            size = strtol(value, &end, 10);
            if (*end || !*value || size < 1 || size > 100000000)
                return cmd_usage_error("--size: expected a count from 1 to 100000000, got `%s`", value);
            break;
        case SEED: /* the range of the config's seed */
            seed = strtol(value, &end, 10);
            if (*end || !*value || seed < 0 || seed > 4294967295L)
                return cmd_usage_error("--seed: expected a number from 0 to 4294967295, got `%s`", value);
            break;
        case PICTURE:
        case GRID: { /* checked with the rest of the look below */
            const long v = strtol(value, &end, 10);
            if (*end || !*value || v < 1 || v > 100000)
                return cmd_usage_error(opt == PICTURE ? "--picture: expected a count of pixels, "
                                                        "got `%s`"
                                                      : "--grid: expected a count, got `%s`",
                                       value);
            *(opt == PICTURE ? &look.side : &look.grid) = (int)v;
            look_set = 1;
            break;
        }
        case COLOURS:
            if (look_names("--colours", value, shapes_colour_name, look.colours, &look.n_colours,
                           SHAPES_PALETTE))
                return EXIT_USAGE;
            look_set = 1;
            break;
        case FORMS:
            if (look_names("--shapes", value, shapes_form_name, look.forms, &look.n_forms,
                           SHAPES_FORMS))
                return EXIT_USAGE;
            look_set = 1;
            break;
        }
    }
    if (!name || !out)
        return cmd_usage_error("%s", "corpus needs a task NAME and --out DIR (see s2s corpus --help)");
    Error err;
    if (look_set && strcmp(name, "shapes"))
        return cmd_usage_error("corpus: --picture, --grid, --colours and --shapes are the shapes "
                               "corpus's (got task `%s`)", name);
    if (!strcmp(name, "shapes")) { /* pictures, not sentence pairs */
        char why[200];
        if (shapes_look_check(&look, why, sizeof why) < 0)
            return cmd_usage_error("corpus shapes: expected %s", why);
        const int n_train = size > 0 ? (int)size : SHAPES_DEFAULT_TRAIN;
        if (shapes_write(out, n_train, (uint64_t)seed, &look, &err) < 0)
            return cmd_error(&err, EXIT_IO);
        fprintf(stderr, "s2s corpus: wrote shapes (%d training scenes, %d validation, %d test, "
                "seed %ld) to %s\n", n_train, SHAPES_HELD_OUT, SHAPES_HELD_OUT, seed, out);
        return EXIT_OK;
    }
    const GenTask *task = gen_find(name);
    if (!task) {
        int n;
        const GenTask *tasks = gen_tasks(&n);
        char list[256] = "";
        for (int k = 0; k < n; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "", tasks[k].name);
        fprintf(stderr, "s2s: error: unknown corpus `%s` (expected one of: %s, shapes)\n", name,
                list);
        return EXIT_USAGE;
    }
    if (gen_write(task, out, size > 0 ? (int)size : task->default_train, (uint64_t)seed, &err) < 0)
        return cmd_error(&err, EXIT_IO);
    fprintf(stderr, "s2s corpus: wrote %s (%ld training pairs, 1000 validation, 1000 test, seed %ld) "
            "to %s\n", name, size > 0 ? size : (long)task->default_train, seed, out);
    return EXIT_OK;
}
