/* A small streaming JSON writer for benchmark and trace output. Keeps a nesting stack so
 * commas are placed for the caller; numbers are written with enough digits to round-trip. */
#ifndef PL_BASE_JSON_H
#define PL_BASE_JSON_H

#include <stdint.h>
#include <stdio.h>

typedef struct pl_json_writer {
    FILE *f;
    int depth;
    int first[64];  /* per nesting level: no value written yet */
    int after_key;  /* a key was just written: the next value takes no comma */
    int pretty;
} pl_json_writer;

void pl_json_init(pl_json_writer *w, FILE *f, int pretty);
void pl_json_begin_object(pl_json_writer *w);
void pl_json_end_object(pl_json_writer *w);
void pl_json_begin_array(pl_json_writer *w);
void pl_json_end_array(pl_json_writer *w);
void pl_json_key(pl_json_writer *w, const char *key);
void pl_json_string(pl_json_writer *w, const char *s);
void pl_json_double(pl_json_writer *w, double v); /* NaN and Inf are written as null */
void pl_json_int(pl_json_writer *w, int64_t v);
void pl_json_bool(pl_json_writer *w, int v);
void pl_json_null(pl_json_writer *w);
/* Writes s as a JSON string literal (quotes and escapes) to f. */
void pl_json_write_escaped(FILE *f, const char *s);

#endif
