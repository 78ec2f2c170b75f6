/* test_tokenize.c: strict UTF-8 validation and the word and character tokenizers.
 * (scripts/checks/crosscheck.py also compares whole files with scripts/torch_reference.py.) */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "support/suites.h"
#include "text/tokenize.h"

static void check_tokens(const char *line, TokenLevel level, int lowercase, const char *expected)
{
    Tokens t = {0};
    int n = tokenize_line(&t, line, strlen(line), level, lowercase, 0);
    char joined[512] = "";
    for (int k = 0; k < n; k++) {
        if (k > 0)
            strcat(joined, "|");
        strcat(joined, tokens_get(&t, k));
    }
    ck_assert_str_eq(joined, expected);
    tokens_free(&t);
}

START_TEST(word_tokenizer_splits_punctuation_and_apostrophes)
{
    check_tokens("J'ai froid.", LEVEL_WORD, 0, "J'|ai|froid|.");
    check_tokens("Don't!", LEVEL_WORD, 0, "Don|'t|!");
    check_tokens("Qu'est-ce que c'est\xe2\x80\xaf?", LEVEL_WORD, 0, "Qu'|est-ce|que|c'|est|?");
    check_tokens("It costs 3.5 or 1,000, right.", LEVEL_WORD, 0, "It|costs|3.5|or|1,000|,|right|.");
    check_tokens("rock'n'roll", LEVEL_WORD, 0, "rock|'n'|roll");
    check_tokens("the students' books", LEVEL_WORD, 0, "the|students|'|books");
    check_tokens("'quoted'", LEVEL_WORD, 0, "'|quoted|'");
    check_tokens("\xc2\xab Oui \xc2\xbb, dit-il\xe2\x80\xa6", LEVEL_WORD, 0,
                 "\xc2\xab|Oui|\xc2\xbb|,|dit-il|\xe2\x80\xa6");
    check_tokens("I\xe2\x80\x99m here", LEVEL_WORD, 0, "I|'m|here");
    check_tokens("", LEVEL_WORD, 0, "");
    check_tokens(" \t\xc2\xa0 ", LEVEL_WORD, 0, "");
}
END_TEST

/* Each rule of tokenize.h by itself, so that dropping any one fails here (the
 * cross-check compares whole files with the Python statement of the same rules too). */
START_TEST(word_tokenizer_applies_each_rule)
{
    /* 1. typographic apostrophes become '; zero-width space, soft hyphen and U+FEFF go */
    check_tokens("l\xe2\x80\x99homme", LEVEL_WORD, 0, "l'|homme");
    check_tokens("l\xe2\x80\x98homme", LEVEL_WORD, 0, "l'|homme");
    check_tokens("a\xe2\x80\x8b" "b", LEVEL_WORD, 0, "ab");
    check_tokens("a\xc2\xad" "b", LEVEL_WORD, 0, "ab");
    check_tokens("\xef\xbb\xbfHello", LEVEL_WORD, 0, "Hello");
    check_tokens("a\xef\xbb\xbf" "b", LEVEL_WORD, 0, "ab");
    /* 2. each of ! ? ; : " ( ) ¿ ¡ « » … “ ” is a token; . and , unless between digits */
    static const char *const punct[] = {"!", "?", ";", ":", "\"", "(", ")", "\xc2\xbf",
                                        "\xc2\xa1", "\xc2\xab", "\xc2\xbb", "\xe2\x80\xa6",
                                        "\xe2\x80\x9c", "\xe2\x80\x9d", ".", ","};
    for (size_t k = 0; k < sizeof punct / sizeof *punct; k++) {
        char line[32], expected[32];
        snprintf(line, sizeof line, "a%sb", punct[k]);
        snprintf(expected, sizeof expected, "a|%s|b", punct[k]);
        check_tokens(line, LEVEL_WORD, 0, expected);
    }
    check_tokens("3.5 1,5 3. .5", LEVEL_WORD, 0, "3.5|1,5|3|.|.|5");
    /* 3. Unicode's whitespace splits: no-break spaces before French punctuation too */
    check_tokens("a\xc2\xa0" "b\xe2\x80\xaf" "c\xe2\x80\x89" "d\te", LEVEL_WORD, 0, "a|b|c|d|e");
    /* 4. after each French elision the apostrophe stays left, in any case; elsewhere it
     * starts the next piece */
    static const char *const elisions[] = {"c", "d", "j", "l", "m", "n", "s", "t", "qu", "jusqu",
                                           "lorsqu", "puisqu", "quoiqu", "QU", "Jusqu"};
    for (size_t k = 0; k < sizeof elisions / sizeof *elisions; k++) {
        char line[32], expected[32];
        snprintf(line, sizeof line, "%s'il", elisions[k]);
        snprintf(expected, sizeof expected, "%s'|il", elisions[k]);
        check_tokens(line, LEVEL_WORD, 0, expected);
    }
    check_tokens("x'il", LEVEL_WORD, 0, "x|'il");
    check_tokens("aujourd'hui", LEVEL_WORD, 0, "aujourd|'hui");
    /* NFC: a decomposed é is one character */
    check_tokens("caf" "e\xcc\x81", LEVEL_WORD, 0, "caf\xc3\xa9");
}
END_TEST

START_TEST(word_tokenizer_lowercases_all_of_unicode)
{
    check_tokens("\xc3\x89T\xc3\x89 \xc3\x80 PARIS", LEVEL_WORD, 1, "\xc3\xa9t\xc3\xa9|\xc3\xa0|paris");
    /* NFC: e + combining acute becomes one é */
    check_tokens("e\xcc\x81t\xc3\xa9", LEVEL_WORD, 0, "\xc3\xa9t\xc3\xa9");
}
END_TEST

START_TEST(char_tokenizer_marks_spaces)
{
    check_tokens(" ab  c ", LEVEL_CHAR, 0, "a|b|" CHAR_SPACE_TOKEN "|c");
    const char *toks[] = {"a", "b", CHAR_SPACE_TOKEN, "c"};
    char out[16];
    ck_assert_uint_eq(detokenize(out, sizeof out, toks, 4, LEVEL_CHAR), 4);
    ck_assert_str_eq(out, "ab c");
    ck_assert_uint_eq(detokenize(out, sizeof out, toks, 4, LEVEL_WORD), 9);
    ck_assert_str_eq(out, "a b \xe2\x96\x81 c");
    ck_assert_uint_eq(detokenize(out, 3, toks, 4, LEVEL_WORD), 9);
    ck_assert_str_eq(out, "a ");
}
END_TEST

static void check_text(const char *tokens, const char *expected)
{
    char copy[256], *words[32], out[256];
    snprintf(copy, sizeof copy, "%s", tokens);
    int n = 0;
    for (char *save, *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
        words[n++] = w;
    ck_assert_uint_eq(detokenize_text(out, sizeof out, (const char *const *)words, n, LEVEL_WORD),
                      strlen(expected));
    ck_assert_str_eq(out, expected);
    /* and back: the tokenizer gives the same tokens again */
    Tokens t = {0};
    ck_assert_int_eq(tokenize_line(&t, out, strlen(out), LEVEL_WORD, 0, 0), n);
    for (int k = 0; k < n; k++)
        ck_assert_str_eq(tokens_get(&t, k), words[k]);
    tokens_free(&t);
}

START_TEST(natural_detokenizer_inverts_the_tokenizer)
{
    check_text("j' ai froid .", "j'ai froid.");
    check_text("I don 't know , do you ?", "I don't know, do you?");
    check_text("he said \" yes \" ( twice ) !", "he said \"yes\" (twice)!");
    check_text("qu' est-ce que c' est ?", "qu'est-ce que c'est?");
    check_text("« oui » , dit-il", "« oui », dit-il");
    check_text("it costs 3.5 euros , not 1,000 .", "it costs 3.5 euros, not 1,000.");
}
END_TEST

START_TEST(utf8_validator_accepts_valid_text)
{
    const char *good[] = {"plain", "\xc3\xa9t\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                          "\xed\x9f\xbf", "\xf4\x8f\xbf\xbf", "",
                          /* each end of each sequence length, and the code points after the
                           * surrogates */
                          "\x01\x7f", "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xef\xbf\xbf",
                          "\xee\x80\x80", "\xf0\x90\x80\x80",
                          /* what other tools take for line breaks, and a BOM: all valid */
                          "a\x0b\x0c\rb", "a\xc2\x85" "b", "a\xe2\x80\xa8" "b", "\xe2\x80\xa9", "\xef\xbb\xbf"};
    for (size_t k = 0; k < sizeof good / sizeof *good; k++) {
        size_t at, len;
        ck_assert_int_eq(utf8_validate(good[k], strlen(good[k]), &at, &len), 0);
    }
}
END_TEST

START_TEST(utf8_validator_rejects_each_kind_of_bad_sequence)
{
    static const struct {
        const char *bytes;
        size_t n, at, len;
    } bad[] = {
        {"ab\xc0\x80", 4, 2, 2},         /* overlong NUL */
        {"\xe0\x80\xaf", 3, 0, 3},       /* overlong 3-byte form */
        {"x\xed\xa0\x80", 4, 1, 3},      /* surrogate U+D800 */
        {"\xf4\x90\x80\x80", 4, 0, 4},   /* above U+10FFFF */
        {"\xf5\x80\x80\x80", 4, 0, 1},   /* lead byte never valid */
        {"ok\x80", 3, 2, 1},             /* stray continuation byte */
        {"\xe2\x82", 2, 0, 2},           /* truncated at the end */
        {"\xe2\x82x", 3, 0, 2},          /* truncated by an ASCII byte */
        {"a\0b", 3, 1, 1},               /* NUL */
        {"\xc1\xbf", 2, 0, 2},           /* overlong 2-byte form of U+007F */
        {"\xe0\x9f\xbf", 3, 0, 3},       /* overlong 3-byte form of U+07FF */
        {"\xf0\x80\x80\x80", 4, 0, 4},   /* overlong 4-byte NUL */
        {"\xf0\x8f\xbf\xbf", 4, 0, 4},   /* overlong 4-byte form of U+FFFF */
        {"\xed\xbf\xbf", 3, 0, 3},       /* surrogate U+DFFF, the last */
        {"\xf8\x88\x80\x80\x80", 5, 0, 1}, /* a 5-byte form: never valid */
        {"\xfe", 1, 0, 1},
        {"\xff", 1, 0, 1},
        {"\x80\x80", 2, 0, 1},           /* two continuation bytes */
        {"\xc3", 1, 0, 1},               /* a lead byte alone at the end */
        {"\xf0\x9f\x98", 3, 0, 3},       /* 4-byte sequence cut after 3 */
        {"\xe2\x82\xac\xe2\x82", 5, 3, 2}, /* valid, then truncated: offset after the valid one */
        {"\xc3\xa9\x80", 3, 2, 1},       /* a continuation byte too many */
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        size_t at = 99, len = 99;
        ck_assert_int_eq(utf8_validate(bad[k].bytes, bad[k].n, &at, &len), -1);
        ck_assert_uint_eq(at, bad[k].at);
        ck_assert_uint_eq(len, bad[k].len);
    }
}
END_TEST

/* Every first and second byte, completed with continuation bytes, against the table of
 * well-formed byte sequences in The Unicode Standard (chapter 3, table 3-7). */
START_TEST(utf8_validator_follows_the_unicode_table_of_well_formed_sequences)
{
    static const struct {
        unsigned char lead_lo, lead_hi, second_lo, second_hi;
        size_t len;
    } table[] = {
        {0x01, 0x7F, 0, 0, 1},          {0xC2, 0xDF, 0x80, 0xBF, 2}, {0xE0, 0xE0, 0xA0, 0xBF, 3},
        {0xE1, 0xEC, 0x80, 0xBF, 3},    {0xED, 0xED, 0x80, 0x9F, 3}, {0xEE, 0xEF, 0x80, 0xBF, 3},
        {0xF0, 0xF0, 0x90, 0xBF, 4},    {0xF1, 0xF3, 0x80, 0xBF, 4}, {0xF4, 0xF4, 0x80, 0x8F, 4},
    };
    for (int lead = 0; lead < 256; lead++)
        for (int second = 0; second < 256; second++) {
            size_t nominal = 0, len = 0; /* the lead byte's length; 0 if not well-formed */
            for (size_t r = 0; r < sizeof table / sizeof *table; r++)
                if (lead >= table[r].lead_lo && lead <= table[r].lead_hi) {
                    nominal = table[r].len;
                    if (nominal == 1 || (second >= table[r].second_lo && second <= table[r].second_hi))
                        len = nominal;
                }
            /* lead, second, then continuation bytes up to the lead's length */
            unsigned char bytes[4] = {(unsigned char)lead, (unsigned char)second, 0x80, 0x80};
            size_t n = nominal ? nominal : 2, at, bad_len;
            int rc = utf8_validate((const char *)bytes, n, &at, &bad_len);
            ck_assert_msg(rc == (len ? 0 : -1), "%02x %02x: validator says %d", lead, second, rc);
            if (rc < 0)
                ck_assert_uint_eq(at, 0);
        }
}
END_TEST

Suite *tokenize_suite(void)
{
    Suite *s = suite_create("tokenize");
    TCase *tc = tcase_create("tokenize");
    tcase_add_test(tc, word_tokenizer_splits_punctuation_and_apostrophes);
    tcase_add_test(tc, word_tokenizer_applies_each_rule);
    tcase_add_test(tc, word_tokenizer_lowercases_all_of_unicode);
    tcase_add_test(tc, char_tokenizer_marks_spaces);
    tcase_add_test(tc, natural_detokenizer_inverts_the_tokenizer);
    tcase_add_test(tc, utf8_validator_accepts_valid_text);
    tcase_add_test(tc, utf8_validator_rejects_each_kind_of_bad_sequence);
    tcase_add_test(tc, utf8_validator_follows_the_unicode_table_of_well_formed_sequences);
    suite_add_tcase(s, tc);
    return s;
}
