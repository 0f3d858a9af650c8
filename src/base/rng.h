/* MT19937 exactly as CPython's random.Random: seeding through init_by_array, randint by
 * rejection sampling on getrandbits(k), random() from two draws. The serving trace depends
 * on these being bit-identical to Python. */
#ifndef PL_BASE_RNG_H
#define PL_BASE_RNG_H

#include <stdint.h>
#include <stddef.h>

typedef struct pl_mt19937 {
    uint32_t mt[624];
    int index;
} pl_mt19937;

/* random.Random(seed) for a non-negative seed < 2^64 (key = 32-bit words of the seed). */
void pl_mt_seed(pl_mt19937 *rng, uint64_t seed);
void pl_mt_init_by_array(pl_mt19937 *rng, const uint32_t *key, size_t key_len);
uint32_t pl_mt_next_u32(pl_mt19937 *rng);
/* Python's getrandbits(k) for 1 <= k <= 32. */
uint32_t pl_mt_getrandbits(pl_mt19937 *rng, int k);
/* Python's randint(a, b), a <= b, b - a < 2^32. */
int64_t pl_mt_randint(pl_mt19937 *rng, int64_t a, int64_t b);
/* Python's random(): a double in [0, 1) with 53 random bits. */
double pl_mt_random(pl_mt19937 *rng);
/* A standard normal draw (Box-Muller on pl_mt_random); not Python-compatible. */
double pl_mt_normal(pl_mt19937 *rng);

#endif
