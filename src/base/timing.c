#define _POSIX_C_SOURCE 200809L
#include "base/timing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double pl_now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double *sorted_copy(const double *v, int n) {
    double *s = malloc(sizeof(double) * (size_t)n);
    if (!s) return NULL;
    memcpy(s, v, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    return s;
}

double pl_median(const double *v, int n) {
    if (n <= 0) return 0.0;
    double *s = sorted_copy(v, n);
    if (!s) return NAN;
    double m = (n % 2) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

double pl_percentile_nearest(const double *v, int n, double p) {
    if (n <= 0) return 0.0;
    double *s = sorted_copy(v, n);
    if (!s) return NAN;
    int rank = (int)ceil(p * n);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    double r = s[rank - 1];
    free(s);
    return r;
}
