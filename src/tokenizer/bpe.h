/* Byte-level BPE over raw bytes: token byte strings, a bytes -> id hash, merge ranks keyed
 * by the id pair. Merging picks the lowest-rank adjacent pair, leftmost on ties, as Hugging
 * Face tokenizers does. */
#ifndef PL_TOKENIZER_BPE_H
#define PL_TOKENIZER_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "pagellm/tokenizer.h"

typedef struct pl_bpe {
    int32_t num_ids;        /* ids are 0..num_ids-1; gaps have len -1 */
    uint32_t *off;          /* [num_ids] byte offset in arena */
    int32_t *len;           /* [num_ids] byte length, -1 for no token */
    unsigned char *arena;
    size_t arena_len;
    uint64_t *vmap;         /* bytes -> (hash tag << 32 | id + 1), 0 = empty; the tag skips
                               most non-matching probes without touching the arena */
    size_t vmask;
    struct pl_bpe_merge {   /* one cache line holds four: a found merge costs one miss */
        uint64_t key;       /* left << 32 | right, UINT64_MAX = empty */
        uint32_t rank;
        int32_t merged;
    } *merges;
    size_t mmask;
    int32_t byte_id[256];
    unsigned char *whole;   /* [num_ids] 1: BPE of this token's bytes gives the token itself */
} pl_bpe;

/* Scratch space for merging; one per encode call (the tokenizer itself stays read-only). */
typedef struct pl_bpe_scratch {
    int32_t *ids;
    uint32_t *rank;
    int32_t *prev, *next;
    uint64_t *heap;
    size_t cap, heap_cap;
} pl_bpe_scratch;
void pl_bpe_scratch_free(pl_bpe_scratch *sc);

/* Builds the vocab tables. tokens[i] / lens[i]: raw bytes of id i (lens[i] <= 0: no token).
 * num_merges sizes the merge table that pl_bpe_set_merges fills. On failure b is freed. */
int pl_bpe_init(pl_bpe *b, int32_t num_ids, const unsigned char *const *tokens, const int32_t *lens,
                size_t num_merges, char *err, size_t err_len);
/* Merges as left/right ids in rank order (at most num_merges of pl_bpe_init); then marks the
 * tokens BPE reproduces whole. Fails naming the bad merge; the caller frees b. */
int pl_bpe_set_merges(pl_bpe *b, const int32_t *merge_left, const int32_t *merge_right, size_t num_merges, char *err,
                      size_t err_len);
void pl_bpe_free(pl_bpe *b);

/* Id of the token with exactly these bytes, or -1. */
int32_t pl_bpe_lookup(const pl_bpe *b, const unsigned char *s, size_t n);

/* Appends the BPE ids of one pre-token (n > 0) to out. fast: nonzero lets a pre-token that
 * is itself a token (and that BPE would produce whole) skip merging. */
int pl_bpe_encode_word(const pl_bpe *b, const unsigned char *s, size_t n, int fast, pl_bpe_scratch *sc,
                       pl_token_buf *out);
/* Readable reference: repeated scans for the lowest-rank pair, no tables beyond the merge map. */
int pl_bpe_encode_word_reference(const pl_bpe *b, const unsigned char *s, size_t n, pl_token_buf *out);


#endif
