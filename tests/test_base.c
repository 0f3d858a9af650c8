/* src/base: MT19937 bit-compatibility with CPython, bf16 rounding, statistics, JSON writer. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>

#include "base/bf16.h"
#include "base/json.h"
#include "base/rng.h"
#include "base/timing.h"
#include "pagellm/status.h"
#include "test_util.h"

static void test_mt_matches_python(void) {
    /* Values printed by CPython 3.11: random.Random(seed).getrandbits(32) / randint. */
    pl_mt19937 r;
    pl_mt_seed(&r, 0);
    const uint32_t want0[5] = {3626764237u, 1654615998u, 3255389356u, 3823568514u, 1806341205u};
    for (int i = 0; i < 5; i++) CHECK(pl_mt_getrandbits(&r, 32) == want0[i]);
    pl_mt_seed(&r, 0);
    const int64_t want_ri[5] = {992, 522, 904, 558, 169};
    for (int i = 0; i < 5; i++) CHECK(pl_mt_randint(&r, 128, 1024) == want_ri[i]);
    const int64_t want_tok[3] = {68129, 134283, 127639};
    for (int i = 0; i < 3; i++) CHECK(pl_mt_randint(&r, 256, 151935) == want_tok[i]);
    pl_mt_seed(&r, 12345678901234ull); /* a two-word key */
    const uint32_t want_big[3] = {107551873u, 2403399316u, 624174316u};
    for (int i = 0; i < 3; i++) CHECK(pl_mt_getrandbits(&r, 32) == want_big[i]);
    pl_mt_seed(&r, 7);
    CHECK(pl_mt_random(&r) == 0.32383276483316237);
    /* randint stays inside its bounds and hits both ends. */
    int lo = 0, hi = 0;
    for (int i = 0; i < 2000; i++) {
        int64_t v = pl_mt_randint(&r, -3, 3);
        CHECK(v >= -3 && v <= 3);
        lo += v == -3;
        hi += v == 3;
    }
    CHECK(lo > 0 && hi > 0);
}

static void test_bf16(void) {
    CHECK(pl_f32_to_bf16(1.0f) == 0x3f80);
    CHECK(pl_f32_to_bf16(1.00390625f) == 0x3f80); /* tie -> even */
    CHECK(pl_f32_to_bf16(1.01171875f) == 0x3f82); /* tie -> even (up) */
    CHECK(pl_f32_to_bf16(nextafterf(1.00390625f, 2.0f)) == 0x3f81); /* just above the tie */
    CHECK(pl_f32_to_bf16(-2.5f) == 0xc020);
    CHECK(pl_f32_to_bf16(INFINITY) == 0x7f80);
    CHECK(pl_f32_to_bf16(3.4e38f) == 0x7f80); /* rounds up to infinity */
    uint16_t nan = pl_f32_to_bf16(NAN);
    CHECK(isnan(pl_bf16_to_f32(nan)));
    for (uint32_t h = 0; h < 0x10000; h += 7) { /* widening is exact and round-trips */
        float f = pl_bf16_to_f32((uint16_t)h);
        if (!isnan(f)) CHECK(pl_f32_to_bf16(f) == h);
    }
    float src[3] = {0.5f, -1.25f, 3.0f}, back[3];
    uint16_t mid[3];
    pl_bf16_from_f32_array(mid, src, 3);
    pl_bf16_to_f32_array(back, mid, 3);
    CHECK(back[0] == 0.5f && back[1] == -1.25f && back[2] == 3.0f);
}

static void test_stats(void) {
    double v[5] = {5, 1, 4, 2, 3};
    CHECK(pl_median(v, 5) == 3);
    CHECK(pl_median(v, 4) == 3); /* {5,1,4,2} -> (2+4)/2 */
    CHECK(pl_median(v, 0) == 0);
    CHECK(pl_percentile_nearest(v, 5, 0.95) == 5);
    double w[20];
    for (int i = 0; i < 20; i++) w[i] = 20 - i;
    CHECK(pl_percentile_nearest(w, 20, 0.95) == 19); /* sorted[ceil(19) - 1] */
    CHECK(pl_now_seconds() > 0);
}

static void test_json(void) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    pl_json_writer w;
    pl_json_init(&w, f, 0);
    pl_json_begin_object(&w);
    pl_json_key(&w, "a");
    pl_json_int(&w, 1);
    pl_json_key(&w, "b\"q");
    pl_json_begin_array(&w);
    pl_json_double(&w, 0.5);
    pl_json_null(&w);
    pl_json_bool(&w, 1);
    pl_json_string(&w, "x\ny");
    pl_json_double(&w, NAN);
    pl_json_end_array(&w);
    pl_json_key(&w, "e");
    pl_json_begin_object(&w);
    pl_json_end_object(&w);
    pl_json_end_object(&w);
    fclose(f);
    CHECK_MSG(strcmp(buf, "{\"a\":1,\"b\\\"q\":[0.5,null,true,\"x\\ny\",null],\"e\":{}}") == 0, "got %s", buf);
    free(buf);
}

static void test_status(void) {
    char err[64];
    CHECK(pl_fail(err, sizeof err, PL_ERR_INVALID, "page_size: %d", -1) == PL_ERR_INVALID);
    CHECK(strcmp(err, "page_size: -1") == 0);
    CHECK(pl_fail(NULL, 0, PL_ERR_IO, "x") == PL_ERR_IO);
    CHECK(strcmp(pl_status_name(PL_OK), "PL_OK") == 0);
    CHECK(strcmp(pl_status_name(12345), "PL_ERR_UNKNOWN") == 0);
}

int main(void) {
    test_mt_matches_python();
    test_bf16();
    test_stats();
    test_json();
    test_status();
    TEST_END();
}
