/* test_shapes.c: the captioning corpus (gen/shapes.h): every caption word names what it
 * says, every box holds its object's pixels and nothing is drawn outside the boxes, the
 * pictures read back as drawn, a seed gives the same corpus twice, and no held-out scene
 * is in train. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/image.h"
#include "gen/shapes.h"
#include "support/cli.h"
#include "support/suites.h"

static const char *const SHAPE_WORDS[] = {"square", "circle", "triangle"};
static const char *const COLOUR_WORDS[] = {"red", "green", "blue", "yellow"};

/* Whether pixel (x, y) lies in box b. */
static int inside(const int *b, int x, int y)
{
    return x >= b[0] && x < b[2] && y >= b[1] && y < b[3];
}

START_TEST(captions_and_boxes_say_what_is_drawn)
{
    Pcg32 rng;
    pcg32_seed(&rng, 28, 1);
    ShapeScene s;
    unsigned char rgb[SHAPES_SIDE * SHAPES_SIDE * 3];
    int seen_n[SHAPES_MAX_OBJECTS + 1] = {0};
    for (int scene = 0; scene < 2000; scene++) {
        shapes_draw(&s, &rng);
        ck_assert(s.n >= 1 && s.n <= SHAPES_MAX_OBJECTS);
        seen_n[s.n]++;
        ck_assert_str_eq(s.words[s.n_words - 1], ".");
        /* each object named once by "a SIZE COLOUR SHAPE", in reading order */
        int named = 0;
        for (int w = 0; w < s.n_words; w++) {
            if (strcmp(s.words[w], "a"))
                continue;
            const ShapeObject *o = &s.obj[named];
            ck_assert_str_eq(s.words[w + 1], o->big ? "big" : "small");
            ck_assert_str_eq(s.words[w + 2], COLOUR_WORDS[o->colour]);
            ck_assert_str_eq(s.words[w + 3], SHAPE_WORDS[o->shape]);
            for (int k = 1; k <= 3; k++)
                ck_assert_int_eq(s.refers[w + k], named);
            ck_assert_int_eq(s.refers[w], -1);
            if (named > 0) /* "it" names the object before */
                ck_assert_int_eq(s.refers[w - 1], named - 1);
            if (named > 0)
                ck_assert(s.obj[named].cell > s.obj[named - 1].cell);
            named++;
        }
        ck_assert_int_eq(named, s.n);
        /* pixels: each box holds its colour, and nothing lies outside the boxes */
        shapes_render(rgb, &s);
        int in_box[SHAPES_MAX_OBJECTS] = {0};
        for (int y = 0; y < SHAPES_SIDE; y++)
            for (int x = 0; x < SHAPES_SIDE; x++) {
                const unsigned char *p = rgb + ((size_t)y * SHAPES_SIDE + x) * 3;
                const int lit = p[0] || p[1] || p[2];
                int owner = -1;
                for (int k = 0; k < s.n; k++)
                    if (inside(s.obj[k].box, x, y))
                        owner = k;
                ck_assert(!lit || owner >= 0);
                if (lit)
                    in_box[owner]++;
            }
        for (int k = 0; k < s.n; k++)
            ck_assert_int_gt(in_box[k], 20);
    }
    for (int n = 1; n <= SHAPES_MAX_OBJECTS; n++)
        ck_assert_int_gt(seen_n[n], 300); /* 1 to 4 objects, about equally often */
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
    ck_assert_msg(shapes_write(dir, 300, 7, &err) == 0, "%s", err.msg);
    /* the same seed, the same corpus, pictures included */
    snprintf(again, sizeof again, "%s/again", dir);
    ck_assert_msg(shapes_write(again, 300, 7, &err) == 0, "%s", err.msg);
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
    /* the pictures read back: train's first at 64 x 64, and valid's first (the first
     * scene drawn) with the pixels shapes_render gives */
    snprintf(path, sizeof path, "%s/train.src", dir);
    char **src;
    ck_assert_int_eq(lines_of(path, &src), 300);
    ck_assert_str_eq(src[0], "images/train-1.png");
    snprintf(path, sizeof path, "%s/%s", dir, src[0]);
    free_lines(src, 300);
    static float pixels[3 * SHAPES_SIDE * SHAPES_SIDE];
    ImageSize size;
    ck_assert_msg(image_load(pixels, path, SHAPES_SIDE, 0, &size, &err) == 0, "%s", err.msg);
    Pcg32 rng;
    pcg32_seed(&rng, 7, RNG_STREAM_DATA);
    ShapeScene s;
    shapes_draw(&s, &rng); /* the first scene drawn is valid's first */
    unsigned char rgb[SHAPES_SIDE * SHAPES_SIDE * 3];
    shapes_render(rgb, &s);
    snprintf(path, sizeof path, "%s/images/valid-1.png", dir);
    ck_assert_msg(image_load(pixels, path, SHAPES_SIDE, 0, &size, &err) == 0, "%s", err.msg);
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < SHAPES_SIDE * SHAPES_SIDE; k++)
            ck_assert(pixels[c * SHAPES_SIDE * SHAPES_SIDE + k] == rgb[k * 3 + c] / 255.0f);
}
END_TEST

Suite *shapes_suite(void)
{
    Suite *s = suite_create("shapes");
    TCase *tc = tcase_create("shapes");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, captions_and_boxes_say_what_is_drawn);
    tcase_add_test(tc, the_corpus_reads_back_and_keeps_held_out_scenes_out_of_train);
    suite_add_tcase(s, tc);
    return s;
}
