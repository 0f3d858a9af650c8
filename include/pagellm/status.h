/* pagellm status codes: every library function returns one of these and, on failure,
 * writes a message naming the bad argument and its value into a caller buffer. */
#ifndef PAGELLM_STATUS_H
#define PAGELLM_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pl_status {
    PL_OK = 0,
    PL_ERR_INVALID = -1,     /* a bad argument: the message names it and its value */
    PL_ERR_UNSUPPORTED = -2, /* valid, but outside what this path (schedule, backend) can do */
    PL_ERR_NOMEM = -3,       /* an allocation failed */
    PL_ERR_IO = -4,          /* a file could not be read or written */
    PL_ERR_NO_PAGES = -5,    /* a capped page pool is exhausted; nothing was changed */
    PL_ERR_CUDA = -6,        /* a CUDA runtime or library call failed */
    PL_ERR_INTERNAL = -7     /* an invariant broke: a bug in pagellm */
} pl_status;

/* Short constant name of a status code ("PL_ERR_INVALID"). */
const char *pl_status_name(int status);

/* Formats the message into err (if err != NULL and err_len > 0) and returns status.
 * Lets a failure path read: return pl_fail(err, err_len, PL_ERR_INVALID, "...", ...); */
int pl_fail(char *err, size_t err_len, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
