/* SPDX-License-Identifier: MIT
 * The workloads of `gpuwitness trace`: the CLI host paths of gw_d4_gpu.c, gw_focus_gpu.c and gw_ex2d_gpu.c,
 * as `check --size small` runs them, with the ledger budget of one call written out from what the call does.
 */
#include "gw_trace_work.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex2d_patch_ref.h"
#include "focus_stack_ref.h"
#include "grid_d4_ref.h"
#include "gw_cli.h"
#include "gw_ex2d_gpu.h"
#include "gw_focus_cli.h"
#include "gw_focus_synth.h"
#include "gw_trace_range.h"

const char gw_trace_work_names[] = "grid-d4, focus-stack, ex2d";

static void add_kernel(gw_trace_work *w, const char *name, uint64_t launches)
{
    w->kernels[w->budget.n_kernels++] = (gw_kernel_expect){name, launches};
    w->budget.kernels = w->kernels;
}

static void add_copy(gw_trace_work *w, gw_copy_kind kind, uint64_t bytes, const char *what)
{
    w->copies[w->budget.n_copies++] = (gw_copy_expect){kind, bytes, what};
    w->budget.copies = w->copies;
}

/* ---------------------------------------------------------------- grid_d4 */

typedef struct d4_state {
    gw_d4_batch b;
    gw_d4_out ref, got;
    gw_d4_gpu g;
} d4_state;

enum { D4_GRIDS = 2000, D4_SEED = 1 };

static int d4_iterate(gw_trace_work *w, char *err, size_t err_size)
{
    d4_state *s = w->state;
    gw_d4_gpu_result res;
    char msg[512];
    if (gw_d4_gpu_call(&s->g, &s->b, 0xFF, &s->got, &res, err, err_size)) return -1;
    if (res.status != GRID_D4_OK) {
        snprintf(err, err_size, "the device rejected grid %zu: %s", res.status_index, grid_d4_status_str(res.status));
        return -1;
    }
    gw_range_push("grid_d4/compare");
    const int diff = gw_d4_out_compare(&s->got, &s->ref, &s->b, 0xFF, msg, sizeof msg);
    gw_range_pop();
    if (diff) {
        snprintf(err, err_size, "differs from grid_d4_ref: %s", msg);
        return -1;
    }
    if (res.witness_violations) {
        snprintf(err, err_size, "the witness does not prove GPU execution: %s", res.witness_check);
        return -1;
    }
    return 0;
}

static void d4_release(gw_trace_work *w)
{
    d4_state *s = w->state;
    gw_d4_gpu_free(&s->g, NULL, 0);
    gw_d4_out_free(&s->got);
    gw_d4_out_free(&s->ref);
    gw_d4_batch_free(&s->b);
    free(s);
}

static int d4_init(gw_trace_work *w, int ordinal, char *err, size_t err_size)
{
    d4_state *s = calloc(1, sizeof *s);
    if (!s) goto oom;
    w->state = s;
    w->iterate = d4_iterate;
    w->release = d4_release;
    if (gw_d4_batch_random(&s->b, D4_GRIDS, D4_SEED, 1, 0, 0)) goto oom;
    const gw_d4_batch *b = &s->b;
    if (gw_d4_out_alloc(&s->ref, b) || gw_d4_out_alloc(&s->got, b)) goto oom;
    snprintf(w->description, sizeof w->description, "grid_d4: %zu grids (%" PRIu64 " cells), per-grid random ops, "
             "packed offsets, seed %d", b->n_grids, b->cells, D4_SEED);

    const grid_d4_params p = {.n_grids = b->n_grids, .buf_bytes = b->buf_bytes, .batch_op = 0, .flags = 0};
    gw_d4_out_poison(&s->ref, b, 0xFF);
    gw_range_push("grid_d4/reference");
    const int rc = grid_d4_ref(&p, b->in, s->ref.cells, b->offset, b->height, b->width, s->ref.height, s->ref.width,
                               b->ops);
    gw_range_pop();
    if (rc != GRID_D4_OK) {
        snprintf(err, err_size, "grid_d4_ref: %s", grid_d4_status_str((grid_d4_status)rc));
        return -1;
    }
    if (gw_d4_gpu_init(&s->g, ordinal, b, err, err_size)) return -1;

    /* gw_d4_gpu_call: validation and transform kernels once each; uploads of the cells, the three metadata
     * arrays and the ops; downloads of the status record, the witness, the cells and both shape arrays. */
    const uint64_t n = b->n_grids;
    add_kernel(w, "grid_d4_validate_kernel", 1);
    add_kernel(w, "grid_d4_transform_kernel", 1);
    add_copy(w, GW_COPY_HTOD, b->buf_bytes, "in");
    add_copy(w, GW_COPY_HTOD, n * sizeof *b->offset, "offset");
    add_copy(w, GW_COPY_HTOD, n * sizeof *b->height, "height");
    add_copy(w, GW_COPY_HTOD, n * sizeof *b->width, "width");
    add_copy(w, GW_COPY_HTOD, n, "ops");
    add_copy(w, GW_COPY_DTOH, sizeof(grid_d4_status_record), "status");
    add_copy(w, GW_COPY_DTOH, sizeof(gw_witness), "witness");
    add_copy(w, GW_COPY_DTOH, b->buf_bytes, "out");
    add_copy(w, GW_COPY_DTOH, n * sizeof *s->got.height, "out_height");
    add_copy(w, GW_COPY_DTOH, n * sizeof *s->got.width, "out_width");
    return 0;
oom:
    snprintf(err, err_size, "out of memory building the grid_d4 problem");
    return -1;
}

/* ---------------------------------------------------------------- focus_stack */

typedef struct focus_state {
    focus_stack_params p;
    uint16_t *in;
    gw_focus_synth synth;
    gw_focus_out ref, got;
    gw_focus_gpu g;
} focus_state;

static int focus_iterate(gw_trace_work *w, char *err, size_t err_size)
{
    focus_state *s = w->state;
    gw_focus_gpu_result res;
    char msg[1024];
    if (gw_focus_gpu_call(&s->g, s->in, 0xFF, &s->got, &res, err, err_size)) return -1;
    gw_range_push("focus_stack/compare");
    const int diff = gw_focus_out_compare(&s->got, &s->ref, s->p, msg, sizeof msg);
    gw_range_pop();
    if (diff) {
        snprintf(err, err_size, "differs from focus_stack_ref: %s", msg);
        return -1;
    }
    if (res.witness_violations) {
        snprintf(err, err_size, "the witness does not prove GPU execution: %s", res.witness_check);
        return -1;
    }
    return 0;
}

static void focus_release(gw_trace_work *w)
{
    focus_state *s = w->state;
    gw_focus_gpu_free(&s->g, NULL, 0);
    gw_focus_out_free(&s->got);
    gw_focus_out_free(&s->ref);
    gw_focus_synth_free(&s->synth);
    free(s->in);
    free(s);
}

static int focus_init(gw_trace_work *w, int ordinal, char *err, size_t err_size)
{
    focus_state *s = calloc(1, sizeof *s);
    if (!s) goto oom;
    w->state = s;
    w->iterate = focus_iterate;
    w->release = focus_release;
    /* check --size small's known-focus stack at morphseq's defaults (the fused kernel), with best */
    s->p = (focus_stack_params){.n = 2, .z = 5, .y = 136, .x = 130, .ksize = 3};
    const focus_stack_params p = s->p;
    const size_t px = (size_t)p.n * p.y * p.x, voxels = px * (size_t)p.z;
    s->in = malloc(voxels * sizeof *s->in);
    if (!s->in || gw_focus_synth_make(&s->synth, p.n, p.z, p.y, p.x, 1, s->in)) goto oom;
    if (gw_focus_out_alloc(&s->ref, p, 1, 0) || gw_focus_out_alloc(&s->got, p, 1, 0)) goto oom;
    snprintf(w->description, sizeof w->description, "focus_stack: N=%d Z=%d %dx%d known-focus stack, ksize 3 LoG, "
             "zero border, no window, outputs idx, ff, best", p.n, p.z, p.y, p.x);

    gw_focus_out_poison(&s->ref, p, 0xFF);
    gw_range_push("focus_stack/reference");
    const int rc = focus_stack_ref(p, s->in, s->ref.idx, s->ref.ff, s->ref.best, NULL, 0);
    gw_range_pop();
    if (rc != FOCUS_STACK_OK) {
        snprintf(err, err_size, "focus_stack_ref: %s", focus_stack_status_str(rc));
        return -1;
    }
    if (gw_focus_gpu_init(&s->g, ordinal, p, 1, 0, err, err_size)) return -1;

    /* gw_focus_gpu_call: the fused kernel once (morphseq's defaults, no focus volume); upload of the
     * stack; downloads of the witness, idx, ff and best. */
    add_kernel(w, "focus_stack_fast_kernel", 1);
    add_copy(w, GW_COPY_HTOD, voxels * sizeof *s->in, "in");
    add_copy(w, GW_COPY_DTOH, sizeof(gw_witness), "witness");
    add_copy(w, GW_COPY_DTOH, px, "idx");
    add_copy(w, GW_COPY_DTOH, px * sizeof *s->got.ff, "ff");
    add_copy(w, GW_COPY_DTOH, px * sizeof *s->got.best, "best");
    return 0;
oom:
    snprintf(err, err_size, "out of memory building the focus_stack problem");
    return -1;
}

/* ---------------------------------------------------------------- ex2d_patch */

typedef struct ex2d_state {
    ex2d_frame f;
    ex2d_outputs ref, got;
    int ordinal;
} ex2d_state;

/* Every patch in one ex2d_patches_launch call: the budget below counts one validation verdict read and
 * one launch of each of K3..K7, so a call that split the patches (free memory too small) is refused
 * rather than reported as a ledger violation. */
enum { EX2D_BATCHES = 1 };

static int ex2d_iterate(gw_trace_work *w, char *err, size_t err_size)
{
    ex2d_state *s = w->state;
    gw_ex2d_gpu_result res;
    char msg[2048];
    if (gw_ex2d_gpu_run(s->ordinal, &s->f, s->f.npatch, &s->got, &res, NULL, err, err_size)) return -1;
    if (res.check.code != EX2D_OK) {
        snprintf(err, err_size, "the device validation rejected patch %d: %s", res.check.patch,
                 ex2d_error_str(res.check.code));
        return -1;
    }
    if (res.batches != EX2D_BATCHES) {
        snprintf(err, err_size, "%d batches of up to %d patches (free device memory), the budget is for %d",
                 res.batches, res.max_batch, EX2D_BATCHES);
        return -1;
    }
    gw_range_push("ex2d/compare");
    const size_t diff = gw_ex2d_compare(&s->f, &s->got, &s->ref, 0, msg, sizeof msg);
    gw_range_pop();
    if (diff) {
        snprintf(err, err_size, "differs from ex2d_ref_patches: %s", msg);
        return -1;
    }
    if (res.witness_violations) {
        snprintf(err, err_size, "the witness does not prove GPU execution: %s", res.witness_check);
        return -1;
    }
    return 0;
}

static void ex2d_release(gw_trace_work *w)
{
    ex2d_state *s = w->state;
    ex2d_ref_outputs_free(&s->got);
    ex2d_ref_outputs_free(&s->ref);
    ex2d_frame_free(&s->f);
    free(s);
}

static int ex2d_init(gw_trace_work *w, int ordinal, char *err, size_t err_size)
{
    ex2d_state *s = calloc(1, sizeof *s);
    if (!s) goto oom;
    w->state = s;
    w->iterate = ex2d_iterate;
    w->release = ex2d_release;
    s->ordinal = ordinal;
    /* check --size small's problem: tier M, one noiseless patch */
    ex2d_frame_config cfg;
    ex2d_frame_config_tier(&cfg, EX2D_TIER_M);
    cfg.nthreads = 0;
    const int made = ex2d_frame_make(&cfg, &s->f);
    if (made) {
        snprintf(err, err_size, "synthesising tier M: %s", ex2d_synth_error_str(made));
        return -1;
    }
    const ex2d_frame *f = &s->f;
    const ex2d_params *p = &f->params;
    if (ex2d_ref_outputs_alloc(p, f->npatch, &s->ref) || ex2d_ref_outputs_alloc(p, f->npatch, &s->got)) goto oom;
    snprintf(w->description, sizeof w->description, "ex2d_patch: tier M, fibres %d..%d x bins %d..%d, %d patch(es) "
             "of n <= %d, image %dx%d, noiseless", cfg.fibre_first, cfg.fibre_first + cfg.nfibre - 1,
             cfg.wave_first, cfg.wave_first + cfg.nwave - 1, f->npatch, p->max_nspecpad * p->m, p->npix_x,
             p->npix_y);

    gw_ex2d_out_poison(f, &s->ref, 0xFF);
    double ms = 0;
    gw_range_push("ex2d/reference");
    const int rc = gw_ex2d_cpu_run(f, 0, &s->ref, NULL, &ms, err, err_size);
    gw_range_pop();
    if (rc) return -1;
    int first = -1;
    if (gw_ex2d_failed_patches(f, &s->ref, &first)) {
        snprintf(err, err_size, "ex2d_ref_patches: patch %d: %s", first,
                 ex2d_patch_status_str(s->ref.info[first].status));
        return -1;
    }

    /* gw_ex2d_gpu_run (as tests/test_ledger_ex2d_gpu.c budgets it): K1 once, the validation and K3..K7 once
     * per batch; one upload of each input array; per batch an 8-byte read of the validation verdict; one
     * download of the witness records, of each frame output and of info. Memsets are not copies. */
    const uint64_t npix = (uint64_t)p->npix_x * p->npix_y, ntab = (uint64_t)p->nspec_tab * p->nwave_tab;
    const uint64_t nc = ntab * (uint64_t)(p->gx + 1) * (uint64_t)(p->gy + 1);
    const uint64_t nframe = gw_ex2d_frame_elems(f), nrdiag = gw_ex2d_rdiag_elems(f), npatch = (uint64_t)f->npatch;
    static const char *const stages[] = {"ex2d_validate_kernel", "ex2d_normal_kernel", "ex2d_cholesky_kernel",
                                         "ex2d_cblocks_kernel", "ex2d_jacobi_kernel", "ex2d_outputs_kernel"};
    add_kernel(w, "ex2d_spots_kernel", 1);
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) add_kernel(w, stages[i], EX2D_BATCHES);
    add_copy(w, GW_COPY_HTOD, npix * sizeof(double), "image");
    add_copy(w, GW_COPY_HTOD, npix * sizeof(double), "ivar");
    add_copy(w, GW_COPY_HTOD, ntab * sizeof(double), "psf_sigx");
    add_copy(w, GW_COPY_HTOD, ntab * sizeof(double), "psf_sigy");
    add_copy(w, GW_COPY_HTOD, ntab * sizeof(double), "psf_dx");
    add_copy(w, GW_COPY_HTOD, ntab * sizeof(double), "psf_dy");
    add_copy(w, GW_COPY_HTOD, nc * sizeof(double), "psf_c");
    add_copy(w, GW_COPY_HTOD, ntab * sizeof(int32_t), "psf_xc");
    add_copy(w, GW_COPY_HTOD, ntab * sizeof(int32_t), "psf_yc");
    add_copy(w, GW_COPY_HTOD, npatch * sizeof(ex2d_patch_desc), "patches");
    for (int b = 0; b < EX2D_BATCHES; b++) add_copy(w, GW_COPY_DTOH, sizeof(ex2d_check_word), "check word");
    add_copy(w, GW_COPY_DTOH, EX2D_WITNESS_SLOTS * sizeof(gw_witness), "witness");
    add_copy(w, GW_COPY_DTOH, nframe * sizeof(double), "flux");
    add_copy(w, GW_COPY_DTOH, nframe * sizeof(double), "ivar");
    add_copy(w, GW_COPY_DTOH, nrdiag * sizeof(double), "rdiags");
    add_copy(w, GW_COPY_DTOH, nframe * sizeof(double), "chi2pix");
    add_copy(w, GW_COPY_DTOH, nframe * sizeof(double), "pixmask_fraction");
    add_copy(w, GW_COPY_DTOH, npatch * sizeof(ex2d_patch_info), "info");
    return 0;
oom:
    snprintf(err, err_size, "out of memory building the ex2d_patch problem");
    return -1;
}

/* ---------------------------------------------------------------- dispatch */

typedef struct work_entry {
    const char *name;
    int (*init)(gw_trace_work *w, int ordinal, char *err, size_t err_size);
} work_entry;

/* One line per kernel; gw_trace_work_names lists the same names for messages. */
static const work_entry works[] = {{"grid-d4", d4_init}, {"focus-stack", focus_init}, {"ex2d", ex2d_init}};

static const work_entry *find_work(const char *kernel)
{
    for (size_t i = 0; i < sizeof works / sizeof works[0]; i++)
        if (!strcmp(kernel, works[i].name)) return &works[i];
    return NULL;
}

int gw_trace_work_known(const char *kernel)
{
    return find_work(kernel) != NULL;
}

int gw_trace_work_init(gw_trace_work *w, const char *kernel, int ordinal, char *err, size_t err_size)
{
    memset(w, 0, sizeof *w);
    const work_entry *e = find_work(kernel);
    if (!e) {
        snprintf(err, err_size, "unknown kernel '%s': one of %s", kernel, gw_trace_work_names);
        return -1;
    }
    const int rc = e->init(w, ordinal, err, err_size);
    if (rc) gw_trace_work_free(w);
    return rc;
}

void gw_trace_work_free(gw_trace_work *w)
{
    if (w->release && w->state) w->release(w);
    memset(w, 0, sizeof *w);
}
