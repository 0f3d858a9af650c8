/* safetensors reading: memory-mapped files, a single model.safetensors or shards listed by
 * model.safetensors.index.json. Every check names the file and tensor, what was expected
 * and what was found. Layout: u64 little-endian header length N, N bytes of JSON, data. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model_internal.h"

#define PL_ST_MAX_HEADER (100u << 20)

static int set_grow(pl_st_set *set, char *err, size_t err_len) {
    pl_st_tensor *t = realloc(set->tensors, sizeof *t * (size_t)(set->num_tensors + 1));
    if (!t) return pl_fail(err, err_len, PL_ERR_NOMEM, "safetensors: out of memory");
    set->tensors = t;
    return PL_OK;
}

static const char *dtype_name(pl_src_dtype d) { return d == PL_SRC_F32 ? "F32" : d == PL_SRC_BF16 ? "BF16" : "F16"; }

int pl_st_parse(const uint8_t *buf, size_t len, const char *file, int fi, pl_st_set *set, char *err, size_t err_len) {
    if (!buf && len) return pl_fail(err, err_len, PL_ERR_INVALID, "%s: NULL buffer", file);
    if (len < 8)
        return pl_fail(err, err_len, PL_ERR_INVALID, "%s: truncated file: %zu bytes, expected at least 8", file, len);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | buf[i];
    if (n > len - 8)
        return pl_fail(err, err_len, PL_ERR_INVALID,
                       "%s: truncated file: header length %llu exceeds the %zu bytes after the length field", file,
                       (unsigned long long)n, len - 8);
    if (n > PL_ST_MAX_HEADER || n < 2)
        return pl_fail(err, err_len, PL_ERR_INVALID, "%s: malformed header: length %llu outside [2, %u]", file,
                       (unsigned long long)n, PL_ST_MAX_HEADER);
    const uint8_t *data = buf + 8 + n;
    size_t data_len = len - 8 - (size_t)n;
    cJSON *root = cJSON_ParseWithLength((const char *)buf + 8, (size_t)n);
    if (!root) return pl_fail(err, err_len, PL_ERR_INVALID, "%s: malformed header: not valid JSON", file);
    int rc = PL_OK, first_new = set->num_tensors;
    if (!cJSON_IsObject(root)) {
        rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: malformed header: top level is not an object", file);
        goto done;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, root) {
        const char *name = e->string ? e->string : "";
        if (!strcmp(name, "__metadata__")) continue;
        if (strlen(name) >= sizeof set->tensors[0].name) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: tensor name of %zu bytes is too long", file, strlen(name));
            goto done;
        }
        if (!cJSON_IsObject(e)) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: tensor %s: entry is not an object", file, name);
            goto done;
        }
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
        const cJSON *of = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
        if (!cJSON_IsString(dt) || !cJSON_IsArray(sh) || !cJSON_IsArray(of) || cJSON_GetArraySize(of) != 2) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID,
                         "%s: tensor %s: expected \"dtype\" string, \"shape\" list and \"data_offsets\" [begin, end]",
                         file, name);
            goto done;
        }
        pl_st_tensor t;
        memset(&t, 0, sizeof t);
        snprintf(t.name, sizeof t.name, "%s", name);
        t.file = fi;
        size_t esz;
        if (!strcmp(dt->valuestring, "F32"))
            t.dtype = PL_SRC_F32, esz = 4;
        else if (!strcmp(dt->valuestring, "BF16"))
            t.dtype = PL_SRC_BF16, esz = 2;
        else if (!strcmp(dt->valuestring, "F16"))
            t.dtype = PL_SRC_F16, esz = 2;
        else {
            rc = pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s: tensor %s: dtype %.16s, expected F32, BF16 or F16", file,
                         name, dt->valuestring);
            goto done;
        }
        t.ndim = cJSON_GetArraySize(sh);
        if (t.ndim > 4) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: tensor %s: %d dimensions, expected at most 4", file, name,
                         t.ndim);
            goto done;
        }
        uint64_t numel = 1;
        for (int d = 0; d < t.ndim; d++) {
            const cJSON *x = cJSON_GetArrayItem(sh, d);
            if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble > (double)(1ull << 40) ||
                x->valuedouble != (double)(int64_t)x->valuedouble) {
                rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: tensor %s: shape[%d] is not a non-negative integer",
                             file, name, d);
                goto done;
            }
            t.shape[d] = (int64_t)x->valuedouble;
            if (t.shape[d] && numel > (1ull << 40) / (uint64_t)t.shape[d]) {
                rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: tensor %s: shape too large", file, name);
                goto done;
            }
            numel *= (uint64_t)t.shape[d];
        }
        double b0 = cJSON_GetArrayItem(of, 0)->valuedouble, b1 = cJSON_GetArrayItem(of, 1)->valuedouble;
        if (!cJSON_IsNumber(cJSON_GetArrayItem(of, 0)) || !cJSON_IsNumber(cJSON_GetArrayItem(of, 1)) || b0 < 0 ||
            b1 < b0 || b1 > 1.8e19 || b0 != (double)(uint64_t)b0 || b1 != (double)(uint64_t)b1) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: tensor %s: data_offsets must be integers 0 <= begin <= end",
                         file, name);
            goto done;
        }
        uint64_t begin = (uint64_t)b0, end = (uint64_t)b1;
        if (end > data_len) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID,
                         "%s: tensor %s: byte range [%llu, %llu) outside the %zu data bytes of the file (truncated?)",
                         file, name, (unsigned long long)begin, (unsigned long long)end, data_len);
            goto done;
        }
        if (end - begin != numel * esz) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID,
                         "%s: tensor %s: %llu bytes in data_offsets, expected %llu for %s with %llu elements", file,
                         name, (unsigned long long)(end - begin), (unsigned long long)(numel * esz),
                         dtype_name(t.dtype), (unsigned long long)numel);
            goto done;
        }
        if (begin % esz) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: tensor %s: offset %llu is not a multiple of %zu", file, name,
                         (unsigned long long)begin, esz);
            goto done;
        }
        t.data = data + begin;
        t.nbytes = (size_t)(end - begin);
        if (pl_st_find(set, name)) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: tensor %s appears twice", file, name);
            goto done;
        }
        if ((rc = set_grow(set, err, err_len))) goto done;
        set->tensors[set->num_tensors++] = t;
    }
done:
    if (rc) set->num_tensors = first_new;
    cJSON_Delete(root);
    return rc;
}

const pl_st_tensor *pl_st_find(const pl_st_set *set, const char *name) {
    for (int i = 0; i < set->num_tensors; i++)
        if (!strcmp(set->tensors[i].name, name)) return &set->tensors[i];
    return NULL;
}

static int map_file(pl_st_set *set, const char *path, char *err, size_t err_len) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return pl_fail(err, err_len, PL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return pl_fail(err, err_len, PL_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
    }
    size_t len = (size_t)st.st_size;
    void *p = NULL;
    if (len > 0) {
        p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            close(fd);
            return pl_fail(err, err_len, PL_ERR_IO, "%s: cannot map: %s", path, strerror(errno));
        }
    }
    close(fd);
    int i = set->num_files;
    char **paths = realloc(set->paths, sizeof(char *) * (size_t)(i + 1));
    if (paths) set->paths = paths;
    void **maps = realloc(set->maps, sizeof(void *) * (size_t)(i + 1));
    if (maps) set->maps = maps;
    size_t *lens = realloc(set->map_lens, sizeof(size_t) * (size_t)(i + 1));
    if (lens) set->map_lens = lens;
    char *dup = strdup(path);
    if (!paths || !maps || !lens || !dup) {
        free(dup);
        if (p) munmap(p, len);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "%s: out of memory", path);
    }
    set->paths[i] = dup;
    set->maps[i] = p;
    set->map_lens[i] = len;
    set->num_files++;
    int rc = pl_st_parse(p, len, path, i, set, err, err_len);
    return rc;
}

void pl_st_close(pl_st_set *set) {
    for (int i = 0; i < set->num_files; i++) {
        if (set->maps[i]) munmap(set->maps[i], set->map_lens[i]);
        free(set->paths[i]);
    }
    free(set->paths);
    free(set->maps);
    free(set->map_lens);
    free(set->tensors);
    memset(set, 0, sizeof *set);
}

static char *read_text(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap) break;
        char *nb = cap > (64u << 20) ? NULL : realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    if (buf) *len = n;
    return buf;
}

int pl_st_open_dir(const char *dir, pl_st_set *set, char *err, size_t err_len) {
    memset(set, 0, sizeof *set);
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    size_t len = 0;
    char *idx = read_text(path, &len);
    if (!idx) {
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        int rc = map_file(set, path, err, err_len);
        if (rc) pl_st_close(set);
        return rc;
    }
    int rc = PL_OK;
    cJSON *root = cJSON_ParseWithLength(idx, len);
    free(idx);
    const cJSON *wm = root ? cJSON_GetObjectItemCaseSensitive(root, "weight_map") : NULL;
    if (!cJSON_IsObject(wm)) {
        cJSON_Delete(root);
        return pl_fail(err, err_len, PL_ERR_INVALID, "%s: malformed index: expected an object \"weight_map\"", path);
    }
    const cJSON *e;
    /* Map each shard once, in first-mention order. */
    cJSON_ArrayForEach(e, wm) {
        if (!cJSON_IsString(e) || strchr(e->valuestring, '/') || !strcmp(e->valuestring, "..")) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: weight_map[%s]: expected a file name in the directory", path,
                         e->string);
            break;
        }
        char sp[4096];
        snprintf(sp, sizeof sp, "%s/%s", dir, e->valuestring);
        int seen = 0;
        for (int i = 0; i < set->num_files && !seen; i++) seen = !strcmp(set->paths[i], sp);
        if (!seen && (rc = map_file(set, sp, err, err_len))) break;
    }
    /* Every tensor the index names sits in the shard it names. */
    if (!rc) cJSON_ArrayForEach(e, wm) {
            const pl_st_tensor *t = pl_st_find(set, e->string);
            char sp[4096];
            snprintf(sp, sizeof sp, "%s/%s", dir, e->valuestring);
            if (!t) {
                rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: tensor %s listed in the index is missing", sp, e->string);
                break;
            }
            if (strcmp(set->paths[t->file], sp)) {
                rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: tensor %s is in %s, the index says %s", path, e->string,
                             set->paths[t->file], sp);
                break;
            }
        }
    if (!rc)
        for (int i = 0; i < set->num_tensors; i++)
            if (!cJSON_GetObjectItemCaseSensitive(wm, set->tensors[i].name)) {
                rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: tensor %s is not listed in %s", set->paths[set->tensors[i].file],
                             set->tensors[i].name, path);
                break;
            }
    cJSON_Delete(root);
    if (rc) pl_st_close(set);
    return rc;
}
