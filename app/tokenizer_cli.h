/* Where the CLI finds tokenizer.json when --tokenizer is not given (shared by tokenize,
 * bench-tokenizer and generate; defined in cmd_tokenize.c). */
#ifndef PL_APP_TOKENIZER_CLI_H
#define PL_APP_TOKENIZER_CLI_H

#include <stddef.h>

/* The default search, for --help texts. */
#define PL_TOKENIZER_DEFAULT_HELP \
    "$PAGELLM_TOKENIZER, else tokenizer.json beside the pagellm binary (the build copies Qwen3's there)"

/* Fills buf with the first existing default path; nonzero (after printing why) if none. */
int pl_cli_default_tokenizer(char *buf, size_t n);

#endif
