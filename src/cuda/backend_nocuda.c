/* Without CUDA the backend's entry points exist and say so. */
#ifndef PL_HAVE_CUDA
#include "cuda/backend_cuda.h"
#include "pagellm/cuda.h"
#include "model/model_internal.h"

static const char k_no_cuda[] = "the CUDA backend: pagellm was built without CUDA (PAGELLM_CUDA=OFF or no nvcc)";

int pl_cuda_device_check(char *err, size_t err_len) { return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda); }

int pl_cuda_backend_create(int act, int device, pl_cuda_backend **out, char *err, size_t err_len) {
    (void)act;
    (void)device;
    if (out) *out = NULL;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda);
}
void pl_cuda_backend_destroy(pl_cuda_backend *b) { (void)b; }
const pl_backend_ops *pl_cuda_backend_ops(void) { return NULL; }
const char *pl_cuda_backend_last_error(const pl_cuda_backend *b) {
    (void)b;
    return k_no_cuda;
}
void *pl_cuda_backend_stream(pl_cuda_backend *b) {
    (void)b;
    return NULL;
}
int pl_cuda_backend_sync(pl_cuda_backend *b, char *err, size_t err_len) {
    (void)b;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda);
}
size_t pl_cuda_backend_live_bytes(const pl_cuda_backend *b) {
    (void)b;
    return 0;
}
void pl_cuda_backend_use_gemv(pl_cuda_backend *b, int mode) {
    (void)b;
    (void)mode;
}
void pl_cuda_backend_attn_split_rule(pl_cuda_backend *b, int rule) {
    (void)b;
    (void)rule;
}
void pl_cuda_backend_skip_ops(pl_cuda_backend *b, int mask) {
    (void)b;
    (void)mask;
}
void pl_cuda_backend_attn_splits(pl_cuda_backend *b, int splits) {
    (void)b;
    (void)splits;
}
void pl_cuda_backend_attn_warps(pl_cuda_backend *b, int warps) {
    (void)b;
    (void)warps;
}
void pl_cuda_backend_attn_copy(pl_cuda_backend *b, int mode) {
    (void)b;
    (void)mode;
}
void pl_cuda_backend_attn_early(pl_cuda_backend *b, int mode) {
    (void)b;
    (void)mode;
}
void pl_cuda_backend_tile_copy(pl_cuda_backend *b, int mode) {
    (void)b;
    (void)mode;
}
void pl_cuda_backend_tune_tile(pl_cuda_backend *b, int ctas_per_sm, int max_splits, int min_ktiles) {
    (void)b;
    (void)ctas_per_sm;
    (void)max_splits;
    (void)min_ktiles;
}
void pl_cuda_backend_use_pdl(pl_cuda_backend *b, int on) {
    (void)b;
    (void)on;
}
void pl_cuda_backend_use_graphs(pl_cuda_backend *b, int on) {
    (void)b;
    (void)on;
}
void pl_cuda_backend_graph_segments(pl_cuda_backend *b, int segments, int first_layers) {
    (void)b;
    (void)segments;
    (void)first_layers;
}
void pl_cuda_backend_time_graphs(pl_cuda_backend *b, int on) {
    (void)b;
    (void)on;
}
double pl_cuda_backend_graph_device_seconds(const pl_cuda_backend *b) {
    (void)b;
    return 0;
}
void pl_cuda_backend_attn_lean(pl_cuda_backend *b, int mode) {
    (void)b;
    (void)mode;
}
void pl_cuda_backend_parts_ctas(pl_cuda_backend *b, int ctas) {
    (void)b;
    (void)ctas;
}
void pl_cuda_backend_step_uploads(pl_cuda_backend *b, int mode) {
    (void)b;
    (void)mode;
}
double pl_cuda_backend_replay_burst(pl_cuda_backend *b, int n, double *launch_us) {
    (void)b;
    (void)n;
    if (launch_us) *launch_us = 0;
    return -1;
}
double pl_cuda_backend_replay_host_seconds(const pl_cuda_backend *b, double *launch_seconds) {
    (void)b;
    if (launch_seconds) *launch_seconds = 0;
    return 0;
}
void pl_cuda_backend_graph_stats(const pl_cuda_backend *b, long *captures, long *replays, long *retries) {
    (void)b;
    *captures = *replays = *retries = 0;
}
long pl_cuda_backend_graph_switches(const pl_cuda_backend *b) {
    (void)b;
    return 0;
}
void pl_cuda_backend_inject_alloc_failure(pl_cuda_backend *b, int nth) {
    (void)b;
    (void)nth;
}
const pl_kv_storage_ops *pl_cuda_backend_kv_storage(pl_cuda_backend *b) {
    (void)b;
    return NULL;
}
int pl_cuda_kv_budget_pages(size_t page_bytes, size_t budget_mib, double fraction, size_t reserve_mib, int *pages,
                            char *err, size_t err_len) {
    (void)page_bytes;
    (void)fraction;
    (void)reserve_mib;
    if (!pages) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_cuda_kv_budget_pages: pages is NULL");
    *pages = 0;
    if (page_bytes == 0) return pl_fail(err, err_len, PL_ERR_INVALID, "page_bytes: 0 must be positive");
    if (budget_mib > 0) { /* a MiB figure needs no device */
        size_t n = (budget_mib << 20) / page_bytes;
        if (n < 1)
            return pl_fail(err, err_len, PL_ERR_NOMEM, "KV budget of %zu bytes holds no page of %zu bytes",
                           budget_mib << 20, page_bytes);
        *pages = n > 0x7fffffff ? 0x7fffffff : (int)n;
        return PL_OK;
    }
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda);
}
int pl_cuda_sample(pl_cuda_backend *b, const float *logits, size_t ld, int rows, int vocab,
                   const pl_cuda_sample_params *params, int32_t *tokens, char *err, size_t err_len) {
    (void)b;
    (void)logits;
    (void)ld;
    (void)rows;
    (void)vocab;
    (void)params;
    (void)tokens;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda);
}
double pl_cuda_measure_copy_gbps(size_t bytes, int reps, char *device_name, size_t name_len, char *err,
                                 size_t err_len) {
    (void)bytes;
    (void)reps;
    if (device_name && name_len) device_name[0] = '\0';
    pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "pl_cuda_measure_copy_gbps: %s", k_no_cuda);
    return -1.0;
}
#else
typedef int pl_backend_nocuda_unused; /* ISO C wants a declaration in every unit */
#endif
