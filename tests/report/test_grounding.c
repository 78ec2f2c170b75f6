/* test_grounding.c: attention correctness (report/grounding.h) on hand-computed cases:
 * which cells a box makes a word's (whole cells, exactly half a cell, a box inside one
 * cell, a box across four, a picture that is not square, a width that G does not
 * divide), pointing and mass over hand-made attention rows, no grounded word, and the
 * line that reports them. */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "report/grounding.h"
#include "support/suites.h"

/* Asserts that box's cells in a G x G grid over a w x h picture are exactly the n listed
 * (row-major indices). */
static void assert_cells(int G, GroundBox box, int w, int h, const int *want, int n)
{
    unsigned char cells[64];
    memset(cells, 7, sizeof cells); /* whatever was there is overwritten */
    const ImageSize size = {w, h};
    ck_assert_int_eq(grounding_cells(cells, G, box, size), n);
    for (int k = 0, next = 0; k < G * G; k++) {
        const int in = next < n && want[next] == k;
        ck_assert_msg(cells[k] == in, "box %d,%d,%d,%d over %d x %d, G %d: cell %d is %d", box.x0,
                      box.y0, box.x1, box.y1, w, h, G, k, cells[k]);
        next += in;
    }
}

/* The cells listed, and how many: assert_cells's last two arguments. */
#define CELLS(...) \
    (const int[]){__VA_ARGS__}, (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

START_TEST(a_words_cells_are_those_its_box_half_covers)
{
    /* 64 x 64, G = 4: cells of 16 x 16 pixels */
    /* exactly one cell, and a box a pixel larger on each side: the same cell (the
     * neighbours get 16 of their 256 pixels, or 1) */
    assert_cells(4, (GroundBox){16, 16, 32, 32}, 64, 64, CELLS(5));
    assert_cells(4, (GroundBox){15, 15, 33, 33}, 64, 64, CELLS(5));
    /* the whole picture: every cell */
    assert_cells(4, (GroundBox){0, 0, 64, 64}, 64, 64,
                 CELLS(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    /* exactly half of a cell is in: the left half of cell 5, and the right half of
     * cell 0 with the left half of cell 1 */
    assert_cells(4, (GroundBox){16, 16, 24, 32}, 64, 64, CELLS(5));
    assert_cells(4, (GroundBox){8, 0, 24, 16}, 64, 64, CELLS(0, 1));
    /* and half of cells 6 and 10 in height, of 7 and 11 too */
    assert_cells(4, (GroundBox){32, 24, 64, 40}, 64, 64, CELLS(6, 7, 10, 11));
    /* a pixel short of half is out: 7 of cell 0's 16 columns, 8 of cell 1's */
    assert_cells(4, (GroundBox){9, 0, 24, 16}, 64, 64, CELLS(1));
    /* a small box inside one cell: no cell half covered, the one it overlaps */
    assert_cells(4, (GroundBox){20, 36, 24, 40}, 64, 64, CELLS(9));
    /* the largest overlap wins the fallback, not the first: 4 x 6 pixels in cell 0
     * against 4 x 10 in cell 4 */
    assert_cells(4, (GroundBox){4, 10, 8, 26}, 64, 64, CELLS(4));
    /* across four cells equally: a tie, the first in row-major order */
    assert_cells(4, (GroundBox){12, 12, 20, 20}, 64, 64, CELLS(0));
    assert_cells(4, (GroundBox){44, 44, 52, 52}, 64, 64, CELLS(10));
    /* a word that names nothing, a box outside the picture: no cell */
    assert_cells(4, (GroundBox){GROUND_NONE, 0, 0, 0}, 64, 64, NULL, 0);
    assert_cells(4, (GroundBox){64, 0, 70, 10}, 64, 64, NULL, 0);
}
END_TEST

START_TEST(cells_follow_the_pictures_own_width_and_height)
{
    /* 60 x 30, G = 3: cells of 20 x 10 pixels */
    assert_cells(3, (GroundBox){20, 10, 40, 20}, 60, 30, CELLS(4));
    assert_cells(3, (GroundBox){40, 20, 60, 30}, 60, 30, CELLS(8));
    /* half a cell each way: half of 0's width (10 of 20), all of its height */
    assert_cells(3, (GroundBox){10, 0, 20, 10}, 60, 30, CELLS(0));
    /* a box of 30 x 20 pixels at the top left: all of 0 and 3, half of 1 and 4 */
    assert_cells(3, (GroundBox){0, 0, 30, 20}, 60, 30, CELLS(0, 1, 3, 4));
    /* 30 x 60: the same boxes transposed */
    assert_cells(3, (GroundBox){0, 0, 20, 30}, 30, 60, CELLS(0, 1, 3, 4));
    assert_cells(3, (GroundBox){10, 20, 20, 40}, 30, 60, CELLS(4));
    /* 10 x 10, G = 3: bounds at 10/3 and 20/3. [3, 5) covers 5 - 10/3 = 5/3 of cell 1's
     * 10/3, exactly half, in every row (decided in pixels, rounding would say less) */
    assert_cells(3, (GroundBox){3, 0, 5, 10}, 10, 10, CELLS(1, 4, 7));
    /* [0, 2) x [0, 2): 4 of 100/9, under half: the fallback, cell 0 */
    assert_cells(3, (GroundBox){0, 0, 2, 2}, 10, 10, CELLS(0));
    /* [0, 3) x [0, 3): 9 of 100/9, over half (and nothing of cells 1 and 3) */
    assert_cells(3, (GroundBox){0, 0, 3, 3}, 10, 10, CELLS(0));
    /* 7 x 5, G = 2: bounds 3.5 and 2.5. [2, 7) x [0, 5): 1.5 of cell 0's 3.5 (out), all
     * of cell 1 */
    assert_cells(2, (GroundBox){2, 0, 7, 5}, 7, 5, CELLS(1, 3));
    /* [0, 2) x [0, 2): 4 of 8.75, under half (the fallback); [0, 2) x [0, 3): 2 x 2.5 = 5
     * of 8.75, over (cell 2 gets 2 x 0.5); [0, 7) x [0, 3): cells 0 and 1, and 0.5 of
     * the 2.5 rows of cells 2 and 3 */
    assert_cells(2, (GroundBox){0, 0, 2, 2}, 7, 5, CELLS(0));
    assert_cells(2, (GroundBox){0, 0, 2, 3}, 7, 5, CELLS(0));
    assert_cells(2, (GroundBox){0, 0, 7, 3}, 7, 5, CELLS(0, 1));
}
END_TEST

START_TEST(pointing_and_mass_over_hand_made_rows)
{
    /* 32 x 32, G = 2: cells of 16 x 16. Rows of 5: the fifth value (</s>'s column in a
     * text model, here filler) must never be read. */
    const ImageSize size = {32, 32};
    const GroundBox boxes[4] = {
        {GROUND_NONE, 0, 0, 0}, /* "a": names nothing */
        {0, 0, 16, 16},         /* cell 0 */
        {0, 16, 32, 32},        /* cells 2 and 3 */
        {0, 0, 16, 16},         /* cell 0 again */
    };
    const float alpha[4 * 5] = {
        0.25f, 0.25f, 0.25f, 0.25f, 9,      /* not scored */
        0.5f, 0.25f, 0.125f, 0.125f, 9,     /* most on cell 0: a hit; mass 0.5 */
        0.375f, 0.125f, 0.25f, 0.25f, 9,    /* most on cell 0: a miss; mass 0.5 */
        0.25f, 0.25f, 0.25f, 0.25f, 9,      /* a tie: the first cell, 0, a hit; mass 0.25 */
    };
    GroundingCounts c = {0};
    grounding_add(&c, alpha, 5, 1, 2, boxes, 4, size);
    ck_assert_int_eq(c.words, 3);
    ck_assert_int_eq(c.hits, 2);
    ck_assert_double_eq(c.mass, 1.25);
    /* a second caption, rows at a stride of 4: two words, both hits, a row with its
     * most on its last cell */
    const GroundBox more[2] = {{16, 16, 32, 32}, {0, 0, 32, 16}};
    const float beta[2 * 4] = {
        0.125f, 0.125f, 0.25f, 0.5f, /* cell 3: a hit; mass 0.5 */
        0.125f, 0.75f, 0.0625f, 0.0625f, /* cells 0 and 1, most on 1: a hit; mass 0.875 */
    };
    grounding_add(&c, beta, 4, 1, 2, more, 2, size);
    ck_assert_int_eq(c.words, 5);
    ck_assert_int_eq(c.hits, 4);
    ck_assert_double_eq(c.mass, 2.625);
    double pointing, mass;
    ck_assert_int_eq(grounding_scores(&c, &pointing, &mass), 5);
    ck_assert_double_eq(pointing, 0.8);
    ck_assert_double_eq(mass, 2.625 / 5);
    char line[128];
    grounding_format(&c, line, sizeof line);
    ck_assert_str_eq(line, "attention_correctness: pointing=0.8000 mass=0.5250 words=5");
    /* a caption whose words name nothing adds nothing; nor does a caption of no word */
    grounding_add(&c, alpha, 5, 1, 2, boxes, 1, size);
    grounding_add(&c, alpha, 5, 1, 2, boxes, 0, size);
    ck_assert_int_eq(c.words, 5);
    ck_assert_int_eq(c.hits, 4);
}
END_TEST

START_TEST(no_grounded_word_gives_no_score_and_says_so)
{
    GroundingCounts c = {0};
    const GroundBox none[2] = {{GROUND_NONE, 0, 0, 0}, {GROUND_NONE, 0, 0, 0}};
    const float alpha[2 * 4] = {1, 0, 0, 0, 0, 0, 0, 1};
    grounding_add(&c, alpha, 4, 1, 2, none, 2, (ImageSize){32, 32});
    double pointing = -1, mass = -1;
    ck_assert_int_eq(grounding_scores(&c, &pointing, &mass), 0);
    ck_assert(pointing == 0 && mass == 0); /* not NaN */
    char line[128];
    grounding_format(&c, line, sizeof line);
    ck_assert_str_eq(line, "attention_correctness: pointing=n/a mass=n/a words=0");
    /* the format of a run's line: four decimals */
    const GroundingCounts run = {.words = 40, .hits = 35, .mass = 26.448};
    grounding_format(&run, line, sizeof line);
    ck_assert_str_eq(line, "attention_correctness: pointing=0.8750 mass=0.6612 words=40");
}
END_TEST

Suite *grounding_suite(void)
{
    Suite *s = suite_create("grounding");
    TCase *tc = tcase_create("grounding");
    tcase_add_test(tc, a_words_cells_are_those_its_box_half_covers);
    tcase_add_test(tc, cells_follow_the_pictures_own_width_and_height);
    tcase_add_test(tc, pointing_and_mass_over_hand_made_rows);
    tcase_add_test(tc, no_grounded_word_gives_no_score_and_says_so);
    suite_add_tcase(s, tc);
    return s;
}
