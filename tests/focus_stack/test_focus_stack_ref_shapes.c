/* SPDX-License-Identifier: MIT
 * Shape scaling of the focus_stack reference (docs/focus_stack.md, "The CPU reference", "Threads"): the CPU
 * path must cost what the bytes cost, whatever the shape. A 10 MB .npy of 20000 stacks of 255 slices of 1x1
 * pixels once ran past 300 s on two busy cores (a barrier per tiny slice), while the same bytes as one
 * 2257x2257 image take 0.3 s.
 *
 * Every shape below holds about 5.1 million voxels (10 MB of uint16). Each runs on every core
 * (n_threads 0) while one spinning thread per core keeps every core busy, as on a loaded CI machine; its time
 * per byte, the best of two runs, must be within FS_SHAPE_FACTOR of one 2257x2257 image's (the best of
 * three) with the same parameters, and 20000x255x1x1 must take less than FS_SHAPE_HARD_S seconds. Each
 * result must equal the single-threaded run byte for byte. Two parameter sets: morphseq's defaults, and
 * ksize 5 LAP_ABS REFLECT101 with a window of 5. The shapes run in the order in which the old per-slice schedule
 * degraded, so that a regression fails at the first bad shape instead of running for minutes.
 *
 * Not under the Valgrind gate (timings mean nothing there); test_focus_stack_ref checks both schedules
 * against the oracle, under the gate too.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, sysconf */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "focus_stack_fixture.h"
#include "focus_stack_ref.h"

#define FS_SHAPE_FACTOR 8.0 /* time per byte of any shape / that of one image of the same bytes */
#ifndef FS_SHAPE_HARD_S /* the asan build sets its own (tests/focus_stack/CMakeLists.txt) */
#define FS_SHAPE_HARD_S 5.0 /* seconds for 20000x255x1x1 on a loaded machine ("well under 10 s") */
#endif

/* ------------------------------------------------------------------ load: one spinning thread per core */

static atomic_int spin_stop;

static void *spin(void *arg)
{
    (void)arg;
    volatile unsigned long x = 0;
    while (!atomic_load_explicit(&spin_stop, memory_order_relaxed)) x++;
    return NULL;
}

typedef struct spinners {
    pthread_t t[64];
    int count;
} spinners;

static void spinners_start(spinners *s)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    s->count = cores < 1 ? 1 : cores > 64 ? 64 : (int)cores;
    atomic_store(&spin_stop, 0);
    for (int i = 0; i < s->count; i++) cr_assert(pthread_create(&s->t[i], NULL, spin, NULL) == 0, "pthread_create");
}

static void spinners_stop(spinners *s)
{
    atomic_store(&spin_stop, 1);
    for (int i = 0; i < s->count; i++) pthread_join(s->t[i], NULL);
}

/* ------------------------------------------------------------------ timing */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct shape_run {
    uint8_t *idx;
    uint16_t *ff;
} shape_run;

/* One call (idx and ff, as `gpuwitness run focus_stack` asks by default); its seconds. */
static double run_once(const fs_case *c, int n_threads, shape_run *out)
{
    memset(out->idx, 0xFF, c->pixels);
    memset(out->ff, 0xA5, c->pixels * sizeof *out->ff);
    const double t0 = now_s();
    const int status = focus_stack_ref(&c->p, c->in, out->idx, out->ff, NULL, NULL, n_threads);
    const double t = now_s() - t0;
    cr_assert(status == FOCUS_STACK_OK, "focus_stack_ref returned %d", status);
    return t;
}

static void run_alloc(shape_run *r, size_t pixels)
{
    r->idx = malloc(pixels);
    r->ff = malloc(pixels * sizeof *r->ff);
    cr_assert(r->idx && r->ff, "out of memory");
}

static void run_free(shape_run *r)
{
    free(r->idx), free(r->ff);
}

/* Best of `reps` runs on every core, each result compared with want (when given); ns per input byte. */
static double ns_per_byte(const fs_case *c, int reps, const shape_run *want, double *best_s)
{
    shape_run got;
    run_alloc(&got, c->pixels);
    double best = 0;
    for (int i = 0; i < reps; i++) {
        const double t = run_once(c, 0, &got);
        if (i == 0 || t < best) best = t;
        if (want)
            cr_assert(memcmp(got.idx, want->idx, c->pixels) == 0 &&
                          memcmp(got.ff, want->ff, c->pixels * sizeof *got.ff) == 0,
                      "%dx%dx%dx%d: n_threads 0 gives other bytes than n_threads 1", c->p.n, c->p.z, c->p.y, c->p.x);
    }
    run_free(&got);
    *best_s = best;
    return best * 1e9 / ((double)c->voxels * 2.0);
}

Test(focus_stack_ref_shapes, every_shape_costs_per_byte_what_one_image_costs_on_loaded_cores)
{
    static const struct {
        int n, z, y, x;
        const char *why;
    } shapes[] = {
        {1, 255, 141, 141, "one stack of small images"},
        {1, 77, 257, 257, "one stack of mid-size images"},
        {10, 255, 1, 2000, "one-row images"},
        {1, 1, 1, 5094049, "one image of one row"},
        {2000, 255, 3, 3, "many stacks of 3x3 images"},
        {20000, 255, 1, 1, "many stacks of 1x1 images: the 10 MB .npy that ran past 300 s"},
    };
    /* morphseq's defaults, then a window with the folding border (more halo, two more stages) */
    static const focus_stack_params params[2] = {
        {.ksize = 3, .measure = FOCUS_STACK_LOG_ABS, .border = FOCUS_STACK_BORDER_ZERO, .window = 0},
        {.ksize = 5, .measure = FOCUS_STACK_LAP_ABS, .border = FOCUS_STACK_BORDER_REFLECT101, .window = 5},
    };
    spinners load;
    spinners_start(&load);
    cr_log_info("%d spinning threads keep every core busy", load.count);

    for (int k = 0; k < 2; k++) {
        char what[96];
        snprintf(what, sizeof what, "k=%d %s %s w=%d", params[k].ksize, fs_measure_name(params[k].measure),
                 fs_border_name(params[k].border), params[k].window);
        fs_case regular;
        fs_case_init(&regular, 1, 1, 2257, 2257);
        regular.p = params[k], regular.p.n = 1, regular.p.z = 1, regular.p.y = 2257, regular.p.x = 2257;
        fs_fill_random(&regular, 65535, 0x5A9Eu);
        double regular_s;
        const double regular_ns = ns_per_byte(&regular, 3, NULL, &regular_s);
        cr_log_info("%s, 1x1x2257x2257 (one image): %.3f s, %.2f ns per byte", what, regular_s, regular_ns);
        fs_case_free(&regular);

        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            fs_case c;
            fs_case_init(&c, shapes[i].n, shapes[i].z, shapes[i].y, shapes[i].x);
            c.p = params[k], c.p.n = shapes[i].n, c.p.z = shapes[i].z, c.p.y = shapes[i].y, c.p.x = shapes[i].x;
            fs_fill_random(&c, 65535, 0x5A9Eu + i);
            shape_run want;
            run_alloc(&want, c.pixels);
            run_once(&c, 1, &want);
            double s;
            const double ns = ns_per_byte(&c, 2, &want, &s);
            const double ratio = ns / regular_ns;
            cr_log_info("%s, %dx%dx%dx%d (%s): %.3f s, %.2f ns per byte, %.2fx the image's", what, c.p.n, c.p.z,
                        c.p.y, c.p.x, shapes[i].why, s, ns, ratio);
            cr_assert(ratio <= FS_SHAPE_FACTOR,
                      "%s, %dx%dx%dx%d (%s): %.2f ns per byte on every core under load, %.1fx the %.2f ns of one "
                      "2257x2257 image (limit %.0fx): the schedule does not scale with the bytes",
                      what, c.p.n, c.p.z, c.p.y, c.p.x, shapes[i].why, ns, ratio, regular_ns, FS_SHAPE_FACTOR);
            if (c.p.n == 20000)
                cr_assert(s < FS_SHAPE_HARD_S, "%s, 20000x255x1x1 took %.2f s on every core under load (limit %.0f s)",
                          what, s, FS_SHAPE_HARD_S);
            run_free(&want);
            fs_case_free(&c);
        }
    }
    spinners_stop(&load);
}
