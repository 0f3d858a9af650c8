#include "base/json.h"

#include <inttypes.h>
#include <math.h>

void pl_json_init(pl_json_writer *w, FILE *f, int pretty) {
    w->f = f;
    w->depth = 0;
    w->first[0] = 1;
    w->after_key = 0;
    w->pretty = pretty;
}

static void indent(pl_json_writer *w) {
    if (!w->pretty) return;
    fputc('\n', w->f);
    for (int i = 0; i < w->depth; i++) fputs("  ", w->f);
}

static void before_value(pl_json_writer *w) {
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth > 0) {
        if (!w->first[w->depth]) fputc(',', w->f);
        indent(w);
    }
    w->first[w->depth] = 0;
}

static void open(pl_json_writer *w, char c) {
    before_value(w);
    fputc(c, w->f);
    if (w->depth < 63) w->depth++;
    w->first[w->depth] = 1;
}

static void close(pl_json_writer *w, char c) {
    int empty = w->first[w->depth];
    if (w->depth > 0) w->depth--;
    if (!empty) indent(w);
    fputc(c, w->f);
    if (w->depth == 0 && w->pretty) fputc('\n', w->f);
}

void pl_json_begin_object(pl_json_writer *w) { open(w, '{'); }
void pl_json_end_object(pl_json_writer *w) { close(w, '}'); }
void pl_json_begin_array(pl_json_writer *w) { open(w, '['); }
void pl_json_end_array(pl_json_writer *w) { close(w, ']'); }

void pl_json_write_escaped(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

void pl_json_key(pl_json_writer *w, const char *key) {
    before_value(w);
    pl_json_write_escaped(w->f, key);
    fputs(w->pretty ? ": " : ":", w->f);
    w->after_key = 1;
}

void pl_json_string(pl_json_writer *w, const char *s) {
    before_value(w);
    pl_json_write_escaped(w->f, s);
}

void pl_json_double(pl_json_writer *w, double v) {
    before_value(w);
    if (isnan(v) || isinf(v)) fputs("null", w->f);
    else fprintf(w->f, "%.17g", v);
}

void pl_json_int(pl_json_writer *w, int64_t v) {
    before_value(w);
    fprintf(w->f, "%" PRId64, v);
}

void pl_json_bool(pl_json_writer *w, int v) {
    before_value(w);
    fputs(v ? "true" : "false", w->f);
}

void pl_json_null(pl_json_writer *w) {
    before_value(w);
    fputs("null", w->f);
}
