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
 * Schedules (OpenMP, when built with it; docs/focus_stack.md, "Threads"), so that the time follows the bytes
 * whatever the shape:
 *   1. tiles: one unit of work is one tile of one stack through all Z slices, computed with its halo in the
 *      thread's own scratch (B, F, the window's row sums H, the running best V of the tile); units never
 *      wait for each other, so a call has one barrier, however many slices or stacks it has;
 *   2. shared planes, for large planes that give fewer tiles than threads (or tiles over their memory
 *      budget): all threads share each plane (B, F, H, best V: planes of y*x), barriers between stages;
 *   3. no scratch: if the scratch cannot be allocated, the same numbers pixel by pixel with no allocation at
 *      all (slow: every tap re-evaluates the stage below it), so the reference never fails for lack of
 *      memory and has no status for it (docs/focus_stack.md, "Memory").
 * Every output value is computed by exactly one thread from the same integer sums (a halo cell computed by
 * two tiles is the same sum twice), so neither n_threads nor the schedule changes a bit.
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

/* ------------------------------------------------------------------ the stages, one row segment at a time */

/* The border maps over the widest reach any stage needs: map[i + reach] = border_index(i). */
typedef struct fs_maps {
    int *ymap, *xmap;
    int reach;
} fs_maps;

/* A rectangle [y0, y1) x [x0, x1) of one int64 stage (B, F, H or V), stored densely row by row. */
typedef struct fs_view {
    int64_t *p;
    int y0, y1, x0, x1;
} fs_view;

static int64_t *at(const fs_view *v, int y, int x)
{
    return v->p + (size_t)(y - v->y0) * (size_t)(v->x1 - v->x0) + (size_t)(x - v->x0);
}

/* Stage 1 at row y, columns [x0, x1): B(y,x) = sum G[a][b] * I^(y+a, x+b); LAP_ABS copies I. */
static void blur_seg(const fs_job *j, const fs_maps *m, const uint16_t *src, const fs_view *b, int y, int x0, int x1)
{
    const int X = j->p.x, r = j->t.r;
    const int *ymap = m->ymap + m->reach, *xmap = m->xmap + m->reach;
    int64_t *out = at(b, y, x0);
    if (j->p.measure == FOCUS_STACK_LAP_ABS) {
        for (int x = x0; x < x1; x++) *out++ = src[(size_t)y * X + x];
        return;
    }
    /* the input rows the taps read, and their tap rows; ZERO leaves out rows outside the image */
    const uint16_t *rows[MAX_K];
    const int64_t *taps[MAX_K];
    int n_rows = 0;
    for (int a = -r; a <= r; a++) {
        const int sy = ymap[y + a];
        if (sy < 0) continue;
        rows[n_rows] = src + (size_t)sy * X;
        taps[n_rows++] = j->t.blur[a + r] + r;
    }
    for (int x = x0; x < x1; x++) {
        int64_t acc = 0;
        for (int i = 0; i < n_rows; i++)
            for (int c = -r; c <= r; c++) {
                const int sx = xmap[x + c];
                if (sx >= 0) acc += taps[i][c] * rows[i][sx];
            }
        *out++ = acc;
    }
}

/* Stages 2 and 3 at row y, columns [x0, x1): F(y,x) = |sum K[a][b] * B^(y+a, x+b)|, B^ being B extended by
 * the border rule (for ZERO: 0 outside; the blur is never evaluated in the padding). Every B it reads must
 * lie in b. */
static void score_seg(const fs_job *j, const fs_maps *m, const fs_view *b, const fs_view *f, int y, int x0, int x1)
{
    const int r = j->t.r, bx0 = b->x0;
    const int *ymap = m->ymap + m->reach, *xmap = m->xmap + m->reach;
    const int64_t *rows[MAX_K];
    const int64_t *taps[MAX_K];
    int n_rows = 0;
    for (int a = -r; a <= r; a++) {
        const int sy = ymap[y + a];
        if (sy < 0) continue;
        rows[n_rows] = at(b, sy, bx0);
        taps[n_rows++] = j->t.lap[a + r] + r;
    }
    int64_t *out = at(f, y, x0);
    for (int x = x0; x < x1; x++) {
        int64_t acc = 0;
        for (int i = 0; i < n_rows; i++)
            for (int c = -r; c <= r; c++) {
                const int sx = xmap[x + c];
                if (sx >= 0) acc += taps[i][c] * rows[i][sx - bx0];
            }
        *out++ = acc < 0 ? -acc : acc;
    }
}

/* Stage 4, first half: H(y,x) = sum over |c| <= rw of F^(y, x+c). The box sum is separable because the
 * border rule is applied per axis (for ZERO, a position is outside when either coordinate is). */
static void rowsum_seg(const fs_job *j, const fs_maps *m, const fs_view *f, const fs_view *h, int y, int x0, int x1)
{
    const int rw = j->rw;
    const int *xmap = m->xmap + m->reach;
    const int64_t *f_row = at(f, y, f->x0);
    int64_t *out = at(h, y, x0);
    for (int x = x0; x < x1; x++) {
        int64_t acc = 0;
        for (int c = -rw; c <= rw; c++) {
            const int sx = xmap[x + c];
            if (sx >= 0) acc += f_row[sx - f->x0];
        }
        *out++ = acc;
    }
}

/* Stage 4, second half: V(y,x) = sum over |a| <= rw of H(y+a mapped, x). */
static void colsum_seg(const fs_job *j, const fs_maps *m, const fs_view *h, const fs_view *v, int y, int x0, int x1)
{
    const int rw = j->rw;
    const int *ymap = m->ymap + m->reach;
    int64_t *out = at(v, y, x0);
    for (int x = x0; x < x1; x++) {
        int64_t acc = 0;
        for (int a = -rw; a <= rw; a++) {
            const int sy = ymap[y + a];
            if (sy >= 0) acc += *at(h, sy, x);
        }
        *out++ = acc;
    }
}

static int maps_alloc(fs_maps *m, const fs_job *j)
{
    m->reach = j->t.r > j->rw ? j->t.r : j->rw;
    m->ymap = make_axis_map(j->p.y, m->reach, j->p.border);
    m->xmap = make_axis_map(j->p.x, m->reach, j->p.border);
    return m->ymap && m->xmap;
}

/* n * count int64 values, or NULL when that overflows size_t or malloc fails. */
static int64_t *values_alloc(size_t n, size_t count)
{
    if (n && count > SIZE_MAX / sizeof(int64_t) / n) return NULL;
    return malloc(n * count * sizeof(int64_t));
}

/* ------------------------------------------------------------------ schedule 1: tiles, no barrier */

/* Each plane is cut into a grid of tiles, and one unit of work is one tile of one stack through all Z slices:
 * the thread that takes it computes B, F and V for the tile plus the halo those stages read, in scratch of
 * its own, and selects over z itself. Units never wait for each other, so the only barrier is the end of
 * the call, whatever the shape: 20000 stacks of 1x1 pixels are 20000 units, one 2257x2257 image is about
 * 80 tiles of at most FS_TILE_AREA pixels. Halo cells are computed by every tile that needs them (the same
 * integer sums each time), so no output depends on the tiling.
 *
 * Halos. For a tile [t0, t1) of an axis of length L, V reads H and F at the border-mapped rows of
 * [t0 - rw, t1 + rw), and F reads B at the mapped rows of [t0 - rw - r, t1 + rw + r). Every rule maps
 * [t0 - h, t1 + h) into the clipped range [max(0, t0 - h), min(L, t1 + h)): for h < L REFLECT101 folds at
 * most once (-d to d, L-1+d to L-1-d), REPLICATE clamps and ZERO drops; for h >= L the clipped range is the
 * whole axis. So a tile computes F (and H) over its clipped rw-range and B over its clipped (r + rw)-range,
 * in each axis. */
#define FS_TILE_AREA ((int64_t)1 << 16)   /* pixels per tile at most, unless halos need larger tiles */
#define FS_TILE_UNITS_PER_THREAD 4        /* units aimed for per thread, for balance under load */
#define FS_TILE_BUDGET ((size_t)64 << 20) /* scratch of all threads, or 32*y*x bytes if that is more */
#define FS_SHARED_PLANE ((size_t)1 << 18) /* pixels: from here on, planes that give fewer units than threads
                                              are shared between the threads instead (schedule 2) */

typedef struct fs_tiling {
    int ty, tx;             /* tiles per plane along y and x */
    int th, tw;             /* the largest tile */
    int64_t units;          /* n * ty * tx */
    size_t per_thread;      /* int64 values of scratch per thread */
    int team;               /* threads */
    fs_maps m;
    int64_t *scratch;       /* team * per_thread */
} fs_tiling;

/* The rows (or columns) a tile [t0, t1) computes for a stage read up to `halo` away; see "Halos". */
static void axis_range(int t0, int t1, int halo, int len, int *r0, int *r1)
{
    *r0 = t0 - halo < 0 ? 0 : t0 - halo;
    *r1 = (int64_t)t1 + halo > len ? len : t1 + halo;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The grid: at least FS_TILE_UNITS_PER_THREAD units per thread and tiles of at most FS_TILE_AREA pixels
 * where the sizes allow, no tile side shorter than 8 times the halo (nor 16) unless it is the whole axis, so
 * halos cost at most about half again; the longer tile side is cut first. Then the scratch per thread: B
 * over the tile plus h = r + rw, F (and H) over the tile plus rw, and the running best V of the tile. */
static void tiling_plan(const fs_job *j, int threads, fs_tiling *t)
{
    const int Y = j->p.y, X = j->p.x, h = j->t.r + j->rw;
    const int64_t side = h * (int64_t)8 > 16 ? h * (int64_t)8 : 16;
    const int64_t max_ty = Y / min64(Y, side), max_tx = X / min64(X, side);
    const int64_t area = side * side > FS_TILE_AREA ? side * side : FS_TILE_AREA;
    const int64_t by_threads = ((int64_t)threads * FS_TILE_UNITS_PER_THREAD + j->p.n - 1) / j->p.n;
    const int64_t by_area = ((int64_t)j->plane + area - 1) / area;
    const int64_t want = by_threads > by_area ? by_threads : by_area;
    t->ty = 1, t->tx = 1;
    while ((int64_t)t->ty * t->tx < want) {
        const int can_y = t->ty < max_ty, can_x = t->tx < max_tx;
        if (!can_y && !can_x) break;
        const int64_t side_y = (Y + t->ty - 1) / t->ty, side_x = (X + t->tx - 1) / t->tx;
        if (can_y && (!can_x || side_y >= side_x))
            t->ty++;
        else
            t->tx++;
    }
    t->th = (Y + t->ty - 1) / t->ty, t->tw = (X + t->tx - 1) / t->tx;
    t->units = (int64_t)j->p.n * t->ty * t->tx;
    t->team = (int64_t)threads < t->units ? threads : (int)t->units;
    const size_t tile = (size_t)t->th * (size_t)t->tw;
    const size_t b = (size_t)min64(Y, t->th + 2 * (int64_t)h) * (size_t)min64(X, t->tw + 2 * (int64_t)h);
    const size_t f_rows = (size_t)min64(Y, t->th + 2 * (int64_t)j->rw);
    const size_t f = j->rw ? f_rows * (size_t)min64(X, t->tw + 2 * (int64_t)j->rw) : tile;
    t->per_thread = b + f + (j->rw ? f_rows * (size_t)t->tw : 0) + tile; /* B, F (then V), H, best V */
}

/* One unit: tile (iy, ix) of stack n, every slice, then its outputs. */
static void run_tile(const fs_job *j, const fs_tiling *t, int64_t *scratch, int64_t unit)
{
    const int Y = j->p.y, X = j->p.x, Z = j->p.z, rw = j->rw, h = j->t.r + rw;
    const int64_t per_plane = (int64_t)t->ty * t->tx;
    const int n = (int)(unit / per_plane), iy = (int)(unit % per_plane / t->tx), ix = (int)(unit % t->tx);
    const int ty0 = (int)((int64_t)Y * iy / t->ty), ty1 = (int)((int64_t)Y * (iy + 1) / t->ty);
    const int tx0 = (int)((int64_t)X * ix / t->tx), tx1 = (int)((int64_t)X * (ix + 1) / t->tx);
    fs_view b, f, hv, v;
    axis_range(ty0, ty1, h, Y, &b.y0, &b.y1);
    axis_range(tx0, tx1, h, X, &b.x0, &b.x1);
    axis_range(ty0, ty1, rw, Y, &f.y0, &f.y1);
    axis_range(tx0, tx1, rw, X, &f.x0, &f.x1);
    hv = (fs_view){.y0 = f.y0, .y1 = f.y1, .x0 = tx0, .x1 = tx1};
    b.p = scratch;
    f.p = b.p + (size_t)(b.y1 - b.y0) * (size_t)(b.x1 - b.x0);
    hv.p = f.p + (size_t)(f.y1 - f.y0) * (size_t)(f.x1 - f.x0);
    v = (fs_view){.p = f.p, .y0 = ty0, .y1 = ty1, .x0 = tx0, .x1 = tx1}; /* V over F, once H is done */
    int64_t *best_v = hv.p + (rw ? (size_t)(hv.y1 - hv.y0) * (size_t)(tx1 - tx0) : 0);
    for (int z = 0; z < Z; z++) {
        const uint16_t *src = slice_of(j, n, z);
        for (int y = b.y0; y < b.y1; y++) blur_seg(j, &t->m, src, &b, y, b.x0, b.x1);
        for (int y = f.y0; y < f.y1; y++) score_seg(j, &t->m, &b, &f, y, f.x0, f.x1);
        if (rw) {
            for (int y = hv.y0; y < hv.y1; y++) rowsum_seg(j, &t->m, &f, &hv, y, tx0, tx1);
            for (int y = ty0; y < ty1; y++) colsum_seg(j, &t->m, &hv, &v, y, tx0, tx1);
        }
        const int64_t *vp = v.p;
        int64_t *bv = best_v;
        for (int y = ty0; y < ty1; y++)
            for (int x = tx0; x < tx1; x++) select_step(j, n, z, (size_t)y * X + x, *vp++, bv++);
    }
    if (j->best) {
        const int64_t *bv = best_v;
        for (int y = ty0; y < ty1; y++)
            for (int x = tx0; x < tx1; x++) j->best[(size_t)n * j->plane + (size_t)y * X + x] = (float)*bv++ * j->inv_s;
    }
}

/* Schedule 1 unless the planes are large and too few units come out of them to busy every thread, or the
 * scratch would exceed its budget: 1 done, 0 not taken or no memory for it. */
static int try_tiles(const fs_job *j, int threads)
{
    fs_tiling t = {0};
    tiling_plan(j, threads, &t);
    if (t.units < threads && j->plane >= FS_SHARED_PLANE) return 0;
    const size_t budget = j->plane <= SIZE_MAX / 32 && 32 * j->plane > FS_TILE_BUDGET ? 32 * j->plane : FS_TILE_BUDGET;
    if (t.per_thread > budget / sizeof(int64_t) / (size_t)t.team) return 0;
    const int ok = maps_alloc(&t.m, j) && (t.scratch = values_alloc((size_t)t.team, t.per_thread));
    if (ok) {
        FS_OMP(omp parallel num_threads(t.team))
        {
#ifdef _OPENMP
            int64_t *mine = t.scratch + (size_t)omp_get_thread_num() * t.per_thread;
#else
            int64_t *mine = t.scratch;
#endif
            FS_OMP(omp for schedule(dynamic, 1))
            for (int64_t u = 0; u < t.units; u++) run_tile(j, &t, mine, u);
        }
    }
    free(t.scratch), free(t.m.ymap), free(t.m.xmap);
    return ok;
}

/* ------------------------------------------------------------------ schedule 2: shared planes */

/* For planes of FS_SHARED_PLANE pixels or more that tiles cannot split among the threads (a window so wide
 * that its halo covers the image, fewer stacks than threads), or when the tiles' scratch would be over its
 * budget: the threads share each plane, split into segments of FS_SEGMENT pixels, and walk the (n, z)
 * sequence together. The worksharing loops' implicit barriers order the stages (a row of F reads rows of B up to r
 * away, and so on): 2 per slice without a window, 4 with one. Scratch: B, F, H (window only) and the
 * running best V, planes of y*x. */
#define FS_SEGMENT ((size_t)1 << 14)

enum { ST_BLUR, ST_SCORE_SELECT, ST_SCORE, ST_ROWSUM, ST_COLSUM_SELECT };

typedef struct fs_shared {
    fs_maps m;
    fs_view b, f, h; /* whole planes; h only with a window */
    int64_t *best_v;
} fs_shared;

/* Selection for the pixels [p0, p1) of slice z from V in v (a whole plane); the last slice writes best. */
static void select_range(const fs_job *j, int64_t *best_v, const int64_t *v, int n, int z, size_t p0, size_t p1)
{
    for (size_t pix = p0; pix < p1; pix++) select_step(j, n, z, pix, v[pix], &best_v[pix]);
    if (j->best && z == j->p.z - 1)
        for (size_t pix = p0; pix < p1; pix++) j->best[(size_t)n * j->plane + pix] = (float)best_v[pix] * j->inv_s;
}

/* One stage over the pixels [p0, p1) of the plane (row-major), row segment by row segment. */
static void shared_stage(const fs_job *j, const fs_shared *s, int stage, int n, int z, size_t p0, size_t p1)
{
    const size_t X = (size_t)j->p.x;
    const uint16_t *src = slice_of(j, n, z);
    for (size_t pix = p0; pix < p1;) {
        const int y = (int)(pix / X), x0 = (int)(pix % X);
        const int x1 = p1 - pix < X - (size_t)x0 ? x0 + (int)(p1 - pix) : (int)X;
        switch (stage) {
        case ST_BLUR: blur_seg(j, &s->m, src, &s->b, y, x0, x1); break;
        case ST_SCORE: score_seg(j, &s->m, &s->b, &s->f, y, x0, x1); break;
        case ST_ROWSUM: rowsum_seg(j, &s->m, &s->f, &s->h, y, x0, x1); break;
        case ST_SCORE_SELECT: /* V = F: select each pixel as soon as it is scored */
            score_seg(j, &s->m, &s->b, &s->f, y, x0, x1);
            select_range(j, s->best_v, s->f.p, n, z, pix, pix + (size_t)(x1 - x0));
            break;
        default: /* ST_COLSUM_SELECT: V goes into F, free again once the row sums are done */
            colsum_seg(j, &s->m, &s->h, &s->f, y, x0, x1);
            select_range(j, s->best_v, s->f.p, n, z, pix, pix + (size_t)(x1 - x0));
            break;
        }
        pix += (size_t)(x1 - x0);
    }
}

static void run_shared(const fs_job *j, const fs_shared *s, int threads)
{
    const int N = j->p.n, Z = j->p.z;
    const size_t plane = j->plane;
    const int64_t segs = (int64_t)((plane + FS_SEGMENT - 1) / FS_SEGMENT);
    static const int no_window[] = {ST_BLUR, ST_SCORE_SELECT};
    static const int window[] = {ST_BLUR, ST_SCORE, ST_ROWSUM, ST_COLSUM_SELECT};
    const int *stages = j->rw ? window : no_window;
    const int n_stages = j->rw ? 4 : 2;
    (void)threads;
    FS_OMP(omp parallel num_threads(threads))
    for (int n = 0; n < N; n++)
        for (int z = 0; z < Z; z++)
            for (int st = 0; st < n_stages; st++) {
                FS_OMP(omp for schedule(dynamic, 1))
                for (int64_t g = 0; g < segs; g++) {
                    const size_t p0 = (size_t)g * FS_SEGMENT, p1 = plane - p0 > FS_SEGMENT ? p0 + FS_SEGMENT : plane;
                    shared_stage(j, s, stages[st], n, z, p0, p1);
                }
            }
}

static int try_shared(const fs_job *j, int threads)
{
    const fs_view whole = {.y0 = 0, .y1 = j->p.y, .x0 = 0, .x1 = j->p.x};
    fs_shared s = {.b = whole, .f = whole, .h = whole};
    const int ok = maps_alloc(&s.m, j) && (s.b.p = values_alloc(1, j->plane)) && (s.f.p = values_alloc(1, j->plane)) &&
                   (!j->rw || (s.h.p = values_alloc(1, j->plane))) && (s.best_v = values_alloc(1, j->plane));
    if (ok) run_shared(j, &s, threads);
    free(s.b.p), free(s.f.p), free(s.h.p), free(s.best_v), free(s.m.ymap), free(s.m.xmap);
    return ok;
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
    if (!try_tiles(&j, threads) && !try_shared(&j, threads)) run_pixels(&j, threads);
    return FOCUS_STACK_OK;
}
