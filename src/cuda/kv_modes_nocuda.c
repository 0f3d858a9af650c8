/* Without CUDA the device side of the KV modes exists and says so (kv_modes_cuda.h). */
#ifndef PL_HAVE_CUDA
#include "cuda/kv_modes_cuda.h"

static const char k_no_cuda[] = "the CUDA KV modes: pagellm was built without CUDA (PAGELLM_CUDA=OFF or no nvcc)";

int pl_kvc_create(void *cuda_stream, pl_kvc **out, char *err, size_t err_len) {
    (void)cuda_stream;
    if (out) *out = NULL;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda);
}
void pl_kvc_destroy(pl_kvc *c) { (void)c; }
int pl_kvc_alloc(pl_kvc *c, size_t bytes, void **out, char *err, size_t err_len) {
    (void)c;
    (void)bytes;
    if (out) *out = NULL;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda);
}
void pl_kvc_free(pl_kvc *c, void *p) {
    (void)c;
    (void)p;
}
int pl_kvc_scratch(pl_kvc *c, int slot, size_t bytes, void **out, char *err, size_t err_len) {
    (void)c;
    (void)slot;
    (void)bytes;
    if (out) *out = NULL;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda);
}
int pl_kvc_dense_append(pl_kvc *c, size_t elem, int H, int D, int old, int n, const void *old_k, const void *old_v,
                        const void *k, const void *v, size_t token_stride, void *new_k, void *new_v, char *err,
                        size_t err_len) {
    (void)c, (void)elem, (void)H, (void)D, (void)old, (void)n, (void)old_k, (void)old_v, (void)k, (void)v;
    (void)token_stride, (void)new_k, (void)new_v;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda);
}
int pl_kvc_page_append(pl_kvc *c, pl_dtype dtype, int n, int H, int D, int page_size, int capacity_pages,
                       const void *k, const void *v, size_t token_stride, const int32_t *page_ids, const int32_t *slots,
                       void *key_pages, void *value_pages, char *err, size_t err_len) {
    (void)c, (void)dtype, (void)n, (void)H, (void)D, (void)page_size, (void)capacity_pages, (void)k, (void)v;
    (void)token_stride, (void)page_ids, (void)slots, (void)key_pages, (void)value_pages;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda);
}
int pl_kvc_stage(pl_kvc *c, size_t elem, int nrows, int H, int D, int S, const pl_kvc_stage_row *rows,
                 const void *key_pages, const void *value_pages, int page_size, void *dst_k, void *dst_v, float *mask,
                 char *err, size_t err_len) {
    (void)c, (void)elem, (void)nrows, (void)H, (void)D, (void)S, (void)rows, (void)key_pages, (void)value_pages;
    (void)page_size, (void)dst_k, (void)dst_v, (void)mask;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda);
}
int pl_kvc_causal_mask(pl_kvc *c, int n, int S, float *mask, char *err, size_t err_len) {
    (void)c, (void)n, (void)S, (void)mask;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda);
}
int pl_kvc_copy_rows(pl_kvc *c, void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t width,
                     int rows, char *err, size_t err_len) {
    (void)c, (void)dst, (void)dst_stride, (void)src, (void)src_stride, (void)width, (void)rows;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda);
}
int pl_kvc_attention(pl_kvc *c, pl_dtype dtype, int rows, int L, int S, int Hq, int Hkv, int D, float scale,
                     const void *q, size_t token_stride, const void *k, const void *v, const float *mask, void *out,
                     char *err, size_t err_len) {
    (void)c, (void)dtype, (void)rows, (void)L, (void)S, (void)Hq, (void)Hkv, (void)D, (void)scale, (void)q;
    (void)token_stride, (void)k, (void)v, (void)mask, (void)out;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s", k_no_cuda);
}
#else
typedef int pl_kv_modes_nocuda_unused; /* ISO C wants a declaration in every unit */
#endif
