/* Without the CUDA backend the device entry points exist and say so. */
#include "pagellm/attention.h"

#ifndef PL_HAVE_CUDA
int pl_paged_attention_cuda(const pl_paged_attention_args *args, void *cuda_stream, char *err, size_t err_len) {
    (void)args;
    (void)cuda_stream;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "pl_paged_attention_cuda: pagellm was built without CUDA (PAGELLM_CUDA=OFF or no nvcc)");
}

int pl_paged_attention_cuda_validate(const pl_paged_attention_args *args, void *cuda_stream, char *err, size_t err_len) {
    return pl_paged_attention_cuda(args, cuda_stream, err, err_len);
}
#endif
