/* SPDX-License-Identifier: MIT
 * The driver-level ledger (docs/witness.md, layer 3) of every kernel's host-buffer path: the CLI's
 * gw_d4_gpu_call and gw_focus_gpu_call (tools/gpuwitness/kernels/), recorded by CUPTI and checked against a budget written out
 * here from what the call must do: each kernel once, exactly one upload of each input, exactly one download
 * of each output, nothing else. Then the same call's witness and its result against the CPU reference.
 *
 * When CUPTI cannot record (under compute-sanitizer, Nsight Systems or Nsight Compute, or with
 * GW_UNDER_SANITIZER=1 as ci/gpu.sh sets for its sanitizer passes) the ledger tests skip with the reason
 * before they allocate anything: unavailable is never a pass. The host_path tests need no CUPTI and run
 * everywhere a GPU is, the sanitizer passes included.
 *
 * The canary builds link the host paths with the launcher wrapped by a planted fault
 * (tests/ledger/CMakeLists.txt); nothing here knows about them. Adding a kernel: a context with its host path's
 * call, its budget, and one Test calling require_ledger, record_call and expect_ledger (docs/ledger.md).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "focus_stack_host.h"
#include "focus_stack_ref.h"
#include "focus_stack_synth.h"
#include "grid_d4_host.h"
#include "grid_d4_ref.h"
#include "gw_gpu_test.h"
#include "gw_ledger.h"
#include "gw_trace.h"

static int used_gpu; /* this test process made CUDA calls: reset the device at the end */

static void ledger_fini(void)
{
    if (used_gpu) cudaDeviceReset(); /* compute-sanitizer's leak check reports what is still allocated */
}

static int current_device(void)
{
    int device = 0;
    GW_CUDA(cudaGetDevice(&device));
    used_gpu = 1;
    return device;
}

/* Skips the test, with the reason, when CUPTI cannot record here. Called first, before any allocation:
 * a skipped test must leave nothing for compute-sanitizer's leak check. */
static void require_ledger(void)
{
    const char *v = getenv("GW_UNDER_SANITIZER");
    if (v && !strcmp(v, "1"))
        cr_skip_test("ledger unavailable: GW_UNDER_SANITIZER=1, compute-sanitizer holds CUPTI's one subscriber "
                     "(the plain GPU pass checks the ledger)");
    char why[512];
    used_gpu = 1;
    const gw_ledger_status st = gw_ledger_probe(why, sizeof why);
    if (st == GW_LEDGER_UNAVAILABLE) cr_skip_test("ledger unavailable: %s", why);
    cr_assert_eq(st, GW_LEDGER_OK, "gw_ledger_probe: %s", why);
}

typedef int (*host_call)(void *ctx, char *err, size_t err_size);

/* The call between gw_ledger_begin and gw_ledger_end (after require_ledger), records appended to log. */
static void record_call(host_call call, void *ctx, gw_activity_log *log)
{
    char why[512], err[1024] = "";
    gw_ledger_status st = gw_ledger_begin(why, sizeof why);
    cr_assert_eq(st, GW_LEDGER_OK, "gw_ledger_begin: %s", why);
    const int rc = call(ctx, err, sizeof err);
    st = gw_ledger_end(log, why, sizeof why);
    cr_assert_eq(rc, 0, "the host path failed: %s", err);
    cr_assert_eq(st, GW_LEDGER_OK, "gw_ledger_end: %s", why);
}

/* Fails the test (without stopping it) with every violation in the ledger's words and the receipt. */
static void expect_ledger(const gw_activity_log *log, const gw_ledger_budget *budget)
{
    char msg[4096], receipt[512];
    gw_ledger_format(log, receipt, sizeof receipt);
    const int violations = gw_ledger_check(log, budget, msg, sizeof msg);
    cr_expect_eq(violations, 0, "ledger check failed (%d violations):\n%s%s", violations, msg, receipt);
}

/* ---------------------------------------------------------------- grid_d4 (grid_d4_host.h) */

typedef struct d4_ctx {
    grid_d4_batch b;
    grid_d4_result ref, got;
    gw_d4_gpu g;
    gw_d4_gpu_result res;
} d4_ctx;

static void d4_setup(d4_ctx *c)
{
    char err[512];
    memset(c, 0, sizeof *c);
    cr_assert_eq(grid_d4_batch_builtin(&c->b, 2000, 7, 1, 0, 0), 0, "out of memory");
    cr_assert(grid_d4_result_init(&c->ref, &c->b) == 0 && grid_d4_result_init(&c->got, &c->b) == 0, "out of memory");
    const grid_d4_params p = grid_d4_batch_params(&c->b);
    grid_d4_result_poison(&c->ref, 0xFF);
    cr_assert_eq(grid_d4_ref(&p, c->b.in, c->ref.out, c->b.offset, c->b.height, c->b.width, c->ref.out_height,
                             c->ref.out_width, c->b.ops), GRID_D4_OK);
    cr_assert_eq(gw_d4_gpu_init(&c->g, current_device(), &c->b, err, sizeof err), 0, "%s", err);
}

static void d4_teardown(d4_ctx *c)
{
    char err[512];
    cr_expect_eq(gw_d4_gpu_free(&c->g, err, sizeof err), 0, "%s", err);
    grid_d4_result_free(&c->got);
    grid_d4_result_free(&c->ref);
    grid_d4_batch_free(&c->b);
}

static int d4_call(void *ctx, char *err, size_t err_size)
{
    d4_ctx *c = ctx;
    return gw_d4_gpu_call(&c->g, &c->b, 0xFF, &c->got, &c->res, err, err_size);
}

/* After the ledger: the device status, the witness, then the bytes against grid_d4_ref. */
static void d4_expect_result(d4_ctx *c)
{
    char msg[1024];
    cr_expect_eq(c->res.status, GRID_D4_OK, "the device rejected grid %zu: %s", c->res.status_index,
                 grid_d4_status_str(c->res.status));
    cr_expect_eq(c->res.witness_violations, 0, "witness check failed:\n%s", c->res.witness_check);
    cr_expect_eq(grid_d4_result_compare(&c->b, &c->got, &c->ref, msg, sizeof msg), 0, "result bytes differ:\n%s",
                 msg);
}

/* gw_d4_gpu_call with per-grid ops: the validation and transform kernels once each; uploads of the cells,
 * offsets, heights, widths and ops; downloads of the status record, the witness, the cells and both shape
 * arrays. */
static gw_ledger_budget d4_budget(const d4_ctx *c, gw_copy_expect copies[10])
{
    static const gw_kernel_expect kernels[] = {{"grid_d4_validate_kernel", 1}, {"grid_d4_transform_kernel", 1}};
    const uint64_t n = c->b.n, cells = c->b.buf_bytes;
    const gw_copy_expect list[10] = {
        {GW_COPY_HTOD, cells, "in"},       {GW_COPY_HTOD, 8 * n, "offset"},
        {GW_COPY_HTOD, 2 * n, "height"},   {GW_COPY_HTOD, 2 * n, "width"},
        {GW_COPY_HTOD, n, "ops"},          {GW_COPY_DTOH, sizeof(grid_d4_status_record), "status"},
        {GW_COPY_DTOH, sizeof(gw_witness), "witness"}, {GW_COPY_DTOH, cells, "out"},
        {GW_COPY_DTOH, 2 * n, "out_height"}, {GW_COPY_DTOH, 2 * n, "out_width"}};
    memcpy(copies, list, sizeof list);
    return (gw_ledger_budget){kernels, 2, copies, 10};
}

/* The ranges of gw_d4_gpu_call, in order, each closed, with the kernels inside launch..download. */
static void d4_expect_ranges(const gw_activity_log *log)
{
    static const char *const stages[] = {"grid_d4/upload", "grid_d4/poison", "grid_d4/launch", "grid_d4/download"};
    const gw_activity *found[4] = {NULL};
    for (size_t i = 0; i < log->count; i++)
        for (int s = 0; s < 4; s++)
            if (log->items[i].kind == GW_ACTIVITY_RANGE && !strcmp(log->items[i].name, stages[s]))
                found[s] = &log->items[i];
    for (int s = 0; s < 4; s++) {
        cr_assert_not_null(found[s], "no NVTX range %s was recorded", stages[s]);
        cr_expect_lt(found[s]->start_ns, found[s]->end_ns, "range %s does not end after it starts", stages[s]);
        if (s) cr_expect_leq(found[s - 1]->end_ns, found[s]->start_ns, "%s overlaps %s", stages[s - 1], stages[s]);
    }
    for (size_t i = 0; i < log->count; i++)
        if (log->items[i].kind == GW_ACTIVITY_KERNEL)
            cr_expect(log->items[i].start_ns >= found[2]->start_ns && log->items[i].end_ns <= found[3]->end_ns,
                      "kernel %s ran outside grid_d4/launch..grid_d4/download", log->items[i].name);
}

TestSuite(ledger, .init = gw_gpu_test_init, .fini = ledger_fini);

Test(ledger, grid_d4_host_path_uploads_once_launches_both_kernels_and_downloads_once)
{
    require_ledger();
    d4_ctx c;
    d4_setup(&c);
    gw_activity_log log = {0};
    gw_copy_expect copies[10];
    const gw_ledger_budget budget = d4_budget(&c, copies);
    record_call(d4_call, &c, &log);
    expect_ledger(&log, &budget);
    d4_expect_result(&c);
    d4_expect_ranges(&log);
    gw_activity_log_free(&log);
    d4_teardown(&c);
}

Test(ledger, consecutive_recordings_each_hold_only_their_own_call)
{
    require_ledger();
    d4_ctx c;
    d4_setup(&c);
    gw_copy_expect copies[10];
    const gw_ledger_budget budget = d4_budget(&c, copies);
    for (int call = 0; call < 2; call++) {
        gw_activity_log log = {0};
        record_call(d4_call, &c, &log);
        expect_ledger(&log, &budget);
        gw_activity_log_free(&log);
    }
    /* and a recording with no call in it holds nothing */
    gw_activity_log log = {0};
    char why[512];
    cr_assert_eq(gw_ledger_begin(why, sizeof why), GW_LEDGER_OK, "%s", why);
    cr_assert_eq(gw_ledger_end(&log, why, sizeof why), GW_LEDGER_OK, "%s", why);
    const gw_ledger_budget nothing = {NULL, 0, NULL, 0};
    expect_ledger(&log, &nothing);
    gw_activity_log_free(&log);
    d4_teardown(&c);
}

/* ---------------------------------------------------------------- focus_stack (tools/gpuwitness/kernels/focus_stack/focus_stack_gpu.c) */

typedef struct focus_ctx {
    focus_stack_params p;
    uint16_t *in;
    focus_stack_synth synth;
    gw_focus_out ref, got;
    gw_focus_gpu g;
    gw_focus_gpu_result res;
} focus_ctx;

static void focus_setup(focus_ctx *c)
{
    char err[512];
    memset(c, 0, sizeof *c);
    c->p = (focus_stack_params){.n = 2, .z = 5, .y = 136, .x = 130, .ksize = 3}; /* morphseq's defaults */
    const size_t voxels = (size_t)c->p.n * c->p.z * c->p.y * c->p.x;
    c->in = malloc(voxels * sizeof *c->in);
    cr_assert(c->in && focus_stack_synth_make(&c->synth, c->p.n, c->p.z, c->p.y, c->p.x, 3, c->in) == 0, "out of memory");
    cr_assert(gw_focus_out_alloc(&c->ref, c->p, 1, 0) == 0 && gw_focus_out_alloc(&c->got, c->p, 1, 0) == 0);
    cr_assert_eq(focus_stack_ref(&c->p, c->in, c->ref.idx, c->ref.ff, c->ref.best, NULL, 0), FOCUS_STACK_OK);
    cr_assert_eq(gw_focus_gpu_init(&c->g, current_device(), c->p, 1, 0, err, sizeof err), 0, "%s", err);
}

static void focus_teardown(focus_ctx *c)
{
    char err[512];
    cr_expect_eq(gw_focus_gpu_free(&c->g, err, sizeof err), 0, "%s", err);
    gw_focus_out_free(&c->got);
    gw_focus_out_free(&c->ref);
    focus_stack_synth_free(&c->synth);
    free(c->in);
}

static int focus_call(void *ctx, char *err, size_t err_size)
{
    focus_ctx *c = ctx;
    return gw_focus_gpu_call(&c->g, c->in, 0xFF, &c->got, &c->res, err, err_size);
}

static void focus_expect_result(focus_ctx *c)
{
    char msg[1024];
    cr_expect_eq(c->res.witness_violations, 0, "witness check failed:\n%s", c->res.witness_check);
    cr_expect_eq(gw_focus_out_compare(&c->got, &c->ref, c->p, msg, sizeof msg), 0, "ff values differ: %s", msg);
}

Test(ledger, focus_stack_host_path_uploads_once_launches_the_fused_kernel_and_downloads_once)
{
    require_ledger();
    focus_ctx c;
    focus_setup(&c);
    const uint64_t px = (uint64_t)c.p.n * c.p.y * c.p.x;
    /* morphseq's defaults without the focus volume take the fused kernel (kernels/focus_stack/focus_stack.cu) */
    static const gw_kernel_expect kernels[] = {{"focus_stack_fast_kernel", 1}};
    const gw_copy_expect copies[] = {{GW_COPY_HTOD, px * (uint64_t)c.p.z * 2, "in"},
                                     {GW_COPY_DTOH, sizeof(gw_witness), "witness"},
                                     {GW_COPY_DTOH, px, "idx"},
                                     {GW_COPY_DTOH, px * 2, "ff"},
                                     {GW_COPY_DTOH, px * 4, "best"}};
    const gw_ledger_budget budget = {kernels, 1, copies, 5};
    gw_activity_log log = {0};
    record_call(focus_call, &c, &log);
    expect_ledger(&log, &budget);
    focus_expect_result(&c);
    gw_activity_log_free(&log);
    focus_teardown(&c);
}

/* ---------------------------------------------------------------- without CUPTI */

TestSuite(host_path, .init = gw_gpu_test_init, .fini = ledger_fini);

Test(host_path, grid_d4_call_matches_the_reference_with_a_good_witness)
{
    d4_ctx c;
    char err[1024];
    d4_setup(&c);
    cr_assert_eq(d4_call(&c, err, sizeof err), 0, "%s", err);
    d4_expect_result(&c);
    d4_teardown(&c);
}

Test(host_path, focus_stack_call_matches_the_reference_with_a_good_witness)
{
    focus_ctx c;
    char err[1024];
    focus_setup(&c);
    cr_assert_eq(focus_call(&c, err, sizeof err), 0, "%s", err);
    focus_expect_result(&c);
    focus_teardown(&c);
}

/* ---------------------------------------------------------------- traces (lib/ledger/src/gw_trace.c) */

TestSuite(trace, .init = gw_gpu_test_init, .fini = ledger_fini);

Test(trace, records_warmup_and_active_iterations_and_writes_only_the_active_ones)
{
    require_ledger();
    d4_ctx c;
    d4_setup(&c);
    gw_copy_expect copies[10];
    const gw_ledger_budget budget = d4_budget(&c, copies);
    const gw_trace_schedule s = {.wait = 1, .warmup = 1, .active = 2};
    gw_trace t;
    char why[512], err[1024];
    cr_assert_eq(gw_trace_start(&t, &s, why, sizeof why), GW_LEDGER_OK, "gw_trace_start: %s", why);
    for (long i = 0; i < gw_trace_schedule_iterations(&s); i++) {
        cr_assert_eq(d4_call(&c, err, sizeof err), 0, "iteration %ld: %s", i, err);
        cr_assert_eq(gw_trace_step(&t, why, sizeof why), GW_LEDGER_OK, "iteration %ld: %s", i, why);
    }
    for (long i = 0; i < 4; i++) {
        gw_activity_log one = {0};
        cr_assert_eq(gw_trace_select(&t, i, i, &one), 0);
        if (i == 0)
            cr_expect_eq(one.count, 0, "the wait iteration was recorded (%zu records)", one.count);
        else
            expect_ledger(&one, &budget);
        gw_activity_log_free(&one);
    }

    char dir[] = "/tmp/gw_trace_test_XXXXXX", path[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/trace.json", dir);
    size_t written = 0;
    const gw_trace_info info = {"test", "grid_d4", "wait=1 warmup=1 active=2", (long)getpid()};
    cr_assert_eq(gw_trace_write(&t, path, &info, &written, why, sizeof why), GW_LEDGER_OK, "%s", why);
    gw_trace_free(&t);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    char *json = calloc(1, 1 << 22);
    const size_t len = fread(json, 1, (1 << 22) - 1, f);
    fclose(f);
    unlink(path);
    rmdir(dir);
    cJSON *root = cJSON_Parse(json);
    cr_assert_not_null(root, "the trace is not valid JSON (%zu bytes)", len);
    int kernels = 0, copies_seen = 0, ranges = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
    {
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
        if (!cJSON_IsString(cat)) continue; /* metadata */
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "args"), "iteration");
        cr_expect(cJSON_IsNumber(it) && (it->valueint == 2 || it->valueint == 3), "an event of iteration %d",
                  cJSON_IsNumber(it) ? it->valueint : -1);
        kernels += !strcmp(cat->valuestring, "kernel");
        copies_seen += !strcmp(cat->valuestring, "memcpy");
        ranges += !strcmp(cat->valuestring, "nvtx");
    }
    cr_expect_eq(kernels, 4, "2 active iterations x 2 kernels");
    cr_expect_eq(copies_seen, 20, "2 active iterations x 10 copies");
    cr_expect_geq(ranges, 8, "2 active iterations x 4 host stages");
    cr_expect_eq((int)written, kernels + copies_seen + ranges);
    cJSON_Delete(root);
    free(json);
    d4_teardown(&c);
}
