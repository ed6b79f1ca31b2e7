/* SPDX-License-Identifier: MIT
 * gpuwitness check: every kernel on a realistic built-in problem, on the selected device, compared bit for
 * bit with the CPU reference, with the witness checked. Without a GPU the CPU part still runs (reference
 * against its multithreaded twin, with timings) and the GPU part is reported skipped, never passed.
 */
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid_d4_ref.h"
#include "gw_cli.h"
#include "gw_ex2d_gpu.h"
#include "gw_focus_cli.h"

static const char check_help[] =
    "usage: gpuwitness check [--device cuda|cuda:N|cpu|auto] [--size small|realistic] [--seed N]\n"
    "\n"
    "Runs every kernel on a built-in problem and compares the GPU result with the CPU reference bit for bit,\n"
    "outputs poisoned before every GPU call (0xFF, then 0x5A on a second call), and checks the witness record\n"
    "(launches=1, items = cells written, code compiled for this GPU's architecture). Prints per kernel the\n"
    "problem size, the device, the times (CPU reference single- and multi-threaded, GPU including transfers)\n"
    "and the result.\n"
    "\n"
    "  grid_d4   realistic: 100000 grids (small: 2000) with shapes drawn from the ARC-AGI-1 training shape\n"
    "            distribution, cells 0..9; once with random per-grid ops and packed offsets, once with\n"
    "            batch op rot90 and 16-byte aligned offsets (the gaps between grids must keep the poison).\n"
    "  focus_stack realistic: N=1, Z=17, 512x512 (small: N=2, Z=5, 136x130) synthetic textured stack whose\n"
    "            in-focus slice is known per 64x64 cell, at morphseq's defaults, the known answer checked too;\n"
    "            then ksize 7, reflect101, window 9 on full-range random values, N=2, Z=5, 259x263 (small:\n"
    "            N=1, Z=3, 61x67). All four outputs; a second GPU call with idx and ff only (poison 0xA5) must\n"
    "            give the same idx and ff.\n"
    "  ex2d_patch realistic: a synthetic r-camera subbundle, 5 fibres x 2326 bins, 47 patches, with noise\n"
    "            (small: one noiseless 7 x 74 patch). The CPU reference on 1 thread and all cores (identical\n"
    "            bytes) and against the known truth; two GPU calls (batches from free memory, then of 16),\n"
    "            compared within specs/ex2d_patch.md 8.3 (FP64 solves: not bit for bit), every stage witnessed.\n"
    "\n"
    "options:\n"
    "  --device D   cuda, cuda:N, cpu or auto (default: $GW_DEVICE, else auto)\n"
    "  --size S     small or realistic (default realistic)\n"
    "  --seed N     seed of the built-in problem (default 1); the same seed gives the same problem everywhere\n"
    "  -h, --help   this text\n"
    "\n"
    "exit status:\n"
    "   0  every kernel ran on the GPU, matched the reference and has a good witness;\n"
    "      with --device cpu: the CPU part ran and agreed (the GPU was not exercised, and this says so)\n"
    "  77  GPU part skipped: no usable GPU (auto, or cuda / cuda:N) and GW_REQUIRE_GPU is not 1;\n"
    "      the reason is on stderr and the CPU part still ran\n"
    "   1  mismatch, witness violation, CUDA error, or no usable GPU with GW_REQUIRE_GPU=1\n"
    "   2  bad usage\n";

typedef struct check_case {
    const char *label;
    int per_grid_ops;
    int batch_op;
    int aligned16;
} check_case;

/* Both code paths of grid_d4 (per-grid ops on packed grids; one op on 16-byte aligned grids, which may take
 * the vector path) with the same shapes and cells. */
static const check_case cases[] = {
    {"per-grid random ops, packed offsets", 1, 0, 0},
    {"batch op rot90, 16-byte aligned offsets", 0, GRID_D4_ROT90, 1},
};

static grid_d4_params params_of(const gw_d4_batch *b)
{
    const grid_d4_params p = {.n_grids = b->n_grids, .buf_bytes = b->buf_bytes, .batch_op = b->batch_op, .flags = 0};
    return p;
}

/* The CPU part: grid_d4_ref and grid_d4_ref_mt on poisoned outputs, which must agree. 0 or 1. */
static int run_cpu(const gw_d4_batch *b, gw_d4_out *ref, gw_d4_out *mt, double *ref_ms)
{
    const grid_d4_params p = params_of(b);
    size_t bad = 0;
    grid_d4_status v = grid_d4_validate(&p, b->in, ref->cells, b->offset, b->height, b->width, ref->height,
                                        ref->width, b->ops, &bad);
    if (v != GRID_D4_OK) {
        printf("  result:   FAILED: the built-in batch is invalid at grid %zu: %s\n", bad, grid_d4_status_str(v));
        return 1;
    }
    gw_d4_out_poison(ref, b, 0xFF);
    gw_d4_out_poison(mt, b, 0xFF);
    double t0 = gw_cli_now_ms();
    int rc = grid_d4_ref(&p, b->in, ref->cells, b->offset, b->height, b->width, ref->height, ref->width, b->ops);
    *ref_ms = gw_cli_now_ms() - t0;
    if (rc != GRID_D4_OK) {
        printf("  result:   FAILED: grid_d4_ref returned %d: %s\n", rc, grid_d4_status_str((grid_d4_status)rc));
        return 1;
    }
    t0 = gw_cli_now_ms();
    rc = grid_d4_ref_mt(&p, b->in, mt->cells, b->offset, b->height, b->width, mt->height, mt->width, b->ops);
    const double mt_ms = gw_cli_now_ms() - t0;
    if (rc != GRID_D4_OK) {
        printf("  result:   FAILED: grid_d4_ref_mt returned %d: %s\n", rc, grid_d4_status_str((grid_d4_status)rc));
        return 1;
    }
    char msg[512];
    int diff = gw_d4_out_compare(mt, ref, b, 0xFF, msg, sizeof msg);
    printf("  cpu:      grid_d4_ref %.2f ms (1 thread), grid_d4_ref_mt %.2f ms (OpenMP): %s\n", *ref_ms, mt_ms,
           diff ? "DIFFERENT" : "identical bytes");
    if (diff) {
        printf("  result:   FAILED: grid_d4_ref_mt differs from grid_d4_ref: %s\n", msg);
        return 1;
    }
    return 0;
}

/* The GPU part: two witnessed calls (poison 0xFF, then 0x5A), each compared with the reference. 0 or 1. */
static int run_gpu(const gw_d4_batch *b, const gw_d4_out *ref, double ref_ms, int ordinal)
{
    char err[512], msg[512];
    gw_d4_gpu g;
    gw_d4_out got = {0};
    gw_d4_gpu_result res[2];
    int failed = 0;
    if (gw_d4_gpu_init(&g, ordinal, b, err, sizeof err)) {
        printf("  result:   FAILED: %s\n", err);
        return 1;
    }
    if (gw_d4_out_alloc(&got, b)) {
        printf("  result:   FAILED: out of memory\n");
        gw_d4_gpu_free(&g, NULL, 0);
        return 1;
    }
    const uint8_t poison[2] = {0xFF, 0x5A};
    int shown = -1; /* the call whose witness is printed: the first that failed, else the warm one */
    for (int rep = 0; rep < 2 && !failed; rep++) {
        if (gw_d4_gpu_call(&g, b, poison[rep], &got, &res[rep], err, sizeof err)) {
            printf("  result:   FAILED: call %d: %s\n", rep + 1, err);
            failed = 1;
            break;
        }
        shown = rep;
        if (res[rep].status != GRID_D4_OK) {
            printf("  result:   FAILED: call %d: the device rejected grid %zu: %s\n", rep + 1, res[rep].status_index,
                   grid_d4_status_str(res[rep].status));
            failed = 1;
        }
        if (gw_d4_out_compare(&got, ref, b, poison[rep], msg, sizeof msg)) {
            printf("  result:   FAILED: call %d (outputs poisoned with 0x%02X) differs from grid_d4_ref: %s\n",
                   rep + 1, (unsigned)poison[rep], msg);
            failed = 1;
        }
        if (res[rep].witness_violations) {
            printf("  result:   FAILED: call %d: the witness does not prove GPU execution (%d violation(s))\n",
                   rep + 1, res[rep].witness_violations);
            failed = 1;
        }
    }
    if (!failed) {
        const gw_d4_gpu_result *r = &res[1]; /* the warm call */
        printf("  gpu:      %.2f ms incl. transfers, kernel %.3f ms (second of 2 calls); grid_d4_ref / gpu = %.1fx\n",
               r->ms_end_to_end, r->ms_kernel, r->ms_end_to_end > 0 ? ref_ms / r->ms_end_to_end : 0.0);
    }
    if (shown >= 0) {
        gw_d4_gpu_result *r = &res[shown];
        printf("  %s\n", r->witness_receipt);
        /* one finding per line under the receipt; warnings come prefixed by gw_witness_check */
        for (char *line = strtok(r->witness_check, "\n"); line; line = strtok(NULL, "\n"))
            printf("            %s\n", line);
    }
    if (!failed)
        printf("  result:   ok: both calls bit-exact with grid_d4_ref (gaps kept the poison), witness checks out\n");
    gw_d4_out_free(&got);
    if (gw_d4_gpu_free(&g, err, sizeof err)) {
        printf("  result:   FAILED: %s\n", err);
        failed = 1;
    }
    return failed;
}

static int run_case(const check_case *c, size_t n_grids, uint64_t seed, const gw_device_choice *dev, int gpu)
{
    gw_d4_batch b;
    gw_d4_out ref = {0}, mt = {0};
    printf("grid_d4 [%s]\n", c->label);
    if (gw_d4_batch_random(&b, n_grids, seed, c->per_grid_ops, c->batch_op, c->aligned16)) {
        printf("  result:   FAILED: out of memory building %zu grids\n", n_grids);
        return 1;
    }
    printf("  problem:  %zu grids, %" PRIu64 " cells (%.1f MB, buffer %.1f MB), ARC-AGI-1 training shapes, "
           "cells 0..9, seed %" PRIu64 "\n",
           b.n_grids, b.cells, (double)b.cells / 1e6, (double)b.buf_bytes / 1e6, seed);
    if (gpu)
        printf("  device:   cuda:%d\n", dev->ordinal);
    else
        printf("  device:   cpu (%s)\n", dev->fell_back || dev->reason[0] ? "GPU part skipped" : "--device cpu");
    int failed = 0;
    double ref_ms = 0;
    if (gw_d4_out_alloc(&ref, &b) || gw_d4_out_alloc(&mt, &b)) {
        printf("  result:   FAILED: out of memory\n");
        failed = 1;
    }
    if (!failed) failed = run_cpu(&b, &ref, &mt, &ref_ms);
    gw_d4_out_free(&mt);
    if (!failed && gpu) failed = run_gpu(&b, &ref, ref_ms, dev->ordinal);
    else if (!failed) printf("  gpu:      not run\n  result:   ok on the CPU only (the GPU was not exercised)\n");
    gw_d4_out_free(&ref);
    gw_d4_batch_free(&b);
    return failed;
}

int gw_cmd_check(int argc, char **argv)
{
    const char *device = NULL, *size = "realistic", *seed_text = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(check_help, stdout);
            return GW_EXIT_OK;
        }
        if ((m = gw_cli_option(argc, argv, &i, "check", "--device", &v)) != 0) {
            if (m < 0) return GW_EXIT_USAGE;
            device = v;
        } else if ((m = gw_cli_option(argc, argv, &i, "check", "--size", &v)) != 0) {
            if (m < 0) return GW_EXIT_USAGE;
            size = v;
        } else if ((m = gw_cli_option(argc, argv, &i, "check", "--seed", &v)) != 0) {
            if (m < 0) return GW_EXIT_USAGE;
            seed_text = v;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "gpuwitness check: unknown option '%s': options are --device, --size, --seed, --help\n",
                    argv[i]);
            return GW_EXIT_USAGE;
        } else {
            fprintf(stderr, "gpuwitness check: unexpected argument '%s': check takes options only (see gpuwitness "
                    "check --help)\n", argv[i]);
            return GW_EXIT_USAGE;
        }
    }
    size_t n_grids;
    if (!strcmp(size, "realistic")) {
        n_grids = 100000;
    } else if (!strcmp(size, "small")) {
        n_grids = 2000;
    } else {
        fprintf(stderr, "gpuwitness check: --size '%s': must be small or realistic\n", size);
        return GW_EXIT_USAGE;
    }
    uint64_t seed = 1;
    if (seed_text) {
        unsigned long long s = 0;
        if (gw_cli_parse_u64(seed_text, ULLONG_MAX, &s)) {
            fprintf(stderr, "gpuwitness check: --seed '%s': must be a non-negative decimal integer below 2^64\n",
                    seed_text);
            return GW_EXIT_USAGE;
        }
        seed = s;
    }

    gw_device_choice dev;
    const int sel = gw_cli_select_device("check", device, &dev);
    if (sel == GW_EXIT_USAGE || sel == GW_EXIT_FAIL) return sel;
    const int gpu = sel == 0 && dev.kind == GW_DEVICE_CUDA;
    /* The fallback is said plainly, with the reason, before any work: never a silent CPU run. */
    if (sel == GW_EXIT_SKIP)
        fprintf(stderr, "gpuwitness check: GPU part skipped: no usable GPU for --device %s: %s\n",
                gw_cli_effective_device(device), dev.reason);
    else if (dev.fell_back)
        fprintf(stderr, "gpuwitness check: GPU part skipped: no usable GPU: %s\n", dev.reason);
    else if (!gpu)
        fprintf(stderr, "gpuwitness check: --device cpu: the GPU is not exercised; only the CPU reference runs\n");

    printf("gpuwitness check: size %s, seed %" PRIu64 "\n", size, seed);
    if (gpu) {
        gw_gpu_facts f;
        char err[512];
        if (gw_gpu_facts_get(dev.ordinal, &f, err, sizeof err)) {
            fprintf(stderr, "gpuwitness check: cuda:%d: %s\n", dev.ordinal, err);
            return GW_EXIT_FAIL;
        }
        printf("device: cuda:%d, %s, compute capability %d.%d, %d multiprocessors\n", dev.ordinal, f.name, f.cc_major,
               f.cc_minor, f.sm_count);
    } else {
        if (dev.reason[0])
            printf("device: cpu (no usable GPU: %s)\n", dev.reason);
        else
            printf("device: cpu (--device cpu)\n");
    }

    int failures = 0, focus_runs = 0, ex2d_runs = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        failures += run_case(&cases[c], n_grids, seed, &dev, gpu);
    failures += gw_check_focus(!strcmp(size, "small"), seed, &dev, gpu, &focus_runs);
    failures += gw_check_ex2d(!strcmp(size, "small"), seed, &dev, gpu, &ex2d_runs);

    if (failures) {
        printf("check: FAILED (%d of %zu runs)\n", failures, sizeof cases / sizeof cases[0] + (size_t)focus_runs +
               (size_t)ex2d_runs);
        return GW_EXIT_FAIL;
    }
    if (gpu) {
        printf("check: ok: every kernel ran on the GPU, matched the CPU reference bit for bit (ex2d_patch: within "
               "its FP64 tolerances), witness checks out\n");
        return GW_EXIT_OK;
    }
    if (dev.reason[0]) {
        printf("check: GPU part skipped (exit 77): no usable GPU; the CPU reference ran and agreed\n");
        return GW_EXIT_SKIP;
    }
    printf("check: ok on the CPU (--device cpu): the GPU was not exercised\n");
    return GW_EXIT_OK;
}
