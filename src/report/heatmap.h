/* heatmap.h: attention matrices drawn for people: SVG files (one per probe and step,
 * source tokens along the top, target tokens down the side, a colour scale, each
 * weight on hover), one self-contained HTML report (per probe a slider over training
 * steps, and the learning curves of metrics.jsonl), and terminal text with Unicode
 * shade blocks (in colour on a terminal), with no control character of a token let
 * through to the terminal. */
#ifndef S2S_HEATMAP_H
#define S2S_HEATMAP_H

#include <stdio.h>

#include "base/error.h"
#include "report/alignlog.h"

/* One heatmap as an SVG element (uid makes its ids unique within a page). With
 * standalone, an XML declaration first and the SVG namespace, for a .svg file. */
void heatmap_svg(FILE *f, const AlignRecord *r, const char *uid, int standalone);
/* s as XML (and HTML) text: markup escaped, and the characters XML forbids (control
 * characters, U+FFFE, U+FFFF), which tokens may hold, as U+FFFD. */
void heatmap_xml_text(FILE *f, const char *s);

/* One heatmap as text for a terminal, under the title "step N (epoch E), sentence ID"
 * (no epoch for a record without one); with color, ANSI 256-colour shades. Control
 * characters in tokens (and title) are drawn as U+FFFD (termtext.h). */
void heatmap_txt(FILE *f, const AlignRecord *r, int color);
/* The same under another title (a translation has no training step to show). */
void heatmap_txt_titled(FILE *f, const AlignRecord *r, const char *title, int color);

/* Steps per sentence the report shows at most: every dump of a demo or a day's run. */
#define HEATMAP_REPORT_FRAMES 200

/* Writes the HTML report of log (and of metrics_path's curves, if not NULL and the file
 * exists) to path, atomically: one self-contained file, the curves drawn as SVG, the
 * attention matrices as numbers (in thousandths) that its script draws as heatmap_svg
 * does, with a slider over the steps of each sentence. At most max_frames steps per
 * probe (evenly spaced, first and last kept). metrics_path is read as textfile.h says, with lines of at most 1 MiB;
 * lines that are not records are passed over. Returns 0, -1 with err set when the report
 * cannot be written, or -2 with err set when metrics_path is no text (nothing written). */
int heatmap_report(const char *path, const AlignLog *log, const char *metrics_path,
                   const char *title, int max_frames, Error *err);

#endif
