/* Shared helpers of the pagellm subcommands: flag parsing with clear messages. */
#ifndef PL_APP_CLI_H
#define PL_APP_CLI_H

#include <stdint.h>

/* Each subcommand: returns the process exit code (0 ok, 1 runtime failure, 2 usage). */
int pl_cmd_bench_serving(int argc, char **argv);
int pl_cmd_bench_attention(int argc, char **argv);
/* bench-attention --device cuda: called by pl_cmd_bench_attention with the same argv. */
int pl_cmd_bench_attention_cuda(int argc, char **argv);
int pl_cmd_bench_model(int argc, char **argv);
int pl_cmd_make_model(int argc, char **argv);
int pl_cmd_logits(int argc, char **argv);
int pl_cmd_generate(int argc, char **argv);
int pl_cmd_tokenize(int argc, char **argv);
int pl_cmd_bench_tokenizer(int argc, char **argv);

/* Parse helpers: on a bad value print "pagellm: --flag: ..." to stderr and return nonzero. */
int pl_cli_int(const char *flag, const char *value, long min, long max, int *out);
int pl_cli_u64(const char *flag, const char *value, uint64_t *out);
int pl_cli_float(const char *flag, const char *value, double min, double max, float *out);
/* Comma-separated ints ("1,2,3"); *out is malloc'ed. */
int pl_cli_int_list(const char *flag, const char *value, int32_t **out, int *count);
/* argv[*i] is a flag taking a value: returns the value and advances *i, or NULL (printing
 * "missing value") when there is none. Accepts "--flag value" and "--flag=value". */
const char *pl_cli_value(int argc, char **argv, int *i, const char *flag);
/* Nonzero when argv[i] is flag or starts with "flag=". */
int pl_cli_is(const char *arg, const char *flag);

#endif
