/* SPDX-License-Identifier: MIT
 * The order of grid_objects_launch's checks (docs/architecture.md, "The launcher convention"), on any machine:
 * the executable links the recording stand-in for the CUDA runtime (tests/support/gw_fake_cuda.h), so every
 * runtime call the launcher makes is logged and none reaches a GPU; the pointers are host memory the launcher
 * must never touch (label host).
 *
 * Bad arguments: each row breaks one rule the host can see. A row passes when the launcher returns
 * cudaErrorInvalidValue having made no runtime call at all, nothing in the arena or the witness changed, and
 * grid_objects_validate names the same rule (its message carries the row's words). A pending error: with
 * valid arguments, the launcher's one call is cudaPeekAtLastError and it returns that error untouched.
 */
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "bad_input_util.h"
#include "grid_objects.h"
#include "grid_objects_ref.h"
#include "gw_fake_cuda.h"

enum { N = 4, BUF = 64 };

/* Every array of a call, in one block of host memory, so "nothing changed" is one comparison. labels and
 * objects are 4-byte aligned, as the padding rule wants, with an entry to spare, so that a row can move
 * either by 2 bytes without overlapping the next array. */
typedef struct arena {
    uint8_t in[BUF], variants[N];
    uint64_t offset[N];
    uint16_t height[N], width[N];
    _Alignas(4) uint16_t labels[BUF + 1];
    _Alignas(4) grid_objects_object objects[BUF + 1];
    uint32_t n_objects[N];
    int16_t bg[N];
    grid_objects_status_record status;
} arena;

typedef struct args {
    grid_objects_params params;
    const grid_objects_params *p;
    const uint8_t *in, *variants;
    const uint64_t *offset;
    const uint16_t *height, *width;
    uint16_t *labels;
    grid_objects_object *objects;
    uint32_t *n_objects;
    int16_t *bg;
    grid_objects_status_record *status;
} args;

/* Four 2x2 grids back to back: a valid call. */
static void arena_init(arena *m, args *a)
{
    memset(m, 0x5A, sizeof *m);
    for (int k = 0; k < N; k++) m->offset[k] = 4u * (unsigned)k, m->height[k] = 2, m->width[k] = 2, m->variants[k] = 7;
    a->params = (grid_objects_params){.n_grids = N, .buf_bytes = BUF, .out_entries = BUF, .batch_variant = 0,
                                      .bg_tie = 0, .flags = 0};
    a->p = &a->params;
    a->in = m->in, a->variants = NULL, a->offset = m->offset, a->height = m->height, a->width = m->width;
    a->labels = m->labels, a->objects = m->objects, a->n_objects = m->n_objects, a->bg = m->bg, a->status = &m->status;
}

typedef struct bad_row {
    const char *name;
    void (*breaks)(args *a, arena *m);
    int status;        /* what grid_objects_validate says; -1: it has no such argument (p, status) */
    const char *words; /* in its message */
} bad_row;

static void p_null(args *a, arena *m) { (void)m, a->p = NULL; }
static void in_null(args *a, arena *m) { (void)m, a->in = NULL; }
static void offset_null(args *a, arena *m) { (void)m, a->offset = NULL; }
static void height_null(args *a, arena *m) { (void)m, a->height = NULL; }
static void width_null(args *a, arena *m) { (void)m, a->width = NULL; }
static void labels_null(args *a, arena *m) { (void)m, a->labels = NULL; }
static void objects_null(args *a, arena *m) { (void)m, a->objects = NULL; }
static void n_objects_null(args *a, arena *m) { (void)m, a->n_objects = NULL; }
static void bg_null(args *a, arena *m) { (void)m, a->bg = NULL; }
static void status_null(args *a, arena *m) { (void)m, a->status = NULL; }
static void variant_8(args *a, arena *m) { (void)m, a->params.batch_variant = 8; }
static void variant_negative(args *a, arena *m) { (void)m, a->params.batch_variant = -1; }
static void bg_tie_2(args *a, arena *m) { (void)m, a->params.bg_tie = 2; }
static void bg_tie_negative(args *a, arena *m) { (void)m, a->params.bg_tie = -1; }
static void flags_2(args *a, arena *m) { (void)m, a->params.flags = 2u; }
static void labels_on_objects(args *a, arena *m) { a->labels = (uint16_t *)m->objects; }
static void objects_on_in(args *a, arena *m) { a->objects = (grid_objects_object *)m->in; }
static void n_objects_on_offset(args *a, arena *m) { a->n_objects = (uint32_t *)&m->offset[1]; }
static void bg_on_height(args *a, arena *m) { a->bg = (int16_t *)m->height; }
static void status_on_bg(args *a, arena *m) { a->status = (grid_objects_status_record *)m->bg; }
static void labels_on_variants(args *a, arena *m) { a->variants = m->variants, a->labels = (uint16_t *)m->variants; }
static void buf_bytes_overflows(args *a, arena *m) { (void)m, a->params.buf_bytes = UINT64_MAX / 2; }
/* The padding rule (grid_objects.h, "Padding"): an odd buf_bytes with outputs sized by it alone lets the last
 * 16-bit atomic's 4-byte word run 2 bytes past labels and objects, so the launcher refuses it. */
static void out_entries_unpadded(args *a, arena *m)
{
    (void)m, a->params.buf_bytes = BUF - 1, a->params.out_entries = BUF - 1;
}
static void out_entries_unset(args *a, arena *m) { (void)m, a->params.out_entries = 0; }
static void labels_2_mod_4(args *a, arena *m) { a->labels = &m->labels[1]; }
static void objects_2_mod_4(args *a, arena *m) { a->objects = (grid_objects_object *)((uint8_t *)m->objects + 2); }

static const bad_row rows[] = {
    {"p NULL", p_null, -1, ""},
    {"in NULL", in_null, GRID_OBJECTS_ERR_NULL, "NULL"},
    {"offset NULL", offset_null, GRID_OBJECTS_ERR_NULL, "NULL"},
    {"height NULL", height_null, GRID_OBJECTS_ERR_NULL, "NULL"},
    {"width NULL", width_null, GRID_OBJECTS_ERR_NULL, "NULL"},
    {"labels NULL", labels_null, GRID_OBJECTS_ERR_NULL, "labels"},
    {"objects NULL", objects_null, GRID_OBJECTS_ERR_NULL, "objects"},
    {"n_objects NULL", n_objects_null, GRID_OBJECTS_ERR_NULL, "n_objects"},
    {"bg NULL", bg_null, GRID_OBJECTS_ERR_NULL, "bg"},
    {"status NULL", status_null, -1, ""}, /* the reference has no status record */
    {"batch_variant 8", variant_8, GRID_OBJECTS_ERR_VARIANT, "batch_variant"},
    {"batch_variant -1", variant_negative, GRID_OBJECTS_ERR_VARIANT, "0..7"},
    {"bg_tie 2", bg_tie_2, GRID_OBJECTS_ERR_BG_TIE, "bg_tie"},
    {"bg_tie -1", bg_tie_negative, GRID_OBJECTS_ERR_BG_TIE, "GRID_OBJECTS_TIE_SMALLEST"},
    {"flags 2", flags_2, GRID_OBJECTS_ERR_FLAGS, "flags"},
    {"labels overlap objects", labels_on_objects, GRID_OBJECTS_ERR_ALIAS, "overlap"},
    {"objects overlap in", objects_on_in, GRID_OBJECTS_ERR_ALIAS, "overlap"},
    {"n_objects overlap offset", n_objects_on_offset, GRID_OBJECTS_ERR_ALIAS, "overlap"},
    {"bg overlaps height", bg_on_height, GRID_OBJECTS_ERR_ALIAS, "overlap"},
    {"status overlaps bg", status_on_bg, -1, ""},
    {"labels overlap variants", labels_on_variants, GRID_OBJECTS_ERR_ALIAS, "overlap"},
    {"buf_bytes 63, out_entries 63 (labels of 126 bytes, 2 mod 4)", out_entries_unpadded, GRID_OBJECTS_ERR_PADDING,
     "grid_objects_out_entries"},
    {"out_entries 0 (never set)", out_entries_unset, GRID_OBJECTS_ERR_PADDING, "out_entries"},
    {"labels at 2 mod 4", labels_2_mod_4, GRID_OBJECTS_ERR_PADDING, "4-byte aligned"},
    {"objects at 2 mod 4", objects_2_mod_4, GRID_OBJECTS_ERR_PADDING, "4-byte aligned"},
};

Test(grid_objects_launch, rejects_host_visible_bad_arguments_before_any_cuda_call)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const bad_row *r = &rows[i];
        arena m;
        args a;
        arena_init(&m, &a);
        r->breaks(&a, &m);
        gw_witness witness;
        memset(&witness, 0, sizeof witness);
        bi_bytes before, witness_before;
        bi_bytes_take(&before, &m, sizeof m);
        bi_bytes_take(&witness_before, &witness, sizeof witness);

        gw_fake_cuda_reset(cudaSuccess);
        const cudaError_t rc = grid_objects_launch(a.p, a.in, a.offset, a.height, a.width, a.variants, a.labels,
                                                   a.objects, a.n_objects, a.bg, a.status, &witness, (cudaStream_t)0);
        cr_expect_eq(rc, cudaErrorInvalidValue, "row \"%s\": grid_objects_launch returned %s, want "
                     "cudaErrorInvalidValue", r->name, cudaGetErrorName(rc));
        cr_expect_eq(gw_fake_cuda_calls(), 0, "row \"%s\": the launcher called the runtime (%s) before rejecting "
                     "its arguments", r->name, gw_fake_cuda_log());
        bi_bytes_expect_unchanged(&before, r->name, "the arena (every array the launcher was given)");
        bi_bytes_expect_unchanged(&witness_before, r->name, "the witness record");
        if (r->status >= 0) {
            const grid_objects_status s = grid_objects_validate(a.p, a.in, a.offset, a.height, a.width, a.variants,
                                                                a.labels, a.objects, a.n_objects, a.bg, NULL);
            cr_expect_eq((int)s, r->status, "row \"%s\": grid_objects_validate gives %d (%s), want %d", r->name,
                         (int)s, grid_objects_status_str(s), r->status);
            bi_expect_words(r->name, grid_objects_status_str((grid_objects_status)r->status), r->words);
        }
    }
}

/* buf_bytes so large that the object table's size would not fit in 64 bits: rejected, no runtime call. */
Test(grid_objects_launch, rejects_a_buf_bytes_whose_table_size_overflows)
{
    arena m;
    args a;
    arena_init(&m, &a);
    buf_bytes_overflows(&a, &m);
    gw_fake_cuda_reset(cudaSuccess);
    const cudaError_t rc = grid_objects_launch(a.p, a.in, a.offset, a.height, a.width, a.variants, a.labels,
                                               a.objects, a.n_objects, a.bg, a.status, NULL, (cudaStream_t)0);
    cr_expect_eq(rc, cudaErrorInvalidValue, "returned %s", cudaGetErrorName(rc));
    cr_expect_eq(gw_fake_cuda_calls(), 0, "the launcher called the runtime: %s", gw_fake_cuda_log());
}

/* n_grids = 0 succeeds with no runtime call, whatever the other arguments hold. */
Test(grid_objects_launch, an_empty_batch_makes_no_runtime_call)
{
    const grid_objects_params p = {.n_grids = 0, .buf_bytes = 7, .out_entries = 0, .batch_variant = 99, .bg_tie = 9,
                                   .flags = 8};
    gw_fake_cuda_reset(cudaSuccess);
    const cudaError_t rc = grid_objects_launch(&p, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                               (cudaStream_t)0);
    cr_expect_eq(rc, cudaSuccess, "returned %s", cudaGetErrorName(rc));
    cr_expect_eq(gw_fake_cuda_calls(), 0, "the launcher called the runtime: %s", gw_fake_cuda_log());
}

/* An error pending on entry is returned untouched before anything is enqueued; with none pending, the same
 * call goes on past cudaPeekAtLastError (the control that shows the log sees the launcher's calls at all). */
Test(grid_objects_launch, returns_an_error_pending_on_entry_untouched_before_enqueuing_anything)
{
    arena m;
    args a;
    arena_init(&m, &a);
    gw_witness witness;
    memset(&witness, 0, sizeof witness);
    bi_bytes before;
    bi_bytes_take(&before, &m, sizeof m);

    gw_fake_cuda_reset(cudaErrorIllegalAddress);
    cudaError_t rc = grid_objects_launch(a.p, a.in, a.offset, a.height, a.width, a.variants, a.labels, a.objects,
                                         a.n_objects, a.bg, a.status, &witness, (cudaStream_t)0);
    cr_expect_eq(rc, cudaErrorIllegalAddress, "grid_objects_launch returned %s, want the pending "
                 "cudaErrorIllegalAddress", cudaGetErrorName(rc));
    cr_expect(gw_fake_cuda_calls() == 1 && strcmp(gw_fake_cuda_call(0), "cudaPeekAtLastError") == 0,
              "with an error pending the launcher called %s; want cudaPeekAtLastError alone", gw_fake_cuda_log());
    bi_bytes_expect_unchanged(&before, "valid arguments, an error pending", "the arena");

    gw_fake_cuda_reset(cudaSuccess);
    rc = grid_objects_launch(a.p, a.in, a.offset, a.height, a.width, a.variants, a.labels, a.objects, a.n_objects,
                             a.bg, a.status, &witness, (cudaStream_t)0);
    cr_expect(gw_fake_cuda_calls() >= 2 && strcmp(gw_fake_cuda_call(0), "cudaPeekAtLastError") == 0,
              "with no error pending the launcher called %s; want cudaPeekAtLastError, then its work",
              gw_fake_cuda_log());
    cr_expect_eq(rc, GW_FAKE_CUDA_STOP, "grid_objects_launch returned %s, want the failing call's %s",
                 cudaGetErrorName(rc), cudaGetErrorName(GW_FAKE_CUDA_STOP));
}
