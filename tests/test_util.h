/* Minimal test harness: CHECK records a failure and goes on; tests end with TEST_END(). */
#ifndef PL_TEST_UTIL_H
#define PL_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pl_test_failures = 0;
static int pl_test_checks = 0;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        pl_test_checks++;                                                            \
        if (!(cond)) {                                                               \
            pl_test_failures++;                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_MSG(cond, ...)                                                         \
    do {                                                                             \
        pl_test_checks++;                                                            \
        if (!(cond)) {                                                               \
            pl_test_failures++;                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
        }                                                                            \
    } while (0)

/* A call that must fail with status st and a message containing substring sub. */
#define CHECK_ERR(call, st, sub, errbuf)                                                        \
    do {                                                                                        \
        (errbuf)[0] = '\0';                                                                     \
        int rc_ = (call);                                                                       \
        CHECK_MSG(rc_ == (st), "got %d, want %d (%s)", rc_, (int)(st), (errbuf));               \
        CHECK_MSG(strstr((errbuf), (sub)) != NULL, "message '%s' lacks '%s'", (errbuf), (sub)); \
    } while (0)

#define CHECK_OK(call, errbuf)                                                   \
    do {                                                                         \
        (errbuf)[0] = '\0';                                                      \
        int rc_ = (call);                                                        \
        CHECK_MSG(rc_ == 0, "status %d: %s", rc_, (errbuf));                     \
    } while (0)

#define TEST_END()                                                                          \
    do {                                                                                    \
        printf("%d checks, %d failed\n", pl_test_checks, pl_test_failures);                \
        return pl_test_failures ? 1 : 0;                                                   \
    } while (0)

#endif
