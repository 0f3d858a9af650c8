#include "pagellm/status.h"

#include <stdarg.h>
#include <stdio.h>

const char *pl_status_name(int status) {
    switch (status) {
    case PL_OK: return "PL_OK";
    case PL_ERR_INVALID: return "PL_ERR_INVALID";
    case PL_ERR_UNSUPPORTED: return "PL_ERR_UNSUPPORTED";
    case PL_ERR_NOMEM: return "PL_ERR_NOMEM";
    case PL_ERR_IO: return "PL_ERR_IO";
    case PL_ERR_NO_PAGES: return "PL_ERR_NO_PAGES";
    case PL_ERR_CUDA: return "PL_ERR_CUDA";
    case PL_ERR_INTERNAL: return "PL_ERR_INTERNAL";
    default: return "PL_ERR_UNKNOWN";
    }
}

int pl_fail(char *err, size_t err_len, int status, const char *fmt, ...) {
    if (err && err_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return status;
}
