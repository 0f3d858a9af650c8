/* Placeholder until this subcommand lands; it says so and fails. */
#include <stdio.h>

#include "cli.h"

int pl_cmd_logits(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "pagellm: this command is not implemented yet\n");
    return 2;
}
