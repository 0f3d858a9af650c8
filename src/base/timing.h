/* Monotonic wall clock for benchmarks and metrics. */
#ifndef PL_BASE_TIMING_H
#define PL_BASE_TIMING_H

double pl_now_seconds(void);
/* Median of n doubles (sorts a copy); mean of the middle pair for even n; 0 for n == 0. */
double pl_median(const double *v, int n);
/* Nearest-rank percentile: sorted[ceil(p * n) - 1]; 0 for n == 0. */
double pl_percentile_nearest(const double *v, int n, double p);

#endif
