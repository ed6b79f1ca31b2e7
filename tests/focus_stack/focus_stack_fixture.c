/* SPDX-License-Identifier: MIT
 * Test fixtures for focus_stack: cases, results, the oracle and the checks (contract in
 * focus_stack_fixture.h). Allocation failures end the test (cr_assert): fixtures are not the thing under
 * test.
 */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include "focus_stack_fixture.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "focus_stack_ref.h"
#include "gw_test_util.h"

enum { MSG_LINES = 6 }; /* mismatches listed per array */

/* ---------------------------------------------------------------- helpers */

static void *xmalloc(size_t n, size_t size)
{
    cr_assert(size == 0 || n <= SIZE_MAX / size, "test fixture: %zu x %zu bytes overflows size_t", n, size);
    void *p = malloc(n && size ? n * size : 1);
    cr_assert(p != NULL, "test fixture: out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    cr_assert(p != NULL, "test fixture: out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

/* ---------------------------------------------------------------- random numbers */

uint64_t fs_rng_next(fs_rng *rng)
{
    uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t fs_rng_below(fs_rng *rng, uint32_t bound)
{
    return (uint32_t)(fs_rng_next(rng) % bound); /* the bias over 2^64 is far below anything a test sees */
}

/* ---------------------------------------------------------------- cases */

void fs_case_init(fs_case *c, int n, int z, int y, int x)
{
    memset(c, 0, sizeof *c);
    c->p = (focus_stack_params){.n = n, .z = z, .y = y, .x = x, .ksize = 3};
    cr_assert(n >= 1 && z >= 1 && y >= 1 && x >= 1, "fs_case_init: bad sizes %dx%dx%dx%d", n, z, y, x);
    c->pixels = (size_t)n * (size_t)y * (size_t)x;
    c->voxels = c->pixels * (size_t)z;
    c->in = xcalloc(c->voxels, sizeof *c->in);
    snprintf(c->desc, sizeof c->desc, "all 0");
}

void fs_case_free(fs_case *c)
{
    free(c->in);
    memset(c, 0, sizeof *c);
}

void fs_case_copy(fs_case *dst, const fs_case *src)
{
    *dst = *src;
    dst->in = xmalloc(src->voxels, sizeof *dst->in);
    memcpy(dst->in, src->in, src->voxels * sizeof *dst->in);
}

void fs_fill_random(fs_case *c, unsigned max_value, uint64_t seed)
{
    fs_rng rng = {seed};
    for (size_t i = 0; i < c->voxels; i++) c->in[i] = (uint16_t)fs_rng_below(&rng, max_value + 1u);
    snprintf(c->desc, sizeof c->desc, "random 0..%u (seed %#" PRIx64 ")", max_value, seed);
}

const char *fs_border_name(int border)
{
    switch (border) {
    case FOCUS_STACK_BORDER_ZERO: return "ZERO";
    case FOCUS_STACK_BORDER_REPLICATE: return "REPLICATE";
    case FOCUS_STACK_BORDER_REFLECT101: return "REFLECT101";
    }
    return "border?";
}

const char *fs_measure_name(int measure)
{
    switch (measure) {
    case FOCUS_STACK_LOG_ABS: return "LOG_ABS";
    case FOCUS_STACK_LAP_ABS: return "LAP_ABS";
    }
    return "measure?";
}

const char *fs_describe(const fs_case *c, focus_stack_params p, char *buf, size_t size)
{
    snprintf(buf, size, "n=%d z=%d %dx%d k=%d %s %s w=%d: %s", p.n, p.z, p.y, p.x, p.ksize, fs_measure_name(p.measure),
             fs_border_name(p.border), p.window, c->desc);
    return buf;
}

/* ---------------------------------------------------------------- results */

void fs_result_init(fs_result *res, const fs_case *c)
{
    memset(res, 0, sizeof *res);
    res->pixels = c->pixels;
    res->voxels = c->voxels;
    res->idx_alloc = xmalloc(c->pixels + 2 * FS_SLACK, sizeof *res->idx);
    res->ff_alloc = xmalloc(c->pixels + 2 * FS_SLACK, sizeof *res->ff);
    res->best_alloc = xmalloc(c->pixels + 2 * FS_SLACK, sizeof *res->best);
    res->focus_alloc = xmalloc(c->voxels + 2 * FS_SLACK, sizeof *res->focus);
    res->idx = res->idx_alloc + FS_SLACK;
    res->ff = res->ff_alloc + FS_SLACK;
    res->best = res->best_alloc + FS_SLACK;
    res->focus = res->focus_alloc + FS_SLACK;
}

void fs_result_free(fs_result *res)
{
    free(res->idx_alloc);
    free(res->ff_alloc);
    free(res->best_alloc);
    free(res->focus_alloc);
    memset(res, 0, sizeof *res);
}

void fs_result_poison(fs_result *res)
{
    /* Byte patterns, so that device runners poison with cudaMemsetAsync and get the same values. */
    memset(res->idx_alloc, FS_POISON_IDX, res->pixels + 2 * FS_SLACK);
    memset(res->ff_alloc, FS_POISON_FF & 0xFFu, (res->pixels + 2 * FS_SLACK) * sizeof *res->ff);
    memset(res->best_alloc, FS_POISON_FLOAT & 0xFFu, (res->pixels + 2 * FS_SLACK) * sizeof *res->best);
    memset(res->focus_alloc, FS_POISON_FLOAT & 0xFFu, (res->voxels + 2 * FS_SLACK) * sizeof *res->focus);
}

int fs_result_equal(const fs_result *a, const fs_result *b, unsigned pass)
{
    if (a->pixels != b->pixels || a->voxels != b->voxels) return 0;
    if (memcmp(a->idx, b->idx, a->pixels) != 0) return 0;
    if (memcmp(a->ff, b->ff, a->pixels * sizeof *a->ff) != 0) return 0;
    if ((pass & FS_PASS_BEST) && memcmp(a->best, b->best, a->pixels * sizeof *a->best) != 0) return 0;
    if ((pass & FS_PASS_FOCUS) && memcmp(a->focus, b->focus, a->voxels * sizeof *a->focus) != 0) return 0;
    return 1;
}

/* ---------------------------------------------------------------- the documented tables */

void fs_spec_rows(int ksize, int g[7], int s[7], int d2[7])
{
    /* docs/focus_stack.md, "Taps": the columns g, s and d2 of the first table. */
    static const int g3[] = {1, 2, 1}, s3[] = {1, 2, 1}, d3[] = {1, -2, 1};
    static const int g5[] = {1, 4, 6, 4, 1}, s5[] = {1, 4, 6, 4, 1}, d5[] = {1, 0, -2, 0, 1};
    static const int g7[] = {2, 7, 14, 18, 14, 7, 2}, s7[] = {1, 6, 15, 20, 15, 6, 1}, d7[] = {1, 2, -1, -4, -1, 2, 1};
    const int *gs = ksize == 3 ? g3 : ksize == 5 ? g5 : g7;
    const int *ss = ksize == 3 ? s3 : ksize == 5 ? s5 : s7;
    const int *ds = ksize == 3 ? d3 : ksize == 5 ? d5 : d7;
    for (int i = 0; i < 7; i++) {
        g[i] = i < ksize ? gs[i] : 0;
        s[i] = i < ksize ? ss[i] : 0;
        d2[i] = i < ksize ? ds[i] : 0;
    }
}

void fs_spec_laplacian(int ksize, int k2d[7][7])
{
    /* docs/focus_stack.md, "Taps": the 2-D tables as printed (K7: rows 1-4, rows 5-7 repeat rows 3, 2, 1). */
    static const int k3[3][3] = {{2, 0, 2}, {0, -8, 0}, {2, 0, 2}};
    static const int k5[5][5] = {
        {2, 4, 4, 4, 2}, {4, 0, -8, 0, 4}, {4, -8, -24, -8, 4}, {4, 0, -8, 0, 4}, {2, 4, 4, 4, 2}};
    static const int k7_top[4][7] = {{2, 8, 14, 16, 14, 8, 2},
                                     {8, 24, 24, 16, 24, 24, 8},
                                     {14, 24, -30, -80, -30, 24, 14},
                                     {16, 16, -80, -160, -80, 16, 16}};
    memset(k2d, 0, 7 * sizeof k2d[0]);
    for (int a = 0; a < ksize; a++) {
        for (int b = 0; b < ksize; b++) {
            if (ksize == 3) k2d[a][b] = k3[a][b];
            if (ksize == 5) k2d[a][b] = k5[a][b];
            if (ksize == 7) k2d[a][b] = k7_top[a < 4 ? a : 6 - a][b];
        }
    }
}

int fs_radius_blur(focus_stack_params p) { return p.measure == FOCUS_STACK_LOG_ABS ? p.ksize / 2 : 0; }
int fs_radius_lap(focus_stack_params p) { return p.ksize / 2; }
int fs_radius_window(focus_stack_params p) { return p.window >= 3 ? p.window / 2 : 0; }
int64_t fs_scale(focus_stack_params p) { return p.measure == FOCUS_STACK_LOG_ABS ? (int64_t)1 << (2 * (p.ksize - 1)) : 1; }

/* ---------------------------------------------------------------- border rules by walking */

/* REFLECT101 as a walk: leaving the image, the read position turns around at the edge pixel without
 * repeating it, and keeps bouncing between 0 and n-1 for as long as the offset lasts. */
int fs_oracle_border(int64_t p, int n, int border)
{
    if (p >= 0 && p < n) return (int)p;
    if (border == FOCUS_STACK_BORDER_ZERO) return -1;
    if (border == FOCUS_STACK_BORDER_REPLICATE) return p < 0 ? 0 : n - 1;
    if (n == 1) return 0;
    int64_t q = p < 0 ? 0 : n - 1, steps = p < 0 ? -p : p - (n - 1);
    int dir = p < 0 ? 1 : -1;
    while (steps-- > 0) {
        if (q + dir < 0 || q + dir > n - 1) dir = -dir;
        q += dir;
    }
    return (int)q;
}

/* The same walk, tabulated: map[i] is where i - reach reads from, built in one pass outward from each edge. */
static int *axis_map(int n, int reach, int border)
{
    int *map = xmalloc((size_t)n + 2 * (size_t)reach, sizeof *map);
    int *centre = map + reach;
    for (int i = 0; i < n; i++) centre[i] = i;
    for (int side = 0; side < 2; side++) {
        int q = side ? n - 1 : 0, dir = side ? -1 : 1;
        for (int step = 1; step <= reach; step++) {
            int at;
            if (border == FOCUS_STACK_BORDER_ZERO) {
                at = -1;
            } else if (border == FOCUS_STACK_BORDER_REPLICATE || n == 1) {
                at = q; /* REFLECT101 on 1 px stays at 0 */
            } else {
                if (q + dir < 0 || q + dir > n - 1) dir = -dir;
                q += dir;
                at = q;
            }
            centre[side ? n - 1 + step : -step] = at;
        }
    }
    return map;
}

/* For every output coordinate c of an axis, the image indices a window of radius rw reads and how often
 * (ZERO's outside positions read nothing): V = sum over those rows and columns of count_y * count_x * F. */
typedef struct hit_list {
    size_t *start; /* entries of coordinate c: [start[c], start[c+1]) */
    int *index;
    int64_t *count;
} hit_list;

static hit_list window_hits(int n, int rw, int border)
{
    int *map = axis_map(n, rw, border);
    const size_t width = (size_t)(2 * rw + 1) < (size_t)n ? (size_t)(2 * rw + 1) : (size_t)n;
    hit_list h = {xmalloc((size_t)n + 1, sizeof(size_t)), xmalloc((size_t)n * width, sizeof(int)),
                  xmalloc((size_t)n * width, sizeof(int64_t))};
    int64_t *tally = xcalloc((size_t)n, sizeof *tally);
    size_t used = 0;
    for (int c = 0; c < n; c++) {
        h.start[c] = used;
        for (int a = -rw; a <= rw; a++) {
            const int m = map[rw + c + a];
            if (m >= 0) tally[m]++;
        }
        for (int i = 0; i < n; i++) {
            if (!tally[i]) continue;
            h.index[used] = i;
            h.count[used++] = tally[i];
            tally[i] = 0;
        }
    }
    h.start[n] = used;
    free(tally);
    free(map);
    return h;
}

static void hit_list_free(hit_list *h)
{
    free(h->start);
    free(h->index);
    free(h->count);
}

/* ---------------------------------------------------------------- the oracle */

int64_t *fs_oracle_scores(const fs_case *c)
{
    const focus_stack_params p = c->p;
    cr_assert(focus_stack_check(&p, c->in, c->in, c->in) == FOCUS_STACK_OK, "oracle: invalid parameters");
    const int Y = p.y, X = p.x, k = p.ksize, r = k / 2, rw = fs_radius_window(p);
    const int log = p.measure == FOCUS_STACK_LOG_ABS;
    int g[7], s[7], d2[7], lap[7][7];
    fs_spec_rows(k, g, s, d2);
    fs_spec_laplacian(k, lap);
    int *ymap = axis_map(Y, r, p.border), *xmap = axis_map(X, r, p.border);
    hit_list hy = {0}, hx = {0};
    if (rw) hy = window_hits(Y, rw, p.border), hx = window_hits(X, rw, p.border);
    const size_t plane = (size_t)Y * X;
    int64_t *b = xmalloc(plane, sizeof *b), *f = xmalloc(plane, sizeof *f), *h = rw ? xmalloc(plane, sizeof *h) : NULL;
    int64_t *v = xmalloc(c->voxels, sizeof *v);
    for (int n = 0; n < p.n; n++) {
        for (int z = 0; z < p.z; z++) {
            const uint16_t *src = fs_in(c, n, z, 0, 0);
            for (int y = 0; y < Y; y++) {
                for (int x = 0; x < X; x++) {
                    if (!log) {
                        b[(size_t)y * X + x] = src[(size_t)y * X + x];
                        continue;
                    }
                    int64_t acc = 0; /* B = sum g[a] g[c] I^(y+a-r, x+c-r) */
                    for (int a = 0; a < k; a++)
                        for (int cc = 0; cc < k; cc++) {
                            const int sy = ymap[y + a], sx = xmap[x + cc]; /* map index = coordinate + r */
                            if (sy >= 0 && sx >= 0) acc += (int64_t)g[a] * g[cc] * src[(size_t)sy * X + sx];
                        }
                    b[(size_t)y * X + x] = acc;
                }
            }
            for (int y = 0; y < Y; y++) {
                for (int x = 0; x < X; x++) {
                    int64_t acc = 0; /* L = sum K[a][c] B^(y+a-r, x+c-r): B re-extended, never blurred outside */
                    for (int a = 0; a < k; a++)
                        for (int cc = 0; cc < k; cc++) {
                            const int sy = ymap[y + a], sx = xmap[x + cc];
                            if (sy >= 0 && sx >= 0) acc += (int64_t)lap[a][cc] * b[(size_t)sy * X + sx];
                        }
                    f[(size_t)y * X + x] = acc < 0 ? -acc : acc;
                }
            }
            int64_t *vz = v + ((size_t)n * p.z + z) * plane;
            if (!rw) {
                memcpy(vz, f, plane * sizeof *f);
                continue;
            }
            /* V(y,x) = sum over hit rows qy and columns qx of count_y * count_x * F(qy,qx), rows first. */
            for (int qy = 0; qy < Y; qy++)
                for (int x = 0; x < X; x++) {
                    int64_t acc = 0;
                    for (size_t j = hx.start[x]; j < hx.start[x + 1]; j++)
                        acc += hx.count[j] * f[(size_t)qy * X + hx.index[j]];
                    h[(size_t)qy * X + x] = acc;
                }
            for (int y = 0; y < Y; y++)
                for (int x = 0; x < X; x++) {
                    int64_t acc = 0;
                    for (size_t i = hy.start[y]; i < hy.start[y + 1]; i++)
                        acc += hy.count[i] * h[(size_t)hy.index[i] * X + x];
                    vz[(size_t)y * X + x] = acc;
                }
        }
    }
    free(b);
    free(f);
    free(h);
    free(ymap);
    free(xmap);
    if (rw) hit_list_free(&hy), hit_list_free(&hx);
    return v;
}

void fs_oracle_outputs(const fs_case *c, const int64_t *v, fs_result *want)
{
    const focus_stack_params p = c->p;
    const size_t plane = (size_t)p.y * p.x;
    const float inv_s = 1.0f / (float)fs_scale(p);
    for (int n = 0; n < p.n; n++) {
        for (size_t pix = 0; pix < plane; pix++) {
            int win = 0;
            int64_t top = v[(size_t)n * p.z * plane + pix];
            for (int z = 0; z < p.z; z++) {
                const int64_t vz = v[((size_t)n * p.z + z) * plane + pix];
                if (vz > top) top = vz, win = z; /* strict: the first maximum stays */
                want->focus[((size_t)n * p.z + z) * plane + pix] = (float)vz * inv_s;
            }
            const size_t out = (size_t)n * plane + pix;
            want->idx[out] = (uint8_t)win;
            want->ff[out] = c->in[((size_t)n * p.z + win) * plane + pix];
            want->best[out] = (float)top * inv_s;
        }
    }
}

/* ---------------------------------------------------------------- checks */

/* (n, y, x) or (n, z, y, x) of a flat index, for messages. */
static void pixel_coords(const focus_stack_params *p, size_t i, int *n, int *y, int *x)
{
    const size_t plane = (size_t)p->y * p->x;
    *n = (int)(i / plane);
    *y = (int)(i % plane / (size_t)p->x);
    *x = (int)(i % (size_t)p->x);
}

static size_t compare_u8(const focus_stack_params *p, const uint8_t *got, const uint8_t *want, size_t count,
                         char *msg, size_t msg_size)
{
    size_t bad = 0, poison = 0;
    for (size_t i = 0; i < count; i++) {
        if (got[i] == want[i]) continue;
        poison += got[i] == FS_POISON_IDX;
        if (bad++ < MSG_LINES) {
            int n, y, x;
            pixel_coords(p, i, &n, &y, &x);
            gw_append_line(msg, msg_size, "idx at (n=%d, y=%d, x=%d): got %u, want %u", n, y, x, got[i], want[i]);
        }
    }
    if (bad) gw_append_line(msg, msg_size, "%zu of %zu idx values differ", bad, count);
    if (poison)
        gw_append_line(msg, msg_size, "%zu of %zu idx values still hold the poison 0xFF: the call did not write them", poison,
               count);
    return bad;
}

static size_t compare_u16(const focus_stack_params *p, const uint16_t *got, const uint16_t *want, size_t count,
                          char *msg, size_t msg_size)
{
    size_t bad = 0, poison = 0;
    for (size_t i = 0; i < count; i++) {
        if (got[i] == want[i]) continue;
        poison += got[i] == FS_POISON_FF;
        if (bad++ < MSG_LINES) {
            int n, y, x;
            pixel_coords(p, i, &n, &y, &x);
            gw_append_line(msg, msg_size, "ff at (n=%d, y=%d, x=%d): got %u, want %u", n, y, x, got[i], want[i]);
        }
    }
    if (bad) gw_append_line(msg, msg_size, "%zu of %zu ff values differ", bad, count);
    if (poison)
        gw_append_line(msg, msg_size, "%zu of %zu ff values still hold the poison 0xA5A5: the call did not write them", poison,
               count);
    return bad;
}

/* Floats as bits. per_slice: the array is [n][z][y][x] (focus), else [n][y][x] (best). */
static size_t compare_f32(const focus_stack_params *p, const char *name, const float *got, const float *want,
                          size_t count, int per_slice, char *msg, size_t msg_size)
{
    size_t bad = 0, poison = 0;
    for (size_t i = 0; i < count; i++) {
        const uint32_t g = fs_bits(got[i]), w = fs_bits(want[i]);
        if (g == w) continue;
        poison += g == FS_POISON_FLOAT;
        if (bad++ < MSG_LINES) {
            int n, z = 0, y, x;
            if (per_slice) {
                const size_t plane = (size_t)p->y * p->x;
                pixel_coords(p, (i / (plane * (size_t)p->z)) * plane + i % plane, &n, &y, &x);
                z = (int)(i / plane % (size_t)p->z);
            } else {
                pixel_coords(p, i, &n, &y, &x);
            }
            gw_append_line(msg, msg_size, "%s at (n=%d, z=%d, y=%d, x=%d): got %.9g (bits 0x%08" PRIX32 "), want %.9g (bits 0x%08" PRIX32 ")",
                   name, n, z, y, x, (double)got[i], g, (double)want[i], w);
        }
    }
    if (bad) gw_append_line(msg, msg_size, "%zu of %zu %s values differ (as bits)", bad, count, name);
    if (poison)
        gw_append_line(msg, msg_size, "%zu of %zu %s values still hold the poison (NaN 0xFFFFFFFF): the call did not write them",
               poison, count, name);
    return bad;
}

/* Elements [from, to) of an array of `size`-byte elements all hold the poison byte. */
static size_t count_unpoisoned(const void *base, size_t from, size_t to, size_t size, uint8_t poison)
{
    const uint8_t *b = base;
    size_t bad = 0;
    for (size_t i = from; i < to; i++) {
        for (size_t j = 0; j < size; j++) {
            if (b[i * size + j] != poison) {
                bad++;
                break;
            }
        }
    }
    return bad;
}

/* Slack of every array, and the whole of the arrays the call was not given, must still be poison. With
 * rejected set, nothing at all may have been written: idx and ff count as not given either. */
static size_t check_untouched(const fs_result *got, unsigned pass, int rejected, char *msg, size_t msg_size)
{
    struct {
        const char *name;
        const void *alloc;
        size_t count, size;
        uint8_t poison;
        int given;
    } arrays[] = {
        {"idx", got->idx_alloc, got->pixels, 1, FS_POISON_IDX, !rejected},
        {"ff", got->ff_alloc, got->pixels, 2, FS_POISON_FF & 0xFFu, !rejected},
        {"best", got->best_alloc, got->pixels, 4, FS_POISON_FLOAT & 0xFFu, !rejected && (pass & FS_PASS_BEST)},
        {"focus", got->focus_alloc, got->voxels, 4, FS_POISON_FLOAT & 0xFFu, !rejected && (pass & FS_PASS_FOCUS)},
    };
    size_t bad = 0;
    for (size_t a = 0; a < 4; a++) {
        const size_t total = arrays[a].count + 2 * FS_SLACK;
        const size_t before = count_unpoisoned(arrays[a].alloc, 0, FS_SLACK, arrays[a].size, arrays[a].poison);
        const size_t after =
            count_unpoisoned(arrays[a].alloc, FS_SLACK + arrays[a].count, total, arrays[a].size, arrays[a].poison);
        if (before || after) {
            gw_append_line(msg, msg_size, "%s: %zu of the %d elements before the array and %zu of the %d after it lost the "
                   "poison: a write out of bounds", arrays[a].name, before, FS_SLACK, after, FS_SLACK);
            bad += before + after;
        }
        if (!arrays[a].given) {
            const size_t inside =
                count_unpoisoned(arrays[a].alloc, FS_SLACK, FS_SLACK + arrays[a].count, arrays[a].size, arrays[a].poison);
            if (inside) {
                gw_append_line(msg, msg_size, "%s %s, yet %zu of its %zu elements lost the poison", arrays[a].name,
                       rejected ? "belongs to a rejected call" : "was not passed (NULL)", inside, arrays[a].count);
                bad += inside;
            }
        }
    }
    return bad;
}

size_t fs_compare(const fs_case *c, const fs_result *got, const fs_result *want, unsigned pass, char *msg,
                  size_t msg_size)
{
    if (msg && msg_size) msg[0] = '\0';
    const focus_stack_params *p = &c->p;
    size_t bad = compare_u8(p, got->idx, want->idx, got->pixels, msg, msg_size);
    bad += compare_u16(p, got->ff, want->ff, got->pixels, msg, msg_size);
    if (pass & FS_PASS_BEST) bad += compare_f32(p, "best", got->best, want->best, got->pixels, 0, msg, msg_size);
    if (pass & FS_PASS_FOCUS) bad += compare_f32(p, "focus", got->focus, want->focus, got->voxels, 1, msg, msg_size);
    return bad + check_untouched(got, pass, 0, msg, msg_size);
}

size_t fs_check_invariants(const fs_case *c, const fs_result *got, unsigned pass, char *msg, size_t msg_size)
{
    if (msg && msg_size) msg[0] = '\0';
    const focus_stack_params p = c->p;
    const size_t plane = (size_t)p.y * p.x;
    size_t range = 0, gather = 0, best = 0;
    for (size_t i = 0; i < got->pixels; i++) {
        int n, y, x;
        pixel_coords(&p, i, &n, &y, &x);
        const unsigned z = got->idx[i];
        if (z >= (unsigned)p.z) {
            if (range++ < MSG_LINES)
                gw_append_line(msg, msg_size, "idx at (n=%d, y=%d, x=%d) is %u, not below Z = %d", n, y, x, z, p.z);
            continue;
        }
        const uint16_t src = *fs_in(c, n, (int)z, y, x);
        if (got->ff[i] != src && gather++ < MSG_LINES)
            gw_append_line(msg, msg_size, "ff at (n=%d, y=%d, x=%d) is %u, but in[n][idx=%u][y][x] is %u", n, y, x, got->ff[i],
                   z, src);
        if ((pass & FS_PASS_ALL) == FS_PASS_ALL) {
            const float f = got->focus[((size_t)n * p.z + z) * plane + i % plane];
            if (fs_bits(got->best[i]) != fs_bits(f) && best++ < MSG_LINES)
                gw_append_line(msg, msg_size, "best at (n=%d, y=%d, x=%d) is %.9g, but focus[n][idx=%u][y][x] is %.9g", n, y, x,
                       (double)got->best[i], z, (double)f);
        }
    }
    if (range) gw_append_line(msg, msg_size, "%zu of %zu idx values are not below Z", range, got->pixels);
    if (gather) gw_append_line(msg, msg_size, "%zu of %zu ff values are not in[n][idx][y][x] (gather inconsistent)", gather, got->pixels);
    if (best) gw_append_line(msg, msg_size, "%zu of %zu best values are not focus[n][idx][y][x]", best, got->pixels);
    return range + gather + best;
}

/* ---------------------------------------------------------------- running */

void fs_run_ok(const fs_runner *r, const fs_case *c, unsigned pass, const int64_t *scores, fs_result *res)
{
    static char msg[8192]; /* one test per process: no sharing */
    char what[320];
    fs_describe(c, c->p, what, sizeof what);
    pass &= FS_PASS_ALL;
    fs_result_init(res, c);
    fs_result_poison(res);
    const int status = r->run(r->ctx, c, c->p, pass, res);
    int failed = 0;
    if (status != FOCUS_STACK_OK) {
        failed++;
        cr_expect(status == FOCUS_STACK_OK, "%s rejected a valid call: status %d (%s) [%s]", r->name, status,
                  focus_stack_status_str(status), what);
    }

    const size_t broken = fs_check_invariants(c, res, pass, msg, sizeof msg);
    if (broken) {
        failed++;
        cr_expect(broken == 0, "%s: the invariants of docs/focus_stack.md fail [%s]:\n%s", r->name, what, msg);
    }

    if (c->voxels <= FS_ORACLE_MAX_VOXELS) {
        int64_t *own = scores ? NULL : fs_oracle_scores(c);
        fs_result want;
        fs_result_init(&want, c);
        fs_result_poison(&want);
        fs_oracle_outputs(c, scores ? scores : own, &want);
        free(own);
        const size_t problems = fs_compare(c, res, &want, pass, msg, sizeof msg);
        fs_result_free(&want);
        if (problems) {
            failed++;
            cr_expect(problems == 0, "%s: outputs differ from the oracle [%s]:\n%s", r->name, what, msg);
        }
    }

    if (r->compare_with_ref) {
        fs_result want;
        fs_result_init(&want, c);
        fs_result_poison(&want);
        const int s = focus_stack_ref(&c->p, c->in, want.idx, want.ff, (pass & FS_PASS_BEST) ? want.best : NULL,
                                      (pass & FS_PASS_FOCUS) ? want.focus : NULL, 0);
        cr_assert(s == FOCUS_STACK_OK, "focus_stack_ref rejected the case: %s [%s]", focus_stack_status_str(s), what);
        const size_t problems = fs_compare(c, res, &want, pass, msg, sizeof msg);
        fs_result_free(&want);
        if (problems) {
            failed++;
            cr_expect(problems == 0, "%s: outputs differ from focus_stack_ref [%s]:\n%s", r->name, what, msg);
        }
    }

    if (r->check_witness) {
        const int violations = r->check_witness(r->ctx, 1, c->pixels, msg, sizeof msg);
        if (violations) {
            failed++;
            cr_expect(violations == 0, "%s: witness check failed [%s]:\n%s", r->name, what, msg);
        }
    }
    if (failed) cr_assert_fail("%s: %d check(s) failed on this call; stopping the test", r->name, failed);
}

void fs_run_error(const fs_runner *r, const fs_case *c, focus_stack_params p, unsigned flags, int code,
                  const char *row)
{
    static char msg[4096];
    fs_result res;
    fs_result_init(&res, c);
    fs_result_poison(&res);
    const int status = r->run(r->ctx, c, p, flags, &res);
    int failed = 0;
    if (status != code) {
        failed++;
        cr_expect(status == code, "%s, row \"%s\": got status %d (%s), want %d (%s)", r->name, row, status,
                  focus_stack_status_str(status), code, focus_stack_status_str(code));
    }
    msg[0] = '\0';
    const size_t written = check_untouched(&res, 0, 1, msg, sizeof msg);
    if (written) {
        failed++;
        cr_expect(written == 0, "%s, row \"%s\": the call was rejected, yet outputs lost the poison:\n%s", r->name, row,
                  msg);
    }
    if (r->check_witness) {
        const int violations = r->check_witness(r->ctx, 0, 0, msg, sizeof msg);
        if (violations) {
            failed++;
            cr_expect(violations == 0, "%s, row \"%s\": witness check failed for a rejected call:\n%s", r->name, row,
                      msg);
        }
    }
    fs_result_free(&res);
    if (failed) cr_assert_fail("%s: %d check(s) failed on this call; stopping the test", r->name, failed);
}
