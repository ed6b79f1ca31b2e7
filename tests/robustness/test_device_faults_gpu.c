/* SPDX-License-Identifier: MIT
 * Device faults of the CLI host paths (tools/gpuwitness/kernels/grid_d4/grid_d4_host.c, focus_stack_gpu.c, ex2d_patch_gpu.c), on a GPU:
 *   oversize   a request larger than the device's total memory (no terabytes allocated: the host paths
 *              check cudaMemGetInfo before their first cudaMalloc) fails with the sizes in bytes, and the
 *              device's free memory is back to its starting value afterwards;
 *   launch     a launch error is reported with the kernel and the CUDA error name (see the test's comment
 *              for the fault chosen and why it is deterministic);
 *   threads    4 pthreads, each with its own host-path objects (own stream and buffers), run grid_d4,
 *              focus_stack and ex2d_patch (tiers S, M) at once; every result against the CPU reference and
 *              every witness checked (failures are collected per thread and asserted on the test's thread);
 *   determinism grid_d4 and focus_stack outputs bitwise identical over 3 runs; ex2d_patch run to run.
 * Skipped (77) without a GPU, a failure with GW_REQUIRE_GPU=1 (tests/support/gw_gpu_test.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "ex2d_patch_ref.h"
#include "ex2d_synth.h"
#include "focus_stack_ref.h"
#include "grid_d4_ref.h"
#include "grid_d4_host.h"
#include "ex2d_patch_host.h"
#include "focus_stack_host.h"
#include "focus_stack_synth.h"
#include "gw_gpu_test.h"


static int test_device; /* the device gw_gpu_test_init selected; the worker threads use it too */

static int used_gpu; /* this test process reached a device: reset it at the end */

static void faults_init(void)
{
    gw_gpu_test_init();
    GW_CUDA(cudaGetDevice(&test_device));
    used_gpu = 1;
}

static void faults_fini(void)
{
    if (used_gpu) cudaDeviceReset(); /* compute-sanitizer's leak check reports what is still allocated */
}

static int device(void) { return test_device; }

static size_t free_memory(size_t *total)
{
    size_t f = 0, t = 0;
    GW_CUDA(cudaMemGetInfo(&f, &t));
    if (total) *total = t;
    return f;
}

/* The number after "needs " in a host path's memory error. */
static unsigned long long needed_bytes(const char *err)
{
    const char *p = strstr(err, "needs ");
    return p ? strtoull(p + 6, NULL, 10) : 0;
}

static void expect_memory_error(const char *err, const char *kernel, unsigned long long at_least)
{
    cr_expect(strstr(err, "not enough device memory") && strstr(err, kernel) && strstr(err, "bytes"),
              "not a clear memory error for %s: '%s'", kernel, err);
    cr_expect(needed_bytes(err) >= at_least, "the error names %llu bytes, the request is at least %llu: '%s'",
              needed_bytes(err), at_least, err);
}

/* ---------------------------------------------------------------- one witnessed call per kernel
 * Thread-safe: no Criterion assertion; 0, or 1 with the reason in msg. Outputs are kept for the caller. */

typedef struct d4_run {
    grid_d4_batch b;
    grid_d4_result ref, got;
} d4_run;

static int d4_once(d4_run *r, size_t n_grids, uint64_t seed, int do_ref, char *msg, size_t msg_size)
{
    char err[1024];
    gw_d4_gpu g;
    gw_d4_gpu_result res;
    memset(r, 0, sizeof *r);
    if (grid_d4_batch_builtin(&r->b, n_grids, seed, 1, 0, 0) || grid_d4_result_init(&r->got, &r->b) ||
        (do_ref && grid_d4_result_init(&r->ref, &r->b))) {
        snprintf(msg, msg_size, "grid_d4: out of host memory");
        return 1;
    }
    if (do_ref) {
        const grid_d4_params p = grid_d4_batch_params(&r->b);
        grid_d4_result_poison(&r->ref, 0xFF);
        if (grid_d4_ref(&p, r->b.in, r->ref.out, r->b.offset, r->b.height, r->b.width, r->ref.out_height,
                        r->ref.out_width, r->b.ops) != GRID_D4_OK) {
            snprintf(msg, msg_size, "grid_d4_ref failed");
            return 1;
        }
    }
    if (gw_d4_gpu_init(&g, test_device, &r->b, err, sizeof err)) {
        snprintf(msg, msg_size, "gw_d4_gpu_init: %s", err);
        return 1;
    }
    int bad = 0;
    if (gw_d4_gpu_call(&g, &r->b, 0xFF, &r->got, &res, err, sizeof err)) {
        snprintf(msg, msg_size, "gw_d4_gpu_call: %s", err), bad = 1;
    } else if (res.status != GRID_D4_OK) {
        snprintf(msg, msg_size, "grid_d4: device status %s at grid %zu", grid_d4_status_str(res.status),
                 res.status_index), bad = 1;
    } else if (res.witness_violations) {
        snprintf(msg, msg_size, "grid_d4 witness:\n%s", res.witness_check), bad = 1;
    } else if (do_ref) {
        char cmp[512];
        if (grid_d4_result_compare(&r->b, &r->got, &r->ref, cmp, sizeof cmp))
            snprintf(msg, msg_size, "grid_d4 differs from the reference: %s", cmp), bad = 1;
    }
    if (gw_d4_gpu_free(&g, err, sizeof err) && !bad) snprintf(msg, msg_size, "gw_d4_gpu_free: %s", err), bad = 1;
    return bad;
}

static void d4_run_free(d4_run *r)
{
    grid_d4_result_free(&r->got);
    grid_d4_result_free(&r->ref);
    grid_d4_batch_free(&r->b);
}

typedef struct focus_run {
    focus_stack_params p;
    uint16_t *in;
    gw_focus_out ref, got;
} focus_run;

static int focus_once(focus_run *r, focus_stack_params p, uint64_t seed, int do_ref, char *msg, size_t msg_size)
{
    char err[1024];
    gw_focus_gpu g;
    gw_focus_gpu_result res;
    memset(r, 0, sizeof *r);
    r->p = p;
    const size_t voxels = (size_t)p.n * p.z * p.y * p.x;
    r->in = malloc(voxels * sizeof *r->in);
    if (!r->in || gw_focus_out_alloc(&r->got, p, 1, 0) || (do_ref && gw_focus_out_alloc(&r->ref, p, 1, 0))) {
        snprintf(msg, msg_size, "focus_stack: out of host memory");
        return 1;
    }
    focus_stack_random_u16(r->in, voxels, seed, 4095);
    if (do_ref && focus_stack_ref(&p, r->in, r->ref.idx, r->ref.ff, r->ref.best, NULL, 1) != FOCUS_STACK_OK) {
        snprintf(msg, msg_size, "focus_stack_ref failed");
        return 1;
    }
    if (gw_focus_gpu_init(&g, test_device, p, 1, 0, err, sizeof err)) {
        snprintf(msg, msg_size, "gw_focus_gpu_init: %s", err);
        return 1;
    }
    int bad = 0;
    if (gw_focus_gpu_call(&g, r->in, 0xFF, &r->got, &res, err, sizeof err)) {
        snprintf(msg, msg_size, "gw_focus_gpu_call: %s", err), bad = 1;
    } else if (res.witness_violations) {
        snprintf(msg, msg_size, "focus_stack witness:\n%s", res.witness_check), bad = 1;
    } else if (do_ref) {
        char cmp[512];
        if (gw_focus_out_compare(&r->got, &r->ref, p, cmp, sizeof cmp))
            snprintf(msg, msg_size, "focus_stack differs from the reference: %s", cmp), bad = 1;
    }
    if (gw_focus_gpu_free(&g, err, sizeof err) && !bad)
        snprintf(msg, msg_size, "gw_focus_gpu_free: %s", err), bad = 1;
    return bad;
}

static void focus_run_free(focus_run *r)
{
    gw_focus_out_free(&r->got);
    gw_focus_out_free(&r->ref);
    free(r->in);
}

typedef struct ex2d_run {
    ex2d_frame f;
    ex2d_outputs ref, got;
    int have_frame, have_ref, have_got;
} ex2d_run;

static int ex2d_once(ex2d_run *r, int tier, int do_ref, char *msg, size_t msg_size)
{
    char err[1024];
    ex2d_frame_config cfg;
    gw_ex2d_gpu_result res;
    memset(r, 0, sizeof *r);
    if (ex2d_frame_config_tier(&cfg, tier) || ex2d_frame_make(&cfg, &r->f)) {
        snprintf(msg, msg_size, "ex2d: frame for tier %d not made", tier);
        return 1;
    }
    r->have_frame = 1;
    if (ex2d_ref_outputs_alloc(&r->f.params, r->f.npatch, &r->got)) {
        snprintf(msg, msg_size, "ex2d: out of host memory");
        return 1;
    }
    r->have_got = 1;
    if (do_ref) {
        double ms = 0;
        if (ex2d_ref_outputs_alloc(&r->f.params, r->f.npatch, &r->ref)) {
            snprintf(msg, msg_size, "ex2d: out of host memory");
            return 1;
        }
        r->have_ref = 1;
        if (gw_ex2d_cpu_run(&r->f, 1, &r->ref, NULL, &ms, err, sizeof err)) {
            snprintf(msg, msg_size, "gw_ex2d_cpu_run: %s", err);
            return 1;
        }
    }
    const int rc = gw_ex2d_gpu_run(test_device, &r->f, 0, &r->got, &res, NULL, err, sizeof err);
    if (rc) {
        snprintf(msg, msg_size, "gw_ex2d_gpu_run: %s", err);
        return 1;
    }
    if (res.check.code != EX2D_OK) {
        snprintf(msg, msg_size, "ex2d: device validation rejected the frame: %s", ex2d_error_str(res.check.code));
        return 1;
    }
    if (res.witness_violations) {
        snprintf(msg, msg_size, "ex2d witness:\n%.1900s", res.witness_check);
        return 1;
    }
    if (do_ref) {
        char cmp[1024];
        if (gw_ex2d_compare(&r->f, &r->got, &r->ref, 0, cmp, sizeof cmp)) {
            snprintf(msg, msg_size, "ex2d differs from the reference: %s", cmp);
            return 1;
        }
    }
    return 0;
}

static void ex2d_run_free(ex2d_run *r)
{
    if (r->have_got) ex2d_ref_outputs_free(&r->got);
    if (r->have_ref) ex2d_ref_outputs_free(&r->ref);
    if (r->have_frame) ex2d_frame_free(&r->f);
}

/* ---------------------------------------------------------------- oversize requests */

/* One small call of each host path first: the context, the stream pool and the module loads then exist, so
 * the free memory measured next is the baseline a leak would move. */
static void warm_up(void)
{
    char msg[2048];
    d4_run d;
    cr_assert_eq(d4_once(&d, 100, 1, 0, msg, sizeof msg), 0, "%s", msg);
    d4_run_free(&d);
    focus_run fr;
    cr_assert_eq(focus_once(&fr, (focus_stack_params){.n = 1, .z = 3, .y = 40, .x = 40, .ksize = 3}, 1, 0, msg,
                            sizeof msg), 0, "%s", msg);
    focus_run_free(&fr);
}

TestSuite(device_faults, .init = faults_init, .fini = faults_fini);

Test(device_faults, grid_d4_batch_larger_than_the_device_fails_with_the_bytes_and_leaks_nothing)
{
    warm_up();
    size_t total = 0;
    const size_t before = free_memory(&total);
    /* Only init is called, which reads n_grids, buf_bytes and ops: no host cells are needed. */
    grid_d4_batch b = {.n = 1, .buf_bytes = (uint64_t)total + 1};
    gw_d4_gpu g;
    char err[1024] = "";
    cr_assert_neq(gw_d4_gpu_init(&g, device(), &b, err, sizeof err), 0, "a %zu-byte batch was accepted", total + 1);
    expect_memory_error(err, "grid_d4", 2ull * (total + 1));
    cr_log_info("grid_d4: %s", err);
    GW_CUDA(cudaDeviceSynchronize());
    cr_expect_eq(free_memory(NULL), before, "free device memory %zu before, %zu after the failed init", before,
                 free_memory(NULL));
}

Test(device_faults, focus_stack_problem_larger_than_the_device_fails_with_the_bytes_and_leaks_nothing)
{
    warm_up();
    size_t total = 0;
    const size_t before = free_memory(&total);
    /* 2189 x 2189 x 17 stacks (2 bytes a voxel), as many as exceed the device's total memory */
    focus_stack_params p = {.n = 1, .z = 17, .y = 2189, .x = 2189, .ksize = 3};
    const unsigned long long stack = 2ull * p.z * p.y * p.x;
    p.n = (int)(total / stack + 1);
    gw_focus_gpu g;
    char err[1024] = "";
    cr_assert_neq(gw_focus_gpu_init(&g, device(), p, 1, 0, err, sizeof err), 0, "%d stacks were accepted", p.n);
    expect_memory_error(err, "focus_stack", stack * (unsigned long long)p.n);
    cr_log_info("focus_stack (%d stacks): %s", p.n, err);
    GW_CUDA(cudaDeviceSynchronize());
    cr_expect_eq(free_memory(NULL), before, "free device memory %zu before, %zu after the failed init", before,
                 free_memory(NULL));
}

Test(device_faults, ex2d_frame_larger_than_the_device_fails_with_the_bytes_and_leaks_nothing)
{
    warm_up();
    char msg[2048];
    ex2d_run r;
    cr_assert_eq(ex2d_once(&r, EX2D_TIER_S, 0, msg, sizeof msg), 0, "%s", msg); /* warm-up of ex2d's kernels */
    size_t total = 0;
    const size_t before = free_memory(&total);
    /* Tier S with a 200000 x 200000 image declared (640 GB of image and ivar): the memory check comes before
     * any upload, so the small host image is never read past its end. */
    ex2d_frame big = r.f;
    big.params.npix_x = 200000;
    big.params.npix_y = 200000;
    gw_ex2d_gpu_result res;
    char err[1024] = "";
    cr_assert_neq(gw_ex2d_gpu_run(device(), &big, 0, &r.got, &res, NULL, err, sizeof err), 0,
                  "a 640 GB frame was accepted");
    expect_memory_error(err, "ex2d_patch", 2ull * 8 * 200000 * 200000);
    cr_log_info("ex2d_patch: %s", err);
    GW_CUDA(cudaDeviceSynchronize());
    cr_expect_eq(free_memory(NULL), before, "free device memory %zu before, %zu after the failed run", before,
                 free_memory(NULL));
    ex2d_run_free(&r);
}

/* ---------------------------------------------------------------- launch error */

/* The fault: grid_d4's status record pointer replaced, after a good init, by address 0x1000, which no
 * process can map (below Linux's mmap_min_addr) and CUDA never allocates. The host path never touches
 * d_status itself (grid_d4_launch resets it), and the launcher's host checks (NULL, overlap of address
 * ranges) cannot know the address is bad, so the first CUDA call on it is inside grid_d4_launch: the status
 * reset, cudaMemsetAsync, which refuses an address that is neither device nor registered host memory with
 * cudaErrorInvalidValue, the same every run, and the host path reports "grid_d4_launch failed: invalid
 * argument (cudaErrorInvalidValue)". Where the driver lets kernels reach pageable memory (HMM), the same fault
 * could instead surface at the synchronisation as "grid_d4 on the stream (cudaStreamSynchronize) failed: ...
 * (cudaErrorIllegalAddress)". Both name grid_d4 and a CUDA error name, which is what is checked. The test has
 * its own process (Criterion), so a sticky error cannot reach another test. */
Test(device_faults, launch_error_is_reported_with_the_kernel_and_the_cuda_error_name)
{
    const char *v = getenv("GW_UNDER_SANITIZER");
    if (v && !strcmp(v, "1"))
        cr_skip_test("GW_UNDER_SANITIZER=1: compute-sanitizer counts the deliberate failed CUDA call as a finding "
                     "(the plain GPU pass runs this test)");
    char err[1024] = "";
    grid_d4_batch b;
    grid_d4_result out;
    cr_assert_eq(grid_d4_batch_builtin(&b, 500, 11, 1, 0, 0), 0, "out of memory");
    cr_assert_eq(grid_d4_result_init(&out, &b), 0, "out of memory");
    gw_d4_gpu g;
    cr_assert_eq(gw_d4_gpu_init(&g, device(), &b, err, sizeof err), 0, "%s", err);
    grid_d4_status_record *const kept = g.d_status;
    g.d_status = (grid_d4_status_record *)(uintptr_t)0x1000;
    gw_d4_gpu_result res;
    const int rc = gw_d4_gpu_call(&g, &b, 0xFF, &out, &res, err, sizeof err);
    g.d_status = kept; /* freed by gw_d4_gpu_free, not leaked */
    cr_log_info("launch error: %s", err);
    cr_expect_neq(rc, 0, "a call with status pointer 0x1000 succeeded");
    cr_expect(strstr(err, "grid_d4") != NULL, "the error does not name the kernel: '%s'", err);
    cr_expect(strstr(err, "(cudaError") != NULL, "the error has no CUDA error name: '%s'", err);
    gw_d4_gpu_free(&g, NULL, 0);
    grid_d4_result_free(&out);
    grid_d4_batch_free(&b);
}

/* ---------------------------------------------------------------- concurrent host threads */

#define N_THREADS 4

typedef struct worker {
    int index;
    int failures;
    char msg[4096];
} worker;

static void fail_note(worker *w, const char *what, const char *msg)
{
    w->failures++;
    const size_t used = strlen(w->msg);
    snprintf(w->msg + used, sizeof w->msg - used, "thread %d %s: %s\n", w->index, what, msg);
}

static void *work(void *arg)
{
    worker *w = arg;
    char msg[2048];
    for (int round = 0; round < 2; round++) {
        const uint64_t seed = 100u + (uint64_t)w->index * 10u + (uint64_t)round;
        d4_run d;
        if (d4_once(&d, 3000 + 500 * (size_t)w->index, seed, 1, msg, sizeof msg)) fail_note(w, "grid_d4", msg);
        d4_run_free(&d);
        focus_run fr;
        const focus_stack_params p = {.n = 2, .z = 7, .y = 211 + w->index, .x = 197 + round, .ksize = 3};
        if (focus_once(&fr, p, seed, 1, msg, sizeof msg)) fail_note(w, "focus_stack", msg);
        focus_run_free(&fr);
        ex2d_run er;
        if (ex2d_once(&er, (w->index + round) % 2 ? EX2D_TIER_M : EX2D_TIER_S, 1, msg, sizeof msg))
            fail_note(w, "ex2d_patch", msg);
        ex2d_run_free(&er);
    }
    return NULL;
}

Test(device_faults, four_host_threads_with_their_own_streams_all_match_the_reference_and_their_witness,
     .timeout = 600)
{
    pthread_t t[N_THREADS];
    static worker w[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        w[i] = (worker){.index = i};
        cr_assert_eq(pthread_create(&t[i], NULL, work, &w[i]), 0, "pthread_create");
    }
    for (int i = 0; i < N_THREADS; i++) cr_assert_eq(pthread_join(t[i], NULL), 0, "pthread_join");
    int failures = 0;
    for (int i = 0; i < N_THREADS; i++) failures += w[i].failures;
    cr_assert_eq(failures, 0, "%d failed calls:\n%s%s%s%s", failures, w[0].msg, w[1].msg, w[2].msg, w[3].msg);
}

/* ---------------------------------------------------------------- determinism */

Test(device_faults, grid_d4_output_is_bitwise_identical_over_three_runs)
{
    char msg[2048];
    d4_run r[3];
    for (int i = 0; i < 3; i++) cr_assert_eq(d4_once(&r[i], 20000, 5, i == 0, msg, sizeof msg), 0, "%s", msg);
    for (int i = 1; i < 3; i++) {
        cr_expect(memcmp(r[i].got.out, r[0].got.out, r[0].b.buf_bytes) == 0, "run %d cells differ from run 0", i);
        cr_expect(memcmp(r[i].got.out_height, r[0].got.out_height, r[0].b.n * 2) == 0, "run %d heights differ", i);
        cr_expect(memcmp(r[i].got.out_width, r[0].got.out_width, r[0].b.n * 2) == 0, "run %d widths differ", i);
    }
    for (int i = 0; i < 3; i++) d4_run_free(&r[i]);
}

Test(device_faults, focus_stack_output_is_bitwise_identical_over_three_runs)
{
    char msg[2048];
    focus_run r[3];
    const focus_stack_params p = {.n = 3, .z = 9, .y = 517, .x = 489, .ksize = 5, .window = 5};
    const size_t px = (size_t)p.n * p.y * p.x;
    for (int i = 0; i < 3; i++) cr_assert_eq(focus_once(&r[i], p, 9, i == 0, msg, sizeof msg), 0, "%s", msg);
    for (int i = 1; i < 3; i++) {
        cr_expect(memcmp(r[i].got.idx, r[0].got.idx, px) == 0, "run %d idx differs from run 0", i);
        cr_expect(memcmp(r[i].got.ff, r[0].got.ff, px * 2) == 0, "run %d ff differs from run 0", i);
        cr_expect(memcmp(r[i].got.best, r[0].got.best, px * 4) == 0, "run %d best differs from run 0", i);
    }
    for (int i = 0; i < 3; i++) focus_run_free(&r[i]);
}

Test(device_faults, ex2d_patch_output_is_bitwise_identical_run_to_run, .timeout = 600)
{
    gw_skip_under_sanitizer("ex2d_patch determinism over tier L");
    char msg[2048];
    ex2d_run r[2];
    for (int i = 0; i < 2; i++) cr_assert_eq(ex2d_once(&r[i], EX2D_TIER_L, i == 0, msg, sizeof msg), 0, "%s", msg);
    cr_expect_eq(gw_ex2d_compare(&r[0].f, &r[1].got, &r[0].got, 1, msg, sizeof msg), 0,
                 "two GPU runs of tier L differ: %s", msg);
    for (int i = 0; i < 2; i++) ex2d_run_free(&r[i]);
}
