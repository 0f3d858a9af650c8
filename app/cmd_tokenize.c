/* pagellm tokenize: encode text to ids, decode ids to text, or batch-encode JSON lines for
 * comparisons against other tokenizers. */
#define _POSIX_C_SOURCE 200809L /* getline, readlink */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "cli.h"
#include "pagellm/tokenizer.h"
#include "tokenizer/tokjson.h"
#include "tokenizer_cli.h"

int pl_cli_default_tokenizer(char *buf, size_t n) {
    const char *env = getenv("PAGELLM_TOKENIZER");
    if (env && *env) {
        snprintf(buf, n, "%s", env);
        return 0;
    }
    char exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        snprintf(buf, n, "%s/tokenizer.json", exe);
        if (access(buf, R_OK) == 0) return 0;
    }
    fprintf(stderr, "pagellm: no tokenizer: pass --tokenizer FILE or set PAGELLM_TOKENIZER (the build copies Qwen3's "
                    "tokenizer.json beside the binary once tests/npm/node_modules is installed: make deps)\n");
    return 1;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: pagellm tokenize [flags]\n"
            "  --tokenizer FILE     tokenizer.json (default: " PL_TOKENIZER_DEFAULT_HELP ")\n"
            "  --config FILE        tokenizer_config.json (default: beside the tokenizer, if present)\n"
            "  --text TEXT          encode TEXT and print its ids and tokens\n"
            "  --decode IDS         decode comma-separated ids (e.g. 9707,11,1879) and print the text\n"
            "  --ids-only           with --text: print only the comma-separated ids (default: off)\n"
            "  --input-jsonl FILE   encode one JSON string per line; print one JSON array of ids per line\n"
            "  --decode-jsonl FILE  decode one JSON array of ids per line; print one JSON string per line\n"
            "  --token NAME         print the id of a token given as tokenizer.json spells it\n"
            "                       (<|im_end|>, \"\xc4\xa0the\"); fails on an unknown token\n"
            "  --no-special         treat <|im_start|> and other added tokens in the text as plain text\n"
            "                       (default: off, they map to their ids as in Hugging Face)\n"
            "  --skip-special       decoding: leave out special tokens (default: off)\n"
            "  --chat               with --text: wrap TEXT as a user turn in the chat template with the\n"
            "                       generation prompt before encoding (default: off)\n"
            "  --no-think           with --chat: thinking off (empty think block) (default: thinking on)\n"
            "  --help               this text\n"
            "Nothing is added around the text (no BOS/EOS). Input that is not valid UTF-8 is encoded\n"
            "with each invalid byte sequence replaced by U+FFFD.\n");
}

static int print_encoded(const pl_tokenizer *tok, const pl_token_buf *b, int ids_only) {
    if (ids_only) {
        for (size_t i = 0; i < b->n; i++) printf(i ? ",%d" : "%d", (int)b->ids[i]);
        printf("\n");
        return 0;
    }
    printf("%zu tokens\n", b->n);
    for (size_t i = 0; i < b->n; i++) printf(i ? ",%d" : "%d", (int)b->ids[i]);
    printf("\n");
    for (size_t i = 0; i < b->n; i++) {
        size_t len = 0;
        const char *bytes = pl_tokenizer_token_bytes(tok, b->ids[i], &len);
        char *piece = malloc(len + 1);
        if (!piece) return 1;
        memcpy(piece, bytes, len);
        piece[len] = '\0';
        printf("%8d  ", (int)b->ids[i]);
        pl_json_write_escaped(stdout, pl_tokenizer_id_to_token(tok, b->ids[i]));
        printf("  ");
        pl_json_write_escaped(stdout, piece); /* raw bytes: may be part of a character */
        printf("\n");
        free(piece);
    }
    return 0;
}

/* A JSON string literal of s[0..n), NUL bytes included (as \u0000). */
static void write_json_string(FILE *f, const char *s, size_t n) {
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* One JSON value per line in, one per line out. */
static int run_jsonl(const pl_tokenizer *tok, const char *path, int decode, unsigned flags) {
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "pagellm: %s: cannot open '%s'\n", decode ? "--decode-jsonl" : "--input-jsonl", path);
        return 1;
    }
    char *line = NULL, err[512];
    size_t cap = 0;
    ssize_t n;
    long lineno = 0;
    int rc = 0;
    pl_token_buf b = {0};
    while (!rc && (n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
        cJSON *v = NULL;
        if (!decode) {
            /* Our own string parser: it keeps NUL characters that cJSON would cut at. */
            char *str = malloc((size_t)n + 1);
            long k = str ? pl_tokjson_parse_string(line, (size_t)n, str) : -1;
            if (k < 0) {
                fprintf(stderr, "pagellm: --input-jsonl: %s:%ld: not a JSON string\n", path, lineno);
                rc = 2;
            } else {
                b.n = 0;
                if (pl_tokenizer_encode(tok, str, (size_t)k, flags, &b, err, sizeof err)) {
                    fprintf(stderr, "pagellm: %s:%ld: %s\n", path, lineno, err);
                    rc = 1;
                } else {
                    putchar('[');
                    for (size_t i = 0; i < b.n; i++) printf(i ? ",%d" : "%d", (int)b.ids[i]);
                    fputs("]\n", stdout);
                }
            }
            free(str);
        } else {
            v = cJSON_ParseWithLength(line, (size_t)n);
            int ok = cJSON_IsArray(v);
            int cnt = ok ? cJSON_GetArraySize(v) : 0;
            b.n = 0;
            for (int i = 0; ok && i < cnt; i++) {
                const cJSON *e = cJSON_GetArrayItem(v, i);
                ok = cJSON_IsNumber(e) && e->valuedouble == (double)e->valueint && !pl_token_buf_push(&b, e->valueint);
            }
            char *text = NULL;
            size_t tlen = 0;
            if (!ok) {
                fprintf(stderr, "pagellm: --decode-jsonl: %s:%ld: not a JSON array of integers\n", path, lineno);
                rc = 2;
            } else if (pl_tokenizer_decode(tok, b.ids, b.n, flags, &text, &tlen, err, sizeof err)) {
                fprintf(stderr, "pagellm: %s:%ld: %s\n", path, lineno, err);
                rc = 1;
            } else {
                write_json_string(stdout, text, tlen);
                putchar('\n');
            }
            free(text);
        }
        cJSON_Delete(v);
    }
    pl_token_buf_free(&b);
    free(line);
    if (f != stdin) fclose(f);
    return rc;
}

int pl_cmd_tokenize(int argc, char **argv) {
    const char *tok_path = NULL, *config = NULL, *text = NULL, *decode = NULL, *in_jsonl = NULL, *dec_jsonl = NULL;
    const char *token = NULL;
    int ids_only = 0, no_special = 0, skip_special = 0, chat = 0, no_think = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (pl_cli_is(a, "--tokenizer")) {
            if (!(tok_path = pl_cli_value(argc, argv, &i, "--tokenizer"))) return 2;
        } else if (pl_cli_is(a, "--config")) {
            if (!(config = pl_cli_value(argc, argv, &i, "--config"))) return 2;
        } else if (pl_cli_is(a, "--text")) {
            if (!(text = pl_cli_value(argc, argv, &i, "--text"))) return 2;
        } else if (pl_cli_is(a, "--decode-jsonl")) {
            if (!(dec_jsonl = pl_cli_value(argc, argv, &i, "--decode-jsonl"))) return 2;
        } else if (pl_cli_is(a, "--decode")) {
            if (!(decode = pl_cli_value(argc, argv, &i, "--decode"))) return 2;
        } else if (pl_cli_is(a, "--token")) {
            if (!(token = pl_cli_value(argc, argv, &i, "--token"))) return 2;
        } else if (pl_cli_is(a, "--input-jsonl")) {
            if (!(in_jsonl = pl_cli_value(argc, argv, &i, "--input-jsonl"))) return 2;
        } else if (!strcmp(a, "--ids-only")) {
            ids_only = 1;
        } else if (!strcmp(a, "--no-special")) {
            no_special = 1;
        } else if (!strcmp(a, "--skip-special")) {
            skip_special = 1;
        } else if (!strcmp(a, "--chat")) {
            chat = 1;
        } else if (!strcmp(a, "--no-think")) {
            no_think = 1;
        } else {
            fprintf(stderr, "pagellm tokenize: unknown flag '%s' (see --help)\n", a);
            return 2;
        }
    }
    int modes = !!text + !!decode + !!in_jsonl + !!dec_jsonl + !!token;
    if (modes != 1) {
        fprintf(stderr,
                "pagellm tokenize: give exactly one of --text, --decode, --input-jsonl, --decode-jsonl, --token\n");
        return 2;
    }
    if ((chat || ids_only) && !text) {
        fprintf(stderr, "pagellm tokenize: --chat and --ids-only go with --text\n");
        return 2;
    }
    int32_t *ids = NULL;
    int nids = 0;
    if (decode && pl_cli_int_list("--decode", decode, &ids, &nids)) return 2;
    char path[4096], err[512];
    if (!tok_path) {
        if (pl_cli_default_tokenizer(path, sizeof path)) {
            free(ids);
            return 2;
        }
        tok_path = path;
    }
    pl_tokenizer *tok = NULL;
    if (pl_tokenizer_load(tok_path, config, &tok, err, sizeof err)) {
        fprintf(stderr, "pagellm: %s\n", err);
        free(ids);
        return 1;
    }
    unsigned enc_flags = no_special ? 0u : PL_TOK_MATCH_SPECIAL;
    unsigned dec_flags = skip_special ? PL_TOK_SKIP_SPECIAL : 0u;
    int rc = 0;
    if (text) {
        char *prompt = NULL;
        size_t plen = strlen(text);
        if (chat) {
            pl_chat_message m = {"user", text, NULL};
            if (pl_tokenizer_apply_chat(tok, &m, 1, 1, !no_think, &prompt, &plen, err, sizeof err)) {
                fprintf(stderr, "pagellm: %s\n", err);
                rc = 1;
            }
        }
        pl_token_buf b = {0};
        if (!rc && pl_tokenizer_encode(tok, prompt ? prompt : text, plen, enc_flags, &b, err, sizeof err)) {
            fprintf(stderr, "pagellm: %s\n", err);
            rc = 1;
        }
        if (!rc) rc = print_encoded(tok, &b, ids_only);
        pl_token_buf_free(&b);
        free(prompt);
    } else if (decode) {
        char *out = NULL;
        size_t len = 0;
        if (pl_tokenizer_decode(tok, ids, (size_t)nids, dec_flags, &out, &len, err, sizeof err)) {
            fprintf(stderr, "pagellm: --decode: %s\n", err);
            rc = 1;
        } else {
            fwrite(out, 1, len, stdout);
            putchar('\n');
        }
        free(out);
    } else if (token) {
        int32_t id;
        if (pl_tokenizer_token_to_id(tok, token, &id, err, sizeof err)) {
            fprintf(stderr, "pagellm: --%s\n", err);
            rc = 1;
        } else {
            printf("%d\n", (int)id);
        }
    } else {
        rc = run_jsonl(tok, in_jsonl ? in_jsonl : dec_jsonl, !!dec_jsonl, in_jsonl ? enc_flags : dec_flags);
    }
    free(ids);
    pl_tokenizer_free(tok);
    return rc;
}
