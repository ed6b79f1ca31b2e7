/* SPDX-License-Identifier: MIT
 * focus_stack_ref: CPU reference for kernels/focus_stack (contract in focus_stack.h, definition in
 * docs/focus_stack.md, "What it computes"). Plain loops over the definition, one stage at a time, every sum
 * in int64:
 *
 *   per stack n and slice z:  B = G (*) I^     (LOG_ABS; LAP_ABS: B = I)
 *                             F = |K (*) B^|   (B^ = B extended by the border rule: never a fused kernel)
 *                             V = box sum of F^ over w x w (w >= 3), else V = F
 *   per pixel:                idx = first z with the largest V (strict >), ff = in[n][idx][y][x]
 *                             focus = (float)V * (1/S), best = (float)V[idx] * (1/S)
 *
 * Scratch: four int64 planes of y*x (B, F, the window's row sums H, the running best V) and two border
 * maps. If any of it cannot be allocated, the same numbers are computed pixel by pixel with no scratch
 * at all (slow: every tap re-evaluates the stage below it), so the reference never fails for lack of
 * memory and has no status for it (docs/focus_stack.md, "Memory").
 *
 * Threads (OpenMP, when built with it): rows of each stage, pixels in the fallback. Every output value
 * is computed by exactly one thread from the same integer sums, so n_threads changes no bit.
 */
#include "focus_stack_ref.h"

#include <stdint.h>
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#define FS_OMP(directive) _Pragma(#directive)
#else
#define FS_OMP(directive)
#endif

#define MAX_K 7

/* ------------------------------------------------------------------ taps (docs/focus_stack.md, "Taps") */

/* The 1-D rows of the table in docs/focus_stack.md, "Taps": blur g, Laplacian smoothing s and second
 * difference d2 (OpenCV's small_gaussian_tab and getSobelKernels rows for ksize 3, 5, 7). */
static const int g_rows[3][MAX_K] = {{1, 2, 1}, {1, 4, 6, 4, 1}, {2, 7, 14, 18, 14, 7, 2}};
static const int s_rows[3][MAX_K] = {{1, 2, 1}, {1, 4, 6, 4, 1}, {1, 6, 15, 20, 15, 6, 1}};
static const int d2_rows[3][MAX_K] = {{1, -2, 1}, {1, 0, -2, 0, 1}, {1, 2, -1, -4, -1, 2, 1}};

typedef struct fs_taps {
    int k, r;                   /* kernel size and radius */
    int64_t blur[MAX_K][MAX_K]; /* G = g g^T */
    int64_t lap[MAX_K][MAX_K];  /* K = s (x) d2 + d2 (x) s */
    int64_t scale;              /* S = (sum g)^2 for LOG_ABS, 1 for LAP_ABS */
} fs_taps;

static fs_taps make_taps(int ksize, int measure)
{
    fs_taps t = {.k = ksize, .r = ksize / 2};
    const int row = (ksize - 3) / 2;
    int64_t g_sum = 0;
    for (int a = 0; a < ksize; a++) {
        g_sum += g_rows[row][a];
        for (int b = 0; b < ksize; b++) {
            t.blur[a][b] = (int64_t)g_rows[row][a] * g_rows[row][b];
            t.lap[a][b] = (int64_t)s_rows[row][a] * d2_rows[row][b] + (int64_t)d2_rows[row][a] * s_rows[row][b];
        }
    }
    t.scale = measure == FOCUS_STACK_LOG_ABS ? g_sum * g_sum : 1;
    return t;
}

/* ------------------------------------------------------ border rules (docs/focus_stack.md, "Borders") */

/* Where coordinate p of an axis of length n reads from, or -1 for "outside: the value is 0" (ZERO).
 * REFLECT101 folds any offset, also ones larger than the image (1-px images, big windows). */
static int border_index(int64_t p, int n, int border)
{
    if (p >= 0 && p < n) return (int)p;
    if (border == FOCUS_STACK_BORDER_ZERO) return -1;
    if (border == FOCUS_STACK_BORDER_REPLICATE) return p < 0 ? 0 : n - 1;
    if (n == 1) return 0;
    const int64_t m = 2 * ((int64_t)n - 1);
    int64_t q = p % m;
    if (q < 0) q += m;
    return (int)(q < n ? q : m - q);
}

/* map[i] = border_index(i - reach, n, border) for i in [0, n + 2*reach): one lookup per tap instead of a
 * modulo. NULL when it cannot be allocated. */
static int *make_axis_map(int n, int reach, int border)
{
    const size_t len = (size_t)n + 2 * (size_t)reach;
    int *map = malloc(len * sizeof *map);
    if (!map) return NULL;
    for (size_t i = 0; i < len; i++) map[i] = border_index((int64_t)i - reach, n, border);
    return map;
}

/* ------------------------------------------------------------------ shared pieces */

typedef struct fs_job {
    focus_stack_params p;
    fs_taps t;
    int rw;        /* window radius; 0 for w in {0, 1} */
    float inv_s;   /* 1/S, exact: S is a power of two */
    size_t plane;  /* y*x */
    const uint16_t *in;
    uint8_t *idx;
    uint16_t *ff;
    float *best, *focus;
} fs_job;

static const uint16_t *slice_of(const fs_job *j, int n, int z)
{
    return j->in + ((size_t)n * (size_t)j->p.z + (size_t)z) * j->plane;
}

/* Selection for one pixel and slice: replace only on a strict > (the first maximum wins), gather ff from
 * the winning slice, and write focus for this slice. z runs upward for every pixel. */
static void select_step(const fs_job *j, int n, int z, size_t pix, int64_t v, int64_t *best_v)
{
    const size_t out = (size_t)n * j->plane + pix;
    if (z == 0 || v > *best_v) {
        *best_v = v;
        j->idx[out] = (uint8_t)z;
        j->ff[out] = slice_of(j, n, z)[pix];
    }
    if (j->focus) j->focus[((size_t)n * (size_t)j->p.z + (size_t)z) * j->plane + pix] = (float)v * j->inv_s;
}

/* ------------------------------------------------------------------ the plane path */

typedef struct fs_scratch {
    int64_t *b, *f, *h, *best_v; /* planes of y*x; h only with a window */
    int *ymap, *xmap;            /* border maps over the widest reach any stage needs */
    int reach;
} fs_scratch;

static void scratch_free(fs_scratch *s)
{
    free(s->b), free(s->f), free(s->h), free(s->best_v), free(s->ymap), free(s->xmap);
}

static int scratch_alloc(fs_scratch *s, const fs_job *j)
{
    *s = (fs_scratch){0};
    if (j->plane > SIZE_MAX / sizeof(int64_t)) return 0;
    const size_t bytes = j->plane * sizeof(int64_t);
    s->reach = j->t.r > j->rw ? j->t.r : j->rw;
    s->b = malloc(bytes);
    s->f = malloc(bytes);
    s->h = j->rw ? malloc(bytes) : NULL;
    s->best_v = malloc(bytes);
    s->ymap = make_axis_map(j->p.y, s->reach, j->p.border);
    s->xmap = make_axis_map(j->p.x, s->reach, j->p.border);
    if (s->b && s->f && (s->h || !j->rw) && s->best_v && s->ymap && s->xmap) return 1;
    scratch_free(s);
    *s = (fs_scratch){0};
    return 0;
}

/* Stage 1 for one row: B(y,x) = sum G[a][b] * I^(y+a, x+b); LAP_ABS copies I. */
static void blur_row(const fs_job *j, const fs_scratch *s, const uint16_t *src, int y)
{
    const int X = j->p.x, r = j->t.r;
    const int *ymap = s->ymap + s->reach, *xmap = s->xmap + s->reach;
    int64_t *b_row = s->b + (size_t)y * X;
    for (int x = 0; x < X; x++) {
        if (j->p.measure == FOCUS_STACK_LAP_ABS) {
            b_row[x] = src[(size_t)y * X + x];
            continue;
        }
        int64_t acc = 0;
        for (int a = -r; a <= r; a++) {
            const int sy = ymap[y + a];
            if (sy < 0) continue; /* ZERO: the whole row of taps reads 0 */
            for (int c = -r; c <= r; c++) {
                const int sx = xmap[x + c];
                if (sx < 0) continue;
                acc += j->t.blur[a + r][c + r] * src[(size_t)sy * X + sx];
            }
        }
        b_row[x] = acc;
    }
}

/* Stage 2 and 3 for one row: F(y,x) = |sum K[a][b] * B^(y+a, x+b)|, B^ being B extended by the border
 * rule (for ZERO: 0 outside; the blur is never evaluated in the padding). */
static void score_row(const fs_job *j, const fs_scratch *s, int y)
{
    const int X = j->p.x, r = j->t.r;
    const int *ymap = s->ymap + s->reach, *xmap = s->xmap + s->reach;
    for (int x = 0; x < X; x++) {
        int64_t acc = 0;
        for (int a = -r; a <= r; a++) {
            const int sy = ymap[y + a];
            if (sy < 0) continue;
            for (int c = -r; c <= r; c++) {
                const int sx = xmap[x + c];
                if (sx < 0) continue;
                acc += j->t.lap[a + r][c + r] * s->b[(size_t)sy * X + sx];
            }
        }
        s->f[(size_t)y * X + x] = acc < 0 ? -acc : acc;
    }
}

/* Stage 4, first half: H(y,x) = sum over |c| <= rw of F^(y, x+c). The box sum is separable because the
 * border rule is applied per axis (for ZERO, a position is outside when either coordinate is). */
static void window_row_sums(const fs_job *j, const fs_scratch *s, int y)
{
    const int X = j->p.x, rw = j->rw;
    const int *xmap = s->xmap + s->reach;
    for (int x = 0; x < X; x++) {
        int64_t acc = 0;
        for (int c = -rw; c <= rw; c++) {
            const int sx = xmap[x + c];
            if (sx >= 0) acc += s->f[(size_t)y * X + sx];
        }
        s->h[(size_t)y * X + x] = acc;
    }
}

/* Stage 4, second half, then stage 5 for one row: V(y,x) = sum over |a| <= rw of H(y+a mapped, x). */
static void window_select_row(const fs_job *j, const fs_scratch *s, int n, int z, int y)
{
    const int X = j->p.x, rw = j->rw;
    const int *ymap = s->ymap + s->reach;
    for (int x = 0; x < X; x++) {
        int64_t v = 0;
        for (int a = -rw; a <= rw; a++) {
            const int sy = ymap[y + a];
            if (sy >= 0) v += s->h[(size_t)sy * X + x];
        }
        const size_t pix = (size_t)y * X + x;
        select_step(j, n, z, pix, v, &s->best_v[pix]);
    }
}

static void run_planes(const fs_job *j, const fs_scratch *s, int threads)
{
    const int N = j->p.n, Z = j->p.z, Y = j->p.y;
    (void)threads;
    /* One parallel region; every thread walks the same (n, z) sequence and the worksharing loops split rows.
     * Their implicit barriers order the stages: a row of F reads rows of B up to r away, and so on. */
    FS_OMP(omp parallel num_threads(threads))
    for (int n = 0; n < N; n++) {
        for (int z = 0; z < Z; z++) {
            const uint16_t *src = slice_of(j, n, z);
            FS_OMP(omp for schedule(static))
            for (int y = 0; y < Y; y++) blur_row(j, s, src, y);
            FS_OMP(omp for schedule(static))
            for (int y = 0; y < Y; y++) score_row(j, s, y);
            if (j->rw) {
                FS_OMP(omp for schedule(static))
                for (int y = 0; y < Y; y++) window_row_sums(j, s, y);
                FS_OMP(omp for schedule(static))
                for (int y = 0; y < Y; y++) window_select_row(j, s, n, z, y);
            } else {
                FS_OMP(omp for schedule(static))
                for (int y = 0; y < Y; y++)
                    for (size_t pix = (size_t)y * j->p.x, end = pix + (size_t)j->p.x; pix < end; pix++)
                        select_step(j, n, z, pix, s->f[pix], &s->best_v[pix]);
            }
        }
        if (j->best) {
            FS_OMP(omp for schedule(static))
            for (int y = 0; y < Y; y++)
                for (size_t pix = (size_t)y * j->p.x, end = pix + (size_t)j->p.x; pix < end; pix++)
                    j->best[(size_t)n * j->plane + pix] = (float)s->best_v[pix] * j->inv_s;
        }
    }
}

/* ------------------------------------------------------------------ the fallback: no scratch at all */

/* B at an in-image position, straight from the input. */
static int64_t blur_at(const fs_job *j, const uint16_t *src, int y, int x)
{
    const int X = j->p.x, r = j->t.r;
    if (j->p.measure == FOCUS_STACK_LAP_ABS) return src[(size_t)y * X + x];
    int64_t acc = 0;
    for (int a = -r; a <= r; a++) {
        const int sy = border_index((int64_t)y + a, j->p.y, j->p.border);
        if (sy < 0) continue;
        for (int c = -r; c <= r; c++) {
            const int sx = border_index((int64_t)x + c, X, j->p.border);
            if (sx >= 0) acc += j->t.blur[a + r][c + r] * src[(size_t)sy * X + sx];
        }
    }
    return acc;
}

/* F at an in-image position; every B^ tap is the blur at the position the border rule names. */
static int64_t score_at(const fs_job *j, const uint16_t *src, int y, int x)
{
    const int r = j->t.r;
    int64_t acc = 0;
    for (int a = -r; a <= r; a++) {
        const int sy = border_index((int64_t)y + a, j->p.y, j->p.border);
        if (sy < 0) continue;
        for (int c = -r; c <= r; c++) {
            const int sx = border_index((int64_t)x + c, j->p.x, j->p.border);
            if (sx >= 0) acc += j->t.lap[a + r][c + r] * blur_at(j, src, sy, sx);
        }
    }
    return acc < 0 ? -acc : acc;
}

static int64_t window_at(const fs_job *j, const uint16_t *src, int y, int x)
{
    const int rw = j->rw;
    int64_t v = 0;
    for (int a = -rw; a <= rw; a++) {
        const int sy = border_index((int64_t)y + a, j->p.y, j->p.border);
        if (sy < 0) continue;
        for (int c = -rw; c <= rw; c++) {
            const int sx = border_index((int64_t)x + c, j->p.x, j->p.border);
            if (sx >= 0) v += score_at(j, src, sy, sx);
        }
    }
    return v;
}

static void run_pixels(const fs_job *j, int threads)
{
    const int64_t total = (int64_t)j->p.n * (int64_t)j->plane;
    (void)threads;
    FS_OMP(omp parallel for num_threads(threads) schedule(dynamic, 64))
    for (int64_t i = 0; i < total; i++) {
        const int n = (int)(i / (int64_t)j->plane);
        const size_t pix = (size_t)(i % (int64_t)j->plane);
        const int y = (int)(pix / (size_t)j->p.x), x = (int)(pix % (size_t)j->p.x);
        int64_t best_v = 0;
        for (int z = 0; z < j->p.z; z++) {
            const uint16_t *src = slice_of(j, n, z);
            const int64_t v = j->rw ? window_at(j, src, y, x) : score_at(j, src, y, x);
            select_step(j, n, z, pix, v, &best_v);
        }
        if (j->best) j->best[(size_t)i] = (float)best_v * j->inv_s;
    }
}

/* ------------------------------------------------------------------ entry point */

/* n_threads: 1 = single, <= 0 = every core, otherwise that many (OpenMP builds; else always one). */
static int thread_count(int n_threads)
{
#ifdef _OPENMP
    return n_threads > 0 ? n_threads : omp_get_num_procs();
#else
    (void)n_threads;
    return 1;
#endif
}

int focus_stack_ref(const focus_stack_params *p, const uint16_t *in, uint8_t *idx, uint16_t *ff, float *best,
                    float *focus, int n_threads)
{
    const int status = focus_stack_check(p, in, idx, ff);
    if (status != FOCUS_STACK_OK) return status; /* nothing written */

    fs_job j = {.p = *p, .t = make_taps(p->ksize, p->measure), .in = in, .idx = idx, .ff = ff, .best = best,
                .focus = focus};
    j.rw = p->window >= 3 ? p->window / 2 : 0;
    j.inv_s = 1.0f / (float)j.t.scale;
    j.plane = (size_t)p->y * (size_t)p->x; /* fits: focus_stack_check bounds n*z*y*x*4 */

    const int threads = thread_count(n_threads);
    fs_scratch s;
    if (scratch_alloc(&s, &j)) {
        run_planes(&j, &s, threads);
        scratch_free(&s);
    } else {
        run_pixels(&j, threads);
    }
    return FOCUS_STACK_OK;
}
