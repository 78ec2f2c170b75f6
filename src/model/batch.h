/* batch.h: padded, time-major batches of token ids, the one input format of the model.
 * A batch is filled from B sentence pairs of ids (without </s>): the source gets </s>
 * appended, the decoder input is <s> y_1..y_n and its output y_1..y_n </s>; every
 * column is padded with TOK_PAD to the batch's longest sentence. Memory is sized once
 * for the largest batch; filling never allocates. */
#ifndef S2S_BATCH_H
#define S2S_BATCH_H

/* Special token ids, the same on both sides; vocabularies put these words first. */
enum { TOK_PAD = 0, TOK_UNK = 1, TOK_BOS = 2, TOK_EOS = 3, N_SPECIAL_TOKENS = 4 };

typedef struct Batch {
    int batch_size;    /* B: sentence pairs */
    int src_steps;     /* S: longest source, </s> included */
    int tgt_steps;     /* T: longest target, </s> included (0 for source-only batches) */
    int *src;          /* (S, B): src[j * B + b] */
    int *src_len;      /* (B): real source positions, </s> included */
    int *tgt_in;       /* (T, B): y_{i-1}, with y_0 = <s> */
    int *tgt_out;      /* (T, B): y_i, the last real one </s> */
    int *tgt_len;      /* (B): real target positions, </s> included */
    int n_src_tokens;  /* sum of src_len */
    int n_tgt_tokens;  /* sum of tgt_len: the loss's denominator */
    int max_batch, max_src_steps, max_tgt_steps; /* capacity */
    /* an image model's sources (batch_init_pictures): each pair's picture, (B, N, N, 3)
     * channels last with N = picture_size, as floats whatever the core's precision; the
     * token ids then hold TOK_UNK at each of the S grid cells (nothing reads them) */
    float *pixels, *pixel_scratch;
    int picture_size;
    int *pair;         /* (B): the pair of its corpus each column holds (corpus_batch; batch_fill
                        * writes 0 .. B-1), moved by batch_sort_by_target */
    /* the caption words' grid cells (batch_init_ground), for training.attention_supervision:
     * ground[(i * B + b) * ground_cells + j] is 1 when pair b's word at step i names an
     * object over cell j (report/grounding.h's rule), and 0 for every cell of a word that
     * names nothing and of </s>; the caller writes it, and batch_sort_by_target moves it */
    unsigned char *ground;
    int ground_cells;
    int *scratch;      /* (max(S, T) * B + B) for batch_sort_by_target */
    /* (max_batch) scratch of callers that gather pairs from their own storage: each
     * pair's ids and lengths, as batch_fill reads them (corpus_batch) */
    const int **pair_src, **pair_tgt;
    int *pair_src_n, *pair_tgt_n;
} Batch;

/* Allocates room for up to max_batch pairs of up to max_src_steps / max_tgt_steps
 * positions (</s> included). batch_free on a zeroed Batch is safe. */
void batch_init(Batch *batch, int max_batch, int max_src_steps, int max_tgt_steps);
void batch_free(Batch *batch);
/* Gives the batch room for its pairs' pictures, size x size pixels each (the caller
 * writes them: pair b's at pixels + b * size * size * 3). */
void batch_init_pictures(Batch *batch, int size);
/* Fills an image model's batch from n captions as batch_fill does, with `cells` source
 * positions each (no </s>: a picture's source is its grid). The pictures are the
 * caller's to write, before or after, in the same order (batch_sort_by_target moves them
 * with their captions). */
void batch_fill_pictures(Batch *batch, int n, int cells, const int *const *tgt, const int *tgt_n);
/* Gives the batch room for its captions' word cells on a grid of cells positions. */
void batch_init_ground(Batch *batch, int cells);

/* Fills the batch from n pairs: src[b] has src_n[b] >= 0 ids, tgt[b] tgt_n[b] ids
 * (no </s>, no <s>). tgt may be NULL for a source-only batch (T = 0). Asserts that
 * the pairs fit the capacity. */
void batch_fill(Batch *batch, int n, const int *const *src, const int *src_n,
                const int *const *tgt, const int *tgt_n);

/* Reorders the pairs of the batch by target length, longest first (ties keep their
 * order). The loss and the gradients do not depend on the order; the model then skips
 * the decoder steps of sentences that have ended. */
void batch_sort_by_target(Batch *batch);
/* Fills shard with columns k, k + n, k + 2n, ... of whole (n shards, k < n): their
 * ids, lengths, pictures, pairs and word cells, padded to the shard's own longest
 * sentences. Taken from a batch sorted by target length, each shard is sorted too and
 * the n shards' work is nearly equal. The shard needs room for ceil(B / n) columns of
 * whole's lengths, and pictures and cells when whole has them. Returns its columns
 * (0 when whole has k or fewer). */
int batch_take_shard(Batch *shard, const Batch *whole, int k, int n);

/* 1 when the target lengths fall from first to last, as batch_sort_by_target leaves them. */
int batch_is_sorted_by_target(const Batch *batch);

#endif
