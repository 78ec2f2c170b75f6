/* params.c: the parameter layout of the model (see model.h): the parts in the order of
 * checkpoints and initialisation -- embeddings, the encoder's tensors, W_s, the
 * attention's, the decoder, readout and output -- each part listing its own; the
 * model's sizes as the encoder and the attention see them; and the initialisation of
 * model/MODEL.md. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

EncoderDims model_encoder_dims(const Dims *d)
{
    EncoderDims e = {.kind = d->encoder, .emb = d->emb, .hidden = d->enc_hidden,
                     .layers = d->enc_layers, .cell = d->enc_cell, .image_size = d->image_size,
                     .conv_layers = d->conv_layers, .grid_positions = d->grid_positions};
    memcpy(e.conv_channels, d->conv_channels, sizeof e.conv_channels);
    /* the self-attention layers keep the width of what they read */
    e.sa = (SelfAttnDims){.width = encoder_ops(&e)->width(&e), .heads = d->sa_heads,
                          .ffn = d->sa_ffn, .layers = d->sa_layers};
    return e;
}

int model_annotation_width(const Dims *d)
{
    EncoderDims e = model_encoder_dims(d);
    return encoder_ops(&e)->width(&e);
}

int model_is_transformer(const Dims *d)
{
    return d->decoder == DECODER_TRANSFORMER;
}

TdecDims model_tdec_dims(const Dims *d)
{
    return (TdecDims){.width = d->emb, .memory = model_annotation_width(d),
                      .heads = d->heads > 0 ? d->heads : 1, .ffn = d->dec_ffn,
                      .layers = d->dec_layers};
}

AttnDims model_attn_dims(const Dims *d)
{
    /* The Transformer decoder's attention is inside its layers: to the rest of the
     * model it is a parameter-free score over the annotations whose weights fill the
     * alignment buffers (the dot score's slots: no keys, no query layer). */
    if (model_is_transformer(d))
        return (AttnDims){.score = SCORE_DOT, .query_width = model_annotation_width(d),
                          .value_width = model_annotation_width(d), .attn = d->attn,
                          .heads = d->heads > 0 ? d->heads : 1};
    return (AttnDims){.score = d->score, .query_width = d->dec_hidden,
                      .value_width = model_annotation_width(d), .attn = d->attn,
                      .heads = d->heads > 0 ? d->heads : 1};
}

int model_starts_cell_state(const Dims *d)
{
    const EncoderDims e = model_encoder_dims(d);
    return !model_is_transformer(d) && d->dec_cell == CELL_LSTM && encoder_ops(&e)->init_cell_state;
}

int model_has_alignments(const Dims *d)
{
    AttnDims ad = model_attn_dims(d);
    return attn_has_weights(&ad);
}

int model_reads_pictures(const Dims *d)
{
    return d->encoder == ENCODER_IMAGE;
}

void model_use_image_encoder(Dims *d, int image_size, const int *channels, int layers,
                             int grid_positions)
{
    assert(layers >= 1 && layers <= CONV_MAX_LAYERS);
    d->encoder = ENCODER_IMAGE;
    d->image_size = image_size;
    d->conv_layers = layers;
    for (int l = 0; l < layers; l++)
        d->conv_channels[l] = channels[l];
    d->grid_positions = grid_positions;
}

int model_grid_side(const Dims *d)
{
    return model_reads_pictures(d) ? d->image_size >> d->conv_layers : 0;
}

void model_cell_name(int j, char *out, size_t cap)
{
    snprintf(out, cap, "%d", j);
}

void model_describe(const Dims *d, char *out, size_t cap)
{
    const char *tied = d->tie_output && d->share_embeddings
                           ? ", output tied to E_y, source embeddings shared with E_y"
                       : d->tie_output       ? ", output tied to E_y"
                       : d->share_embeddings ? ", source embeddings shared with E_y"
                                             : "";
    char heads[32] = "";
    if (d->heads > 1)
        snprintf(heads, sizeof heads, " (%d heads)", d->heads);
    char sa[80] = "";
    if (d->sa_layers > 0)
        snprintf(sa, sizeof sa, " and %d self-attention layer%s (%d heads, ffn %d)", d->sa_layers,
                 d->sa_layers > 1 ? "s" : "", d->sa_heads, d->sa_ffn);
    char encoder[64];
    if (d->encoder == ENCODER_ATTN)
        snprintf(encoder, sizeof encoder, "attention-only encoder (positions)");
    else if (d->encoder == ENCODER_IMAGE)
        snprintf(encoder, sizeof encoder, "image encoder (%d conv blocks, %d x %d grid)",
                 d->conv_layers, d->image_size >> d->conv_layers, d->image_size >> d->conv_layers);
    else
        snprintf(encoder, sizeof encoder, "%s encoder (%d layer%s)", cell_name(d->enc_cell),
                 d->enc_layers, d->enc_layers > 1 ? "s" : "");
    if (model_is_transformer(d)) {
        snprintf(out, cap, "%s%s, Transformer decoder (%d layer%s, %d head%s, ffn %d)%s", encoder,
                 sa, d->dec_layers, d->dec_layers > 1 ? "s" : "", d->heads,
                 d->heads > 1 ? "s" : "", d->dec_ffn, tied);
        return;
    }
    snprintf(out, cap, "%s%s, %s decoder, %sattention %s%s%s%s", encoder, sa,
             cell_name(d->dec_cell), d->hard ? "hard " : "", score_names[d->score], heads,
             d->context_gate ? ", context gate" : "", tied);
}

/* Carves every tensor, or (without with_embeddings) every tensor but E_x and E_y -- but
 * for E_y of a tied model, whose output layer reads and updates every row each step, or
 * of shared embeddings, which the encoder's and the decoder's gradients both reach. A
 * tied model has no tensor W_o: it points at E_y; with shared embeddings E_x points at
 * E_y. */
static size_t carve(Params *p, real *base, const Dims *d, int with_embeddings)
{
    const int m = d->emb, dp = d->dec_hidden, readout = d->readout;
    const int Gd = cell_gates(d->dec_cell), d_h = model_annotation_width(d);
    const EncoderDims ed = model_encoder_dims(d);
    const AttnDims ad = model_attn_dims(d);
    const EncoderOps *encoder = encoder_ops(&ed);
    assert(d->enc_layers >= 1 && d->enc_layers <= MODEL_MAX_LAYERS);
    memset(p->tensors, 0, sizeof p->tensors);
    TensorCarver c = {.base = base, .list = p->tensors, .cap = MODEL_MAX_TENSORS};
    p->E_x = p->E_y = NULL;
    assert(!d->share_embeddings || d->src_vocab == d->tgt_vocab);
    if (with_embeddings && !d->share_embeddings)
        p->E_x = tensor_carve(&c, d->src_vocab, m, 0, "E_x");
    if (with_embeddings || params_dense_target_embeddings(d))
        p->E_y = tensor_carve(&c, d->tgt_vocab, m, 0, "E_y");
    if (d->share_embeddings)
        p->E_x = p->E_y;
    encoder->carve_params(&p->enc, &c, &ed);
    p->W_s = p->b_s = p->W_c = p->b_c = p->w_beta = p->b_beta = p->W_t = p->b_t = NULL;
    p->att = (AttnParams){0};
    p->dec = (CellParams){0};
    memset(p->tdec, 0, sizeof p->tdec);
    if (model_is_transformer(d)) {
        const TdecDims td = model_tdec_dims(d);
        tdec_carve(p->tdec, &c, &td);
    } else {
        p->W_s = tensor_carve(&c, dp, encoder->init_width(&ed), 0, "W_s");
        p->b_s = tensor_carve(&c, dp, 1, 1, "b_s");
        if (model_starts_cell_state(d)) {
            p->W_c = tensor_carve(&c, dp, encoder->init_width(&ed), 0, "W_c");
            p->b_c = tensor_carve(&c, dp, 1, 1, "b_c");
        }
        attn_carve(&p->att, &c, &ad);
        if (d->context_gate) {
            p->w_beta = tensor_carve(&c, 1, dp, 0, "w_beta");
            p->b_beta = tensor_carve(&c, 1, 1, 1, "b_beta");
        }
        p->dec.W_i = tensor_carve(&c, Gd * dp, m + d_h, 0, "dec.W_i");
        p->dec.W_h = tensor_carve(&c, Gd * dp, dp, 0, "dec.W_h");
        p->dec.b_i = tensor_carve(&c, Gd * dp, 1, 1, "dec.b_i");
        p->dec.b_h = tensor_carve(&c, Gd * dp, 1, 1, "dec.b_h");
        p->W_t = tensor_carve(&c, readout, dp + d_h + m, 0, "W_t");
        p->b_t = tensor_carve(&c, readout, 1, 1, "b_t");
    }
    assert(!d->tie_output || readout == m);
    p->W_o = d->tie_output ? p->E_y : tensor_carve(&c, d->tgt_vocab, readout, 0, "W_o");
    p->b_o = tensor_carve(&c, d->tgt_vocab, 1, 1, "b_o");
    p->n_tensors = c.n;
    return c.offset;
}

int params_dense_target_embeddings(const Dims *d)
{
    return d->tie_output || d->share_embeddings;
}

size_t params_carve(Params *p, real *base, const Dims *d)
{
    return carve(p, base, d, 1);
}

size_t params_carve_dense(Params *p, real *base, const Dims *d)
{
    return carve(p, base, d, 0);
}

void params_alloc(Params *p, const Dims *d)
{
    *p = (Params){0};
    size_t n = params_carve(p, NULL, d);
    p->mem = xcalloc(n, sizeof(real));
    p->n = n;
    params_carve(p, p->mem, d);
}

void params_free(Params *p)
{
    free(p->mem);
    *p = (Params){0};
}

void params_init(Params *p, Pcg32 *rng, float scale)
{
    for (int t = 0; t < p->n_tensors; t++) {
        const Tensor *x = &p->tensors[t];
        size_t count = (size_t)x->rows * x->cols;
        for (size_t k = 0; k < count; k++)
            x->data[k] = x->init == TENSOR_UNIFORM ? (real)pcg32_uniform(rng, -scale, scale)
                         : x->init == TENSOR_ONES  ? 1
                                                   : 0;
    }
}
