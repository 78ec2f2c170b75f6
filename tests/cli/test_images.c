/* test_images.c: an image model end to end (issue 28), on a small shapes corpus: training
 * (validation scores its attention against the boxes, dumps and heatmaps name the
 * picture, checkpoints keep the channel means), resuming bit for bit, s2s translate on
 * picture paths, s2s align --ground (its scores recomputed here from its own matrices),
 * and bad pictures and boxes refused before anything is written, naming file and line. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stb/stb_image_write.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "data/ground.h"
#include "data/image.h"
#include "gen/shapes.h"
#include "report/alignlog.h"
#include "report/grounding.h"
#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"
#include "train/checkpoint.h"

/* 16 x 16 pictures through conv blocks of 4 and 8 channels: a 4 x 4 grid of 16 cells */
enum { SIZE = 16, CELLS = 16, HELD_OUT = 6 };
/* attention supervision's test: its steps, the validation mass it must reach, and the
 * largest ratio of the unsupervised run's mass to it (measured 0.297 and 0.206) */
enum { SUPERVISED_STEPS = 60 };
#define SUPERVISED_MASS 0.18
#define SUPERVISED_RATIO 0.6

/* Lines first..first+n-1 (from 1) of from into to. */
static void copy_lines(const char *from, const char *to, int first, int n)
{
    char *text = read_file(from), *at = text;
    for (int k = 1; k < first && at; k++)
        at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL;
    char *end = at;
    for (int k = 0; k < n && end; k++)
        end = strchr(end, '\n') ? strchr(end, '\n') + 1 : NULL;
    ck_assert(at && end);
    *end = '\0';
    write_file(to, at);
    free(text);
}

/* dir/shapes: a shapes corpus of 48 training scenes; dir/shapes/v.* and t.* its first
 * HELD_OUT validation and test scenes; dir/img.yaml a tiny image model trained on them
 * for max_steps steps, run directory dir/run. */
static void write_image_setup(const char *dir, int max_steps)
{
    char shapes[600], from[700], to[700], text[8192], shared[200];
    /* the corpus once per run of the suite (its 1,048 pictures take a while under
     * valgrind; check_main.c removes it at the end), each test's own copy of its text
     * files beside a link to its pictures */
    snprintf(shared, sizeof shared, "/tmp/s2s-test-images-corpus-%ld", (long)getppid());
    Error err;
    snprintf(from, sizeof from, "%s/test.ground", shared);
    if (!path_exists(from))
        ck_assert_msg(shapes_write(shared, 48, 3, NULL, &err) == 0, "%s", err.msg);
    snprintf(shapes, sizeof shapes, "%s/shapes", dir);
    ck_assert(mkdir(shapes, 0777) == 0 || errno == EEXIST);
    snprintf(from, sizeof from, "%s/images", shared);
    snprintf(to, sizeof to, "%s/images", shapes);
    ck_assert(symlink(from, to) == 0 || errno == EEXIST);
    static const char *const split[] = {"train", "valid", "test"};
    static const char *const ext[] = {"src", "tgt", "ground"};
    for (int k = 0; k < 3; k++)
        for (int e = 0; e < 3; e++) {
            snprintf(from, sizeof from, "%s/%s.%s", shared, split[k], ext[e]);
            snprintf(to, sizeof to, "%s/%s.%s", shapes, split[k], ext[e]);
            char *lines = read_file(from);
            write_file(to, lines);
            free(lines);
        }
    for (int e = 0; e < 3; e++) {
        snprintf(from, sizeof from, "%s/valid.%s", shapes, ext[e]);
        snprintf(to, sizeof to, "%s/v.%s", shapes, ext[e]);
        copy_lines(from, to, 1, HELD_OUT);
        snprintf(from, sizeof from, "%s/test.%s", shapes, ext[e]);
        snprintf(to, sizeof to, "%s/t.%s", shapes, ext[e]);
        copy_lines(from, to, 1, HELD_OUT);
    }
    snprintf(to, sizeof to, "%s/img.yaml", dir);
    snprintf(text, sizeof text,
             "name: img\nrun_dir: %s/run\n"
             "data:\n  train_src: %s/train.src\n  train_tgt: %s/train.tgt\n"
             "  train_ground: %s/train.ground\n"
             "  valid_src: %s/v.src\n  valid_tgt: %s/v.tgt\n  valid_ground: %s/v.ground\n"
             "  test_src: %s/t.src\n  test_tgt: %s/t.tgt\n  test_ground: %s/t.ground\n"
             "  image_size: %d\n"
             "model:\n  encoder: image\n  conv_channels: [4, 8]\n  embedding_size: 8\n"
             "  decoder_size: 16\n  attention_size: 8\n  readout_size: 16\n"
             "training:\n  batch_size: 8\n  max_steps: %d\n  epochs: 0\n  valid_every: 10\n"
             "  log_every: 5\n  threads: 1\n  learning_rate: 0.01\n"
             "alignments:\n  every: 10\n  probes: 2\n"
             "translate:\n  beam_size: 2\n  detokenize: false\n",
             dir, shapes, shapes, shapes, shapes, shapes, shapes, shapes, shapes, shapes, SIZE,
             max_steps);
    write_file(to, text);
}

/* s2s train dir/img.yaml with one --set (or none); stderr to dir/err.txt. */
/* s2s train dir/img.yaml with the --set overrides sets (NULL-terminated, up to 4; NULL:
 * none); stderr to dir/err.txt. Returns the exit code. */
static int train_images_with(const char *dir, const char *const *sets)
{
    char config[600], err[600];
    snprintf(config, sizeof config, "%s/img.yaml", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    const char *argv[12] = {S2S, "train", config};
    int a = 3;
    for (int k = 0; sets && sets[k]; k++) {
        ck_assert_int_lt(k, 4);
        argv[a++] = "--set";
        argv[a++] = sets[k];
    }
    argv[a] = NULL;
    return run_command(argv, NULL, err, NULL);
}

/* The same with one override (or none). */
static int train_images(const char *dir, const char *set)
{
    const char *sets[] = {set, NULL};
    return train_images_with(dir, sets);
}

START_TEST(an_image_model_trains_scores_its_attention_and_draws_it_over_the_pictures)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "images-train");
    write_image_setup(dir, 20);
    ck_assert_int_eq(train_images(dir, NULL), 0);
    snprintf(path, sizeof path, "%s/run/train.log", dir);
    char *log = read_file(path);
    ck_assert_msg(strstr(log, "image encoder (2 conv blocks, 4 x 4 grid)"), "%s", log);
    ck_assert_int_eq(count_of(log, " valid_pointing="), 2);
    ck_assert_ptr_nonnull(strstr(log, " test_pointing="));
    free(log);
    snprintf(path, sizeof path, "%s/run/metrics.jsonl", dir);
    char *metrics = read_file(path);
    ck_assert_int_eq(count_of(metrics, "\"valid_mass\":"), 2);
    ck_assert_int_eq(count_of(metrics, "\"test_mass\":"), 1);
    free(metrics);
    /* the dumps: each probe's record names its picture (absolute) and the 16 cells */
    snprintf(path, sizeof path, "%s/run/alignments.jsonl", dir);
    AlignLog dumps;
    Error err;
    ck_assert_msg(alignlog_read(&dumps, path, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(dumps.n, 3 * 2); /* steps 0, 10, 20; two probes */
    for (int k = 0; k < dumps.n; k++) {
        const AlignRecord *r = &dumps.records[k];
        ck_assert_int_eq(r->n_src, CELLS);
        ck_assert_str_eq(r->src[0], "0");
        ck_assert_str_eq(r->src[CELLS - 1], "15");
        ck_assert_msg(r->image && r->image[0] == '/' && strstr(r->image, "/shapes/images/valid-"),
                      "record %d names %s", k, r->image ? r->image : "no picture");
    }
    alignlog_free(&dumps);
    snprintf(path, sizeof path, "%s/run/heatmaps/heatmap-1.svg", dir);
    char *svg = read_file(path);
    ck_assert_int_ge(count_of(svg, "data:image/png;base64,"), 2); /* the picture, overlays */
    free(svg);
    /* the checkpoint keeps the training pictures' channel means */
    Checkpoint ck;
    snprintf(path, sizeof path, "%s/run", dir);
    load_checkpoint(&ck, path, "last.ckpt");
    ck_assert(ck.model.picture_mean[0] > 0 && ck.model.picture_mean[0] < 1);
    checkpoint_free(&ck);
    /* s2s gradcheck on the config: every element of every tensor, on its first pictures */
    char config[600], out[600];
    snprintf(config, sizeof config, "%s/img.yaml", dir);
    snprintf(out, sizeof out, "%s/gradcheck.txt", dir);
    const char *argv[] = {S2S, "gradcheck", config, "--samples", "0", NULL};
    ck_assert_int_eq(run_command(argv, out, NULL, NULL), 0);
    char *said = read_file(out);
    ck_assert_ptr_nonnull(strstr(said, "image encoder (2 conv blocks, 4 x 4 grid)"));
    ck_assert_ptr_nonnull(strstr(said, "  conv1.W             108 "));
    ck_assert_ptr_nonnull(strstr(said, "(tolerance 1e-06): PASSED"));
    free(said);
    /* and with attention supervision, on the pictures' boxes */
    const char *supervised[] = {S2S, "gradcheck", config, "--samples", "0", "--set",
                                "training.attention_supervision=2", NULL};
    ck_assert_int_eq(run_command(supervised, out, NULL, NULL), 0);
    said = read_file(out);
    ck_assert_ptr_nonnull(strstr(said, "attention supervision 2 on the words' boxes in "));
    ck_assert_ptr_nonnull(strstr(said, "(tolerance 1e-06): PASSED"));
    free(said);
}
END_TEST

/* Every score, head count and attention mode, the gate, the doubly stochastic term,
 * attention supervision and self-attention layers train, validate (scoring their attention against the boxes when
 * they have any) and caption the test set on an image model. */
START_TEST(every_attention_trains_on_an_image_model)
{
    static const char *const variants[][5] = {
        {"model.attention=none", NULL},
        {"model.attention=dot", "model.decoder_size=8", NULL},
        {"model.attention=general", "model.attention_heads=2", NULL},
        {"model.attention=scaled_dot", "model.context_gate=true", NULL},
        {"model.attention_mode=hard", "training.hard_warmup_steps=5", NULL},
        {"training.doubly_stochastic=1", "model.decoder_cell=lstm", NULL},
        {"model.self_attention_layers=1", "model.self_attention_heads=2", NULL},
        {"model.grid_positions=false", "model.conv_channels=[8]", "data.image_size=8", NULL},
        {"training.attention_supervision=1", "model.attention_heads=2", NULL},
        {"training.attention_supervision=0.5", "model.attention_mode=hard",
         "training.hard_warmup_steps=5", "training.doubly_stochastic=0.5"},
    };
    char dir[512], config[600], err[600], path[700];
    scratch_dir(dir, sizeof dir, "images-variants");
    snprintf(config, sizeof config, "%s/img.yaml", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        write_image_setup(dir, 12);
        snprintf(path, sizeof path, "%s/run", dir);
        ck_assert_msg(train_images_with(dir, variants[v]) == 0, "%s: %s", variants[v][0],
                      read_file(err));
        snprintf(path, sizeof path, "%s/run/train.log", dir);
        char *log = read_file(path);
        ck_assert_msg(strstr(log, "test (best.ckpt, 6 pairs)"), "%s", variants[v][0]);
        /* a model with attention weights scores them, one without says nothing of it */
        ck_assert_int_eq(count_of(log, " test_pointing="), v == 0 ? 0 : 1);
        free(log);
        snprintf(path, sizeof path, "rm -rf %s/run", dir);
        ck_assert_int_eq(system(path), 0);
    }
}
END_TEST

START_TEST(the_channel_means_are_the_training_pictures_and_a_resume_goes_on_bit_for_bit)
{
    char dir[512], run[600], straight[600], path[800];
    scratch_dir(dir, sizeof dir, "images-resume");
    write_image_setup(dir, 20);
    ck_assert_int_eq(train_images(dir, NULL), 0);
    snprintf(run, sizeof run, "%s/run", dir);
    snprintf(straight, sizeof straight, "%s/straight", dir);
    ck_assert_int_eq(rename(run, straight), 0);
    /* the means, from the pictures themselves */
    double sum[3] = {0, 0, 0};
    float planes[3 * SIZE * SIZE];
    for (int k = 1; k <= 48; k++) {
        ImageSize orig;
        Error err;
        snprintf(path, sizeof path, "%s/shapes/images/train-%d.png", dir, k);
        ck_assert_msg(image_load(planes, path, SIZE, 1, &orig, &err) == 0, "%s", err.msg);
        for (int c = 0; c < 3; c++)
            for (int x = 0; x < SIZE * SIZE; x++)
                sum[c] += planes[c * SIZE * SIZE + x] / (48.0 * SIZE * SIZE);
    }
    Checkpoint ck;
    load_checkpoint(&ck, straight, "last.ckpt");
    for (int c = 0; c < 3; c++)
        ck_assert_double_eq_tol(ck.model.picture_mean[c], sum[c], 1e-12);
    checkpoint_free(&ck);
    /* 10 steps, then a resume to 20: the state of the run straight through */
    ck_assert_int_eq(train_images(dir, "training.max_steps=10"), 0);
    char config[600], err_path[700];
    snprintf(config, sizeof config, "%s/img.yaml", dir);
    snprintf(err_path, sizeof err_path, "%s/err-resume.txt", dir);
    const char *argv[] = {S2S, "train", config, "--resume", run, NULL};
    ck_assert_int_eq(run_command(argv, NULL, err_path, NULL), 0);
    assert_same_training_state(straight, run, "last.ckpt");
}
END_TEST

/* Runs s2s translate in dir/shapes with input on stdin and options; returns the exit. */
static int translate_with(const char *dir, const char *ckpt, const char *input,
                          const char *const *opts, const char *out, const char *err)
{
    char model[600], in_path[600], cwd[600];
    snprintf(model, sizeof model, "%s/run/checkpoints/%s", dir, ckpt);
    snprintf(in_path, sizeof in_path, "%s/in.txt", dir);
    snprintf(cwd, sizeof cwd, "%s/shapes", dir);
    write_file(in_path, input);
    const char *argv[12] = {s2s_absolute(), "translate", "--model", model};
    int a = 4;
    for (int k = 0; opts && opts[k]; k++)
        argv[a++] = opts[k];
    argv[a] = NULL;
    const RunOptions o = {.in_path = in_path, .cwd = cwd};
    return run_command_with(argv, out, err, &o, NULL);
}

static int translate_pictures(const char *dir, const char *input, const char *const *opts,
                              const char *out, const char *err)
{
    return translate_with(dir, "last.ckpt", input, opts, out, err);
}

START_TEST(translate_captions_pictures_and_its_links_name_cells)
{
    char dir[512], out[600], err[600], json[600];
    scratch_dir(dir, sizeof dir, "images-translate");
    write_image_setup(dir, 20);
    ck_assert_int_eq(train_images(dir, NULL), 0);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(json, sizeof json, "%s/a.jsonl", dir);
    const char *opts[] = {"--alignment", "hard", "--out-alignments", json, NULL};
    ck_assert_int_eq(translate_pictures(dir, "images/test-1.png\nimages/test-2.png\n"
                                        "images/none.png\nimages/test-3.png\n", opts, out, err), 0);
    char *text = read_file(out), *errors = read_file(err);
    ck_assert_int_eq(count_of(text, "\n"), 4);
    ck_assert_msg(strstr(errors, "s2s: warning: stdin:3: cannot open image `images/none.png`"), "%s",
                  errors);
    /* every link j-i names one of the 16 cells */
    int lines = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), lines++) {
        char *links = strstr(line, " ||| ");
        ck_assert_ptr_nonnull(links);
        for (char *l = links + 5; *l;) {
            int j, i, used;
            ck_assert_int_eq(sscanf(l, "%d-%d%n", &j, &i, &used), 2);
            ck_assert(j >= 0 && j < CELLS && i >= 0);
            l += used;
            l += *l == ' ';
        }
    }
    ck_assert_int_eq(lines, 3); /* the empty line of the missing picture aside */
    free(text);
    free(errors);
    AlignLog log;
    Error e;
    ck_assert_msg(alignlog_read(&log, json, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(log.n, 3);
    ck_assert_msg(log.records[2].image && strstr(log.records[2].image, "/shapes/images/test-3.png"),
                  "%s", log.records[2].image ? log.records[2].image : "no picture");
    ck_assert_int_eq(log.records[2].id, 4);
    alignlog_free(&log);
    /* one picture alone is captioned as in the batch */
    char alone[600];
    snprintf(alone, sizeof alone, "%s/alone.txt", dir);
    const char *none[] = {NULL};
    ck_assert_int_eq(translate_pictures(dir, "images/test-3.png\n", none, alone, err), 0);
    ck_assert_int_eq(translate_pictures(dir, "images/test-1.png\nimages/test-2.png\n"
                                        "images/none.png\nimages/test-3.png\n", none, out, err), 0);
    char first[400], last[400];
    first_line(alone, first, sizeof first);
    text = read_file(out);
    char *line4 = strrchr(text, '\n');
    *line4 = '\0';
    snprintf(last, sizeof last, "%s", strrchr(text, '\n') + 1);
    ck_assert_str_eq(first, last);
    free(text);
    /* greedy, the test set captioned as training captioned it (the same pictures less the
     * same means, the same model) */
    char path[700];
    snprintf(path, sizeof path, "%s/shapes/t.src", dir);
    char *list = read_file(path);
    const char *greedy[] = {"--beam", "1", NULL};
    ck_assert_int_eq(translate_with(dir, "best.ckpt", list, greedy, out, err), 0);
    free(list);
    snprintf(path, sizeof path, "%s/run/test.hyp", dir);
    char *mine = read_file(out), *trainer = read_file(path);
    ck_assert_int_eq(count_of(mine, "\n"), HELD_OUT);
    ck_assert_str_eq(mine, trainer);
    free(mine);
    free(trainer);
    /* and each picture is what s2s align reads: the first word's attention (from s_0 and
     * <s>, whatever the caption) is the same in both */
    char from_align[700], model[600];
    snprintf(path, sizeof path, "%s/shapes/t.src", dir);
    list = read_file(path);
    const char *greedy_json[] = {"--beam", "1", "--out-alignments", json, NULL};
    ck_assert_int_eq(translate_with(dir, "best.ckpt", list, greedy_json, out, err), 0);
    free(list);
    snprintf(from_align, sizeof from_align, "%s/align.jsonl", dir);
    snprintf(model, sizeof model, "%s/run/checkpoints/best.ckpt", dir);
    const char *argv[] = {s2s_absolute(), "align", "--model", model, "--src", "t.src", "--tgt",
                          "t.tgt", "--out", from_align, NULL};
    char shapes[600];
    snprintf(shapes, sizeof shapes, "%s/shapes", dir);
    const RunOptions o = {.cwd = shapes};
    ck_assert_int_eq(run_command_with(argv, NULL, err, &o, NULL), 0);
    AlignLog a, b;
    ck_assert_msg(alignlog_read(&a, json, &e) == 0, "%s", e.msg);
    ck_assert_msg(alignlog_read(&b, from_align, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(a.n, HELD_OUT);
    ck_assert_int_eq(b.n, HELD_OUT);
    double worst = 0;
    for (int k = 0; k < HELD_OUT; k++)
        for (int j = 0; j < CELLS; j++)
            worst = fmax(worst, fabs(a.records[k].weights[j] - b.records[k].weights[j]));
    ck_assert_double_le(worst, 1e-5);
    alignlog_free(&a);
    alignlog_free(&b);
    /* s2s explain works one step out over the picture's cells */
    char explained[600], in_path[600];
    snprintf(explained, sizeof explained, "%s/explain.txt", dir);
    snprintf(in_path, sizeof in_path, "%s/one.txt", dir);
    write_file(in_path, "images/test-1.png\n");
    const char *explain[] = {s2s_absolute(), "explain", "--model", model, "--step", "2", NULL};
    const RunOptions in_shapes = {.cwd = shapes, .in_path = in_path};
    ck_assert_int_eq(run_command_with(explain, explained, err, &in_shapes, NULL), 0);
    char source[200];
    first_line(explained, source, sizeof source);
    ck_assert_str_eq(source, "source: the picture images/test-1.png, seen as a 4 x 4 grid of 16 "
                             "cells (cell j: row j / 4, column j % 4, from 0)");
    text = read_file(explained);
    /* the rows are cells named by their place, and the weights are laid out as the grid
     * over the picture, every cell shown (issue 41: they were "source words", cut to 8) */
    ck_assert_ptr_nonnull(strstr(text, "H = h_1 .. h_S    16 x 8: one row per grid cell,"));
    ck_assert_ptr_nonnull(strstr(text, "\n    6 (1,2)   "));
    const char *alpha = strstr(text, "alpha_ij = softmax_j(e_ij)    16: one value per grid cell "
                                     "(laid out below as the 4 x 4 grid over the picture)");
    ck_assert_ptr_nonnull(alpha);
    const char *grid = strstr(alpha, "          column          0          1          2          3\n"
                                     "    row 0    ");
    ck_assert_ptr_nonnull(grid);
    double sum = 0;
    const char *row = grid;
    for (int y = 0; y < 4; y++) {
        char want[16];
        snprintf(want, sizeof want, "    row %d ", y);
        row = strstr(row, want);
        ck_assert_ptr_nonnull(row);
        double v[4];
        ck_assert_int_eq(sscanf(row + strlen(want), "%lf %lf %lf %lf", v, v + 1, v + 2, v + 3), 4);
        sum += v[0] + v[1] + v[2] + v[3];
        row++;
    }
    ck_assert_double_eq_tol(sum, 1, 1e-3); /* the 16 weights, all there */
    free(text);
    /* the page draws the weights over the picture, as the heatmaps do */
    const char *html[] = {s2s_absolute(), "explain", "--model", model, "--step", "2", "--format",
                          "html", NULL};
    ck_assert_int_eq(run_command_with(html, explained, err, &in_shapes, NULL), 0);
    text = read_file(explained);
    ck_assert_ptr_nonnull(strstr(text, "seen as a 4 x 4 grid of 16 cells"));
    ck_assert_ptr_nonnull(strstr(text, "(drawn as the 4 x 4 grid over the picture)"));
    ck_assert_ptr_nonnull(strstr(text, "data:image/png;base64,"));
    ck_assert_ptr_nonnull(strstr(text, "most attended cell"));
    free(text);
    const char *as_json[] = {s2s_absolute(), "explain", "--model", model, "--format", "json",
                             NULL};
    ck_assert_int_eq(run_command_with(as_json, explained, err, &in_shapes, NULL), 0);
    text = read_file(explained);
    ck_assert_ptr_nonnull(strstr(text, "\"picture\":\"images/test-1.png\",\"grid\":4,"));
    free(text);
}
END_TEST

START_TEST(align_scores_the_attention_it_writes_against_the_boxes)
{
    char dir[512], model[600], shapes[600], err[600], json[600], ground[700];
    scratch_dir(dir, sizeof dir, "images-align");
    write_image_setup(dir, 20);
    ck_assert_int_eq(train_images(dir, NULL), 0);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(shapes, sizeof shapes, "%s/shapes", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(json, sizeof json, "%s/a.jsonl", dir);
    snprintf(ground, sizeof ground, "%s/test.ground", shapes);
    const char *argv[] = {s2s_absolute(), "align", "--model", model, "--src", "test.src", "--tgt",
                          "test.tgt", "--ground", "test.ground", "--out", json, NULL};
    const RunOptions o = {.cwd = shapes};
    ck_assert_int_eq(run_command_with(argv, NULL, err, &o, NULL), 0);
    char said[200];
    first_line(err, said, sizeof said);
    /* the same scores from the matrices it wrote and the boxes */
    AlignLog log;
    GroundFile boxes;
    Error e;
    ck_assert_msg(alignlog_read(&log, json, &e) == 0, "%s", e.msg);
    ck_assert_msg(ground_read(&boxes, ground, 1 << 20, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(log.n, 500);
    GroundingCounts c = {0};
    for (int k = 0; k < log.n; k++) {
        const AlignRecord *r = &log.records[k];
        int n;
        const GroundBox *b = ground_line(&boxes, r->id, &n);
        ck_assert_int_eq(n, r->n_tgt - 1);
        grounding_add(&c, r->weights, r->n_src, 1, 4, b, n, (ImageSize){64, 64});
    }
    char expected[200];
    grounding_format(&c, expected, sizeof expected);
    ck_assert_str_eq(said, expected);
    ck_assert_int_gt(c.words, 1000);
    alignlog_free(&log);
    ground_free(&boxes);
}
END_TEST

/* The number after the last `key` in text. */
static double last_value(const char *text, const char *key)
{
    const char *last = NULL;
    for (const char *at = strstr(text, key); at; at = strstr(at + 1, key))
        last = at;
    ck_assert_msg(last, "no %s in %s", key, text);
    return strtod(last + strlen(key), NULL);
}

/* Attention supervision teaches the attention where each word's object is: after the same
 * steps from the same start, the validation captions' attention on their boxes is far
 * above the unsupervised run's. A batch whose cells came from other pairs than its
 * captions (filled before the sort, or by column instead of by pair) would teach the
 * wrong places, and its mass would not rise. */
START_TEST(attention_supervision_puts_the_attention_on_the_boxes)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "images-supervised");
    double mass[2];
    for (int k = 0; k < 2; k++) {
        write_image_setup(dir, SUPERVISED_STEPS);
        const char *sets[] = {k ? "training.attention_supervision=2" : NULL, NULL};
        ck_assert_int_eq(train_images_with(dir, sets), 0);
        snprintf(path, sizeof path, "%s/run/train.log", dir);
        char *log = read_file(path);
        mass[k] = last_value(log, " valid_mass=");
        free(log);
        snprintf(path, sizeof path, "rm -rf %s/run", dir);
        ck_assert_int_eq(system(path), 0);
    }
    printf("outcome attention supervision: ratio %.3f (bar %g) of the valid mass without it, "
           "%.4f, to the mass with it, %.4f (at least %g), after %d steps\n", mass[0] / mass[1],
           SUPERVISED_RATIO, mass[0], mass[1], SUPERVISED_MASS, SUPERVISED_STEPS);
    ck_assert_double_ge(mass[1], SUPERVISED_MASS);
    ck_assert_double_le(mass[0] / mass[1], SUPERVISED_RATIO);
}
END_TEST

/* s2s train dir/img.yaml with the --set overrides (NULL-terminated, up to 4) must exit 2
 * before writing anything, its first line of stderr holding expected. */
static void assert_refused(const char *dir, const char *const *sets, const char *expected)
{
    char run[600], err[600], line[1200];
    snprintf(err, sizeof err, "%s/err.txt", dir);
    ck_assert_int_eq(train_images_with(dir, sets), 2);
    snprintf(run, sizeof run, "%s/run", dir);
    ck_assert_msg(!path_exists(run), "a refused run created %s", run);
    first_line(err, line, sizeof line);
    ck_assert_msg(strstr(line, expected), "expected \"%s\" in: %s", expected, line);
}

/* A PNG header of w x h pixels and nothing after it. */
static void write_png_header(const char *path, unsigned w, unsigned h)
{
    unsigned char b[33] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    for (int k = 0; k < 4; k++) {
        b[16 + k] = (unsigned char)(w >> (24 - 8 * k));
        b[20 + k] = (unsigned char)(h >> (24 - 8 * k));
    }
    b[24] = 8, b[25] = 2; /* 8 bits, RGB */
    FILE *f = fopen(path, "wb");
    ck_assert(f && fwrite(b, 1, sizeof b, f) == sizeof b && fclose(f) == 0);
}

/* The first n bytes of from into to: a picture cut short. */
static void write_cut(const char *from, const char *to, size_t n)
{
    unsigned char b[256];
    FILE *f = fopen(from, "rb");
    ck_assert(f && n <= sizeof b && fread(b, 1, n, f) == n && fclose(f) == 0);
    f = fopen(to, "wb");
    ck_assert(f && fwrite(b, 1, n, f) == n && fclose(f) == 0);
}

START_TEST(bad_pictures_and_boxes_stop_training_before_anything_is_written)
{
    char dir[512], shapes[600], path[800], list[800], captions[800], expected[2048];
    scratch_dir(dir, sizeof dir, "images-bad");
    write_image_setup(dir, 2);
    snprintf(shapes, sizeof shapes, "%s/shapes", dir);
    /* a training list whose line 2 names each bad picture in turn */
    enum { MISSING, TEXT, ZERO, HUGE, CUT, N_BAD };
    static const char *const name[N_BAD] = {"none.png", "text.png", "zero.ppm", "huge.png", "cut.png"};
    snprintf(path, sizeof path, "%s/text.png", shapes);
    write_file(path, "not a picture\n");
    snprintf(path, sizeof path, "%s/zero.ppm", shapes);
    write_file(path, "P6\n0 4\n255\n");
    snprintf(path, sizeof path, "%s/huge.png", shapes);
    write_png_header(path, 100000, 100000);
    snprintf(list, sizeof list, "%s/images/train-1.png", shapes);
    snprintf(path, sizeof path, "%s/cut.png", shapes);
    write_cut(list, path, 120); /* the header whole, the pixels cut */
    snprintf(captions, sizeof captions, "%s/two.tgt", shapes);
    write_file(captions, "a small red square .\na small red square .\n");
    for (int k = 0; k < N_BAD; k++) {
        char text[200], src_set[900], tgt_set[900];
        snprintf(list, sizeof list, "%s/two.src", shapes);
        snprintf(text, sizeof text, "images/train-1.png\n%s\n", name[k]);
        write_file(list, text);
        snprintf(src_set, sizeof src_set, "data.train_src=%s", list);
        snprintf(tgt_set, sizeof tgt_set, "data.train_tgt=%s", captions);
        const char *sets[] = {src_set, tgt_set, "data.train_ground=", NULL};
        snprintf(path, sizeof path, "%s/%s", shapes, name[k]);
        const char *says = k == MISSING ? "cannot open image `%s`"
                         : k == TEXT    ? "%s: not an image (expected PNG, JPEG or PPM/PGM)"
                         : k == ZERO    ? "%s: 0 x 4 pixels (expected at least 1 x 1)"
                         : k == HUGE    ? "%s: 100000 x 100000 pixels, more than 16384 on a side"
                                        : "%s: cannot decode";
        char what[1000];
        snprintf(what, sizeof what, says, path);
        snprintf(expected, sizeof expected, "%s:2: %s", list, what);
        assert_refused(dir, sets, expected);
    }
    /* boxes: a line of the wrong length, a box outside the picture */
    snprintf(path, sizeof path, "%s/v.ground", shapes);
    char *ground = read_file(path);
    char *second = strchr(ground, '\n') + 1;
    strcpy(strchr(second, ' '), "\n"); /* line 2 keeps its first field only */
    write_file(path, ground);
    free(ground);
    snprintf(expected, sizeof expected, "%s:2: 1 field, expected", path);
    assert_refused(dir, NULL, expected);
    write_image_setup(dir, 2);
    snprintf(path, sizeof path, "%s/t.src", shapes);
    write_file(path, "images/test-1.png\n");
    snprintf(path, sizeof path, "%s/t.tgt", shapes);
    write_file(path, "a big red\n");
    snprintf(path, sizeof path, "%s/t.ground", shapes);
    write_file(path, "- 0,0,70,10 0,0,6,6\n");
    snprintf(expected, sizeof expected, "%s:1: field 2: box 0,0,70,10 outside the 64 x 64 image",
             path);
    assert_refused(dir, NULL, expected);
    /* attention supervision without the training boxes it learns from */
    write_image_setup(dir, 2);
    const char *unsupervised[] = {"training.attention_supervision=1", "data.train_ground=", NULL};
    assert_refused(dir, unsupervised, "training.attention_supervision: needs data.train_ground, "
                   "the training captions' word boxes");
    /* pictures of another size than data.image_size, with resizing off */
    write_image_setup(dir, 2);
    snprintf(expected, sizeof expected, "%s/train.src:1: %s/images/train-1.png: 64 x 64 pixels, "
             "not 16 x 16 (data.image_resize: false)", shapes, shapes);
    const char *no_resize[] = {"data.image_resize=false", NULL};
    assert_refused(dir, no_resize, expected);
}
END_TEST

/* A signal while the training pictures are decoded (issue 41: SIGTERM waited for all
 * 300 of them, then named the validation list) stops the decoding at the next picture,
 * naming the list and the line it stopped at; nothing is written. */
START_TEST(a_signal_stops_the_decoding_of_the_pictures_at_the_line_it_reached)
{
    char dir[512], shapes[600], big[700], list[700], captions[700], err[700];
    scratch_dir(dir, sizeof dir, "images-signal");
    write_image_setup(dir, 2);
    snprintf(shapes, sizeof shapes, "%s/shapes", dir);
    /* a picture of 2000 x 2000 pixels takes a tenth of a second or so to decode: 400 of
     * them, 40 s */
    enum { SIDE = 2000, LINES = 400 };
    unsigned char *rgb = malloc((size_t)SIDE * SIDE * 3);
    for (size_t k = 0; k < (size_t)SIDE * SIDE * 3; k++)
        rgb[k] = (unsigned char)(k * 7 + k / 4093);
    snprintf(big, sizeof big, "%s/big.png", shapes);
    ck_assert(stbi_write_png(big, SIDE, SIDE, 3, rgb, SIDE * 3));
    free(rgb);
    size_t cap = (size_t)LINES * 40, used = 0;
    char *src = malloc(cap), *tgt = malloc(cap);
    for (int k = 0; k < LINES; k++)
        used += (size_t)snprintf(src + used, cap - used, "big.png\n");
    used = 0;
    for (int k = 0; k < LINES; k++)
        used += (size_t)snprintf(tgt + used, cap - used, "a small red square .\n");
    snprintf(list, sizeof list, "%s/big.src", shapes);
    write_file(list, src);
    snprintf(captions, sizeof captions, "%s/big.tgt", shapes);
    write_file(captions, tgt);
    free(src);
    free(tgt);
    char set_src[800], set_tgt[800], config[600];
    snprintf(set_src, sizeof set_src, "data.train_src=%s", list);
    snprintf(set_tgt, sizeof set_tgt, "data.train_tgt=%s", captions);
    snprintf(config, sizeof config, "%s/img.yaml", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    const char *argv[] = {S2S, "train", config, "--set", set_src, "--set", set_tgt,
                          "--set", "data.train_ground=", NULL};
    pid_t pid = start_command(argv, NULL, err, NULL);
    /* the picture open: its header checked or its pixels decoded; the 400 headers take
     * milliseconds, so two seconds later it decodes (valgrind: under a second more) */
    ck_assert_int_eq(wait_for_open_file(pid, big, 60), 0);
    struct timespec pause = {2, 0};
    nanosleep(&pause, NULL);
    kill(pid, SIGTERM);
    ck_assert_int_eq(wait_command(pid, 60), 128 + SIGTERM);
    char line[1200], want[900];
    first_line(err, line, sizeof line);
    int at = 0, decoded = -1, of = 0, signal_no = 0;
    snprintf(want, sizeof want, "s2s: %s:%%d: decoding the pictures stopped by signal %%d "
             "(%%d of %%d decoded); nothing was written", list);
    ck_assert_msg(sscanf(line, want, &at, &signal_no, &decoded, &of) == 4, "%s", line);
    ck_assert_int_eq(signal_no, SIGTERM);
    ck_assert_int_eq(of, LINES);
    ck_assert_int_eq(at, decoded + 1);
    ck_assert_msg(decoded < LINES, "the decoding went on to the end: %s", line);
    char run[600];
    snprintf(run, sizeof run, "%s/run", dir);
    ck_assert(!path_exists(run));
}
END_TEST

Suite *images_suite(void)
{
    Suite *s = suite_create("images");
    TCase *tc = tcase_create("end to end");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, an_image_model_trains_scores_its_attention_and_draws_it_over_the_pictures);
    tcase_add_test(tc, bad_pictures_and_boxes_stop_training_before_anything_is_written);
    tcase_add_test(tc, a_signal_stops_the_decoding_of_the_pictures_at_the_line_it_reached);
    suite_add_tcase(s, tc);
    /* many trainings, or 500 pictures decoded: minutes each under valgrind (make valgrind
     * leaves them to make test and make asan; the case above covers its code paths) */
    TCase *more = tcase_create("more");
    tcase_set_timeout(more, 600);
    tcase_set_tags(more, "slow");
    tcase_add_test(more, every_attention_trains_on_an_image_model);
    tcase_add_test(more, the_channel_means_are_the_training_pictures_and_a_resume_goes_on_bit_for_bit);
    tcase_add_test(more, translate_captions_pictures_and_its_links_name_cells);
    tcase_add_test(more, align_scores_the_attention_it_writes_against_the_boxes);
    suite_add_tcase(s, more);
    /* a training outcome: checked under each family of OpenBLAS kernels (run-checks.py) */
    TCase *outcome = tcase_create("outcome");
    tcase_set_timeout(outcome, 600);
    tcase_set_tags(outcome, "slow outcome");
    tcase_add_test(outcome, attention_supervision_puts_the_attention_on_the_boxes);
    suite_add_tcase(s, outcome);
    return s;
}
