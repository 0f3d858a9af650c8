/* libFuzzer target for the checkpoint parsers: the first input byte picks the parser
 * (0: a safetensors file, 1: config.json, 2: generation_config.json), the rest is the file.
 * Built by scripts/fuzz.sh; tests/test_model_fuzz_replay.c replays tests/fuzz/corpus/
 * through this same entry point in CI. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    char err[256];
    const uint8_t *body = data + 1;
    size_t n = size - 1;
    switch (data[0] % 3) {
    case 0: {
        /* A private copy, so reads past the end are caught by the sanitizer. */
        uint8_t *buf = malloc(n ? n : 1);
        if (!buf) return 0;
        memcpy(buf, body, n);
        pl_st_set set;
        memset(&set, 0, sizeof set);
        if (pl_st_parse(buf, n, "fuzz.safetensors", 0, &set, err, sizeof err) == PL_OK) {
            for (int i = 0; i < set.num_tensors; i++) {
                const pl_st_tensor *t = &set.tensors[i];
                /* Every accepted range lies inside the buffer: touch its ends. */
                if (t->nbytes) {
                    volatile uint8_t a = ((const uint8_t *)t->data)[0];
                    volatile uint8_t b = ((const uint8_t *)t->data)[t->nbytes - 1];
                    (void)a, (void)b;
                }
                if (pl_st_find(&set, t->name) != t) abort();
            }
        }
        free(set.tensors);
        free(buf);
        break;
    }
    case 1: {
        pl_model_config c;
        if (pl_config_parse((const char *)body, n, "config.json", &c, err, sizeof err) == PL_OK &&
            pl_config_validate(&c, err, sizeof err) != PL_OK)
            abort(); /* parse accepted what validation refuses */
        break;
    }
    default: {
        pl_model_config c;
        if (pl_model_shape_config("tiny", &c, err, sizeof err) != PL_OK) abort();
        pl_generation_config_parse((const char *)body, n, "generation_config.json", &c, err, sizeof err);
        if (c.num_eos < 0 || c.num_eos > PL_MAX_EOS_IDS) abort();
        break;
    }
    }
    return 0;
}
