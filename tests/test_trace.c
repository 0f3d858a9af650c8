/* The serving trace: bit-exact reproduction of the reference (seed 0, serving flags), its
 * canonical JSON hash, save/load round trip, and argument checks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sha256.h"
#include "pagellm/engine.h"
#include "test_util.h"

static const char *k_seed_sha = "59edc851c5baec49e41a65de2ed239533b8c1974fbe407e1063ddc1f41502ed5";

static void test_sha256(void) {
    char hex[65];
    pl_sha256_hex("", 0, hex);
    CHECK(!strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    pl_sha256_hex("abc", 3, hex);
    CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    pl_sha256_hex(two, strlen(two), hex);
    CHECK(!strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    /* a million 'a' fed in odd-sized pieces: exercises block carry-over */
    pl_sha256 s;
    pl_sha256_init(&s);
    char buf[997];
    memset(buf, 'a', sizeof buf);
    size_t left = 1000000;
    while (left) {
        size_t n = left < sizeof buf ? left : sizeof buf;
        pl_sha256_update(&s, buf, n);
        left -= n;
    }
    uint8_t d[32];
    pl_sha256_final(&s, d);
    pl_sha256_to_hex(d, hex);
    CHECK(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

static void test_seed_trace(void) {
    char err[256];
    pl_trace_config c = {16, 128, 1024, 32, 128, 151936, 151645, 0};
    pl_trace t;
    CHECK_OK(pl_trace_generate(&c, &t, err, sizeof err), err);
    static const int lens[16][2] = {{992, 81}, {804, 95}, {660, 111}, {279, 41}, {199, 102}, {541, 48},
                                    {261, 91}, {226, 80}, {963, 68},  {501, 82}, {986, 58},  {912, 51},
                                    {275, 57}, {427, 74}, {860, 34},  {590, 128}};
    CHECK(t.num_requests == 16);
    for (int i = 0; i < 16 && i < t.num_requests; i++) {
        CHECK_MSG(t.requests[i].prompt_len == lens[i][0] && t.requests[i].max_new_tokens == lens[i][1],
                  "request %d: %d/%d", i, t.requests[i].prompt_len, t.requests[i].max_new_tokens);
        CHECK(t.requests[i].request_id == i);
        for (int j = 0; j < t.requests[i].prompt_len; j++)
            if (t.requests[i].prompt[j] < 256 || t.requests[i].prompt[j] > 151935 || t.requests[i].prompt[j] == 151645) {
                CHECK_MSG(0, "request %d token %d = %d", i, j, t.requests[i].prompt[j]);
                break;
            }
    }
    CHECK(pl_trace_prompt_tokens(&t) == 9476);
    CHECK(pl_trace_output_tokens(&t) == 1201);
    char hex[65];
    CHECK_OK(pl_trace_sha256(&t, hex, err, sizeof err), err);
    CHECK_MSG(!strcmp(hex, k_seed_sha), "sha %s", hex);

    /* save / load round trip keeps the hash */
    char path[256];
    snprintf(path, sizeof path, "%s/pl_test_trace_%d.json", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    CHECK_OK(pl_trace_save(&t, path, err, sizeof err), err);
    pl_trace u;
    CHECK_OK(pl_trace_load(path, &u, err, sizeof err), err);
    char hex2[65] = "";
    CHECK_OK(pl_trace_sha256(&u, hex2, err, sizeof err), err);
    CHECK(!strcmp(hex, hex2));
    pl_trace_free(&u);
    remove(path);

    /* same seed, same trace; another seed, another trace */
    pl_trace t2;
    c.seed = 1;
    CHECK_OK(pl_trace_generate(&c, &t2, err, sizeof err), err);
    CHECK_OK(pl_trace_sha256(&t2, hex2, err, sizeof err), err);
    CHECK(strcmp(hex, hex2) != 0);
    pl_trace_free(&t2);
    pl_trace_free(&t);
}

static void test_compact_json_and_errors(void) {
    char err[256];
    int32_t p0[2] = {300, 301}, p1[1] = {7};
    pl_trace_request rq[2] = {{0, 2, p0, 5}, {1, 1, p1, 3}};
    pl_trace t = {2, rq};
    char *json = NULL;
    size_t n = 0;
    CHECK_OK(pl_trace_to_json(&t, &json, &n, err, sizeof err), err);
    CHECK(json && !strcmp(json, "[{\"max_new_tokens\":5,\"prompt_token_ids\":[300,301],\"request_id\":0},"
                                "{\"max_new_tokens\":3,\"prompt_token_ids\":[7],\"request_id\":1}]"));
    CHECK(n == strlen(json));
    free(json);

    /* EOS avoidance: ids in [256, 257]; eos == low becomes low + 1, otherwise id - 1 */
    for (int eos = 256; eos <= 257; eos++) {
        pl_trace_config ec = {3, 50, 60, 1, 2, 258, eos, 5};
        pl_trace et;
        CHECK_OK(pl_trace_generate(&ec, &et, err, sizeof err), err);
        int bad_ids = 0;
        for (int i = 0; i < et.num_requests; i++)
            for (int j = 0; j < et.requests[i].prompt_len; j++)
                bad_ids += et.requests[i].prompt[j] != (eos == 256 ? 257 : 256);
        CHECK_MSG(bad_ids == 0, "eos %d: %d ids not replaced", eos, bad_ids);
        pl_trace_free(&et);
    }

    pl_trace bad;
    pl_trace_config c = {0, 128, 1024, 32, 128, 151936, -1, 0};
    CHECK_ERR(pl_trace_generate(&c, &bad, err, sizeof err), PL_ERR_INVALID, "num_seqs", err);
    c.num_seqs = 2;
    c.min_input_len = 2000;
    CHECK_ERR(pl_trace_generate(&c, &bad, err, sizeof err), PL_ERR_INVALID, "input lengths", err);
    c.min_input_len = 1;
    c.vocab_size = 100;
    CHECK_ERR(pl_trace_generate(&c, &bad, err, sizeof err), PL_ERR_INVALID, "vocab_size", err);
    CHECK_ERR(pl_trace_load("/nonexistent/trace.json", &bad, err, sizeof err), PL_ERR_IO, "cannot open", err);
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s/pl_test_trace_bad_%d.json", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (f) {
        fputs("[{\"request_id\":0,\"max_new_tokens\":0,\"prompt_token_ids\":[1]}]", f);
        fclose(f);
        CHECK_ERR(pl_trace_load(tmp, &bad, err, sizeof err), PL_ERR_INVALID, "max_new_tokens", err);
        f = fopen(tmp, "w");
        fputs("{not json", f);
        fclose(f);
        CHECK_ERR(pl_trace_load(tmp, &bad, err, sizeof err), PL_ERR_INVALID, "not valid JSON", err);
        remove(tmp);
    }
}

int main(void) {
    test_sha256();
    test_seed_trace();
    test_compact_json_and_errors();
    TEST_END();
}
