/* SPDX-License-Identifier: MIT
 * focus_stack in gpuwitness check and doctor. check: two built-in problems, each run by focus_stack_ref on
 * one thread and on all cores (identical bytes), then on the GPU twice (outputs poisoned 0xFF with every
 * optional output, then 0xA5 with none: idx and ff must not change), each call compared bit for bit with the
 * reference and witnessed. The first problem also has a known answer (focus_stack_synth.h), checked on the
 * reference's result, so a reference and a kernel that agree on a wrong answer cannot pass. doctor: one
 * small known-focus problem per device, with its witness.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "focus_stack_ref.h"
#include "focus_stack_host.h"
#include "gw_kernel.h"
#include "focus_stack_synth.h"

typedef struct focus_case {
    const char *label;
    int known; /* 1: the synthetic known-focus stack; 0: full-range random values */
    int n, z, y, x;
    focus_stack_params p; /* sizes filled in from n, z, y, x */
} focus_case;

/* realistic: morphseq's defaults on a 512x512 stack of 17 slices, then the widest kernel with a window,
 * reflect101 and both float outputs on random data (odd sizes, two stacks). small: the same, smaller. */
static const focus_case realistic_cases[] = {
    {"morphseq defaults, known-focus textured stack", 1, 1, 17, 512, 512, {.ksize = 3}},
    {"ksize 7 LoG, reflect101, window 9, full-range random values", 0, 2, 5, 259, 263,
     {.ksize = 7, .measure = FOCUS_STACK_LOG_ABS, .border = FOCUS_STACK_BORDER_REFLECT101, .window = 9}},
};
static const focus_case small_cases[] = {
    {"morphseq defaults, known-focus textured stack", 1, 2, 5, 136, 130, {.ksize = 3}},
    {"ksize 7 LoG, reflect101, window 9, full-range random values", 0, 1, 3, 61, 67,
     {.ksize = 7, .measure = FOCUS_STACK_LOG_ABS, .border = FOCUS_STACK_BORDER_REFLECT101, .window = 9}},
};

/* The case's input; 0 or -1 (out of memory). s is filled for known-focus cases. */
static uint16_t *make_input(const focus_case *c, uint64_t seed, focus_stack_synth *s)
{
    const size_t voxels = (size_t)c->n * c->z * c->y * c->x;
    uint16_t *in = malloc(voxels * sizeof *in);
    if (!in) return NULL;
    memset(s, 0, sizeof *s);
    if (c->known) {
        if (focus_stack_synth_make(s, c->n, c->z, c->y, c->x, seed, in)) {
            free(in);
            return NULL;
        }
    } else {
        focus_stack_random_u16(in, voxels, seed, 65535);
    }
    return in;
}

/* focus_stack_ref on 1 thread into ref and on all cores into mt: identical bytes, consistent, and the known
 * answer where there is one. 0 or 1 (printed). */
static int run_cpu(const focus_case *c, const uint16_t *in, const focus_stack_synth *s, gw_focus_out *ref,
                   gw_focus_out *mt, double *ref_ms)
{
    char msg[2048];
    const focus_stack_params p = c->p;
    gw_focus_out_poison(ref, p, 0xFF);
    gw_focus_out_poison(mt, p, 0xFF);
    double t0 = gw_cli_now_ms();
    int rc = focus_stack_ref(&p, in, ref->idx, ref->ff, ref->best, ref->focus, 1);
    *ref_ms = gw_cli_now_ms() - t0;
    if (rc != FOCUS_STACK_OK) {
        printf("  result:   FAILED: focus_stack_ref returned %d: %s\n", rc, focus_stack_status_str(rc));
        return 1;
    }
    t0 = gw_cli_now_ms();
    rc = focus_stack_ref(&p, in, mt->idx, mt->ff, mt->best, mt->focus, 0);
    const double mt_ms = gw_cli_now_ms() - t0;
    if (rc != FOCUS_STACK_OK) {
        printf("  result:   FAILED: focus_stack_ref (all cores) returned %d: %s\n", rc, focus_stack_status_str(rc));
        return 1;
    }
    const int diff = gw_focus_out_compare(mt, ref, p, msg, sizeof msg);
    printf("  cpu:      focus_stack_ref %.2f ms (1 thread), %.2f ms (all cores): %s\n", *ref_ms, mt_ms,
           diff ? "DIFFERENT" : "identical bytes");
    if (diff) {
        printf("  result:   FAILED: focus_stack_ref differs between 1 thread and all cores: %s\n", msg);
        return 1;
    }
    if (gw_focus_out_consistent(ref, in, p, msg, sizeof msg)) {
        printf("  result:   FAILED: focus_stack_ref's outputs are inconsistent: %s\n", msg);
        return 1;
    }
    if (c->known) {
        focus_stack_synth_report r;
        const int margin = focus_stack_synth_margin(p.ksize, p.measure, p.window);
        if (focus_stack_synth_verify(s, ref->idx, margin, &r)) {
            printf("  result:   FAILED: focus_stack_ref misses the known focus at %zu of %zu textured and %zu of %zu "
                   "flat pixels; first at (n=%d, y=%d, x=%d): idx %d, expected %d\n", r.textured_wrong,
                   r.textured_checked, r.flat_wrong, r.flat_checked, r.first_n, r.first_y, r.first_x, r.first_got,
                   r.first_want);
            return 1;
        }
        printf("  known:    idx is the in-focus slice on all %zu textured pixels and 0 on all %zu flat pixels\n",
               r.textured_checked, r.flat_checked);
    }
    return 0;
}

/* Two witnessed GPU calls against the reference. 0 or 1 (printed). */
static int run_gpu(const focus_case *c, const uint16_t *in, const gw_focus_out *ref, double ref_ms, int ordinal)
{
    char err[1024], msg[2048];
    const focus_stack_params p = c->p;
    gw_focus_gpu g;
    gw_focus_out got;
    gw_focus_gpu_result res[2];
    int failed = 0, call_failed = 0, shown = -1;
    if (gw_focus_gpu_init(&g, ordinal, p, 1, 1, err, sizeof err)) {
        printf("  result:   FAILED: %s\n", err);
        return 1;
    }
    if (gw_focus_out_alloc(&got, p, 1, 1)) {
        printf("  result:   FAILED: out of memory\n");
        gw_focus_gpu_free(&g, NULL, 0);
        return 1;
    }
    float *best = got.best, *focus = got.focus;
    const uint8_t poison[2] = {0xFF, 0xA5};
    for (int rep = 0; rep < 2 && !failed; rep++) {
        /* call 2 asks for idx and ff only: they must not depend on the optional outputs */
        got.best = rep == 0 ? best : NULL;
        got.focus = rep == 0 ? focus : NULL;
        if (gw_focus_gpu_call(&g, in, poison[rep], &got, &res[rep], err, sizeof err)) {
            printf("  result:   FAILED: call %d: %s\n", rep + 1, err);
            failed = call_failed = 1;
            break;
        }
        shown = rep;
        if (gw_focus_out_compare(&got, ref, p, msg, sizeof msg)) {
            printf("  result:   FAILED: call %d (%s, outputs poisoned with 0x%02X) differs from focus_stack_ref: %s\n",
                   rep + 1, rep == 0 ? "all outputs" : "idx and ff only", (unsigned)poison[rep], msg);
            failed = 1;
        }
        if (res[rep].witness_violations) {
            printf("  result:   FAILED: call %d: the witness does not prove GPU execution (%d violation(s))\n",
                   rep + 1, res[rep].witness_violations);
            failed = 1;
        }
    }
    got.best = best;
    got.focus = focus;
    if (!failed) {
        const gw_focus_gpu_result *r = &res[1]; /* the warm call */
        printf("  %s %.2f ms incl. transfers, kernel %.3f ms (second of 2 calls); focus_stack_ref / %s = "
               "%.1fx%s\n", gw_cli_gpu_label(), r->ms_end_to_end, r->ms_kernel, gw_cli_emulated() ? "emulated" : "gpu",
               r->ms_end_to_end > 0 ? ref_ms / r->ms_end_to_end : 0.0, gw_cli_emulated_note());
    }
    if (shown >= 0) {
        gw_focus_gpu_result *r = &res[shown];
        printf("  %s\n", r->witness_receipt);
        gw_cli_print_lines(stdout, r->witness_check, "            ");
    }
    if (!failed)
        printf("  result:   ok: both calls bit-exact with focus_stack_ref (idx, ff, best, focus), witness checks "
               "out\n");
    gw_focus_out_free(&got);
    /* after a failed call, its error is the one worth reporting: a sticky one fails the frees too */
    if (gw_focus_gpu_free(&g, call_failed ? NULL : err, sizeof err)) {
        if (!call_failed) printf("  result:   FAILED: %s\n", err);
        failed = 1;
    }
    return failed;
}

static int run_case(const focus_case *tmpl, uint64_t seed, const gw_device_choice *dev, int gpu)
{
    focus_case c = *tmpl;
    c.p.n = c.n;
    c.p.z = c.z;
    c.p.y = c.y;
    c.p.x = c.x;
    char params[128];
    gw_focus_params_text(c.p, params, sizeof params);
    printf("focus_stack [%s]\n", c.label);
    focus_stack_synth s;
    uint16_t *in = make_input(&c, seed, &s);
    if (!in) {
        printf("  result:   FAILED: out of memory building the problem\n");
        return 1;
    }
    const double voxels = (double)c.n * c.z * c.y * c.x;
    printf("  problem:  N=%d Z=%d %dx%d (%.2f Mvoxels, %.1f MB), %s; idx, ff, best and focus; seed %" PRIu64 "\n",
           c.n, c.z, c.y, c.x, voxels / 1e6, voxels * 2 / 1e6, params, seed);
    if (gpu) printf("  device:   cuda:%d%s\n", dev->ordinal, gw_cli_emulated_note());
    else printf("  device:   cpu (%s)\n", dev->fell_back || dev->reason[0] ? "GPU part skipped" : "--device cpu");
    gw_focus_out ref, mt;
    int failed = 0;
    double ref_ms = 0;
    if (gw_focus_out_alloc(&ref, c.p, 1, 1)) {
        printf("  result:   FAILED: out of memory\n");
        failed = 1;
    } else if (gw_focus_out_alloc(&mt, c.p, 1, 1)) {
        printf("  result:   FAILED: out of memory\n");
        gw_focus_out_free(&ref);
        failed = 1;
    } else {
        failed = run_cpu(&c, in, &s, &ref, &mt, &ref_ms);
        gw_focus_out_free(&mt);
        if (!failed && gpu) failed = run_gpu(&c, in, &ref, ref_ms, dev->ordinal);
        else if (!failed) printf("  gpu:      not run\n  result:   ok on the CPU only (the GPU was not exercised)\n");
        gw_focus_out_free(&ref);
    }
    focus_stack_synth_free(&s);
    free(in);
    return failed;
}

int gw_focus_stack_check(const gw_check_request *req, int *runs)
{
    const focus_case *cases = req->small ? small_cases : realistic_cases;
    const int n = (int)(req->small ? sizeof small_cases / sizeof small_cases[0]
                                   : sizeof realistic_cases / sizeof realistic_cases[0]);
    int failures = 0;
    for (int i = 0; i < n; i++) failures += run_case(&cases[i], req->seed, req->dev, req->gpu);
    *runs = n;
    return failures;
}

int gw_focus_stack_doctor(int ordinal)
{
    const focus_stack_params p = {.n = 1, .z = 5, .y = 128, .x = 96, .ksize = 3};
    char err[1024], msg[2048];
    focus_stack_synth s;
    gw_focus_out ref, got;
    gw_focus_gpu g;
    gw_focus_gpu_result res;
    uint16_t *in = malloc((size_t)p.n * p.z * p.y * p.x * sizeof *in);
    if (!in || focus_stack_synth_make(&s, p.n, p.z, p.y, p.x, 1, in)) {
        printf("  focus_stack:          FAILED: out of memory\n");
        free(in);
        return 1;
    }
    int failed = 0, call_failed = 0;
    if (gw_focus_out_alloc(&ref, p, 1, 0)) {
        printf("  focus_stack:          FAILED: out of memory\n");
        failed = 1;
    } else if (gw_focus_out_alloc(&got, p, 1, 0)) {
        printf("  focus_stack:          FAILED: out of memory\n");
        gw_focus_out_free(&ref);
        failed = 1;
    }
    if (failed) {
        focus_stack_synth_free(&s);
        free(in);
        return 1;
    }
    gw_focus_out_poison(&ref, p, 0xFF);
    const int rc = focus_stack_ref(&p, in, ref.idx, ref.ff, ref.best, NULL, 0);
    if (rc != FOCUS_STACK_OK) {
        printf("  focus_stack:          FAILED: focus_stack_ref: %s\n", focus_stack_status_str(rc));
        failed = 1;
    } else if (gw_focus_gpu_init(&g, ordinal, p, 1, 0, err, sizeof err)) {
        printf("  focus_stack:          FAILED: %s\n", err);
        failed = 1;
    } else {
        if (gw_focus_gpu_call(&g, in, 0xFF, &got, &res, err, sizeof err)) {
            printf("  focus_stack:          FAILED: %s\n", err);
            failed = call_failed = 1;
        } else {
            const int diff = gw_focus_out_compare(&got, &ref, p, msg, sizeof msg);
            if (diff)
                printf("  focus_stack:          FAILED: differs from focus_stack_ref: %s\n", msg);
            else
                printf("  focus_stack:          N=1 Z=5 128x96 known-focus stack, morphseq defaults: bit-exact with "
                       "focus_stack_ref (%.2f ms incl. transfers)%s\n", res.ms_end_to_end, gw_cli_emulated_note());
            gw_cli_print_call_witness("    ", res.witness_receipt, res.witness_check, res.witness_violations,
                                      (unsigned long long)p.n * p.y * p.x);
            failed = diff != 0 || res.witness_violations != 0;
        }
        /* after a failed call, its error is the one worth reporting: a sticky one fails the frees too */
        if (gw_focus_gpu_free(&g, call_failed ? NULL : err, sizeof err)) {
            if (!call_failed) printf("  focus_stack:          FAILED: %s\n", err);
            failed = 1;
        }
    }
    gw_focus_out_free(&got);
    gw_focus_out_free(&ref);
    focus_stack_synth_free(&s);
    free(in);
    return failed;
}
