/* test_ground.c: the word boxes of a captioning corpus (data/ground.h): valid files read
 * line for line (CRLF, no final newline, empty lines), every malformed field is refused
 * with its file, line and field, each line is checked against its caption and its
 * picture, and the corpus `s2s corpus shapes` writes reads back and passes the checks. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/ground.h"
#include "gen/shapes.h"
#include "support/cli.h"
#include "support/suites.h"

/* Writes text to DIR/name and reads it; returns ground_read's code. */
static int read_text(GroundFile *g, const char *dir, const char *name, const char *text,
                     size_t max_line_bytes, char *path, size_t cap, Error *err)
{
    snprintf(path, cap, "%s/%s", dir, name);
    write_file(path, text);
    return ground_read(g, path, max_line_bytes, err);
}

static void assert_box(const GroundBox *b, int x0, int y0, int x1, int y1)
{
    ck_assert_int_eq(b->x0, x0);
    ck_assert_int_eq(b->y0, y0);
    ck_assert_int_eq(b->x1, x1);
    ck_assert_int_eq(b->y1, y1);
}

START_TEST(valid_files_read_line_for_line)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "ground-valid");
    GroundFile g;
    Error err;
    /* CRLF, an empty line (a caption of no words), an empty CRLF line, leading zeros,
     * the largest side, and a last line without its newline */
    const char *text = "1,2,3,4 - 0,0,64,64\r\n"
                       "\n"
                       "\r\n"
                       "- -\n"
                       "007,0,16384,16384\n"
                       "5,6,7,8";
    ck_assert_msg(read_text(&g, dir, "a.ground", text, 1 << 20, path, sizeof path, &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(g.n_lines, 6);
    ck_assert_int_eq(g.n_boxes, 7);
    static const int count[6] = {3, 0, 0, 2, 1, 1};
    for (int k = 0; k < 6; k++)
        ck_assert_int_eq(g.count[k], count[k]);
    const GroundBox *line1 = g.boxes + g.start[0];
    assert_box(&line1[0], 1, 2, 3, 4);
    ck_assert(ground_names(&line1[0]));
    ck_assert(!ground_names(&line1[1]));
    ck_assert_int_eq(line1[1].x0, GROUND_NONE);
    assert_box(&line1[2], 0, 0, 64, 64);
    ck_assert(!ground_names(&g.boxes[g.start[3]]) && !ground_names(&g.boxes[g.start[3] + 1]));
    assert_box(&g.boxes[g.start[4]], 7, 0, 16384, 16384);
    assert_box(&g.boxes[g.start[5]], 5, 6, 7, 8);
    ck_assert_int_eq(g.start[5], 6);
    ground_free(&g);
    ground_free(&g); /* twice: freed is zeroed */
    /* an empty file: no caption; a file of one empty line: one caption of no words */
    ck_assert(read_text(&g, dir, "empty.ground", "", 1 << 20, path, sizeof path, &err) == 0);
    ck_assert_int_eq(g.n_lines, 0);
    ck_assert_int_eq(g.n_boxes, 0);
    ground_free(&g);
    ck_assert(read_text(&g, dir, "one.ground", "\n", 1 << 20, path, sizeof path, &err) == 0);
    ck_assert_int_eq(g.n_lines, 1);
    ck_assert_int_eq(g.count[0], 0);
    ground_free(&g);
    /* many lines and fields: the arrays grow */
    char *big = malloc(300 * 30 + 1);
    big[0] = '\0';
    for (int k = 0; k < 300; k++)
        strcat(big, k % 2 ? "- 1,1,2,2 -\n" : "0,0,1,1\n");
    ck_assert(read_text(&g, dir, "big.ground", big, 1 << 20, path, sizeof path, &err) == 0);
    ck_assert_int_eq(g.n_lines, 300);
    ck_assert_int_eq(g.n_boxes, 150 * 3 + 150);
    ck_assert_int_eq(g.start[299], 149 * 4 + 1);
    assert_box(&g.boxes[g.start[299] + 1], 1, 1, 2, 2);
    ground_free(&g);
    free(big);
    /* zeroed: safe to free */
    GroundFile zero = {0};
    ground_free(&zero);
}
END_TEST

/* Reads text as DIR/bad.ground and asserts it is refused with "PATH:" + want. */
static void assert_refused(const char *dir, const char *text, size_t max_line_bytes,
                           const char *want)
{
    char path[700], full[1400];
    GroundFile g;
    Error err;
    ck_assert_int_eq(read_text(&g, dir, "bad.ground", text, max_line_bytes, path, sizeof path,
                               &err), -1);
    snprintf(full, sizeof full, "%s:%s", path, want);
    ck_assert_str_eq(err.msg, full);
    /* refused: nothing kept */
    ck_assert_ptr_null(g.boxes);
    ck_assert_int_eq(g.n_lines, 0);
    ground_free(&g);
}

START_TEST(every_bad_field_is_refused_by_file_line_and_field)
{
    char dir[512], path[700], want[1024];
    scratch_dir(dir, sizeof dir, "ground-bad");
#define EXPECTED "expected '-' or x0,y0,x1,y1"
    /* too few and too many numbers, a trailing comma */
    assert_refused(dir, "1,2,3\n", 1 << 20, "1: field 1: " EXPECTED " (got '1,2,3')");
    assert_refused(dir, "- 1,2,3,4,5\n", 1 << 20, "1: field 2: " EXPECTED " (got '1,2,3,4,5')");
    assert_refused(dir, "1,2,3,\n", 1 << 20, "1: field 1: " EXPECTED " (got '1,2,3,')");
    /* negative, signed, not a number, a word, two dashes, spaces inside */
    assert_refused(dir, "-\n-3,0,4,5\n", 1 << 20, "2: field 1: " EXPECTED " (got '-3,0,4,5')");
    assert_refused(dir, "+1,2,3,4", 1 << 20, "1: field 1: " EXPECTED " (got '+1,2,3,4')");
    assert_refused(dir, "- - a,b,c,d\n", 1 << 20, "1: field 3: " EXPECTED " (got 'a,b,c,d')");
    assert_refused(dir, "1.5,2,3,4\n", 1 << 20, "1: field 1: " EXPECTED " (got '1.5,2,3,4')");
    assert_refused(dir, "red\n", 1 << 20, "1: field 1: " EXPECTED " (got 'red')");
    assert_refused(dir, "--\n", 1 << 20, "1: field 1: " EXPECTED " (got '--')");
    assert_refused(dir, "1, 2,3,4\n", 1 << 20, "1: field 1: " EXPECTED " (got '1,')");
    /* empty fields: a trailing space, two spaces, a leading space */
    assert_refused(dir, "1,2,3,4 \n", 1 << 20, "1: field 2: " EXPECTED " (got '')");
    assert_refused(dir, "- \r\n", 1 << 20, "1: field 2: " EXPECTED " (got '')");
    assert_refused(dir, "-\n\n1,2,3,4  -\n", 1 << 20, "3: field 2: " EXPECTED " (got '')");
    assert_refused(dir, " -\n", 1 << 20, "1: field 1: " EXPECTED " (got '')");
    assert_refused(dir, " ", 1 << 20, "1: field 1: " EXPECTED " (got '')");
    /* a tab is no separator, and control characters are shown escaped */
    assert_refused(dir, "- 1,2,3,4\t-\n", 1 << 20,
                   "1: field 2: " EXPECTED " (got '1,2,3,4\\x09-')");
    assert_refused(dir, "\x1b[2J\n", 1 << 20, "1: field 1: " EXPECTED " (got '\\x1b[2J')");
    /* CRLF lines count as lines; a lone CR inside a line is part of its field */
    assert_refused(dir, "-\r\n-\r\nx\r\n", 1 << 20, "3: field 1: " EXPECTED " (got 'x')");
    assert_refused(dir, "-\r-\n", 1 << 20, "1: field 1: " EXPECTED " (got '-\\x0d-')");
    /* a long field is cut after 40 bytes, never inside a character */
    assert_refused(dir, "0123456789012345678901234567890123456789XYZ\n", 1 << 20,
                   "1: field 1: " EXPECTED " (got '0123456789012345678901234567890123456789...')");
    assert_refused(dir, "012345678901234567890123456789012345678\xc3\xa9XYZ\n", 1 << 20,
                   "1: field 1: " EXPECTED " (got '012345678901234567890123456789012345678...')");
    /* empty boxes */
    assert_refused(dir, "5,0,5,9\n", 1 << 20,
                   "1: field 1: box 5,0,5,9 is empty (expected x0 < x1 and y0 < y1)");
    assert_refused(dir, "- 6,0,5,9\n", 1 << 20,
                   "1: field 2: box 6,0,5,9 is empty (expected x0 < x1 and y0 < y1)");
    assert_refused(dir, "0,9,4,2\n", 1 << 20,
                   "1: field 1: box 0,9,4,2 is empty (expected x0 < x1 and y0 < y1)");
    assert_refused(dir, "0,3,4,3\n", 1 << 20,
                   "1: field 1: box 0,3,4,3 is empty (expected x0 < x1 and y0 < y1)");
    /* numbers beyond any picture, however many digits */
    assert_refused(dir, "0,0,16385,4\n", 1 << 20,
                   "1: field 1: 16385 is more than 16384, the largest picture side");
    assert_refused(dir, "0,0,4,99999999999999999999999\n", 1 << 20,
                   "1: field 1: 99999999999999999999999 is more than 16384, the largest "
                   "picture side");
#undef EXPECTED
    /* a line over the cap; not text */
    assert_refused(dir, "-\n- - - - - - - - - -\n", 16,
                   "2: line longer than data.max_line_bytes (16 bytes)");
    assert_refused(dir, "- \xff\n", 1 << 20, "1:3: invalid UTF-8 (0xff)");
    /* missing */
    GroundFile g;
    Error err;
    snprintf(path, sizeof path, "%s/none.ground", dir);
    ck_assert_int_eq(ground_read(&g, path, 1 << 20, &err), -1);
    snprintf(want, sizeof want, "cannot open word boxes `%s`: No such file or directory", path);
    ck_assert_str_eq(err.msg, want);
    ground_free(&g);
}
END_TEST

START_TEST(each_line_is_checked_against_its_caption_and_picture)
{
    const GroundBox boxes[3] = {{0, 0, 64, 48}, {GROUND_NONE, 0, 0, 0}, {10, 20, 30, 40}};
    const ImageSize size = {64, 48};
    Error err;
    ck_assert_msg(ground_check_line(boxes, 3, 3, size, "t.ground", 4, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(ground_check_line(boxes, 0, 0, size, "t.ground", 4, &err), 0);
    /* one field per caption word */
    ck_assert_int_eq(ground_check_line(boxes, 2, 3, size, "t.ground", 4, &err), -1);
    ck_assert_str_eq(err.msg, "t.ground:4: 2 fields, expected 3 (one per caption word)");
    ck_assert_int_eq(ground_check_line(boxes, 1, 2, size, "t.ground", 7, &err), -1);
    ck_assert_str_eq(err.msg, "t.ground:7: 1 field, expected 2 (one per caption word)");
    ck_assert_int_eq(ground_check_line(boxes, 3, 0, size, "t.ground", 1, &err), -1);
    ck_assert_str_eq(err.msg, "t.ground:1: 3 fields, expected 0 (one per caption word)");
    /* inside the picture: x1 <= W and y1 <= H; one pixel more on either side is out */
    const ImageSize smaller[2] = {{63, 48}, {64, 47}};
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(ground_check_line(boxes, 3, 3, smaller[k], "t.ground", 2, &err), -1);
        char want[128];
        snprintf(want, sizeof want, "t.ground:2: field 1: box 0,0,64,48 outside the %d x %d image",
                 smaller[k].width, smaller[k].height);
        ck_assert_str_eq(err.msg, want);
    }
    const ImageSize tiny = {30, 40};
    ck_assert_int_eq(ground_check_line(boxes + 1, 2, 2, tiny, "t.ground", 9, &err), 0);
    const ImageSize narrow = {29, 40};
    ck_assert_int_eq(ground_check_line(boxes + 1, 2, 2, narrow, "t.ground", 9, &err), -1);
    ck_assert_str_eq(err.msg, "t.ground:9: field 2: box 10,20,30,40 outside the 29 x 40 image");
}
END_TEST

/* The corpus of `s2s corpus shapes`: every split's boxes read, one line per caption, and
 * every line passes the checks against its caption and its 64 x 64 picture. */
START_TEST(the_shapes_corpus_reads_and_passes_the_checks)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "ground-shapes");
    Error err;
    ck_assert_msg(shapes_write(dir, 20, 3, NULL, &err) == 0, "%s", err.msg);
    static const char *const SPLITS[3] = {"train", "valid", "test"};
    ShapesLook look;
    shapes_default_look(&look);
    const ImageSize side = {look.side, look.side};
    for (int sp = 0; sp < 3; sp++) {
        GroundFile g;
        snprintf(path, sizeof path, "%s/%s.ground", dir, SPLITS[sp]);
        ck_assert_msg(ground_read(&g, path, 1 << 20, &err) == 0, "%s", err.msg);
        snprintf(path, sizeof path, "%s/%s.tgt", dir, SPLITS[sp]);
        char *tgt = read_file(path);
        long k = 0, named = 0;
        for (char *line = tgt, *nl; *line; line = nl + 1, k++) {
            nl = strchr(line, '\n');
            ck_assert_ptr_nonnull(nl);
            int words = 1;
            for (const char *c = line; c < nl; c++)
                words += *c == ' ';
            ck_assert_int_lt(k, g.n_lines);
            const GroundBox *b = g.boxes + g.start[k];
            ck_assert_msg(ground_check_line(b, g.count[k], words, side, path, k + 1, &err) == 0,
                          "%s", err.msg);
            for (int w = 0; w < g.count[k]; w++)
                named += ground_names(&b[w]);
        }
        ck_assert_int_eq(k, g.n_lines);
        ck_assert_int_eq(k, sp == 0 ? 20 : SHAPES_HELD_OUT);
        ck_assert_int_gt(named, k); /* every caption names an object in several words */
        free(tgt);
        ground_free(&g);
    }
}
END_TEST

Suite *ground_suite(void)
{
    Suite *s = suite_create("ground");
    TCase *tc = tcase_create("ground");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, valid_files_read_line_for_line);
    tcase_add_test(tc, every_bad_field_is_refused_by_file_line_and_field);
    tcase_add_test(tc, each_line_is_checked_against_its_caption_and_picture);
    tcase_add_test(tc, the_shapes_corpus_reads_and_passes_the_checks);
    suite_add_tcase(s, tc);
    return s;
}
