/* Fast reading of the two large values of a tokenizer.json (model.vocab, ~150k entries, and
 * model.merges): a general JSON parser spends most of a second building nodes for them;
 * these scanners copy the strings straight into one arena. The rest of the file, with
 * those two values blanked, still goes through cJSON. */
#ifndef PL_TOKENIZER_TOKJSON_H
#define PL_TOKENIZER_TOKJSON_H

#include <stddef.h>
#include <stdint.h>

/* vocab: keys[i] -> ids[i]; merges: left[i], right[i] in rank order. Strings live in arena. */
typedef struct pl_tokjson {
    char **keys;
    int32_t *ids;
    size_t num_vocab;
    char **left, **right;
    size_t num_merges;
    char *vocab_arena, *merge_arena;
    char *rest;      /* the document with model.vocab -> {} and model.merges -> [] */
    size_t rest_len;
} pl_tokjson;

/* Splits the document. Fails (PL_ERR_INVALID, message naming the path and the byte offset)
 * on malformed JSON or when model.vocab / model.merges are missing or of the wrong shape. */
int pl_tokjson_read(const char *doc, size_t len, const char *path, pl_tokjson *out, char *err, size_t err_len);
void pl_tokjson_free(pl_tokjson *t);

/* Parses s[0..n) as exactly one JSON string (white space around it allowed) into out (room
 * for n + 1 bytes; NUL-terminated). Returns its length, which counts any NUL bytes that
 * \u0000 escapes put inside, or -1 when s is not one JSON string. A lone UTF-16 surrogate
 * escape becomes U+FFFD, as JavaScript's TextEncoder does. */
long pl_tokjson_parse_string(const char *s, size_t n, char *out);

#endif
