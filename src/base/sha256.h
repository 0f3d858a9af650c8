/* SHA-256 (FIPS 180-4) for trace fingerprints: streaming update, hex digest. */
#ifndef PL_BASE_SHA256_H
#define PL_BASE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct pl_sha256 {
    uint32_t h[8];
    uint64_t total_bytes;
    uint8_t block[64];
    size_t block_len;
} pl_sha256;

void pl_sha256_init(pl_sha256 *s);
void pl_sha256_update(pl_sha256 *s, const void *data, size_t len);
void pl_sha256_final(pl_sha256 *s, uint8_t digest[32]);
/* One-shot digest as 64 lowercase hex characters plus NUL. */
void pl_sha256_hex(const void *data, size_t len, char hex[65]);
void pl_sha256_to_hex(const uint8_t digest[32], char hex[65]);

#endif
