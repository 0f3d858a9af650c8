/* The tokenizer's layout, shared by tokenizer.c and chat.c, and the reference encode path
 * the tests compare the fast one with. */
#ifndef PL_TOKENIZER_INTERNAL_H
#define PL_TOKENIZER_INTERNAL_H

#include "pagellm/tokenizer.h"
#include "tokenizer/bpe.h"
#include "tokenizer/pretok.h"

typedef struct pl_added_token {
    int32_t id;
    char *content;
    size_t len;
    int special;
} pl_added_token;

struct pl_tokenizer {
    pl_bpe bpe;
    int32_t vocab_size;       /* max id + 1 over vocab and added tokens */
    char **tok_str;           /* [vocab_size] tokenizer.json string form, NULL for no token */
    pl_added_token *added;    /* longest first, so the first match is the longest */
    int num_added;
    int32_t *added_index;     /* [vocab_size] index into added or -1 */
    unsigned char added_first[256]; /* bytes an added token can start with */
    int32_t eos_id;
    int nfc;                  /* normalizer NFC present */
    int chat_ok;              /* the chat template is Qwen's ChatML style */
    size_t max_token_bytes;
};

/* Encode through the readable reference path: PCRE2 split and rescanning BPE, no whole-word
 * shortcut. re: from pl_pretok_regex_create. */
int pl_tokenizer_encode_reference(const pl_tokenizer *tok, pl_pretok_regex *re, const char *text, size_t len,
                                  unsigned flags, pl_token_buf *out, char *err, size_t err_len);

/* Step over one UTF-8 character at s[0..n): its length when valid; -k for an invalid maximal
 * subpart of k bytes; 0 when s is a valid but unfinished prefix. */
int pl_utf8_step(const unsigned char *s, size_t n);

/* Copies src to a malloc'ed NUL-terminated string with each invalid maximal subpart replaced
 * by U+FFFD. */
char *pl_utf8_sanitize(const char *src, size_t n, size_t *out_len);

/* The code point ranges encode treats as already NFC (for the test that checks them). */
int pl_tok_nfc_safe_ranges(const uint32_t (**ranges)[2]);

#endif
