/* External check: small Qwen3 checkpoints random-initialised and run by Hugging Face
 * transformers (bench/golden_qwen3.py) load through the real loader and match the recorded
 * float32 logits: whole-prompt prefill, chunked prefill then decode through the paged cache,
 * a batch of both sequences, and the `pagellm logits` command. */
#define _POSIX_C_SOURCE 200809L
#include "golden_test_util.h"

int main(void) {
    const char *root = getenv("PAGELLM_ROOT");
    gt_check_all(root ? root : ".", PL_DEVICE_CPU, "--f32", 1e-4);
    TEST_END();
}
