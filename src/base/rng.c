#include "base/rng.h"

#include <math.h>

static void mt_init_genrand(pl_mt19937 *r, uint32_t s) {
    r->mt[0] = s;
    for (int i = 1; i < 624; i++)
        r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
    r->index = 624;
}

void pl_mt_init_by_array(pl_mt19937 *r, const uint32_t *key, size_t key_len) {
    mt_init_genrand(r, 19650218u);
    size_t i = 1, j = 0;
    size_t k = 624 > key_len ? 624 : key_len;
    for (; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1664525u)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= 624) {
            r->mt[0] = r->mt[623];
            i = 1;
        }
        if (j >= key_len) j = 0;
    }
    for (k = 623; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= 624) {
            r->mt[0] = r->mt[623];
            i = 1;
        }
    }
    r->mt[0] = 0x80000000u;
    r->index = 624;
}

void pl_mt_seed(pl_mt19937 *r, uint64_t seed) {
    /* CPython: key = abs(seed) split into 32-bit words, least significant first; 0 -> [0]. */
    uint32_t key[2];
    size_t n = 0;
    do {
        key[n++] = (uint32_t)(seed & 0xffffffffu);
        seed >>= 32;
    } while (seed && n < 2);
    pl_mt_init_by_array(r, key, n);
}

uint32_t pl_mt_next_u32(pl_mt19937 *r) {
    if (r->index >= 624) {
        for (int i = 0; i < 624; i++) {
            uint32_t y = (r->mt[i] & 0x80000000u) | (r->mt[(i + 1) % 624] & 0x7fffffffu);
            r->mt[i] = r->mt[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        r->index = 0;
    }
    uint32_t y = r->mt[r->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

uint32_t pl_mt_getrandbits(pl_mt19937 *r, int k) {
    return pl_mt_next_u32(r) >> (32 - k);
}

int64_t pl_mt_randint(pl_mt19937 *r, int64_t a, int64_t b) {
    uint64_t n = (uint64_t)(b - a) + 1u; /* randrange width */
    int k = 0;
    while (k < 64 && (n >> k)) k++;      /* n.bit_length() */
    if (k > 32) k = 32;                  /* widths above 2^32 are outside the contract */
    uint64_t v;
    do {
        v = pl_mt_getrandbits(r, k);
    } while (v >= n);
    return a + (int64_t)v;
}

double pl_mt_random(pl_mt19937 *r) {
    uint32_t a = pl_mt_next_u32(r) >> 5, b = pl_mt_next_u32(r) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

double pl_mt_normal(pl_mt19937 *r) {
    double u1 = pl_mt_random(r), u2 = pl_mt_random(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
