/* attention.h: the attention of model/MODEL.md behind one interface for every score:
 * which tensors a score has (it carves them), what it computes once per batch (the
 * keys: the part of the score that depends on h_j alone), and one decoder step forward
 * and backward, from s_{i-1} to the weights alpha_i and the context c_i. The model,
 * greedy decoding and beam search call only these; no score is named outside
 * attention.c. Built from the kernels of attn_kernels.h.
 *
 * Layouts as in attn_kernels.h: source-side matrices are (S, B, width), row j * B + b;
 * len (B) gives each row's real positions, and a row of length 0 is left out of a step
 * (sorted batches stop computing ended sentences). */
#ifndef S2S_ATTENTION_H
#define S2S_ATTENTION_H

#include "nn/real.h"
#include "nn/tensor.h"

/* The score e_ij (config model.attention). */
typedef enum { SCORE_ADDITIVE, SCORE_DOT, SCORE_GENERAL, SCORE_SCALED_DOT, SCORE_NONE } ScoreKind;
#define N_SCORES 5
/* Heads at most, of the attention and of a self-attention layer (the config's limit;
 * the commands that list heads size their arrays by it). */
#define ATTN_MAX_HEADS 64

/* The scores' names in ScoreKind order, NULL-terminated: the one list that the config,
 * the log and the checks use. */
extern const char *const score_names[N_SCORES + 1];

typedef struct {
    ScoreKind score;
    int query_width; /* p: the decoder state s_{i-1} */
    int value_width; /* d_h: the annotations h_j, and the context */
    int attn;        /* a: the additive and scaled dot scores' width */
    int heads;       /* H >= 1: each scores its own slices (see attn_size_problems) */
} AttnDims;

/* A score's tensors; those it does not have stay NULL. */
typedef struct {
    real *W_a, *U_a, *b_a, *v_a; /* additive: (a, p), (a, d_h), (a), (a) */
    real *W_g;                   /* general: (p, d_h) */
    real *W_q, *W_k;             /* scaled_dot: (a, p), (a, d_h) */
} AttnParams;

/* Carves the score's tensors (names of model/MODEL.md) into p. */
void attn_carve(AttnParams *p, TensorCarver *c, const AttnDims *d);

/* What keeps the score from working with these sizes, as flags (0: nothing): the dot
 * score needs the decoder state as wide as the annotations (ATTN_DOT_WIDTHS), and H
 * heads need H equal slices of every vector they split -- the annotations (d_h), a for
 * additive and scaled_dot, p for general. */
enum { ATTN_DOT_WIDTHS = 1, ATTN_SPLIT_VALUES = 2, ATTN_SPLIT_ATTN = 4, ATTN_SPLIT_QUERY = 8 };
int attn_size_problems(const AttnDims *d);
/* 0 for score none, which has no weights: no alignments to show. */
int attn_has_weights(const AttnDims *d);
/* Widths of the buffers a caller keeps for the attention: the keys, once per batch
 * (S*B rows; 0: the score reads h_j itself, or nothing), the query of a step (one row
 * per decoder row; 0: none), and the additive score's tanh layer of a step (S*B rows;
 * 0: none). */
int attn_key_width(const AttnDims *d);
int attn_query_width(const AttnDims *d);
int attn_pre_width(const AttnDims *d);

/* keys (S*B, K) from the annotations H (S*B, d_h): once per batch. */
void attn_keys_forward(real *keys, const AttnParams *P, const AttnDims *d, const real *H, int SB);
/* Backward of attn_keys_forward: accumulates dH and the weights' gradients into G from
 * d_keys, the keys' gradient summed over every step. */
void attn_keys_backward(real *dH, AttnParams *G, const real *d_keys, const real *H,
                        const AttnParams *P, const AttnDims *d, int SB);

/* Hard attention (model/MODEL.md, "Hard attention"): the rows of a step whose heads each
 * read one chosen position h_j[k] instead of the weighted sum. */
typedef struct {
    const unsigned char *hard; /* (B) 1: the row chooses; 0: the expected context */
    const int *soft_len;       /* (B) len with the choosing rows' set to 0 (what the
                                * weighted sum reads) */
    const double *draw;        /* (B, H) uniform draws in [0, 1): sample j with probability
                                * alpha^k_j; NULL: the most probable j (argmax) */
    int given;                 /* 1: chosen already holds the positions (read, not written) */
    int *chosen;               /* (B, H) each head's position in a choosing row, -1 in
                                * the others (rows past `rows` included) */
} AttnChoice;

/* What one step reads. */
typedef struct {
    const real *s_prev;  /* (rows, p) s_{i-1} */
    const real *H;       /* (S*B, d_h) annotations */
    const real *keys;    /* (S*B, K) from attn_keys_forward */
    const real *summary; /* (B, d_h) score none's fixed context, the encoder's */
    const int *len;      /* (B) real positions; 0 for rows left out */
    int S, B, rows;      /* the first `rows` of the B rows take part */
    const AttnChoice *choice; /* NULL: every row's context is the expected one (soft) */
    const real *query_panels; /* NULL, or the query's weights (W_a or W_q) packed for
                               * linear_forward_packed (decoding's, decode/decode.h): then
                               * the query and every score are summed row by row in one
                               * order, whatever the rows beside it, so that rows may leave */
} AttnInput;

/* What one step writes, and its scratch. */
typedef struct {
    real *c;      /* (rows, d_h) the context [c^1 ; ... ; c^H], row stride ld_c */
    int ld_c;
    real *alpha;  /* (H, S*B) each head's weights (not written for score none) */
    real *mean;   /* (S*B) their mean, the alignment (written when H > 1 and not NULL;
                   * with one head alpha is the alignment) */
    real *scores; /* (S*B) scratch: one head's e_ij */
    real *query;  /* (rows, query width) */
    real *pre;    /* (S*B, pre width) */
    real *kept_scores; /* (H, S*B) each head's e_ij, kept for s2s explain; NULL: not kept */
} AttnStep;

/* One decoder step: from s_{i-1} to alpha_i and c_i. Overwrites out's buffers. With
 * in->choice, its choosing rows read one position per head (and write in->choice->chosen
 * unless given). */
void attn_step_forward(AttnStep *out, const AttnParams *P, const AttnDims *d, const AttnInput *in);

/* The gradients one step's backward writes into. */
typedef struct {
    real *ds_prev;   /* (rows, p): accumulated */
    real *dquery;    /* (rows, query width): overwritten (summed into the weights by
                      * attn_queries_backward once every step is done) */
    real *dH;        /* (S*B, d_h): accumulated */
    real *dkeys;     /* (S*B, K): accumulated */
    real *dsummary;  /* (B, d_h): accumulated (score none) */
    real *dalpha, *dscores; /* (S*B) scratch */
    /* a hard step's surrogate terms (model/MODEL.md), per row, 0 for none (NULL: none):
     * - reinforce[b] sum_k log alpha^k_{chosen} - entropy[b] sum_k H(alpha^k) */
    const real *reinforce, *entropy; /* (B), 0 in the rows left out */
    /* (S*B) the gradient of a term of the loss on the alignment, the heads' mean (the
     * doubly stochastic term); NULL: none */
    const real *dalign;
} AttnGrads;

/* Backward of one step from dc (rows, d_h, row stride ld_dc), the gradient reaching its
 * context, plus g's surrogate terms on the choosing rows' weights. step holds what
 * attn_step_forward wrote; when pre_kept is 0, step->pre is computed again here first
 * (the same arithmetic, so the same numbers). Accumulates v_a's gradient into G. */
void attn_step_backward(AttnGrads *g, AttnParams *G, const real *dc, int ld_dc,
                        const AttnStep *step, int pre_kept, const AttnParams *P,
                        const AttnDims *d, const AttnInput *in);

/* The query weights' gradient over every step at once: the query is s_{i-1} W^T, so
 * dW (a, p) += dquery^T (a, rows) . states (rows, p), both laid out alike. */
void attn_queries_backward(AttnParams *G, const AttnDims *d, const real *dquery,
                           const real *states, int rows);

#endif
