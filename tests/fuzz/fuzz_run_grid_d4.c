/* SPDX-License-Identifier: MIT
 * `gpuwitness run grid_d4 --device cpu --op OP -o OUT TASK.json` end to end, in one process, on a fuzzed task
 * file: the steps of tools/gpuwitness/kernels/grid_d4/grid_d4_run.c and of the batch building it shares with
 * grid_objects (tools/gpuwitness/kernels/gw_arc_run.c), followed here call for call. The input is the file, passed through fuzz_memfile to gw_arc_read;
 * a hash of its bytes picks the op (all eight) and how the output is committed:
 *   read     gw_arc_read; a refused file leaves the task zeroed and nothing in the output directory;
 *   compute  the packed grid_d4 batch of every grid (grid_d4_batch_make, as the CLI builds it),
 *            grid_d4_validate must accept it (every accepted grid is a valid grid_d4 grid), grid_d4_ref on a
 *            poisoned result, the results put back into the task; every result grid must be the op applied
 *            to the input grid, computed here from grid_d4.h's coordinate map, and the slack after the
 *            output buffer must keep the poison;
 *   write    gw_arc_stage into a scratch directory on tmpfs, then gw_outfile_commit_all, in one of five
 *            ways: one new file (half the inputs); over an existing file; a set of two new files; a set whose
 *            second target is a directory, with the first target absent or existing (the commit must fail,
 *            name the directory, and leave every target as it was);
 *   check    after each commit the directory holds exactly the targets (no temporary or moved-aside file);
 *            the file reads back with the same lists and the expected grids, and the task read back, staged
 *            again, gives the committed bytes; and the kept members (keys the reader does not interpret) are
 *            those of the input itself, read by cJSON: the same keys in the same order, at the top and in
 *            every pair, with the same values. Then everything is removed.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fuzz_check.h"
#include "fuzz_d4_map.h"
#include "fuzz_memfile.h"
#include "fuzz_scratch.h"
#include "grid_d4_batch.h"
#include "grid_d4_ref.h"
#include "gw_arc.h"
#include "gw_outfile.h"

enum { poison = 0xFF };

enum commit_mode {
    FAIL_NEW = 0, /* targets a.json (absent) and b.json (a directory): the set must fail */
    FAIL_OLD = 1, /* the same with a.json existing: it must keep its bytes */
    OVERWRITE = 2, /* a.json exists: replaced */
    PAIR = 3,      /* a.json and b.json, both new */
    SINGLE = 4     /* a.json, new (modes 4..7) */
};

static const char old_bytes[] = "old contents\n";

typedef struct saved_grid {
    unsigned h, w;
    uint8_t *cells;
} saved_grid;

/* FNV-1a, then MurmurHash3's finaliser: FNV's low bits depend only on the low bits of the bytes. */
static uint64_t hash_bytes(const uint8_t *d, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ d[i]) * 0x100000001b3ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* grid g is the op applied to the saved input grid s. */
static void require_transformed(const gw_arc_grid *g, const saved_grid *s, int op, size_t k, const char *what)
{
    const int swap = op >= 4;
    const unsigned oh = swap ? s->w : s->h, ow = swap ? s->h : s->w;
    FUZZ_REQUIRE(g->height == oh && g->width == ow, "%s grid %zu (op %s, %ux%u): shape %ux%u, expected %ux%u", what,
                 k, grid_d4_op_name(op), s->h, s->w, (unsigned)g->height, (unsigned)g->width, oh, ow);
    for (unsigned i = 0; i < oh; i++)
        for (unsigned j = 0; j < ow; j++)
            FUZZ_REQUIRE(g->cells[(size_t)i * ow + j] == s->cells[fuzz_d4_source_cell(op, s->h, s->w, i, j)],
                         "%s grid %zu (op %s, %ux%u): cell (%u,%u) is wrong", what, k, grid_d4_op_name(op), s->h, s->w,
                         i, j);
}

/* The CLI's build_batch for one file: every grid in file order, packed, one op. */
static void build_batch(gw_arc_task *t, int op, grid_d4_batch *b)
{
    const size_t n = gw_arc_grid_count(t);
    uint16_t *h = malloc((n + 1) * sizeof *h), *w = malloc((n + 1) * sizeof *w);
    FUZZ_REQUIRE(h && w, "out of memory");
    for (size_t k = 0; k < n; k++) {
        const gw_arc_grid *g = gw_arc_grid_at(t, k);
        h[k] = g->height;
        w[k] = g->width;
    }
    FUZZ_REQUIRE(grid_d4_batch_make(b, n, h, w, GRID_D4_PACKED, 0, "the grids of the input file") == 0,
                 "out of memory");
    free(h);
    free(w);
    grid_d4_batch_set_op(b, op);
    for (size_t k = 0; k < n; k++)
        memcpy(grid_d4_batch_grid(b, k), gw_arc_grid_at(t, k)->cells, (size_t)grid_d4_batch_cells_of(b, k));
}

static void stage_or_die(gw_outfile *f, const char *path, const gw_arc_task *t)
{
    char err[1024] = "";
    FUZZ_REQUIRE(gw_arc_stage(f, path, t, err, sizeof err) == 0, "an accepted, transformed task cannot be staged: %s",
                 err);
    FUZZ_REQUIRE(f->tmp != NULL && f->fd < 0, "gw_arc_stage: the staged file is not finished");
}

static int contains(const uint8_t *data, size_t size, const char *s)
{
    const size_t n = strlen(s);
    for (size_t i = 0; i + n <= size; i++)
        if (!memcmp(data + i, s, n)) return 1;
    return 0;
}

static cJSON *cjson_of(const uint8_t *data, size_t size, const char *what)
{
    char *text = malloc(size + 1);
    FUZZ_REQUIRE(text != NULL, "out of memory");
    memcpy(text, data, size);
    text[size] = '\0';
    cJSON *root = cJSON_ParseWithOpts(text, NULL, 0);
    FUZZ_REQUIRE(root != NULL, "cJSON cannot read the %s", what);
    free(text);
    return root;
}

/* Two members with the same key (as cJSON reads it) and, unless skip_value, the same value. */
static void same_member(const cJSON *a, const cJSON *b, int skip_value, const char *where, size_t i)
{
    FUZZ_REQUIRE(b != NULL, "%s: member %zu ('%s') is missing from the output", where, i, a->string);
    FUZZ_REQUIRE(!strcmp(a->string, b->string), "%s: member %zu is '%s' in the input, '%s' in the output", where, i,
                 a->string, b->string);
    if (skip_value) return;
    char *pa = cJSON_PrintUnformatted(a), *pb = cJSON_PrintUnformatted(b);
    FUZZ_REQUIRE(pa && pb, "out of memory");
    FUZZ_REQUIRE(!strcmp(pa, pb), "%s: kept member '%s' changed: %s became %s", where, a->string, pa, pb);
    cJSON_free(pa);
    cJSON_free(pb);
}

/* The kept members against the input itself, read by a second reader (cJSON): the same members in the same
 * order, at the top and in every pair, each with the same value ("input" and "output" hold the transformed
 * grids, checked above). cJSON keeps a key only up to an escaped NUL, so inputs with one are left out. */
static void check_kept_against_input(const uint8_t *data, size_t size, const uint8_t *out, size_t out_size)
{
    if (contains(data, size, "\\u0000")) return;
    cJSON *in_root = cjson_of(data, size, "input gw_arc accepted"), *out_root = cjson_of(out, out_size, "output");
    FUZZ_REQUIRE(cJSON_GetArraySize(in_root) == cJSON_GetArraySize(out_root), "the task has %d members, the output %d",
                 cJSON_GetArraySize(in_root), cJSON_GetArraySize(out_root));
    size_t i = 0;
    for (const cJSON *a = in_root->child, *b = out_root->child; a; a = a->next, b = b->next, i++) {
        const int list = !strcmp(a->string, "train") || !strcmp(a->string, "test");
        same_member(a, b, list, "the task", i);
        if (!list) continue;
        FUZZ_REQUIRE(cJSON_GetArraySize(a) == cJSON_GetArraySize(b), "%s: %d pairs became %d", a->string,
                     cJSON_GetArraySize(a), cJSON_GetArraySize(b));
        for (const cJSON *pa = a->child, *pb = b->child; pa; pa = pa->next, pb = pb->next) {
            FUZZ_REQUIRE(cJSON_GetArraySize(pa) == cJSON_GetArraySize(pb), "%s: a pair of %d members became %d",
                         a->string, cJSON_GetArraySize(pa), cJSON_GetArraySize(pb));
            size_t j = 0;
            for (const cJSON *ma = pa->child, *mb = pb->child; ma; ma = ma->next, mb = mb->next, j++)
                same_member(ma, mb, !strcmp(ma->string, "input") || !strcmp(ma->string, "output"), a->string, j);
        }
    }
    cJSON_Delete(in_root);
    cJSON_Delete(out_root);
}

/* The committed file read back: same lists, the expected grids, and the same bytes when staged again. */
static void check_read_back(const char *path, const gw_arc_task *task, const saved_grid *saved, int op,
                            const uint8_t *input, size_t input_size)
{
    char err[1024] = "";
    size_t len = 0;
    uint8_t *bytes = fuzz_slurp(path, &len);
    gw_arc_task back;
    FUZZ_REQUIRE(gw_arc_read(path, &back, err, sizeof err) == 0, "the committed output does not read back: %s", err);
    FUZZ_REQUIRE(back.n_train == task->n_train && back.n_test == task->n_test, "pairs %zu/%zu read back as %zu/%zu",
                 task->n_train, task->n_test, back.n_train, back.n_test);
    for (size_t i = 0; i < task->n_test; i++)
        FUZZ_REQUIRE(!back.test[i].has_output == !task->test[i].has_output, "test[%zu]: output gained or lost", i);
    const size_t n = gw_arc_grid_count(task);
    FUZZ_REQUIRE(gw_arc_grid_count(&back) == n, "%zu grids written, %zu read back", n, gw_arc_grid_count(&back));
    for (size_t k = 0; k < n; k++) require_transformed(gw_arc_grid_at(&back, k), &saved[k], op, k, "read back:");
    /* The task read back, staged again, must give the committed bytes: everything kept is intact. */
    gw_outfile again = GW_OUTFILE_INIT;
    stage_or_die(&again, fuzz_scratch_path(7, "again.json"), &back);
    size_t again_len = 0;
    uint8_t *again_bytes = fuzz_slurp(again.tmp, &again_len);
    FUZZ_REQUIRE(again_len == len && !memcmp(again_bytes, bytes, len),
                 "the output read back and staged again differs from the output (%zu and %zu bytes): a kept member "
                 "or the order of the members changed", again_len, len);
    gw_outfile_discard(&again);
    free(again_bytes);
    check_kept_against_input(input, input_size, bytes, len);
    free(bytes);
    gw_arc_free(&back);
}

static void write_and_check(const gw_arc_task *task, const saved_grid *saved, int op, unsigned mode,
                            const uint8_t *input, size_t input_size)
{
    const char *a = fuzz_scratch_path(0, "a.json"), *b = fuzz_scratch_path(1, "b.json");
    const char *const a_only[] = {"a.json"}, *const both[] = {"a.json", "b.json"}, *const b_only[] = {"b.json"};
    char err[1024] = "";
    gw_outfile staged[2] = {GW_OUTFILE_INIT, GW_OUTFILE_INIT};
    if (mode == FAIL_NEW || mode == FAIL_OLD) {
        FUZZ_REQUIRE(mkdir(b, 0755) == 0, "mkdir %s: %s", b, strerror(errno));
        if (mode == FAIL_OLD) fuzz_put_file(a, old_bytes, sizeof old_bytes - 1);
        stage_or_die(&staged[0], a, task);
        stage_or_die(&staged[1], b, task);
        FUZZ_REQUIRE(gw_outfile_commit_all(staged, 2, err, sizeof err) == -1,
                     "a set whose second target is a directory was committed");
        FUZZ_REQUIRE(strstr(err, b) != NULL && strstr(err, "nothing written") != NULL,
                     "the error does not name the directory target or say nothing was written: '%s'", err);
        for (int i = 0; i < 2; i++) {
            FUZZ_REQUIRE(staged[i].tmp == NULL && staged[i].path == NULL, "a failed commit left staged file %d", i);
            gw_outfile_discard(&staged[i]); /* what the CLI does after it: a no-op */
        }
        fuzz_scratch_expect(mode == FAIL_OLD ? both : b_only, mode == FAIL_OLD ? 2 : 1, "after a failed commit");
        struct stat st;
        FUZZ_REQUIRE(stat(b, &st) == 0 && S_ISDIR(st.st_mode), "the directory target is gone");
        FUZZ_REQUIRE(rmdir(b) == 0, "the directory target is not empty after the failed commit");
        if (mode == FAIL_OLD) {
            size_t len = 0;
            uint8_t *kept = fuzz_slurp(a, &len);
            FUZZ_REQUIRE(len == sizeof old_bytes - 1 && !memcmp(kept, old_bytes, len),
                         "a failed commit changed the existing target");
            free(kept);
        }
        fuzz_scratch_clear();
        return;
    }
    const size_t n = mode == PAIR ? 2 : 1;
    if (mode == OVERWRITE) fuzz_put_file(a, old_bytes, sizeof old_bytes - 1);
    stage_or_die(&staged[0], a, task);
    if (n == 2) stage_or_die(&staged[1], b, task);
    FUZZ_REQUIRE(gw_outfile_commit_all(staged, n, err, sizeof err) == 0, "commit failed: %s", err);
    for (size_t i = 0; i < n; i++) {
        FUZZ_REQUIRE(staged[i].tmp == NULL && staged[i].path == NULL, "a commit left staged file %zu", i);
        gw_outfile_discard(&staged[i]);
    }
    fuzz_scratch_expect(n == 2 ? both : a_only, n, "after a commit");
    check_read_back(a, task, saved, op, input, input_size);
    if (n == 2) {
        size_t la = 0, lb = 0;
        uint8_t *ta = fuzz_slurp(a, &la), *tb = fuzz_slurp(b, &lb);
        FUZZ_REQUIRE(la == lb && !memcmp(ta, tb, la), "the two files of one set differ");
        free(ta);
        free(tb);
    }
    fuzz_scratch_expect(n == 2 ? both : a_only, n, "after reading back");
    fuzz_scratch_clear();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_scratch_dir("fuzz_run_grid_d4");
    const uint64_t hash = hash_bytes(data, size);
    const int op = (int)(hash & 7);
    unsigned mode = (unsigned)(hash >> 3) & 7;
    if (mode > SINGLE) mode = SINGLE;

    gw_arc_task task;
    char err[1024] = "";
    if (gw_arc_read(fuzz_memfile(data, size), &task, err, sizeof err) != 0) {
        FUZZ_REQUIRE(!task.train && !task.test && !task.kept && !task.n_train && !task.n_test,
                     "a refused task is not zeroed");
        fuzz_scratch_expect(NULL, 0, "after a refused input");
        return 0;
    }
    const size_t n = gw_arc_grid_count(&task);
    FUZZ_REQUIRE(n >= 2, "an accepted task with %zu grids", n);
    saved_grid *saved = malloc(n * sizeof *saved);
    FUZZ_REQUIRE(saved != NULL, "out of memory");
    for (size_t k = 0; k < n; k++) {
        const gw_arc_grid *g = gw_arc_grid_at(&task, k);
        saved[k].h = g->height;
        saved[k].w = g->width;
        saved[k].cells = malloc((size_t)g->height * g->width);
        FUZZ_REQUIRE(saved[k].cells != NULL, "out of memory");
        memcpy(saved[k].cells, g->cells, (size_t)g->height * g->width);
    }

    grid_d4_batch b;
    build_batch(&task, op, &b);
    grid_d4_result ref;
    FUZZ_REQUIRE(grid_d4_result_init(&ref, &b) == 0, "out of memory");
    grid_d4_result_poison(&ref, poison);
    const grid_d4_params p = grid_d4_batch_params(&b);
    size_t bad = 0;
    const grid_d4_status valid = grid_d4_validate(&p, b.in, ref.out, b.offset, b.height, b.width, ref.out_height,
                                                  ref.out_width, b.ops, &bad);
    FUZZ_REQUIRE(valid == GRID_D4_OK, "grid_d4_validate refused the batch of an accepted task: grid %zu: %s", bad,
                 grid_d4_status_str(valid));
    const int status = grid_d4_ref(&p, b.in, ref.out, b.offset, b.height, b.width, ref.out_height, ref.out_width,
                                   NULL);
    FUZZ_REQUIRE(status == GRID_D4_OK, "grid_d4_ref: %s", grid_d4_status_str((grid_d4_status)status));
    for (uint64_t i = 0; i < GRID_D4_BATCH_SLACK; i++)
        FUZZ_REQUIRE(ref.out[b.buf_bytes + i] == poison, "grid_d4_ref wrote slack byte %llu past the buffer",
                     (unsigned long long)i);
    /* Results back into the task, as the CLI puts them. */
    for (size_t k = 0; k < n; k++) {
        gw_arc_grid *g = gw_arc_grid_at(&task, k);
        g->height = ref.out_height[k];
        g->width = ref.out_width[k];
        FUZZ_REQUIRE((size_t)g->height * g->width == (size_t)saved[k].h * saved[k].w, "grid %zu: %ux%u became %ux%u",
                     k, saved[k].h, saved[k].w, (unsigned)g->height, (unsigned)g->width);
        memcpy(g->cells, ref.out + b.offset[k], (size_t)g->height * g->width);
        require_transformed(g, &saved[k], op, k, "grid_d4_ref:");
    }
    grid_d4_result_free(&ref);
    grid_d4_batch_free(&b);

    write_and_check(&task, saved, op, mode, data, size);

    for (size_t k = 0; k < n; k++) free(saved[k].cells);
    free(saved);
    gw_arc_free(&task);
    return 0;
}
