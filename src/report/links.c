/* links.c: hard links, entropy and the JSONL dump of attention matrices (see
 * links.h). */
#include "report/links.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "text/json.h"
#include "text/textfile.h"

int align_hard_links(const AttnMatrix *m, float threshold, Link *out, int cap)
{
    int n = 0;
    const int real_cols = m->grid ? m->cols : m->cols - 1; /* not the source </s> */
    for (int i = 0; i + 1 < m->rows; i++) {
        if (threshold > 0) {
            for (int j = 0; j < real_cols && n < cap; j++)
                if (attn_at(m, i, j) > threshold)
                    out[n++] = (Link){j, i, 0};
            continue;
        }
        int best = 0;
        for (int j = 1; j < m->cols; j++)
            if (attn_at(m, i, j) > attn_at(m, i, best))
                best = j;
        if (best < real_cols && n < cap)
            out[n++] = (Link){best, i, 0};
    }
    return n;
}

double align_entropy_sum(const AttnMatrix *m)
{
    double sum = 0;
    for (int i = 0; i < m->rows; i++)
        for (int j = 0; j < m->cols; j++) {
            double w = attn_at(m, i, j);
            if (w > 0)
                sum -= w * log(w);
        }
    return sum;
}

static void write_tokens(FILE *f, const char *const *tokens, int n)
{
    fputc('[', f);
    for (int k = 0; k < n; k++) {
        if (k)
            fputc(',', f);
        json_write_string(f, tokens[k]);
    }
    fputc(']', f);
}

/* A matrix as [[..],..]: 8 significant digits, the float itself, so rows still sum to 1. */
static void write_matrix(FILE *f, const AttnMatrix *m)
{
    fputc('[', f);
    for (int i = 0; i < m->rows; i++) {
        fputs(i ? ",[" : "[", f);
        for (int j = 0; j < m->cols; j++)
            fprintf(f, "%s%.8g", j ? "," : "", (double)attn_at(m, i, j));
        fputc(']', f);
    }
    fputc(']', f);
}

/* "name":[matrix,matrix,...] */
static void write_matrices(FILE *f, const char *name, const AttnMatrix *ms, int n)
{
    fprintf(f, ",\"%s\":[", name);
    for (int k = 0; k < n; k++) {
        if (k)
            fputc(',', f);
        write_matrix(f, &ms[k]);
    }
    fputc(']', f);
}

void align_write_chosen(FILE *f, const int *chosen, int rows, int heads, long stride)
{
    fputs(",\"chosen\":[", f);
    for (int i = 0; i < rows; i++) {
        fputs(i ? ",[" : "[", f);
        for (int k = 0; k < heads; k++)
            fprintf(f, "%s%d", k ? "," : "", chosen[i * stride + k]);
        fputc(']', f);
    }
    fputc(']', f);
}

int align_write_json(FILE *f, long step, double epoch, long id, const char *const *src,
                     const char *const *tgt, const AttnMatrix *m, const AlignExtras *extra)
{
    fprintf(f, "{\"step\":%ld,", step);
    if (epoch >= 0)
        fprintf(f, "\"epoch\":%.4f,", epoch);
    fprintf(f, "\"id\":%ld,\"src\":", id);
    write_tokens(f, src, m->cols);
    fputs(",\"tgt\":", f);
    write_tokens(f, tgt, m->rows);
    fputs(",\"weights\":", f);
    write_matrix(f, m);
    if (extra && extra->n_heads > 1)
        write_matrices(f, "heads", extra->heads, extra->n_heads);
    if (extra && extra->n_self > 0)
        write_matrices(f, "self", extra->self, extra->n_self);
    if (extra && extra->n_layers > 0) {
        fprintf(f, ",\"layer_heads\":%d", extra->layer_heads);
        write_matrices(f, "layers", extra->layers, extra->n_layers * extra->layer_heads);
    }
    if (extra && extra->n_dec_self > 0)
        write_matrices(f, "dec_self", extra->dec_self, extra->n_dec_self);
    if (extra && extra->n_chosen > 0)
        align_write_chosen(f, extra->chosen, m->rows, extra->n_chosen, extra->chosen_stride);
    if (extra && extra->image) {
        fputs(",\"image\":", f);
        json_write_string(f, extra->image);
    }
    fputs("}\n", f);
    return ferror(f) || fflush(f) != 0 ? -1 : 0;
}

AttnMatrix align_of_pass(const Workspace *ws, int b, int rows, int cols)
{
    /* alpha (T, S*B): step i's row of sentence b is at i * S * B + j * B + b */
    return (AttnMatrix){ws->dec.alpha + b, rows, cols, (long)ws->S * ws->B, ws->B,
                        model_reads_pictures(&ws->dims)};
}

/* A Transformer decoder's layers: cross_probs (B, H, T, S) per head, self_mean (B, T, T). */
static void transformer_extras(AlignExtras *x, const Workspace *ws, int b, int rows, int cols,
                               AlignExtraRoom *room)
{
    const TdecDims td = model_tdec_dims(&ws->dims);
    const int H = td.heads, T = ws->T, S = ws->S, grid = model_reads_pictures(&ws->dims);
    x->layers = room->layers, x->n_layers = td.layers, x->layer_heads = H;
    x->dec_self = room->dec_self, x->n_dec_self = td.layers;
    for (int l = 0; l < td.layers; l++) {
        const TdecLayerWork *lw = &ws->dec.tdec.layer[l];
        for (int h = 0; h < H; h++)
            room->layers[l * H + h] = (AttnMatrix){
                lw->cross_probs + ((size_t)b * H + h) * T * S, rows, cols, S, 1, grid};
        room->dec_self[l] = (AttnMatrix){lw->self_mean + (size_t)b * T * T, rows, rows, T, 1, 0};
    }
}

AlignExtras align_extras_of_pass(const Workspace *ws, int b, int rows, int cols,
                                 AlignExtraRoom *room)
{
    const AttnDims ad = model_attn_dims(&ws->dims);
    AttnMatrix *heads = room->heads, *self = room->self;
    AlignExtras x = {.heads = heads, .n_heads = ad.heads > 1 ? ad.heads : 0, .self = self,
                     .n_self = ws->dims.sa_layers};
    if (model_is_transformer(&ws->dims))
        transformer_extras(&x, ws, b, rows, cols, room);
    if (ws->hard.mode != CONTEXT_SOFT && ws->hard_pass.chosen) { /* chosen (T, B, H) */
        x.chosen = ws->hard_pass.chosen + (size_t)b * ad.heads;
        x.n_chosen = ad.heads;
        x.chosen_stride = (long)ws->B * ad.heads;
    }
    const long SB = (long)ws->S * ws->B;
    /* alpha_heads (T, H, S*B): head h of step i is block i * H + h */
    for (int h = 0; h < x.n_heads; h++)
        heads[h] = (AttnMatrix){ws->dec.alpha_heads + h * SB + b, rows, cols, x.n_heads * SB, ws->B,
                                model_reads_pictures(&ws->dims)};
    /* each layer's head mean (B, S, S) */
    for (int l = 0; l < x.n_self; l++)
        self[l] = (AttnMatrix){model_self_weights(ws, l) + (size_t)b * ws->S * ws->S, cols, cols,
                               ws->S, 1, model_reads_pictures(&ws->dims)};
    return x;
}

void align_format_links(const Link *links, int n, char *out, size_t cap)
{
    size_t used = 0;
    if (cap)
        out[0] = '\0';
    for (int k = 0; k < n && used < cap; k++)
        used += (size_t)snprintf(out + used, cap - used, "%s%d-%d", k ? " " : "", links[k].j, links[k].i);
}

int align_links_to_words(Link *links, int n, const int *src_word, const int *tgt_word)
{
    int kept = 0;
    for (int k = 0; k < n; k++) {
        Link w = {src_word[links[k].j], tgt_word[links[k].i], links[k].possible};
        /* insertion into the sorted, distinct links kept so far */
        int at = kept;
        while (at > 0 && (links[at - 1].i > w.i || (links[at - 1].i == w.i && links[at - 1].j > w.j)))
            at--;
        if (at > 0 && links[at - 1].i == w.i && links[at - 1].j == w.j)
            continue;
        memmove(links + at + 1, links + at, (size_t)(kept - at) * sizeof *links);
        links[at] = w;
        kept++;
    }
    return kept;
}

int gold_read(GoldAlignments *g, const char *path, const Corpus *c, int by_words,
              size_t max_line_bytes, Error *err)
{
    memset(g, 0, sizeof *g);
    g->n = c->n;
    g->start = xcalloc((size_t)c->n + 1, sizeof(int));
    g->count = xcalloc((size_t)c->n + 1, sizeof(int));
    int cap = 1024, used = 0;
    g->links = xmalloc_array((size_t)cap, sizeof(Link));
    /* line by line, each parsed as it comes: only the links are kept, and a file with
     * more lines than its corpus is refused once it has one too many, so the memory
     * stays that of the corpus whatever the file is */
    TextReader t;
    int rc = textreader_open(&t, path, "gold alignments", max_line_bytes, err);
    t.limit_name = "data.max_line_bytes";
    int k = 0; /* the next pair */
    const char *text;
    size_t len;
    while (rc == 0 && (rc = textreader_next(&t, &text, &len, err)) == 1) {
        rc = 0;
        long line = t.in.line_no;
        if (line > c->counts.lines) {
            rc = error_set(err, "`%s` has more lines than the %ld of the corpus it aligns (its "
                           "line %ld has no sentence pair)", path, c->counts.lines, line);
            break;
        }
        if (k == c->n || c->line_no[k] != line)
            continue; /* a line whose pair was skipped (empty, too long) */
        const int src_n = by_words ? c->src_words[k] : c->src_len[k];
        const int tgt_n = by_words ? c->tgt_words[k] : c->tgt_len[k];
        int room = src_n * tgt_n + 16, bad_at = 0;
        if (used + room > cap) {
            cap = (used + room) * 2;
            g->links = xrealloc_array(g->links, (size_t)cap, sizeof(Link));
        }
        int n = pharaoh_parse(text, g->links + used, room, &bad_at);
        if (n < 0) {
            rc = error_at(err, path, line, bad_at + 1, "expected links j-i or j?i (0-based source "
                          "and target token numbers) separated by spaces");
            break;
        }
        for (int l = 0; l < n && rc == 0; l++) {
            const Link *x = &g->links[used + l];
            if (x->j >= src_n || x->i >= tgt_n)
                rc = error_at(err, path, line, 0, "link %d-%d is outside the pair (%d source and "
                              "%d target %s%s)", x->j, x->i, src_n, tgt_n,
                              by_words ? "word" : "token", plural(tgt_n));
        }
        g->start[k] = used;
        g->count[k] = n;
        used += n;
        k++;
    }
    if (rc == 0 && k < c->n)
        rc = error_set(err, "`%s` has %ld line%s, but the corpus it aligns has a pair on line "
                       "%ld", path, t.in.line_no, plural(t.in.line_no), c->line_no[k]);
    textreader_close(&t);
    return rc < 0 ? -1 : 0;
}

void gold_free(GoldAlignments *g)
{
    free(g->links);
    free(g->start);
    free(g->count);
    memset(g, 0, sizeof *g);
}
