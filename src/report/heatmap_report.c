/* heatmap_report.c: the HTML report of a training run (see heatmap.h): the learning
 * curves of metrics.jsonl drawn as SVG, and the attention of every probe over training,
 * drawn by the page's script from the numbers it carries, with a slider over the steps;
 * an image model's probes over their picture. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomicfile.h"
#include "base/mem.h"
#include "report/heatmap.h"
#include "report/links.h"
#include "report/picture.h"
#include "text/json.h"
#include "text/number.h"
#include "text/textfile.h"

/* ---- the report ------------------------------------------------------------------------------- */

/* A series of (step, value) points from metrics.jsonl. */
typedef struct {
    const char *key, *label, *color;
    double *x, *y;
    int n, cap;
} Series;

static void series_add(Series *s, double x, double y)
{
    if (s->n == s->cap) {
        s->cap = s->cap * 2 + 64;
        s->x = xrealloc_array(s->x, (size_t)s->cap, sizeof(double));
        s->y = xrealloc_array(s->y, (size_t)s->cap, sizeof(double));
    }
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->n++;
}

enum { N_SERIES = 6 };

/* The longest line of metrics.jsonl read_curves takes (its records are under 1 KB). */
#define METRICS_MAX_LINE_BYTES ((size_t)1 << 20)

/* The series of metrics.jsonl at path (none if there is no such file). Lines that are
 * no JSON object with the keys are passed over; a file that is no text (a NUL byte, a
 * line over METRICS_MAX_LINE_BYTES, invalid UTF-8) is an error. Returns 0, or -1 with
 * err set. */
static int read_curves(const char *path, Series *series, Error *err)
{
    if (!path)
        return 0;
    TextReader t;
    if (textreader_open(&t, path, "metrics", METRICS_MAX_LINE_BYTES, err) < 0) {
        int missing = errno == ENOENT;
        textreader_close(&t);
        return missing ? 0 : -1; /* no curves is not an error: the heatmaps still render */
    }
    t.in.finish_on_signal = 1; /* the run's own log, read by the report a signal waits for */
    const char *line;
    size_t len;
    int rc;
    while ((rc = textreader_next(&t, &line, &len, err)) == 1) {
        JsonDoc doc;
        Error ignored;
        if (json_parse(&doc, line, len, path, t.in.line_no, &ignored) == 0) {
            const JsonValue *step = json_get(doc.root, "step");
            for (int s = 0; s < N_SERIES && step && step->type == JSON_NUMBER; s++) {
                const JsonValue *v = json_get(doc.root, series[s].key);
                if (v && v->type == JSON_NUMBER)
                    series_add(&series[s], step->number, v->number);
            }
        }
        json_free(&doc);
    }
    textreader_close(&t);
    return rc;
}

/* A line chart of up to two series; with log_y, on a logarithmic value axis (for
 * losses, which fall by orders of magnitude). */
static void chart(FILE *f, const char *title, Series *a, Series *b, int log_y)
{
    const double W = 420, H = 230, L = 64, R = 14, T = 44, B = 34;
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    Series *all[2] = {a, b};
    for (int s = 0; s < 2; s++)
        for (int k = 0; all[s] && k < all[s]->n; k++) {
            if (log_y && !(all[s]->y[k] > 0))
                continue;
            x0 = fmin(x0, all[s]->x[k]);
            x1 = fmax(x1, all[s]->x[k]);
            y0 = fmin(y0, all[s]->y[k]);
            y1 = fmax(y1, all[s]->y[k]);
        }
    if (!isfinite(x0))
        return;
    const int one_step = x1 == x0; /* every point at one step: drawn in the middle */
    if (one_step) {
        x0 -= 1;
        x1 += 1;
    }
    double v0 = log_y ? log10(y0) : y0, v1 = log_y ? log10(y1) : y1;
    if (v1 == v0)
        v1 = v0 + 1;
    fprintf(f, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"12\"><rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>"
            "<text x=\"%.0f\" y=\"16\" font-weight=\"bold\">", W, H, L);
    heatmap_xml_text(f, title);
    fprintf(f, "%s</text><line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#888\"/>"
            "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#888\"/>",
            log_y ? " (log scale)" : "", L, H - B, W - R, H - B, L, T, L, H - B);
    char top_value[32], bottom_value[32];
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>", L - 4, T + 4,
            number_digits(top_value, sizeof top_value, y1, 3));
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>", L - 4, H - B,
            number_digits(bottom_value, sizeof bottom_value, y0, 3));
    if (one_step) {
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">step %.0f</text>",
                (L + W - R) / 2, H - B + 16, x0 + 1);
    } else {
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">%.0f</text>", L, H - B + 16, x0);
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">step %.0f</text>", W - R,
                H - B + 16, x1);
    }
    double legend = L;
    for (int s = 0; s < 2; s++) {
        if (!all[s] || !all[s]->n)
            continue;
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"", all[s]->color);
        int drawn = 0;
        double px = 0, py = 0;
        for (int k = 0; k < all[s]->n; k++) {
            if (log_y && !(all[s]->y[k] > 0))
                continue;
            double v = log_y ? log10(all[s]->y[k]) : all[s]->y[k];
            px = L + (all[s]->x[k] - x0) / (x1 - x0) * (W - L - R);
            py = H - B - (v - v0) / (v1 - v0) * (H - T - B);
            fprintf(f, "%.1f,%.1f ", px, py);
            drawn++;
        }
        fputs("\"/>", f);
        if (drawn == 1) /* a line of one point is invisible: a dot */
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", px, py,
                    all[s]->color);
        /* the legend: a line of its own under the title */
        fprintf(f, "<line x1=\"%.0f\" y1=\"30\" x2=\"%.0f\" y2=\"30\" stroke=\"%s\" stroke-width=\"2\"/>"
                "<text x=\"%.0f\" y=\"34\" fill=\"%s\">%s</text>", legend, legend + 16, all[s]->color,
                legend + 20, all[s]->color, all[s]->label);
        legend += 40 + 7.5 * strlen(all[s]->label);
    }
    fputs("</svg>\n", f);
}

/* Indices of the frames to show for one probe: evenly spaced, first and last kept. */
static int pick_frames(const int *frames, int n, int max, int *out)
{
    if (n <= max) {
        memcpy(out, frames, sizeof(int) * (size_t)n);
        return n;
    }
    for (int k = 0; k < max; k++)
        out[k] = frames[(int)lround((double)k * (n - 1) / (max - 1))];
    return max;
}

/* An image model's pictures in the report: small, there are many. */
#define REPORT_PICTURE_SIZE 112

static const char REPORT_STYLE[] =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1200px}"
    "h1{font-size:22px}h2{font-size:16px;margin-top:28px}"
    ".curves{display:flex;flex-wrap:wrap;gap:12px}.frame{display:none}.frame.shown{display:block}"
    ".controls{margin:6px 0}.controls input{width:360px;vertical-align:middle}"
    ".sentence{font-family:monospace;color:#555}.panels{display:flex;flex-wrap:wrap;gap:8px;"
    "align-items:flex-start}";

/* The browser draws every heatmap from the numbers of the s2s-data element (drawn as
 * heatmap_svg draws them: the same geometry, colours, labels and tooltips; control
 * characters of tokens as U+FFFD), one section per sentence with a slider over its
 * steps. Text goes in through textContent only, never as markup. When it is done,
 * body's data-heatmaps counts the heatmaps drawn. */
static const char REPORT_SCRIPT[] =
    "(function(){"
    "var V=[[68,1,84],[72,40,120],[62,73,137],[49,104,142],[38,130,142],[31,158,137],"
    "[53,183,121],[110,206,88],[181,222,43],[253,231,37]];"
    "function colour(w){w=w<0?0:w>1?1:w;var x=w*9,k=Math.min(Math.floor(x),8),t=x-k,c=[];"
    "for(var i=0;i<3;i++)c.push(Math.round(V[k][i]+t*(V[k+1][i]-V[k][i])));"
    "return'rgb('+c.join(',')+')';}"
    "var NS='http://www.w3.org/2000/svg',CELL=24,CW=7.8;"
    "function clean(s){return s.replace(/[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\ufffe\\uffff]/g,'\\ufffd');}"
    "function el(name,attrs,text){var e=document.createElementNS(NS,name);"
    "for(var a in attrs)e.setAttribute(a,attrs[a]);if(text!==undefined)e.textContent=text;return e;}"
    "function width(s){return Array.from(s).length;}"
    "function heatmap(p,f,rows,w,view,uid,ch,cols){"
    "var src=(cols||p.src).map(clean),tgt=rows.map(clean),S=src.length,T=tgt.length;"
    "var ms=Math.max.apply(null,[1].concat(src.map(width))),mt=Math.max.apply(null,[1].concat(tgt.map(width)));"
    "var cap='step '+f.step+('epoch'in f?' \\u00b7 epoch '+f.epoch.toFixed(2):'')+' \\u00b7 sentence '+p.id+"
    "(view?' \\u00b7 '+view:'');"
    /* as wide as the grid with its scale, the caption, and each rotated source label */
    "var left=12+CW*mt,top=16+CW*ms*0.87+8,gw=CELL*S,gh=CELL*T,H=top+gh+36;"
    "var W=Math.max(left+gw+90,left+CW*width(cap)+12);"
    "for(var q=0;q<S;q++)W=Math.max(W,left+CELL*(q+0.5)+4+0.5*CW*width(src[q])+8);"
    "var svg=el('svg',{'class':'heatmap',width:W.toFixed(0),height:H.toFixed(0),"
    "viewBox:'0 0 '+W.toFixed(0)+' '+H.toFixed(0),'font-family':'DejaVu Sans Mono, Menlo, Consolas, monospace',"
    "'font-size':'13'});"
    "svg.appendChild(el('title',{},'attention, step '+f.step+', sentence '+p.id+(view?', '+view:'')));"
    "var g=el('linearGradient',{id:'scale-'+uid,x1:'0',y1:'1',x2:'0',y2:'0'});"
    "for(var k=0;k<10;k++)g.appendChild(el('stop',{offset:(k/9).toFixed(3),'stop-color':colour(k/9)}));"
    "var defs=el('defs',{});defs.appendChild(g);svg.appendChild(defs);"
    "svg.appendChild(el('rect',{width:'100%',height:'100%',fill:'white'}));"
    "for(var j=0;j<S;j++){var x=(left+CELL*(j+0.5)+4).toFixed(1),y=(top-6).toFixed(1);"
    "svg.appendChild(el('text',{x:x,y:y,transform:'rotate(-60 '+x+' '+y+')'},src[j]));}"
    "for(var i=0;i<T;i++)svg.appendChild(el('text',{x:(left-6).toFixed(1),"
    "y:(top+CELL*(i+0.5)+4).toFixed(1),'text-anchor':'end'},tgt[i]));"
    "for(i=0;i<T;i++)for(j=0;j<S;j++){var v=w[i*S+j]/1000,r=el('rect',{x:(left+CELL*j).toFixed(0),"
    "y:(top+CELL*i).toFixed(0),width:CELL,height:CELL,fill:colour(v)});"
    "r.appendChild(el('title',{},tgt[i]+' \\u2190 '+src[j]+': '+v.toFixed(3)));svg.appendChild(r);}"
    /* a hard-attention pass: ch[i] lists the positions row i's heads chose, outlined */
    "(ch||[]).forEach(function(c,i){c.forEach(function(j){svg.appendChild(el('rect',{'class':'chosen',"
    "x:(left+CELL*j+1.5).toFixed(1),y:(top+CELL*i+1.5).toFixed(1),width:CELL-3,height:CELL-3,"
    "fill:'none',stroke:'#d62728','stroke-width':'2.5'}));});});"
    "var sx=left+gw+24;svg.appendChild(el('rect',{x:sx.toFixed(0),y:top.toFixed(0),width:'14',"
    "height:gh.toFixed(0),fill:'url(#scale-'+uid+')'}));"
    "[0,0.5,1].forEach(function(t){svg.appendChild(el('text',{x:(sx+20).toFixed(0),"
    "y:(top+gh*(1-t)+4).toFixed(1)},t.toFixed(1)));});"
    "svg.appendChild(el('text',{x:left.toFixed(0),y:(top+gh+24).toFixed(0),fill:'#444'},cap));"
    "return svg;}";

/* An image model's frame: per caption word its picture, darkened where the word does
 * not look (as picture_heatmap_svg draws it: 0.8 (1 - w / max) of black over each cell,
 * blurred so that the grid reads as a smooth map), the word under it. */
static const char REPORT_SCRIPT_PICTURE[] =
    "function pictures(p,f,uid){var G=Math.round(Math.sqrt(p.src.length)),D=112,C=D/G,"
    "row=document.createElement('div');row.className='panels';"
    "f.tgt.forEach(function(t,i){var w=f.w.slice(i*G*G,(i+1)*G*G),mx=Math.max.apply(null,w.concat([1]));"
    "var svg=el('svg',{'class':'picture',width:D,height:D+20,viewBox:'0 0 '+D+' '+(D+20),"
    "'font-family':'DejaVu Sans Mono, Menlo, Consolas, monospace','font-size':'12'});"
    "var id='blur-'+uid+'-'+i,defs=el('defs',{}),fl=el('filter',{id:id});"
    "fl.appendChild(el('feGaussianBlur',{stdDeviation:(C/3).toFixed(1)}));defs.appendChild(fl);"
    "svg.appendChild(defs);svg.appendChild(el('image',{href:p.picture,width:D,height:D}));"
    "var g=el('g',{filter:'url(#'+id+')'});"
    "for(var k=0;k<G*G;k++)g.appendChild(el('rect',{x:(C*(k%G)).toFixed(1),y:(C*Math.floor(k/G)).toFixed(1),"
    "width:(C+0.5).toFixed(1),height:(C+0.5).toFixed(1),fill:'black','fill-opacity':(0.8*(1-w[k]/mx)).toFixed(3)}));"
    "svg.appendChild(g);svg.appendChild(el('text',{x:D/2,y:D+15,'text-anchor':'middle'},clean(t)));"
    "svg.appendChild(el('title',{},clean(t)+': the most attended cell has '+(mx/1000).toFixed(3)));"
    "row.appendChild(svg);});return row;}";

/* ... and the page: a section per sentence, a slider over its steps, and the panels of
 * each step -- the alignment, each head, each self-attention layer, each Transformer
 * decoder layer's heads and masked self-attention. */
static const char REPORT_SCRIPT_PAGE[] =
    "var data=JSON.parse(document.getElementById('s2s-data').textContent),n=0,root=document.getElementById('probes');"
    "data.probes.forEach(function(p){"
    "var sec=document.createElement('section');sec.className='probe';"
    "var h=document.createElement('h2');h.textContent='sentence '+p.id;sec.appendChild(h);"
    "var sent=document.createElement('div');sent.className='sentence';"
    "sent.textContent=p.picture?'':p.src.slice(0,-1).map(clean).join(' ');sec.appendChild(sent);"
    "var ctl=document.createElement('div');ctl.className='controls';"
    "var slider=document.createElement('input');slider.type='range';slider.min=0;"
    "slider.max=p.frames.length-1;slider.value=p.frames.length-1;"
    "var label=document.createElement('span');label.className='step';"
    "ctl.appendChild(slider);ctl.appendChild(document.createTextNode(' '));ctl.appendChild(label);sec.appendChild(ctl);"
    "var frames=p.frames.map(function(f){var d=document.createElement('div');d.className='frame';"
    "if(p.picture)d.appendChild(pictures(p,f,n++));"
    "var row=document.createElement('div');row.className='panels';d.appendChild(row);"
    "row.appendChild(heatmap(p,f,f.tgt,f.w,f.heads?'mean of '+f.heads.length+' heads':'',n++,f.chosen));"
    "(f.heads||[]).forEach(function(w,k){row.appendChild(heatmap(p,f,f.tgt,w,'head '+(k+1),n++,"
    "f.chosen&&f.chosen.map(function(c){return[c[k]];})));});"
    "(f.self||[]).forEach(function(w,k){row.appendChild(heatmap(p,f,p.src,w,"
    "'self-attention layer '+(k+1),n++));});"
    /* a Transformer decoder's layers, head by head, and their masked self-attention over
     * the positions each row reads (<s> and the words before) */
    "var LH=f.layer_heads||1;(f.layers||[]).forEach(function(w,k){row.appendChild(heatmap(p,f,"
    "f.tgt,w,'decoder layer '+(Math.floor(k/LH)+1)+(LH>1?', head '+(k%LH+1):''),n++));});"
    "(f.dec_self||[]).forEach(function(w,k){row.appendChild(heatmap(p,f,f.tgt,w,"
    "'decoder self-attention layer '+(k+1),n++,null,['<s>'].concat(f.tgt.slice(0,-1))));});"
    "sec.appendChild(d);"
    "return{div:d,label:'step '+f.step+('epoch'in f?' (epoch '+f.epoch.toFixed(2)+')':'')};});"
    "function show(k){frames.forEach(function(f,i){f.div.classList.toggle('shown',i==k);});"
    "label.textContent=frames[k].label;}"
    "slider.addEventListener('input',function(){show(+slider.value);});show(+slider.value);"
    "root.appendChild(sec);});"
    "document.body.dataset.heatmaps=document.querySelectorAll('svg.heatmap').length;"
    "})();";

/* n weights as a JSON list in thousandths (what a colour can show; the numbers
 * themselves are in alignments.jsonl). */
static void write_thousandths(FILE *f, const float *w, size_t n)
{
    fputc('[', f);
    for (size_t c = 0; c < n; c++)
        fprintf(f, "%s%ld", c ? "," : "", lround(w[c] * 1000));
    fputc(']', f);
}

/* count matrices of size each, as "name":[[..],[..]] */
static void write_panels(FILE *f, const char *name, const float *w, int count, size_t size)
{
    fprintf(f, ",\"%s\":[", name);
    for (int k = 0; k < count; k++) {
        fputs(k ? "," : "", f);
        write_thousandths(f, w + (size_t)k * size, size);
    }
    fputc(']', f);
}

/* One probe's frames as JSON: the alignment ("w"), and each head's and self-attention
 * layer's weights, the heads' chosen positions and a Transformer decoder's layers
 * ("layers", "dec_self") when the record has them. */
static void write_probe(FILE *f, const AlignLog *log, const int *shown, int m)
{
    const AlignRecord *first = &log->records[shown[0]];
    fprintf(f, "{\"id\":%ld,\"src\":[", first->id);
    for (int j = 0; j < first->n_src; j++) {
        fputs(j ? "," : "", f);
        json_write_string_in_html(f, first->src[j]);
    }
    fputc(']', f);
    /* an image model's probe: its picture (drawn under each word's attention), unless it
     * cannot be read any more; the matrices are drawn then */
    Picture pic = {0};
    Error ignored;
    if (first->image && picture_load(&pic, first->image, REPORT_PICTURE_SIZE, &ignored) == 0) {
        fputs(",\"picture\":\"", f);
        picture_png_uri(f, &pic, &ignored);
        fputc('"', f);
    }
    picture_free(&pic);
    fputs(",\"frames\":[", f);
    for (int k = 0; k < m; k++) {
        const AlignRecord *x = &log->records[shown[k]];
        fprintf(f, "%s{\"step\":%ld,", k ? "," : "", x->step);
        if (x->has_epoch)
            fprintf(f, "\"epoch\":%.4f,", x->epoch);
        fputs("\"tgt\":[", f);
        for (int i = 0; i < x->n_tgt; i++) {
            fputs(i ? "," : "", f);
            json_write_string_in_html(f, x->tgt[i]);
        }
        fputs("],\"w\":", f);
        const size_t TS = (size_t)x->n_tgt * x->n_src, SS = (size_t)x->n_src * x->n_src;
        write_thousandths(f, x->weights, TS);
        if (x->n_heads > 1)
            write_panels(f, "heads", x->heads, x->n_heads, TS);
        if (x->n_self > 0)
            write_panels(f, "self", x->self, x->n_self, SS);
        if (x->n_layers > 0) {
            fprintf(f, ",\"layer_heads\":%d", x->layer_heads);
            write_panels(f, "layers", x->layers, x->n_layers * x->layer_heads, TS);
        }
        if (x->n_dec_self > 0)
            write_panels(f, "dec_self", x->dec_self, x->n_dec_self, (size_t)x->n_tgt * x->n_tgt);
        if (x->n_chosen > 0)
            align_write_chosen(f, x->chosen, x->n_tgt, x->n_chosen, x->n_chosen);
        fputc('}', f);
    }
    fputs("]}", f);
}

int heatmap_report(const char *path, const AlignLog *log, const char *metrics_path,
                   const char *title, int max_frames, Error *err)
{
    static const char *const KEYS[N_SERIES][3] = {
        {"train_loss", "train", "#1f77b4"}, {"valid_loss", "valid", "#d62728"},
        {"valid_bleu", "valid BLEU", "#2ca02c"}, {"aer", "AER", "#9467bd"},
        {"attention_entropy", "entropy", "#ff7f0e"}, {"valid_exact", "exact %", "#8c564b"}};
    Series s[N_SERIES];
    for (int k = 0; k < N_SERIES; k++)
        s[k] = (Series){.key = KEYS[k][0], .label = KEYS[k][1], .color = KEYS[k][2]};
    AtomicFile out; /* a reader (the browser) sees the old report or the new one */
    int rc = read_curves(metrics_path, s, err) < 0 ? -2 : 0;
    if (rc == 0 && atomicfile_begin(&out, path, "", err) < 0)
        rc = -1;
    if (rc < 0) {
        for (int k = 0; k < N_SERIES; k++) {
            free(s[k].x);
            free(s[k].y);
        }
        return rc;
    }
    FILE *f = out.f;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
    heatmap_xml_text(f, title);
    fprintf(f, "</title><style>%s</style></head>\n<body>\n<h1>", REPORT_STYLE);
    heatmap_xml_text(f, title);
    fputs("</h1>\n", f);
    fputs("<div class=\"curves\">\n", f);
    chart(f, "loss", &s[0], &s[1], 1);
    chart(f, "validation BLEU and exact match", &s[2], &s[5], 0);
    chart(f, "alignment error rate", &s[3], NULL, 0);
    chart(f, "attention entropy (nats)", &s[4], NULL, 0);
    fputs("</div>\n<div id=\"probes\"></div>\n", f);
    for (int k = 0; k < N_SERIES; k++) {
        free(s[k].x);
        free(s[k].y);
    }

    /* probes in order of first appearance, each with its frames in step order (the log
     * is written in step order) */
    fputs("<script type=\"application/json\" id=\"s2s-data\">{\"probes\":[", f);
    int *frames = xmalloc_array((size_t)log->n + 1, sizeof(int));
    int *shown = xmalloc_array((size_t)log->n + 1, sizeof(int));
    int n_probes = 0;
    for (int a = 0; a < log->n; a++) {
        int first = 1;
        for (int b = 0; b < a && first; b++)
            first = log->records[b].id != log->records[a].id;
        if (!first)
            continue;
        int n = 0;
        for (int b = a; b < log->n; b++)
            if (log->records[b].id == log->records[a].id)
                frames[n++] = b;
        int m = pick_frames(frames, n, max_frames, shown);
        fputs(n_probes++ ? ",\n" : "\n", f);
        write_probe(f, log, shown, m);
    }
    free(frames);
    free(shown);
    fprintf(f, "]}</script>\n<script>%s%s%s</script>\n</body></html>\n", REPORT_SCRIPT,
            REPORT_SCRIPT_PICTURE, REPORT_SCRIPT_PAGE);
    return atomicfile_commit(&out, err); /* checks every write above */
}
