/* test_shapes.c: the captioning corpus (gen/shapes.h), in its default look and another
 * (other picture side, grid, colours and shapes): every caption word names what it says,
 * every box holds its object's pixels and nothing is drawn outside the boxes, the
 * pictures read back as drawn, a seed gives the same corpus twice, no held-out scene is
 * in train, and `s2s corpus shapes` turns away a look it cannot draw. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/image.h"
#include "gen/shapes.h"
#include "support/cli.h"
#include "support/tinyrun.h"
#include "support/suites.h"

/* The other look: 96 x 96 pixels, a 4 x 4 grid of 24-pixel cells, five shapes and five
 * colours, in an order of its own. */
static void other_look(ShapesLook *look)
{
    static const int COLOURS[] = {4, 5, 6, 7, 0}, FORMS[] = {3, 4, 1, 0, 2};
    look->side = 96, look->grid = 4;
    look->n_colours = 5, look->n_forms = 5;
    memcpy(look->colours, COLOURS, sizeof COLOURS);
    memcpy(look->forms, FORMS, sizeof FORMS);
}

/* Whether pixel (x, y) lies in box b. */
static int inside(const int *b, int x, int y)
{
    return x >= b[0] && x < b[2] && y >= b[1] && y < b[3];
}

/* 2000 scenes of a look, each checked against its objects. */
static void check_scenes(const ShapesLook *look, uint64_t seed)
{
    Pcg32 rng;
    pcg32_seed(&rng, seed, 1);
    ShapeScene s;
    const int side = look->side, G = look->grid, cell = side / G;
    unsigned char *rgb = malloc((size_t)side * side * 3);
    int seen_n[SHAPES_MAX_OBJECTS + 1] = {0}, seen_form[SHAPES_FORMS] = {0},
        seen_colour[SHAPES_PALETTE] = {0}, seen_cell[SHAPES_MAX_GRID * SHAPES_MAX_GRID] = {0};
    for (int scene = 0; scene < 2000; scene++) {
        shapes_draw(&s, look, &rng);
        ck_assert(s.n >= 1 && s.n <= SHAPES_MAX_OBJECTS);
        seen_n[s.n]++;
        ck_assert_str_eq(s.words[s.n_words - 1], ".");
        /* each object named once by "a SIZE COLOUR SHAPE", in reading order, placed from
         * the one before by its cell */
        int named = 0;
        for (int w = 0; w < s.n_words; w++) {
            if (strcmp(s.words[w], "a"))
                continue;
            const ShapeObject *o = &s.obj[named];
            ck_assert_str_eq(s.words[w + 1], o->big ? "big" : "small");
            ck_assert_str_eq(s.words[w + 2], shapes_colour_name(look->colours[o->colour]));
            ck_assert_str_eq(s.words[w + 3], shapes_form_name(look->forms[o->shape]));
            seen_colour[o->colour]++, seen_form[o->shape]++, seen_cell[o->cell]++;
            for (int k = 1; k <= 3; k++)
                ck_assert_int_eq(s.refers[w + k], named);
            ck_assert_int_eq(s.refers[w], -1);
            /* the box: in its cell, centred within 2 pixels, 2 or more pixels inside */
            const int x = o->cell % G * cell, y = o->cell / G * cell;
            ck_assert(o->box[0] >= x && o->box[2] <= x + cell);
            ck_assert(o->box[1] >= y && o->box[3] <= y + cell);
            ck_assert_int_le(abs(o->box[0] + o->box[2] - 2 * x - cell), 4);
            ck_assert_int_le(abs(o->box[1] + o->box[3] - 2 * y - cell), 4);
            ck_assert_int_ge(o->box[2] - o->box[0], o->big ? cell * 3 / 4 : 6);
            if (!o->big)
                ck_assert_int_le(o->box[2] - o->box[0], cell / 2);
            if (named > 0) { /* "... it", before the object's "a"; "it" carries no box */
                const ShapeObject *before = &s.obj[named - 1];
                const int dr = o->cell / G - before->cell / G, dc = o->cell % G - before->cell % G;
                ck_assert(o->cell > before->cell);
                ck_assert_str_eq(s.words[w - 1], "it");
                ck_assert_int_eq(s.refers[w - 1], -1);
                const char *said = dr == 0 ? "right of" : dc == 0 ? "below"
                                          : dc < 0 ? "below left of" : "below right of";
                const int said_words = dr == 0 || dc == 0 ? 2 - (dr != 0) : 3;
                char got[64] = "";
                for (int k = w - 1 - said_words; k < w - 1; k++)
                    snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s",
                             k > w - 1 - said_words ? " " : "", s.words[k]);
                ck_assert_str_eq(got, said);
                ck_assert_str_eq(s.words[w - 2 - said_words], "and");
            }
            named++;
        }
        ck_assert_int_eq(named, s.n);
        int boxed = 0; /* and no other word has a box */
        for (int w = 0; w < s.n_words; w++)
            boxed += s.refers[w] >= 0;
        ck_assert_int_eq(boxed, 3 * s.n);
        /* pixels: each box holds its colour, and nothing lies outside the boxes */
        shapes_render(rgb, &s, look);
        int in_box[SHAPES_MAX_OBJECTS] = {0}, stray = 0; /* counted, then checked once:
                                                          * a check a pixel is slow */
        for (int y = 0; y < side; y++)
            for (int x = 0; x < side; x++) {
                const unsigned char *p = rgb + ((size_t)y * side + x) * 3;
                const int lit = p[0] || p[1] || p[2];
                int owner = -1;
                for (int k = 0; k < s.n; k++)
                    if (inside(s.obj[k].box, x, y))
                        owner = k;
                stray += lit && owner < 0;
                if (lit && owner >= 0)
                    in_box[owner]++;
            }
        ck_assert_int_eq(stray, 0);
        for (int k = 0; k < s.n; k++) /* a small cross of 6 x 6 lights 20 */
            ck_assert_int_ge(in_box[k], 20);
    }
    for (int n = 1; n <= SHAPES_MAX_OBJECTS; n++)
        ck_assert_int_gt(seen_n[n], 300); /* 1 to 4 objects, about equally often */
    for (int k = 0; k < look->n_colours; k++)
        ck_assert_int_gt(seen_colour[k], 5000 / look->n_colours / 2);
    for (int k = 0; k < look->n_forms; k++)
        ck_assert_int_gt(seen_form[k], 5000 / look->n_forms / 2);
    for (int k = 0; k < G * G; k++)
        ck_assert_int_gt(seen_cell[k], 5000 / (G * G) / 3);
    free(rgb);
}

START_TEST(captions_and_boxes_say_what_is_drawn)
{
    ShapesLook look;
    shapes_default_look(&look);
    check_scenes(&look, 28);
    other_look(&look);
    check_scenes(&look, 29);
}
END_TEST

/* Each form's pixels in a 12 x 12 box: what covers() draws, row by row. */
START_TEST(the_forms_are_drawn_as_named)
{
    static const char *const WANT[SHAPES_FORMS][12] = {
        {0}, /* square: all of it, checked below */
        {"....####....", "..########..", ".##########.", ".##########.", "############",
         "############", "############", "############", ".##########.", ".##########.",
         "..########..", "....####...."},
        {"............", ".....##.....", ".....##.....", "....####....", "....####....",
         "...######...", "...######...", "..########..", "..########..", ".##########.",
         ".##########.", "############"}, /* the apex's row is narrower than a pixel */
        {".....##.....", "....####....", "...######...", "..########..", ".##########.",
         "############", "############", ".##########.", "..########..", "...######...",
         "....####....", ".....##....."},
        {"....####....", "....####....", "....####....", "....####....", "############",
         "############", "############", "############", "....####....", "....####....",
         "....####....", "....####...."}};
    ShapesLook look;
    shapes_default_look(&look);
    look.side = 36, look.grid = 3; /* cells of 12: a big object's box is 8 wide */
    look.n_forms = SHAPES_FORMS;
    for (int f = 0; f < SHAPES_FORMS; f++)
        look.forms[f] = f;
    ck_assert_int_eq(shapes_look_check(&look, (char[8]){0}, 8), 0);
    ShapeScene s;
    memset(&s, 0, sizeof s);
    s.n = 1;
    ShapeObject *o = &s.obj[0];
    o->box[0] = 12, o->box[1] = 12, o->box[2] = 24, o->box[3] = 24; /* the middle cell */
    unsigned char rgb[36 * 36 * 3];
    for (int f = 0; f < SHAPES_FORMS; f++) {
        o->shape = f;
        shapes_render(rgb, &s, &look);
        for (int y = 0; y < 12; y++)
            for (int x = 0; x < 12; x++) {
                const int lit = rgb[((size_t)(y + 12) * 36 + x + 12) * 3] != 0;
                const int want = f == 0 || WANT[f][y][x] == '#';
                ck_assert_msg(lit == want, "%s at (%d, %d)", shapes_form_name(f), x, y);
            }
    }
}
END_TEST

/* Every line of a file, in one string per line (free with free_lines). */
static int lines_of(const char *path, char ***out)
{
    char *text = read_file(path);
    int n = 0, cap = 16;
    char **lines = malloc(sizeof(char *) * cap);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (n == cap)
            lines = realloc(lines, sizeof(char *) * (cap *= 2));
        lines[n++] = strdup(line);
    }
    free(text);
    *out = lines;
    return n;
}

static void free_lines(char **lines, int n)
{
    for (int k = 0; k < n; k++)
        free(lines[k]);
    free(lines);
}

START_TEST(the_corpus_reads_back_and_keeps_held_out_scenes_out_of_train)
{
    char dir[512], again[700], cmd[1600], path[800];
    scratch_dir(dir, sizeof dir, "shapes");
    Error err;
    ShapesLook look; /* the other look: its pictures are 96 x 96 */
    other_look(&look);
    const int side = look.side;
    ck_assert_msg(shapes_write(dir, 300, 7, &look, &err) == 0, "%s", err.msg);
    /* the same seed, the same corpus, pictures included */
    snprintf(again, sizeof again, "%s/again", dir);
    ck_assert_msg(shapes_write(again, 300, 7, &look, &err) == 0, "%s", err.msg);
    snprintf(cmd, sizeof cmd, "cd '%s' && for f in *.src *.tgt *.ground images/*; do cmp -s \"$f\" "
             "\"again/$f\" || exit 1; done", dir);
    ck_assert_int_eq(system(cmd), 0);
    /* a held-out scene (caption and boxes) is in no other split */
    char **tgt[3], **ground[3];
    int n[3];
    static const char *const SPLITS[3] = {"train", "valid", "test"};
    for (int sp = 0; sp < 3; sp++) {
        snprintf(path, sizeof path, "%s/%s.tgt", dir, SPLITS[sp]);
        n[sp] = lines_of(path, &tgt[sp]);
        snprintf(path, sizeof path, "%s/%s.ground", dir, SPLITS[sp]);
        ck_assert_int_eq(lines_of(path, &ground[sp]), n[sp]);
    }
    ck_assert_int_eq(n[0], 300);
    ck_assert_int_eq(n[1], SHAPES_HELD_OUT);
    ck_assert_int_eq(n[2], SHAPES_HELD_OUT);
    for (int a = 1; a < 3; a++)
        for (int i = 0; i < n[a]; i++)
            for (int b = 0; b < 3; b++)
                for (int j = 0; j < n[b]; j++)
                    if ((b != a || j != i) && !strcmp(tgt[a][i], tgt[b][j]))
                        ck_assert_str_ne(ground[a][i], ground[b][j]);
    /* one ground field per caption word */
    for (int i = 0; i < n[0]; i++) {
        int words = 1, fields = 1;
        for (const char *c = tgt[0][i]; *c; c++)
            words += *c == ' ';
        for (const char *c = ground[0][i]; *c; c++)
            fields += *c == ' ';
        ck_assert_int_eq(words, fields);
    }
    for (int sp = 0; sp < 3; sp++) {
        free_lines(tgt[sp], n[sp]);
        free_lines(ground[sp], n[sp]);
    }
    /* the pictures read back: train's first at its side, and valid's first (the first
     * scene drawn) with the pixels shapes_render gives */
    snprintf(path, sizeof path, "%s/train.src", dir);
    char **src;
    ck_assert_int_eq(lines_of(path, &src), 300);
    ck_assert_str_eq(src[0], "images/train-1.png");
    snprintf(path, sizeof path, "%s/%s", dir, src[0]);
    free_lines(src, 300);
    static float pixels[3 * 96 * 96];
    ImageSize size;
    ck_assert_msg(image_load(pixels, path, side, 0, &size, &err) == 0, "%s", err.msg);
    ck_assert(size.width == side && size.height == side);
    Pcg32 rng;
    pcg32_seed(&rng, 7, RNG_STREAM_DATA);
    ShapeScene s;
    shapes_draw(&s, &look, &rng); /* the first scene drawn is valid's first */
    static unsigned char rgb[96 * 96 * 3];
    shapes_render(rgb, &s, &look);
    snprintf(path, sizeof path, "%s/images/valid-1.png", dir);
    ck_assert_msg(image_load(pixels, path, side, 0, &size, &err) == 0, "%s", err.msg);
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < side * side; k++)
            ck_assert(pixels[c * side * side + k] == rgb[k * 3 + c] / 255.0f);
}
END_TEST

/* `s2s corpus shapes` with a look of its own, and the looks it turns away: exit 2, one
 * line saying what was expected, nothing written. */
START_TEST(the_command_takes_a_look_and_refuses_what_it_cannot_draw)
{
    char dir[512], out[700], err[700], path[800], line[1000];
    scratch_dir(dir, sizeof dir, "shapes-cli");
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    snprintf(path, sizeof path, "%s/corpus", dir);
    const char *good[] = {S2S, "corpus", "shapes", "--out", path, "--size", "30", "--picture", "96",
                          "--grid", "4", "--colours", "purple,cyan", "--shapes", "diamond,cross",
                          NULL};
    ck_assert_int_eq(run_command(good, out, err, NULL), 0);
    char *said = read_file(err);
    ck_assert_ptr_nonnull(strstr(said, "wrote shapes (30 training scenes"));
    free(said);
    snprintf(line, sizeof line, "%s/train.tgt", path);
    char *tgt = read_file(line);
    for (char *w = strtok(tgt, " \n"); w; w = strtok(NULL, " \n"))
        ck_assert_msg(strstr("a big small purple cyan diamond cross and right below left of it .",
                             w) != NULL, "%s", w);
    free(tgt);
    snprintf(line, sizeof line, "%s/images/test-1.png", path);
    ImageSize size;
    Error e;
    ck_assert_int_eq(image_size_of(line, &size, &e), 0);
    ck_assert(size.width == 96 && size.height == 96);

    static const char *const bad[][3] = {
        {"--colours", "red,pink", "s2s: error: --colours: expected names from red, green, blue, "
                                  "yellow, purple, orange, cyan, white, comma-separated (`pink` "
                                  "is not one)"},
        {"--shapes", "cross", "s2s: error: corpus shapes: expected 2 to 5 distinct shapes"},
        {"--shapes", "cross,square,cross", "s2s: error: corpus shapes: expected 2 to 5 distinct "
                                           "shapes"},
        {"--grid", "9", "s2s: error: corpus shapes: expected a grid from 2 to 8 with cells of at "
                        "least 12 pixels, got 9 on 64 pixels"},
        {"--picture", "32", "s2s: error: corpus shapes: expected a grid from 2 to 8 with cells of "
                            "at least 12 pixels, got 3 on 32 pixels"},
        {"--picture", "600", "s2s: error: corpus shapes: expected a picture side from 32 to 512 "
                             "pixels, got 600"},
        {"--grid", "x", "s2s: error: --grid: expected a count, got `x`"}};
    snprintf(path, sizeof path, "%s/refused", dir);
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        const char *argv[] = {S2S, "corpus", "shapes", "--out", path, bad[k][0], bad[k][1], NULL};
        ck_assert_int_eq(run_command(argv, out, err, NULL), 2);
        first_line(err, line, sizeof line);
        ck_assert_str_eq(line, bad[k][2]);
        ck_assert(!path_exists(path));
    }
    const char *text_task[] = {S2S, "corpus", "toy-fr", "--out", path, "--grid", "4", NULL};
    ck_assert_int_eq(run_command(text_task, out, err, NULL), 2);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "s2s: error: corpus: --picture, --grid, --colours and --shapes are the "
                           "shapes corpus's (got task `toy-fr`)");
    ck_assert(!path_exists(path));
}
END_TEST

Suite *shapes_suite(void)
{
    Suite *s = suite_create("shapes");
    TCase *tc = tcase_create("shapes");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, captions_and_boxes_say_what_is_drawn);
    tcase_add_test(tc, the_forms_are_drawn_as_named);
    tcase_add_test(tc, the_command_takes_a_look_and_refuses_what_it_cannot_draw);
    tcase_add_test(tc, the_corpus_reads_back_and_keeps_held_out_scenes_out_of_train);
    suite_add_tcase(s, tc);
    return s;
}
