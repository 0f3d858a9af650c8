/* Replays the committed seed corpus (tests/fuzz/corpus/) through the libFuzzer entry point
 * of tests/fuzz/fuzz_safetensors.c, so the harness builds and runs in CI (the sanitizer
 * build catches what it would), and checks the seeds parse as their names say. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>

#include "fuzz/fuzz_safetensors.c"
#include "test_util.h"

static uint8_t *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)len + 1);
    if (fread(b, 1, (size_t)len, f) != (size_t)len) len = 0;
    fclose(f);
    *n = (size_t)len;
    return b;
}

int main(void) {
    const char *root = getenv("PAGELLM_ROOT");
    char dir[1024], path[2048], err[256];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus", root ? root : ".");
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s", dir);
    int files = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n;
        uint8_t *b = slurp(path, &n);
        CHECK(b != NULL);
        if (!b) continue;
        CHECK(LLVMFuzzerTestOneInput(b, n) == 0);
        files++;
        /* Seeds named st_valid / config_v4 / config_v5 parse; the other st_ and config_ ones do not. */
        int ok = -1;
        if (!strncmp(e->d_name, "st_", 3) && n > 0) {
            pl_st_set set;
            memset(&set, 0, sizeof set);
            ok = pl_st_parse(b + 1, n - 1, e->d_name, 0, &set, err, sizeof err) == PL_OK;
            free(set.tensors);
        } else if (!strncmp(e->d_name, "config_", 7) && n > 0) {
            pl_model_config c;
            ok = pl_config_parse((const char *)b + 1, n - 1, e->d_name, &c, err, sizeof err) == PL_OK;
        }
        int want = !strcmp(e->d_name, "st_valid.bin") || !strcmp(e->d_name, "st_empty_tensor.bin") ||
                   !strcmp(e->d_name, "config_v4.bin") || !strcmp(e->d_name, "config_v5.bin");
        if (ok >= 0) CHECK_MSG(ok == want, "%s: parsed %d, expected %d (%s)", e->d_name, ok, want, err);
        free(b);
    }
    if (d) closedir(d);
    CHECK_MSG(files >= 10, "only %d corpus files", files);
    printf("replayed %d corpus files\n", files);
    TEST_END();
}
