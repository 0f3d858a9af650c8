#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pl_cli_is(const char *arg, const char *flag) {
    size_t n = strlen(flag);
    return strncmp(arg, flag, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

const char *pl_cli_value(int argc, char **argv, int *i, const char *flag) {
    const char *arg = argv[*i];
    size_t n = strlen(flag);
    if (arg[n] == '=') return arg + n + 1;
    if (*i + 1 >= argc) {
        fprintf(stderr, "pagellm: %s: missing value\n", flag);
        return NULL;
    }
    (*i)++;
    return argv[*i];
}

int pl_cli_int(const char *flag, const char *value, long min, long max, int *out) {
    char *end = NULL;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end != '\0') {
        fprintf(stderr, "pagellm: %s: expected an integer, got '%s'\n", flag, value);
        return 1;
    }
    if (v < min || v > max) {
        fprintf(stderr, "pagellm: %s: %ld is outside [%ld, %ld]\n", flag, v, min, max);
        return 1;
    }
    *out = (int)v;
    return 0;
}

int pl_cli_u64(const char *flag, const char *value, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(value, &end, 10);
    if (errno || end == value || *end != '\0' || value[0] == '-') {
        fprintf(stderr, "pagellm: %s: expected a non-negative integer, got '%s'\n", flag, value);
        return 1;
    }
    *out = (uint64_t)v;
    return 0;
}

int pl_cli_float(const char *flag, const char *value, double min, double max, float *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || end == value || *end != '\0') {
        fprintf(stderr, "pagellm: %s: expected a number, got '%s'\n", flag, value);
        return 1;
    }
    if (!(v >= min && v <= max)) {
        fprintf(stderr, "pagellm: %s: %g is outside [%g, %g]\n", flag, v, min, max);
        return 1;
    }
    *out = (float)v;
    return 0;
}

int pl_cli_int_list(const char *flag, const char *value, int32_t **out, int *count) {
    int cap = 16, n = 0;
    int32_t *v = malloc(sizeof(int32_t) * (size_t)cap);
    if (!v) return 1;
    const char *p = value;
    while (*p) {
        char *end = NULL;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (errno || end == p || x < INT32_MIN || x > INT32_MAX || (*end != ',' && *end != '\0')) {
            fprintf(stderr, "pagellm: %s: expected comma-separated integers, got '%s'\n", flag, value);
            free(v);
            return 1;
        }
        if (n == cap) {
            cap *= 2;
            int32_t *nv = realloc(v, sizeof(int32_t) * (size_t)cap);
            if (!nv) {
                free(v);
                return 1;
            }
            v = nv;
        }
        v[n++] = (int32_t)x;
        p = *end ? end + 1 : end;
    }
    if (n == 0) {
        fprintf(stderr, "pagellm: %s: empty list\n", flag);
        free(v);
        return 1;
    }
    *out = v;
    *count = n;
    return 0;
}
