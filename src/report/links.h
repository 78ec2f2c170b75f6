/* links.h: attention matrices as alignments: hard links from the weights (argmax
 * per target word, or every weight above a threshold; </s> left out on both sides),
 * attention entropy, and the JSONL dump format of cli/INTERFACE.md:
 *   {"step":..,"epoch":..,"id":..,"src":[..],"tgt":[..],"weights":[[..],..]}
 * with one row per target token (</s> included), one column per source token ("epoch"
 * only in training's dumps), and "heads" and "self" when the model has them
 * (AlignExtras). */
#ifndef S2S_LINKS_H
#define S2S_LINKS_H

#include <stdio.h>

#include "base/error.h"
#include "data/corpus.h"
#include "model/model.h"
#include "report/metrics.h"

/* The weights of one sentence: rows (target tokens, </s> included) of cols (source
 * tokens, </s> included) values; weight(i, j) = w[i * row_stride + j * col_stride]. With
 * grid set, the columns are an image's grid cells, every one of them real (no source
 * </s> to leave out of links). */
typedef struct {
    const float *w;
    int rows, cols;
    long row_stride, col_stride;
    int grid;
} AttnMatrix;

static inline float attn_at(const AttnMatrix *m, int i, int j)
{
    return m->w[(long)i * m->row_stride + (long)j * m->col_stride];
}

/* Hard links of m: for every target word (the </s> row excluded), the source word (or
 * grid cell) it attends to most, or with threshold > 0 every source word above it; links
 * to the source </s> are left out. Returns the number of links written (at most cap). */
int align_hard_links(const AttnMatrix *m, float threshold, Link *out, int cap);
/* Links between tokens to links between the words they are part of (src_word, tgt_word:
 * each token's word), in place: word j' and word i' are linked when any token of one is
 * linked to any token of the other. Sorted by target word, then source word, each once;
 * returns their number (<= n). */
int align_links_to_words(Link *links, int n, const int *src_word, const int *tgt_word);

/* Sum over the rows of m of the entropy (in nats) of the row's distribution. */
double align_entropy_sum(const AttnMatrix *m);

/* What a record may carry beside the alignment: each head's weights (a multi-head
 * model's; the alignment is their mean), and each self-attention layer's source-by-source
 * weights (the mean of its heads). */
typedef struct {
    const AttnMatrix *heads; /* n_heads matrices of the alignment's shape */
    int n_heads;
    const AttnMatrix *self;  /* n_self matrices, source by source */
    int n_self;
    /* a pass with hard (argmax or sampled) contexts: the position each of n_chosen heads
     * read at target step i, chosen[i * chosen_stride + k] (n_chosen 0: none) */
    const int *chosen;
    int n_chosen;
    long chosen_stride;
    const char *image;       /* an image model's record: its picture's path ("image") */
    /* a Transformer decoder's: each layer's cross-attention, head by head (n_layers *
     * layer_heads matrices of the alignment's shape, layer-major; the alignment is the
     * last layer's heads' mean), and each layer's masked self-attention (the heads' mean),
     * target by target */
    const AttnMatrix *layers;
    int n_layers, layer_heads;
    const AttnMatrix *dec_self;
    int n_dec_self;
} AlignExtras;

/* Room for the matrices a pass's extras point at. */
typedef struct {
    AttnMatrix heads[ATTN_MAX_HEADS], self[SA_MAX_LAYERS];
    AttnMatrix layers[DEC_MAX_LAYERS * ATTN_MAX_HEADS], dec_self[DEC_MAX_LAYERS];
} AlignExtraRoom;

/* Sentence b's alignment (rows target tokens, cols source tokens) after a teacher-
 * forced pass over a batch (model_forward), pointing into ws. */
AttnMatrix align_of_pass(const Workspace *ws, int b, int rows, int cols);
/* The same pass's extras for sentence b, their matrices in room: each head (a multi-head
 * model's), each self-attention layer, the chosen positions of a pass with hard
 * contexts, and a Transformer decoder's layers. */
AlignExtras align_extras_of_pass(const Workspace *ws, int b, int rows, int cols,
                                 AlignExtraRoom *room);

/* One line of alignments.jsonl (and of `s2s align --out`, `s2s translate
 * --out-alignments`). src and tgt are the tokens, with "</s>" as the last of each. An
 * epoch < 0 is none, and leaves the key out: outside training there is no epoch to tell
 * (the step is then the model's). extra (may be NULL) adds "heads": [H x T x S] when it
 * has more than one head, "self": [L x S x S] when it has layers, "chosen": [T x H]
 * when it has chosen positions and "image": the picture's path for an image model. Returns 0, or -1 on
 * a write error. */
int align_write_json(FILE *f, long step, double epoch, long id, const char *const *src,
                     const char *const *tgt, const AttnMatrix *m, const AlignExtras *extra);

/* `,"chosen":[[j,..],..]`: rows lists of heads positions, row i's head k at
 * chosen[i * stride + k] (alignments.jsonl's field, and the report's). */
void align_write_chosen(FILE *f, const int *chosen, int rows, int heads, long stride);

/* Pharaoh text of links: "j-i j-i ...". */
void align_format_links(const Link *links, int n, char *out, size_t cap);

/* Gold alignments of a corpus's pairs, read from a Pharaoh file line-aligned with the
 * corpus's files (pair k is line c->line_no[k]). */
typedef struct {
    Link *links;
    int *start, *count; /* pair k: links[start[k] .. start[k] + count[k]) */
    int n;
} GoldAlignments;

/* Reads path for the pairs of c: one line per line of c's files (c->counts.lines), in
 * memory bounded by c (lines over max_line_bytes, data.max_line_bytes, are refused, and
 * so is a line past c's last). Checks every link against the pair's lengths: in tokens,
 * or with by_words in words (c read with keep_words: links between words). Returns 0,
 * or -1 with err = "path:line:col: ..." (textfile.h's messages for lines that are not
 * text). gold_free is safe either way. */
int gold_read(GoldAlignments *g, const char *path, const Corpus *c, int by_words,
              size_t max_line_bytes, Error *err);
void gold_free(GoldAlignments *g);

#endif
