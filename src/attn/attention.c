/* Placeholder: the CPU attention issue replaces this file. */
#include "pagellm/attention.h"

int pl_paged_attention_validate(const pl_paged_attention_args *args, char *err, size_t err_len) {
    (void)args;
    return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "pl_paged_attention: not implemented yet");
}

int pl_paged_attention(const pl_paged_attention_args *args, char *err, size_t err_len) {
    return pl_paged_attention_validate(args, err, err_len);
}
