/* The Qwen2/Qwen3 pre-tokenizer split, on valid NFC UTF-8:
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*
 *   |\s*[\r\n]+|\s+(?!\S)|\s+
 * Two implementations: a hand-written scanner (the one encode uses: no backtracking engine,
 * ASCII table fast path) and PCRE2 (UTF + UCP), the readable reference the tests and the
 * benchmark compare it with. \s is Unicode White_Space, as in Oniguruma, which Hugging Face
 * tokenizers uses; \p{L} and \p{N} are general categories. */
#ifndef PL_TOKENIZER_PRETOK_H
#define PL_TOKENIZER_PRETOK_H

#include <stddef.h>

/* The split pattern exactly as Qwen2/Qwen3's tokenizer.json spells it. */
extern const char pl_qwen2_split_pattern[];

/* End of the pre-token that starts at pos (pos < len); s[0..len) must be valid UTF-8. */
size_t pl_pretok_next(const unsigned char *s, size_t len, size_t pos);

/* PCRE2 reference. Holds match data, so one per thread. */
typedef struct pl_pretok_regex pl_pretok_regex;
int pl_pretok_regex_create(pl_pretok_regex **out, char *err, size_t err_len);
/* Same contract as pl_pretok_next. */
size_t pl_pretok_regex_next(pl_pretok_regex *re, const unsigned char *s, size_t len, size_t pos);
void pl_pretok_regex_free(pl_pretok_regex *re);

/* Unicode White_Space (the \s of the split). */
int pl_pretok_is_space(unsigned cp);

#endif
