/* Checkpoint loading: config.json in transformers 4.x and 5.x spellings, refusals of
 * unknown architectures and rope types, and safetensors validation (missing / extra
 * tensors, wrong shapes and dtypes, byte ranges outside the file, truncated files, malformed
 * headers), sharded checkpoints, F16 weights, and the save -> load round trip. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bf16.h"
#include "model/model_internal.h"
#include "test_util.h"

static char err[1024];
static char tmp[256];

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) n = 0;
    fclose(f);
    b[n] = 0;
    *len = (size_t)n;
    return b;
}

static void write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    if (n) CHECK(fwrite(p, 1, n, f) == n);
    fclose(f);
}

/* A checkpoint dir: the base config and a safetensors file built from hdr + data. */
static void write_st(const char *path, cJSON *hdr, const uint8_t *data, size_t data_len, size_t cut) {
    char *h = cJSON_PrintUnformatted(hdr);
    size_t hl = strlen(h);
    size_t total = 8 + hl + data_len;
    uint8_t *buf = malloc(total);
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)((uint64_t)hl >> (8 * i));
    memcpy(buf + 8, h, hl);
    memcpy(buf + 8 + hl, data, data_len);
    write_file(path, buf, total - cut);
    free(buf);
    free(h);
}

static const char *make_dir(const char *name, const char *base) {
    static char d[512];
    snprintf(d, sizeof d, "%s/%s", tmp, name);
    mkdir(d, 0755);
    char src[600], dst[600];
    size_t n;
    snprintf(src, sizeof src, "%s/config.json", base);
    snprintf(dst, sizeof dst, "%s/config.json", d);
    uint8_t *c = read_file(src, &n);
    write_file(dst, c, n);
    free(c);
    unlink((snprintf(dst, sizeof dst, "%s/model.safetensors.index.json", d), dst));
    return d;
}

typedef struct st_file {
    cJSON *hdr;
    uint8_t *data;
    size_t data_len;
} st_file;

static st_file load_st(const char *dir) {
    char p[600];
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    size_t n;
    uint8_t *b = read_file(p, &n);
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--) hl = (hl << 8) | b[i];
    st_file s;
    s.hdr = cJSON_ParseWithLength((const char *)b + 8, (size_t)hl);
    s.data_len = n - 8 - (size_t)hl;
    s.data = malloc(s.data_len + 1);
    memcpy(s.data, b + 8 + hl, s.data_len);
    free(b);
    return s;
}

/* Loads dir and expects status st with a message containing each of subs. */
static void expect_load(const char *dir, int st, const char *sub1, const char *sub2) {
    pl_model *m = NULL;
    err[0] = 0;
    int rc = pl_model_load(dir, NULL, &m, err, sizeof err);
    CHECK_MSG(rc == st, "%s: got %d want %d: %s", dir, rc, st, err);
    if (sub1) CHECK_MSG(strstr(err, sub1) != NULL, "'%s' lacks '%s'", err, sub1);
    if (sub2) CHECK_MSG(strstr(err, sub2) != NULL, "'%s' lacks '%s'", err, sub2);
    if (rc == PL_OK) pl_model_free(m);
    printf("  %-12s -> %s\n", dir + strlen(tmp) + 1, rc ? err : "ok");
}

static void logits_of(const char *dir, pl_dtype dt, float *out) {
    pl_model_options o = {dt, PL_DEVICE_CPU, 2, 0, 0};
    pl_model *m = NULL;
    CHECK_OK(pl_model_load(dir, &o, &m, err, sizeof err), err);
    if (!m) return;
    pl_kv_pools pools;
    pl_kv_seq seq;
    CHECK_OK(pl_model_create_pools(m, 16, PL_POOL_GROWABLE, 0, &pools, err, sizeof err), err);
    CHECK_OK(pl_kv_seq_init(&seq, &pools, err, sizeof err), err);
    int32_t ids[6] = {1, 500, 3, 1000, 7, 42};
    int n = 6, p = 0;
    pl_kv_seq *sp = &seq;
    pl_forward_batch b = {1, ids, &n, &p, &sp, NULL, 1};
    CHECK_OK(pl_model_forward(m, &b, out, err, sizeof err), err);
    pl_kv_seq_destroy(&seq);
    pl_kv_pools_destroy(&pools);
    pl_model_free(m);
}

static void test_config(void) {
    pl_model_config c;
    const char *v4 = "{\"architectures\":[\"Qwen3ForCausalLM\"],\"model_type\":\"qwen3\",\"vocab_size\":151936,"
                     "\"hidden_size\":1024,\"num_hidden_layers\":28,\"num_attention_heads\":16,\"num_key_value_heads\":8,"
                     "\"head_dim\":128,\"intermediate_size\":3072,\"max_position_embeddings\":40960,\"rms_norm_eps\":1e-06,"
                     "\"rope_theta\":1000000,\"rope_scaling\":null,\"tie_word_embeddings\":true,\"torch_dtype\":\"bfloat16\","
                     "\"bos_token_id\":151643,\"eos_token_id\":151645,\"attention_bias\":false,\"hidden_act\":\"silu\"}";
    CHECK_OK(pl_config_parse(v4, strlen(v4), "config.json", &c, err, sizeof err), err);
    CHECK(c.num_layers == 28 && c.rope_theta == 1e6 && c.tie_word_embeddings && c.eos_ids[0] == 151645 &&
          c.bos_id == 151643 && fabsf(c.rms_norm_eps - 1e-6f) < 1e-12f);
    const char *v5 = "{\"architectures\":[\"Qwen3ForCausalLM\"],\"model_type\":\"qwen3\",\"vocab_size\":151936,"
                     "\"hidden_size\":4096,\"num_hidden_layers\":36,\"num_attention_heads\":32,\"num_key_value_heads\":8,"
                     "\"head_dim\":128,\"intermediate_size\":12288,\"rms_norm_eps\":1e-06,\"dtype\":\"bfloat16\","
                     "\"rope_parameters\":{\"rope_theta\":5000000.0,\"rope_type\":\"default\"},\"tie_word_embeddings\":false,"
                     "\"eos_token_id\":[151645,151643]}";
    CHECK_OK(pl_config_parse(v5, strlen(v5), "config.json", &c, err, sizeof err), err);
    CHECK(c.rope_theta == 5e6 && !c.tie_word_embeddings && c.num_eos == 2 && c.eos_ids[1] == 151643);
    const char *gen = "{\"eos_token_id\":[151645,151643,7],\"bos_token_id\":151643}";
    CHECK_OK(pl_generation_config_parse(gen, strlen(gen), "generation_config.json", &c, err, sizeof err), err);
    CHECK(c.num_eos == 3 && c.eos_ids[2] == 7);
    const char *llama = "{\"architectures\":[\"LlamaForCausalLM\"],\"vocab_size\":10}";
    CHECK_ERR(pl_config_parse(llama, strlen(llama), "config.json", &c, err, sizeof err), PL_ERR_UNSUPPORTED,
              "LlamaForCausalLM", err);
    char yarn[2048];
    const char *at = strstr(v4, "\"rope_scaling\":null");
    snprintf(yarn, sizeof yarn, "%.*s\"rope_scaling\":{\"rope_type\":\"yarn\",\"factor\":4.0}%s", (int)(at - v4), v4,
             at + strlen("\"rope_scaling\":null"));
    CHECK_ERR(pl_config_parse(yarn, strlen(yarn), "config.json", &c, err, sizeof err), PL_ERR_UNSUPPORTED, "yarn", err);
    char rp[2048];
    snprintf(rp, sizeof rp, "%.*s,\"rope_parameters\":{\"rope_type\":\"llama3\",\"rope_theta\":1e6}}",
             (int)strlen(v4) - 1, v4);
    CHECK_ERR(pl_config_parse(rp, strlen(rp), "config.json", &c, err, sizeof err), PL_ERR_UNSUPPORTED, "llama3", err);
    const char *missing = "{\"architectures\":[\"Qwen3ForCausalLM\"],\"vocab_size\":10}";
    CHECK_ERR(pl_config_parse(missing, strlen(missing), "x/config.json", &c, err, sizeof err), PL_ERR_INVALID,
              "x/config.json: missing \"hidden_size\"", err);
    CHECK_ERR(pl_config_parse("{", 1, "config.json", &c, err, sizeof err), PL_ERR_INVALID, "malformed", err);
    const char *gqa = "{\"model_type\":\"qwen3\",\"vocab_size\":10,\"hidden_size\":8,\"num_hidden_layers\":1,"
                      "\"num_attention_heads\":3,\"num_key_value_heads\":2,\"head_dim\":4,\"intermediate_size\":8}";
    CHECK_ERR(pl_config_parse(gqa, strlen(gqa), "config.json", &c, err, sizeof err), PL_ERR_INVALID, "multiple", err);
}

int main(void) {
    test_config();
    snprintf(tmp, sizeof tmp, "/tmp/pl_loader_XXXXXX");
    CHECK(mkdtemp(tmp) != NULL);
    char base[512];
    snprintf(base, sizeof base, "%s/base", tmp);
    pl_model *m = NULL;
    pl_model_options o = {PL_F32, PL_DEVICE_CPU, 2, 0, 0};
    CHECK_OK(pl_model_create_synthetic("tiny-untied", 5, &o, &m, err, sizeof err), err);
    CHECK_OK(pl_model_save(m, base, err, sizeof err), err);
    size_t V = 1024;
    float *ref = malloc(sizeof(float) * 6 * V), *got = malloc(sizeof(float) * 6 * V);
    {
        /* The saved checkpoint reproduces the in-memory model exactly (weights are bf16). */
        pl_kv_pools pools;
        pl_kv_seq seq;
        CHECK_OK(pl_model_create_pools(m, 16, PL_POOL_GROWABLE, 0, &pools, err, sizeof err), err);
        CHECK_OK(pl_kv_seq_init(&seq, &pools, err, sizeof err), err);
        int32_t ids[6] = {1, 500, 3, 1000, 7, 42};
        int n = 6, p = 0;
        pl_kv_seq *sp = &seq;
        pl_forward_batch b = {1, ids, &n, &p, &sp, NULL, 1};
        CHECK_OK(pl_model_forward(m, &b, ref, err, sizeof err), err);
        pl_kv_seq_destroy(&seq);
        pl_kv_pools_destroy(&pools);
        logits_of(base, PL_F32, got);
        CHECK(memcmp(ref, got, sizeof(float) * 6 * V) == 0);
    }
    pl_model_free(m);
    st_file s = load_st(base);
    char p[700];
    const char *d;

    d = make_dir("missing", base);
    cJSON *h = cJSON_Duplicate(s.hdr, 1);
    cJSON_DeleteItemFromObject(h, "model.layers.1.mlp.up_proj.weight");
    write_st((snprintf(p, sizeof p, "%s/model.safetensors", d), p), h, s.data, s.data_len, 0);
    expect_load(d, PL_ERR_INVALID, "missing tensor model.layers.1.mlp.up_proj.weight", "expected shape [512, 256]");
    cJSON_Delete(h);

    d = make_dir("extra", base);
    h = cJSON_Duplicate(s.hdr, 1);
    cJSON_AddItemToObject(h, "model.layers.2.mlp.up_proj.weight",
                          cJSON_Duplicate(cJSON_GetObjectItem(h, "model.layers.1.mlp.up_proj.weight"), 1));
    write_st((snprintf(p, sizeof p, "%s/model.safetensors", d), p), h, s.data, s.data_len, 0);
    expect_load(d, PL_ERR_INVALID, "unexpected tensor model.layers.2.mlp.up_proj.weight", "model.safetensors");
    cJSON_Delete(h);

    d = make_dir("shape", base);
    h = cJSON_Duplicate(s.hdr, 1);
    cJSON *q = cJSON_GetObjectItem(h, "model.layers.0.self_attn.q_proj.weight");
    int sh[2] = {256, 512};
    cJSON_ReplaceItemInObject(q, "shape", cJSON_CreateIntArray(sh, 2));
    write_st((snprintf(p, sizeof p, "%s/model.safetensors", d), p), h, s.data, s.data_len, 0);
    expect_load(d, PL_ERR_INVALID, "model.layers.0.self_attn.q_proj.weight: shape [256, 512], expected [512, 256]",
                NULL);
    cJSON_Delete(h);

    d = make_dir("dtype", base);
    h = cJSON_Duplicate(s.hdr, 1);
    q = cJSON_GetObjectItem(h, "model.norm.weight");
    cJSON_ReplaceItemInObject(q, "dtype", cJSON_CreateString("I64"));
    write_st((snprintf(p, sizeof p, "%s/model.safetensors", d), p), h, s.data, s.data_len, 0);
    expect_load(d, PL_ERR_UNSUPPORTED, "model.norm.weight: dtype I64", "expected F32, BF16 or F16");
    cJSON_ReplaceItemInObject(q, "dtype", cJSON_CreateString("F32"));
    write_st(p, h, s.data, s.data_len, 0);
    expect_load(d, PL_ERR_INVALID, "model.norm.weight: 512 bytes in data_offsets, expected 1024", NULL);
    cJSON_Delete(h);

    d = make_dir("range", base);
    h = cJSON_Duplicate(s.hdr, 1);
    q = cJSON_GetObjectItem(h, "model.norm.weight");
    double off[2] = {(double)s.data_len, (double)s.data_len + 512};
    cJSON_ReplaceItemInObject(q, "data_offsets", cJSON_CreateDoubleArray(off, 2));
    write_st((snprintf(p, sizeof p, "%s/model.safetensors", d), p), h, s.data, s.data_len, 0);
    expect_load(d, PL_ERR_INVALID, "model.norm.weight: byte range", "outside the");
    cJSON_Delete(h);

    d = make_dir("truncated", base);
    write_st((snprintf(p, sizeof p, "%s/model.safetensors", d), p), s.hdr, s.data, s.data_len, 100);
    expect_load(d, PL_ERR_INVALID, "outside the", "truncated");
    write_file(p, "\x10\0\0", 3);
    expect_load(d, PL_ERR_INVALID, "truncated file: 3 bytes", NULL);
    write_file(p, "\xff\xff\0\0\0\0\0\0{}", 10);
    expect_load(d, PL_ERR_INVALID, "header length 65535 exceeds", NULL);

    d = make_dir("malformed", base);
    snprintf(p, sizeof p, "%s/model.safetensors", d);
    write_file(p, "\x08\0\0\0\0\0\0\0{\"a\":[1,", 16);
    expect_load(d, PL_ERR_INVALID, "malformed header", "model.safetensors");
    write_file(p, "\x0c\0\0\0\0\0\0\0{\"x\":\"BF16\"}", 20);
    expect_load(d, PL_ERR_INVALID, "tensor x: entry is not an object", NULL);

    d = make_dir("noweights", base);
    expect_load(d, PL_ERR_IO, "model.safetensors: cannot open", NULL);

    /* Sharded: every tensor of layer 1 in a second file, with an index. */
    d = make_dir("sharded", base);
    {
        cJSON *h1 = cJSON_CreateObject(), *h2 = cJSON_CreateObject(), *idx = cJSON_CreateObject();
        cJSON *wm = cJSON_AddObjectToObject(idx, "weight_map");
        uint8_t *d1 = malloc(s.data_len), *d2 = malloc(s.data_len);
        size_t n1 = 0, n2 = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, s.hdr) {
            if (!strcmp(e->string, "__metadata__")) continue;
            int second = strstr(e->string, "layers.1.") != NULL;
            const cJSON *of = cJSON_GetObjectItem(e, "data_offsets");
            size_t b0 = (size_t)cJSON_GetArrayItem(of, 0)->valuedouble, b1 = (size_t)cJSON_GetArrayItem(of, 1)->valuedouble;
            size_t *n = second ? &n2 : &n1;
            memcpy((second ? d2 : d1) + *n, s.data + b0, b1 - b0);
            cJSON *t = cJSON_Duplicate(e, 1);
            double no[2] = {(double)*n, (double)(*n + b1 - b0)};
            cJSON_ReplaceItemInObject(t, "data_offsets", cJSON_CreateDoubleArray(no, 2));
            *n += b1 - b0;
            cJSON_AddItemToObject(second ? h2 : h1, e->string, t);
            cJSON_AddStringToObject(wm, e->string, second ? "model-00002-of-00002.safetensors" : "model-00001-of-00002.safetensors");
        }
        write_st((snprintf(p, sizeof p, "%s/model-00001-of-00002.safetensors", d), p), h1, d1, n1, 0);
        write_st((snprintf(p, sizeof p, "%s/model-00002-of-00002.safetensors", d), p), h2, d2, n2, 0);
        char *it = cJSON_Print(idx);
        write_file((snprintf(p, sizeof p, "%s/model.safetensors.index.json", d), p), it, strlen(it));
        free(it);
        for (size_t i = 0; i < 6 * V; i++) got[i] = NAN;
        logits_of(d, PL_F32, got);
        CHECK(memcmp(ref, got, sizeof(float) * 6 * V) == 0);
        expect_load(d, PL_OK, NULL, NULL);
        /* the index says a layer-1 tensor lives in shard 1 */
        cJSON_ReplaceItemInObject(wm, "model.layers.1.mlp.down_proj.weight",
                                  cJSON_CreateString("model-00001-of-00002.safetensors"));
        it = cJSON_Print(idx);
        write_file((snprintf(p, sizeof p, "%s/model.safetensors.index.json", d), p), it, strlen(it));
        free(it);
        expect_load(d, PL_ERR_INVALID, "model.layers.1.mlp.down_proj.weight", "the index says");
        cJSON_ReplaceItemInObject(wm, "model.layers.1.mlp.down_proj.weight", cJSON_CreateString("nothere.safetensors"));
        it = cJSON_Print(idx);
        write_file((snprintf(p, sizeof p, "%s/model.safetensors.index.json", d), p), it, strlen(it));
        free(it);
        expect_load(d, PL_ERR_IO, "nothere.safetensors: cannot open", NULL);
        cJSON_Delete(h1), cJSON_Delete(h2), cJSON_Delete(idx);
        free(d1), free(d2);
    }

    /* F16 weights: same values (the synthetic bf16 values fit f16 closely). */
    d = make_dir("f16", base);
    {
        cJSON *h16 = cJSON_Duplicate(s.hdr, 1);
        uint8_t *d16 = malloc(s.data_len);
        cJSON *e;
        cJSON_ArrayForEach(e, h16) {
            if (!strcmp(e->string, "__metadata__")) continue;
            cJSON_ReplaceItemInObject(e, "dtype", cJSON_CreateString("F16"));
        }
        for (size_t i = 0; i < s.data_len / 2; i++) {
            uint16_t b;
            memcpy(&b, s.data + 2 * i, 2);
            uint16_t f = pl_f32_to_f16(pl_bf16_to_f32(b));
            memcpy(d16 + 2 * i, &f, 2);
        }
        write_st((snprintf(p, sizeof p, "%s/model.safetensors", d), p), h16, d16, s.data_len, 0);
        logits_of(d, PL_F32, got);
        double md = 0, mr = 0;
        for (size_t i = 0; i < 6 * V; i++) {
            md = fmax(md, fabs(got[i] - ref[i]));
            mr = fmax(mr, fabs(ref[i]));
        }
        CHECK_MSG(md <= 1e-3 * mr, "f16: %g vs %g", md, mr);
        cJSON_Delete(h16);
        free(d16);
    }
    /* f16 conversions round trip a few values exactly */
    const float vals[] = {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f, 0.1f};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        float r = pl_f16_to_f32(pl_f32_to_f16(vals[i]));
        CHECK_MSG(fabsf(r - vals[i]) <= fabsf(vals[i]) * 1e-3f, "%g -> %g", vals[i], r);
    }
    cJSON_Delete(s.hdr);
    free(s.data);
    free(ref);
    free(got);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    CHECK(system(cmd) == 0);
    TEST_END();
}
