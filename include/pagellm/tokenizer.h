/* Qwen2/Qwen3 tokenizer: a Hugging Face tokenizer.json with byte-level BPE, the Qwen2 split
 * regex, NFC normalization and added (special) tokens; the Qwen3 chat template; a streaming
 * decoder that never emits half a UTF-8 character.
 *
 * Text in and out is UTF-8. Invalid UTF-8 given to encode is not an error: each maximal
 * invalid subsequence is replaced by U+FFFD first (the WHATWG / Unicode "maximal subpart"
 * rule, as Node's TextDecoder and Rust's from_utf8_lossy do), then encoded. Decoded text is
 * always valid UTF-8: byte sequences the ids spell that are not valid UTF-8 come out as
 * U+FFFD by the same rule.
 *
 * A loaded tokenizer is immutable: encode and decode may run from several threads at once. */
#ifndef PAGELLM_TOKENIZER_H
#define PAGELLM_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pl_tokenizer pl_tokenizer;

/* Loads tokenizer.json. config_path: tokenizer_config.json for the EOS token and the chat
 * template; NULL looks for tokenizer_config.json beside tokenizer_path and goes on without
 * it when absent (EOS then defaults to <|im_end|>, else <|endoftext|>). Supported: model
 * type BPE over the byte-level alphabet, the Qwen2 Split regex + ByteLevel pre-tokenizer,
 * an NFC or absent normalizer. Anything else fails with PL_ERR_UNSUPPORTED naming it. */
int pl_tokenizer_load(const char *tokenizer_path, const char *config_path, pl_tokenizer **out, char *err,
                      size_t err_len);
void pl_tokenizer_free(pl_tokenizer *tok);

/* One more than the largest token id (vocab + added tokens): 151669 for Qwen3. */
int32_t pl_tokenizer_vocab_size(const pl_tokenizer *tok);
/* The EOS id from tokenizer_config.json (151645 <|im_end|> for Qwen3 chat checkpoints). */
int32_t pl_tokenizer_eos_id(const pl_tokenizer *tok);
/* Longest byte string a single id decodes to (sizes streaming buffers). */
size_t pl_tokenizer_max_token_bytes(const pl_tokenizer *tok);

/* A growable id list; start from {0} and free with pl_token_buf_free. */
typedef struct pl_token_buf {
    int32_t *ids;
    size_t n, cap;
} pl_token_buf;
void pl_token_buf_free(pl_token_buf *buf);
/* Appends one id (grows the list); PL_ERR_NOMEM on allocation failure. */
int pl_token_buf_push(pl_token_buf *buf, int32_t id);

enum {
    /* encode: match added/special tokens (<|im_start|>, <think>, ...) in the text before
     * splitting, as Hugging Face does by default. Without it they are plain text. */
    PL_TOK_MATCH_SPECIAL = 1u << 0,
    /* decode: leave out tokens marked special (<|im_end|>, ...). */
    PL_TOK_SKIP_SPECIAL = 1u << 1,
    /* decode: ids that name no token (the model's padded vocab rows) decode to nothing
     * instead of failing, as Hugging Face does. */
    PL_TOK_SKIP_UNKNOWN = 1u << 2,
};

/* Appends the ids of text[0..len) to out (no BOS/EOS is added: Qwen adds none). On failure
 * out keeps its old length. */
int pl_tokenizer_encode(const pl_tokenizer *tok, const char *text, size_t len, unsigned flags, pl_token_buf *out,
                        char *err, size_t err_len);

/* Decodes ids to a malloc'ed NUL-terminated UTF-8 string (*len excludes the NUL). An id
 * outside [0, vocab_size) or not naming a token fails with PL_ERR_INVALID unless
 * PL_TOK_SKIP_UNKNOWN. */
int pl_tokenizer_decode(const pl_tokenizer *tok, const int32_t *ids, size_t n, unsigned flags, char **text,
                        size_t *len, char *err, size_t err_len);

/* The string form of an id as written in tokenizer.json ("Ġthe", "<|im_end|>"); NULL when
 * the id names no token. */
const char *pl_tokenizer_id_to_token(const pl_tokenizer *tok, int32_t id);
/* Raw bytes an id decodes to; NULL when the id names no token. */
const char *pl_tokenizer_token_bytes(const pl_tokenizer *tok, int32_t id, size_t *len);
/* Id of a token given in tokenizer.json's string form; PL_ERR_INVALID naming it if unknown. */
int pl_tokenizer_token_to_id(const pl_tokenizer *tok, const char *token, int32_t *id, char *err, size_t err_len);
/* Nonzero when id is an added token marked special. */
int pl_tokenizer_is_special(const pl_tokenizer *tok, int32_t id);

/* Streaming decoder: feed ids one at a time; each call yields the complete characters the
 * id finishes. The concatenation of all outputs and the final flush equals
 * pl_tokenizer_decode of the whole sequence with the same flags. */
typedef struct pl_detok {
    const pl_tokenizer *tok;
    unsigned flags;
    unsigned char pend[4]; /* bytes of an unfinished UTF-8 character */
    int npend;
    char *out;             /* output buffer, owned */
    size_t out_cap;
} pl_detok;
void pl_detok_init(pl_detok *d, const pl_tokenizer *tok, unsigned flags);
/* *text (NUL-terminated, valid UTF-8, possibly empty) stays valid until the next call. */
int pl_detok_push(pl_detok *d, int32_t id, const char **text, size_t *len, char *err, size_t err_len);
/* Ends the stream: a dangling partial character comes out as U+FFFD. */
int pl_detok_flush(pl_detok *d, const char **text, size_t *len, char *err, size_t err_len);
void pl_detok_free(pl_detok *d);

/* Chat template (Qwen3's, for turns without tools). role: "system", "user", "assistant" or
 * "tool"; reasoning_content may be NULL (then an assistant content's <think>...</think>
 * part is taken as the reasoning, as the template does). */
typedef struct pl_chat_message {
    const char *role;
    const char *content;
    const char *reasoning_content;
} pl_chat_message;

/* Renders messages to a malloc'ed prompt string. add_generation_prompt appends the
 * assistant header; enable_thinking == 0 then appends an empty think block, as Qwen3's
 * template does for enable_thinking=false. Fails with PL_ERR_UNSUPPORTED when
 * tokenizer_config.json has a chat template that is not Qwen's ChatML style. */
int pl_tokenizer_apply_chat(const pl_tokenizer *tok, const pl_chat_message *messages, size_t n,
                            int add_generation_prompt, int enable_thinking, char **text, size_t *len, char *err,
                            size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
