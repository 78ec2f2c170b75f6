/* alignments.c: hard links, entropy and the JSONL dump of attention matrices (see
 * alignments.h). */
#include "alignments.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mem.h"
#include "textfile.h"

int align_hard_links(const AttnMatrix *m, float threshold, Link *out, int cap)
{
    int n = 0;
    for (int i = 0; i + 1 < m->rows; i++) {
        if (threshold > 0) {
            for (int j = 0; j + 1 < m->cols && n < cap; j++)
                if (attn_at(m, i, j) > threshold)
                    out[n++] = (Link){j, i, 0};
            continue;
        }
        int best = 0;
        for (int j = 1; j < m->cols; j++)
            if (attn_at(m, i, j) > attn_at(m, i, best))
                best = j;
        if (best + 1 < m->cols && n < cap)
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

int align_write_json(FILE *f, long step, double epoch, long id, const char *const *src,
                     const char *const *tgt, const AttnMatrix *m)
{
    fprintf(f, "{\"step\":%ld,\"epoch\":%.4f,\"id\":%ld,\"src\":", step, epoch, id);
    write_tokens(f, src, m->cols);
    fputs(",\"tgt\":", f);
    write_tokens(f, tgt, m->rows);
    fputs(",\"weights\":[", f);
    for (int i = 0; i < m->rows; i++) {
        fputs(i ? ",[" : "[", f);
        for (int j = 0; j < m->cols; j++)
            /* 8 significant digits: the float itself, so rows still sum to 1 */
            fprintf(f, "%s%.8g", j ? "," : "", (double)attn_at(m, i, j));
        fputc(']', f);
    }
    fputs("]}\n", f);
    return ferror(f) || fflush(f) != 0 ? -1 : 0;
}

void align_format_links(const Link *links, int n, char *out, size_t cap)
{
    size_t used = 0;
    if (cap)
        out[0] = '\0';
    for (int k = 0; k < n && used < cap; k++)
        used += (size_t)snprintf(out + used, cap - used, "%s%d-%d", k ? " " : "", links[k].j, links[k].i);
}

int gold_read(GoldAlignments *g, const char *path, const Corpus *c, Error *err)
{
    memset(g, 0, sizeof *g);
    TextFile f;
    if (textfile_read(&f, path, err) < 0) {
        textfile_free(&f);
        return -1;
    }
    g->n = c->n;
    g->start = xcalloc((size_t)c->n + 1, sizeof(int));
    g->count = xcalloc((size_t)c->n + 1, sizeof(int));
    int cap = 1024, used = 0, rc = 0;
    g->links = xmalloc_array((size_t)cap, sizeof(Link));
    for (int k = 0; k < c->n && rc == 0; k++) {
        long line = c->line_no[k];
        if (line > f.n) {
            rc = error_set(err, "`%s` has %d lines, but the corpus it aligns has a pair on line %ld",
                           path, f.n, line);
            break;
        }
        int room = c->src_len[k] * c->tgt_len[k] + 16, bad_at = 0;
        if (used + room > cap) {
            cap = (used + room) * 2;
            g->links = xrealloc_array(g->links, (size_t)cap, sizeof(Link));
        }
        int n = pharaoh_parse(f.lines[line - 1], g->links + used, room, &bad_at);
        if (n < 0) {
            rc = error_at(err, path, line, bad_at + 1, "expected links j-i or j?i (0-based source "
                          "and target token numbers) separated by spaces");
            break;
        }
        for (int l = 0; l < n; l++) {
            const Link *x = &g->links[used + l];
            if (x->j >= c->src_len[k] || x->i >= c->tgt_len[k]) {
                rc = error_at(err, path, line, 0, "link %d-%d is outside the pair (%d source and "
                              "%d target tokens)", x->j, x->i, c->src_len[k], c->tgt_len[k]);
                break;
            }
        }
        g->start[k] = used;
        g->count[k] = n;
        used += n;
    }
    textfile_free(&f);
    return rc;
}

void gold_free(GoldAlignments *g)
{
    free(g->links);
    free(g->start);
    free(g->count);
    memset(g, 0, sizeof *g);
}
