/* pictures.c: an image corpus's pictures (see pictures.h). */
#include "data/pictures.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/interrupt.h"
#include "base/mem.h"
#include "base/path.h"
#include "text/termtext.h"

void pictures_init(Pictures *p, int size, int resize)
{
    *p = (Pictures){.size = size, .resize = resize};
}

void pictures_free(Pictures *p)
{
    for (int k = 0; k < p->n; k++)
        free(p->paths[k]);
    free(p->paths);
    free(p->orig);
    free(p->cache);
    *p = (Pictures){0};
}

/* path as it is opened: relative paths from list_path's folder. */
static char *resolve(const char *list_path, const char *path, size_t len)
{
    const char *slash = strrchr(list_path, '/');
    const size_t dir = path[0] == '/' || !slash ? 0 : (size_t)(slash - list_path) + 1;
    char *out = xmalloc(dir + len + 1);
    memcpy(out, list_path, dir);
    memcpy(out + dir, path, len);
    out[dir + len] = '\0';
    return out;
}

int pictures_add(Pictures *p, const char *list_path, long line_no, const char *path, size_t len,
                 Error *err)
{
    if (len == 0)
        return error_at(err, list_path, line_no, 0, "expected a picture's path, found an empty "
                        "line");
    if (memchr(path, '\0', len))
        return error_at(err, list_path, line_no, 0, "a picture's path holds a NUL byte");
    char *file = resolve(list_path, path, len);
    ImageSize s;
    Error why;
    if (image_size_of(file, &s, &why) < 0 ||
        (!p->resize && (s.width != p->size || s.height != p->size) &&
         error_set(&why, "%s: %d x %d pixels, not %d x %d (data.image_resize: false)", file,
                   s.width, s.height, p->size, p->size))) {
        free(file);
        return error_at(err, list_path, line_no, 0, "%s", why.msg);
    }
    if (p->n == p->cap) {
        p->cap = p->cap * 2 + 64;
        p->paths = xrealloc_array(p->paths, (size_t)p->cap, sizeof(char *));
        p->orig = xrealloc_array(p->orig, (size_t)p->cap, sizeof(ImageSize));
    }
    /* as an absolute path: the records of alignments.jsonl name it, and s2s heatmap may
     * read them from anywhere */
    p->paths[p->n] = path_absolute(file);
    free(file);
    p->orig[p->n] = s;
    p->n++;
    return 0;
}

/* How far a decode is, and when it was last shown. */
typedef struct {
    PicturesProgress show;
    double last; /* when it was last drawn, or the start */
    int drawn;
} DecodeProgress;

/* Redraws "decoding the pictures of LIST: K of N" once show.every seconds have passed
 * since the start or the last drawing, and the last count if anything was drawn. */
static void progress_show(DecodeProgress *p, const char *list_path, int done, int n)
{
    if (!p->show.to || (done < n && now_seconds() - p->last < p->show.every) ||
        (done == n && !p->drawn))
        return;
    char safe[4 * 4096];
    fprintf(p->show.to, "\rdecoding the pictures of %s: %d of %d%s",
            termtext_escape(safe, sizeof safe, list_path), done, n, done == n ? "\n" : "");
    fflush(p->show.to);
    p->last = now_seconds();
    p->drawn = 1;
}

int pictures_load(Pictures *p, const char *list_path, const long *line_no, size_t cache_bytes,
                  PicturesProgress progress, Error *err)
{
    const size_t one = (size_t)3 * p->size * p->size;
    size_t fit = cache_bytes / (one * sizeof(float));
    p->cached = (int)(fit < (size_t)p->n ? fit : (size_t)p->n);
    free(p->cache);
    p->cache = p->cached ? xmalloc_array((size_t)p->cached * one, sizeof(float)) : NULL;
    float *scratch = xmalloc_array(one, sizeof(float));
    double sum[3] = {0, 0, 0};
    DecodeProgress shown = {.show = progress, .last = now_seconds()};
    int rc = 0;
    for (int k = 0; k < p->n && rc == 0; k++) {
        /* a picture takes up to a second or so to decode: a signal is honoured between
         * two, naming the line of the one not decoded */
        if (interrupt_pending()) {
            rc = error_at(err, list_path, line_no[k], 0, "decoding the pictures stopped by "
                          "signal %d (%d of %d decoded)", interrupt_pending(), k, p->n);
            break;
        }
        float *planes = k < p->cached ? p->cache + (size_t)k * one : scratch;
        ImageSize s;
        Error why;
        if (image_load(planes, p->paths[k], p->size, p->resize, &s, &why) < 0) {
            rc = error_at(err, list_path, line_no[k], 0, "%s", why.msg);
            break;
        }
        /* per picture first, so a mean over many pictures loses no small terms */
        const size_t area = (size_t)p->size * p->size;
        for (int c = 0; c < 3; c++) {
            double picture = 0;
            for (size_t x = 0; x < area; x++)
                picture += planes[(size_t)c * area + x];
            sum[c] += picture / (double)area;
        }
        progress_show(&shown, list_path, k + 1, p->n);
    }
    if (rc < 0 && shown.drawn)
        fputc('\n', progress.to); /* the error on a line of its own */
    free(scratch);
    for (int c = 0; c < 3; c++)
        p->mean[c] = p->n ? sum[c] / p->n : 0;
    return rc;
}

int pictures_get(const Pictures *p, int k, const double mean[3], float *out, Error *err)
{
    const size_t area = (size_t)p->size * p->size;
    float *decoded = NULL;
    const float *planes = k < p->cached ? p->cache + (size_t)k * 3 * area : NULL;
    if (!planes) {
        ImageSize s;
        decoded = xmalloc_array(3 * area, sizeof(float));
        if (image_load(decoded, p->paths[k], p->size, p->resize, &s, err) < 0) {
            free(decoded);
            return -1;
        }
        planes = decoded;
    }
    picture_channels_last(out, planes, p->size, mean);
    free(decoded);
    return 0;
}

void picture_channels_last(float *out, const float *planes, int size, const double mean[3])
{
    const size_t area = (size_t)size * size;
    for (size_t x = 0; x < area; x++)
        for (int c = 0; c < 3; c++)
            out[x * 3 + c] = planes[(size_t)c * area + x] - (float)mean[c];
}

int picture_read_input(float *out, const char *path, int size, int resize, const double mean[3],
                       Error *err)
{
    float *planes = xmalloc_array((size_t)3 * size * size, sizeof(float));
    ImageSize orig;
    const int rc = image_load(planes, path, size, resize, &orig, err);
    if (rc == 0)
        picture_channels_last(out, planes, size, mean);
    free(planes);
    return rc;
}
