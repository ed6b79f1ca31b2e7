/* SPDX-License-Identifier: MIT
 * focus_stack test groups (docs/focus_stack.md, "Test groups") against an fs_runner (see focus_stack_cases.h).
 * Expected values come from the page's printed numbers, tap tables and rules written here, or from the
 * oracle in focus_stack_fixture.c, never from the implementation under test.
 */
#include "focus_stack_cases.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

enum { SHOW = 5 }; /* rule violations logged per failure */

static const int ksizes[3] = {3, 5, 7};
static const int measures[2] = {FOCUS_STACK_LOG_ABS, FOCUS_STACK_LAP_ABS};
static const int borders[3] = {FOCUS_STACK_BORDER_ZERO, FOCUS_STACK_BORDER_REPLICATE, FOCUS_STACK_BORDER_REFLECT101};

int fs_quick(void)
{
    const char *v = getenv("GW_FS_QUICK");
    return v && strcmp(v, "1") == 0;
}

static focus_stack_params with(focus_stack_params p, int ksize, int measure, int border, int window)
{
    p.ksize = ksize;
    p.measure = measure;
    p.border = border;
    p.window = window;
    return p;
}

/* r_G + r_K + r_w: how far a pixel's score reaches into the input. */
static int reach(focus_stack_params p) { return fs_radius_blur(p) + fs_radius_lap(p) + fs_radius_window(p); }

/* 0 on the outermost ring, 1 on the next, ... */
static int edge_distance(focus_stack_params p, int y, int x)
{
    int d = y < x ? y : x;
    if (p.y - 1 - y < d) d = p.y - 1 - y;
    if (p.x - 1 - x < d) d = p.x - 1 - x;
    return d;
}

static float focus_at(const fs_case *c, const fs_result *res, int n, int z, int y, int x)
{
    return res->focus[(((size_t)n * c->p.z + z) * c->p.y + y) * c->p.x + x];
}

static size_t pixel_index(const fs_case *c, int n, int y, int x)
{
    return ((size_t)n * c->p.y + y) * c->p.x + x;
}

/* The float docs/focus_stack.md ("Stages") defines for a score V: the float nearest V, times 1/S. */
static float real_value(int64_t v, focus_stack_params p) { return (float)v * (1.0f / (float)fs_scale(p)); }

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    cr_assert(p != NULL, "out of memory (%zu x %zu bytes)", n, size);
    return p;
}

/* ---------------------------------------------------------------- the LOG pattern of the tap tables */

void fs_spec_log_pattern(int ksize, int64_t out[13][13])
{
    int g[7], s[7], d2[7], lap[7][7];
    fs_spec_rows(ksize, g, s, d2);
    fs_spec_laplacian(ksize, lap);
    const int r = ksize / 2;
    memset(out, 0, 13 * sizeof out[0]);
    /* L at offset d from a unit spike is sum over the Laplacian tap a and the blur tap b with a + b = d. */
    for (int a = 0; a < ksize; a++)
        for (int b = 0; b < ksize; b++)
            for (int c = 0; c < ksize; c++)
                for (int e = 0; e < ksize; e++)
                    out[6 + (a - r) + (c - r)][6 + (b - r) + (e - r)] += (int64_t)lap[a][b] * g[c] * g[e];
}

/* The score pattern of a unit spike far from every edge, before the window: |K| or |K * G| at offset
 * (dy, dx) from the spike. */
static int64_t unit_spike_score(focus_stack_params p, int dy, int dx)
{
    const int r = p.ksize / 2;
    if (p.measure == FOCUS_STACK_LAP_ABS) {
        if (dy < -r || dy > r || dx < -r || dx > r) return 0;
        int lap[7][7];
        fs_spec_laplacian(p.ksize, lap);
        const int v = lap[r + dy][r + dx];
        return v < 0 ? -v : v;
    }
    if (dy < -2 * r || dy > 2 * r || dx < -2 * r || dx > 2 * r) return 0;
    int64_t pat[13][13];
    fs_spec_log_pattern(p.ksize, pat);
    const int64_t v = pat[6 + dy][6 + dx];
    return v < 0 ? -v : v;
}

/* ---------------------------------------------------------------- test group 1: the edge ladder */

typedef enum ladder_content { L_RANDOM, L_EQUAL, L_CONSTANT, L_SATURATED, L_SPIKE } ladder_content;

enum { SPIKE_V = 1000 };

static const uint16_t slice_constants[4][3] = {{0}, {12345}, {300, 60000}, {5000, 65535, 65535}};

static void ladder_fill(fs_case *c, ladder_content content)
{
    const focus_stack_params p = c->p;
    switch (content) {
    case L_RANDOM: fs_fill_random(c, 65535, 0x1ADD3A00u + (uint64_t)p.z * 64 + (uint64_t)p.y); break;
    case L_EQUAL: {
        const uint64_t seed = 0xE9A1u + (uint64_t)p.y * 8 + (uint64_t)p.z;
        fs_rng rng = {seed};
        for (int y = 0; y < p.y; y++)
            for (int x = 0; x < p.x; x++) {
                const uint16_t v = (uint16_t)fs_rng_below(&rng, 65536);
                for (int z = 0; z < p.z; z++) *fs_in(c, 0, z, y, x) = v;
            }
        snprintf(c->desc, sizeof c->desc, "every slice the same random image (seed %#" PRIx64 ")", seed);
        break;
    }
    case L_CONSTANT:
        for (int z = 0; z < p.z; z++)
            for (int y = 0; y < p.y; y++)
                for (int x = 0; x < p.x; x++) *fs_in(c, 0, z, y, x) = slice_constants[p.z][z];
        snprintf(c->desc, sizeof c->desc, "constant slices {%u, %u, %u} (first %d used)", slice_constants[p.z][0],
                 slice_constants[p.z][1], slice_constants[p.z][2], p.z);
        break;
    case L_SATURATED:
        /* Slices 1.. (slice 0 when Z = 1) hold the same 65535-next-to-0 pattern; the rest are 0. */
        for (int z = p.z > 1 ? 1 : 0; z < p.z; z++)
            for (int y = 0; y < p.y; y++)
                for (int x = 0; x < p.x; x++) *fs_in(c, 0, z, y, x) = (7 * x + 3 * y) % 5 < 2 ? 65535 : 0;
        snprintf(c->desc, sizeof c->desc, "65535 where (7x+3y) mod 5 < 2, else 0, in slices %d..%d; other slices 0",
                 p.z > 1 ? 1 : 0, p.z - 1);
        break;
    case L_SPIKE:
        *fs_in(c, 0, p.z - 1, (p.y - 1) / 2, (p.x - 1) / 2) = SPIKE_V;
        snprintf(c->desc, sizeof c->desc, "spike %d at (z=%d, y=%d, x=%d), else 0", SPIKE_V, p.z - 1, (p.y - 1) / 2,
                 (p.x - 1) / 2);
        break;
    }
}

/* The content's own rule; returns the number of pixels that break it (first ones logged). */
static size_t ladder_rule(const fs_runner *r, const fs_case *c, const fs_result *res, ladder_content content)
{
    const focus_stack_params p = c->p;
    char what[320];
    fs_describe(c, p, what, sizeof what);
    size_t bad = 0;
    int any_nonzero = 0;
    for (int n = 0; n < p.n; n++) {
        for (int y = 0; y < p.y; y++) {
            for (int x = 0; x < p.x; x++) {
                const size_t i = pixel_index(c, n, y, x);
                const unsigned got = res->idx[i];
                int want = 0;
                const char *rule = "";
                switch (content) {
                case L_RANDOM: continue;
                case L_EQUAL:
                    want = 0, rule = "equal slices give idx 0";
                    break;
                case L_CONSTANT: {
                    if (p.border != FOCUS_STACK_BORDER_ZERO || edge_distance(p, y, x) >= reach(p)) {
                        rule = p.border != FOCUS_STACK_BORDER_ZERO ? "constant slices under REPLICATE/REFLECT101 "
                                                                     "score 0 everywhere"
                                                                   : "constant slices score 0 farther than "
                                                                     "r_G + r_K + r_w from the edge";
                        for (int z = 0; z < p.z; z++)
                            if (fs_bits(focus_at(c, res, n, z, y, x)) != 0) {
                                if (bad++ < SHOW)
                                    cr_log_error("%s: (y=%d, x=%d) slice %d scores %.9g: %s [%s]", r->name, y, x, z,
                                                 (double)focus_at(c, res, n, z, y, x), rule, what);
                                goto next_pixel;
                            }
                        want = 0;
                        break;
                    }
                    /* ZERO near the edge: V_z = c_z * V_1, so the brightest constant (first of equals) wins
                     * where V != 0, and every slice scores 0 elsewhere. */
                    int brightest = 0;
                    for (int z = 1; z < p.z; z++)
                        if (slice_constants[p.z][z] > slice_constants[p.z][brightest]) brightest = z;
                    const int nonzero = fs_bits(res->best[i]) != 0;
                    any_nonzero |= nonzero;
                    want = nonzero ? brightest : 0;
                    rule = nonzero ? "ZERO near the edge: the brightest slice (first of equals) wins where V != 0"
                                   : "V = 0 gives idx 0";
                    break;
                }
                case L_SATURATED: {
                    const int first = p.z > 1 ? 1 : 0;
                    const float f = focus_at(c, res, n, first, y, x);
                    for (int z = 0; z < p.z; z++) {
                        const float fz = focus_at(c, res, n, z, y, x);
                        const int same = z >= first ? fs_bits(fz) == fs_bits(f) : fs_bits(fz) == 0;
                        if (!same) {
                            if (bad++ < SHOW)
                                cr_log_error("%s: (y=%d, x=%d) slice %d scores %.9g, slice %d %.9g: identical patches "
                                             "must score alike and empty slices 0 [%s]",
                                             r->name, y, x, z, (double)fz, first, (double)f, what);
                            goto next_pixel;
                        }
                    }
                    want = fs_bits(f) != 0 ? first : 0;
                    rule = "the first of identical patches wins where V != 0, else idx 0";
                    break;
                }
                case L_SPIKE: {
                    const int z0 = p.z - 1;
                    for (int z = 0; z < z0; z++)
                        if (fs_bits(focus_at(c, res, n, z, y, x)) != 0) {
                            if (bad++ < SHOW)
                                cr_log_error("%s: (y=%d, x=%d) empty slice %d scores %.9g [%s]", r->name, y, x, z,
                                             (double)focus_at(c, res, n, z, y, x), what);
                            goto next_pixel;
                        }
                    want = fs_bits(focus_at(c, res, n, z0, y, x)) != 0 ? z0 : 0;
                    rule = "idx = z0 where the spike's pattern is non-zero, else 0";
                    break;
                }
                }
                if ((int)got != want && bad++ < SHOW)
                    cr_log_error("%s: idx at (n=%d, y=%d, x=%d) is %u, want %d: %s [%s]", r->name, n, y, x, got, want,
                                 rule, what);
            next_pixel:;
            }
        }
    }
    if (content == L_CONSTANT && p.border == FOCUS_STACK_BORDER_ZERO && !any_nonzero) {
        cr_log_error("%s: constant slices under ZERO scored 0 at every pixel: the zero frame must show [%s]", r->name,
                     what);
        bad++;
    }
    if (content == L_SPIKE && p.measure == FOCUS_STACK_LOG_ABS && p.ksize == 3) {
        const int cy = (p.y - 1) / 2, cx = (p.x - 1) / 2, z0 = p.z - 1;
        const float centre = focus_at(c, res, 0, z0, cy, cx);
        if (p.y == 1 && p.x == 1) {
            /* B = 4v, then K3's centre -8 on B alone (B^ = 0 around it): F = 32v, real 2v. A fused 5x5 kernel
             * (K5's centre -24 on v) would give 24v; other borders see a constant B and give 0. */
            const int64_t want_v = p.border == FOCUS_STACK_BORDER_ZERO ? 32 * SPIKE_V : 0;
            if (fs_bits(centre) != fs_bits(real_value(want_v, p))) {
                cr_log_error("%s: 1x1 spike %d under %s scores %.9g, want %.9g (F = %" PRId64 "; a fused 5x5 kernel "
                             "gives 24v = %.9g) [%s]", r->name, SPIKE_V, fs_border_name(p.border), (double)centre,
                             (double)real_value(want_v, p), want_v, (double)real_value(24 * SPIKE_V, p), what);
                bad++;
            }
        }
        if (p.y == 17 && p.x == 33 && p.window <= 1 && fs_bits(centre) != fs_bits(real_value(24 * SPIKE_V, p))) {
            cr_log_error("%s: interior spike %d scores %.9g at its centre, want F = 24v (%.9g) [%s]", r->name, SPIKE_V,
                         (double)centre, (double)real_value(24 * SPIKE_V, p), what);
            bad++;
        }
    }
    return bad;
}

static void ladder(const fs_runner *r, ladder_content content)
{
    static const int shapes[4][2] = {{1, 1}, {2, 3}, {5, 7}, {17, 33}};
    static const int windows[4] = {0, 1, 3, 5};
    for (int z = 1; z <= 3; z++) {
        for (int s = 0; s < 4; s++) {
            fs_case c;
            fs_case_init(&c, content == L_RANDOM ? 2 : 1, z, shapes[s][0], shapes[s][1]);
            ladder_fill(&c, content);
            for (int k = 0; k < 3; k++)
                for (int m = 0; m < 2; m++)
                    for (int b = 0; b < 3; b++)
                        for (int w = 0; w < 4; w++) {
                            c.p = with(c.p, ksizes[k], measures[m], borders[b], windows[w]);
                            fs_result res;
                            fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
                            const size_t bad = ladder_rule(r, &c, &res, content);
                            char what[320];
                            cr_assert(bad == 0, "%s: %zu pixels break the ladder rule (first ones logged above) [%s]",
                                      r->name, bad, fs_describe(&c, c.p, what, sizeof what));
                            fs_result_free(&res);
                        }
            fs_case_free(&c);
        }
    }
}

void fs_case_ladder_random(const fs_runner *r) { ladder(r, L_RANDOM); }
void fs_case_ladder_equal_slices(const fs_runner *r) { ladder(r, L_EQUAL); }
void fs_case_ladder_constant_slices(const fs_runner *r) { ladder(r, L_CONSTANT); }
void fs_case_ladder_saturated(const fs_runner *r) { ladder(r, L_SATURATED); }
void fs_case_ladder_spike(const fs_runner *r) { ladder(r, L_SPIKE); }

/* ---------------------------------------------------------------- taps through spikes ("Taps") */

void fs_case_spike_patterns_follow_the_spec_tables(const fs_runner *r)
{
    /* 29x37 with the spike at (13, 17): 13 px from the nearest edge, more than r_G + r_K + r_w = 8 for the
     * widest case here, so every border rule sees only zeros and the pattern is the unbounded one. */
    enum { Y = 29, X = 37, SY = 13, SX = 17, V = 777 };
    static const int windows[4] = {0, 1, 3, 5};
    fs_case c;
    fs_case_init(&c, 1, 2, Y, X);
    *fs_in(&c, 0, 1, SY, SX) = V;
    snprintf(c.desc, sizeof c.desc, "spike %d at (z=1, y=%d, x=%d), else 0", V, SY, SX);
    for (int k = 0; k < 3; k++)
        for (int m = 0; m < 2; m++)
            for (int b = 0; b < 3; b++)
                for (int w = 0; w < 4; w++) {
                    c.p = with(c.p, ksizes[k], measures[m], borders[b], windows[w]);
                    char what[320];
                    fs_describe(&c, c.p, what, sizeof what);
                    fs_result res;
                    fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
                    const int rw = fs_radius_window(c.p);
                    size_t bad = 0;
                    for (int y = 0; y < Y; y++) {
                        for (int x = 0; x < X; x++) {
                            int64_t v = 0;
                            for (int a = -rw; a <= rw; a++)
                                for (int e = -rw; e <= rw; e++) v += unit_spike_score(c.p, SY - (y + a), SX - (x + e));
                            v *= V;
                            const float want = real_value(v, c.p), got = focus_at(&c, &res, 0, 1, y, x);
                            const unsigned want_idx = v > 0 ? 1 : 0;
                            if ((fs_bits(got) != fs_bits(want) || res.idx[pixel_index(&c, 0, y, x)] != want_idx ||
                                 fs_bits(focus_at(&c, &res, 0, 0, y, x)) != 0) &&
                                bad++ < SHOW)
                                cr_log_error("%s: at (y=%d, x=%d) the spike scores %.9g with idx %u; the tap tables "
                                             "give V = %" PRId64 ", i.e. %.9g and idx %u [%s]",
                                             r->name, y, x, (double)got, res.idx[pixel_index(&c, 0, y, x)], v,
                                             (double)want, want_idx, what);
                        }
                    }
                    cr_assert(bad == 0, "%s: %zu pixels of the spike pattern differ from the tap tables [%s]",
                              r->name, bad, what);
                    if (c.p.ksize == 3 && c.p.measure == FOCUS_STACK_LOG_ABS && c.p.window <= 1)
                        cr_assert(fs_bits(focus_at(&c, &res, 0, 1, SY, SX)) == fs_bits(real_value(24 * V, c.p)),
                                  "%s: an interior spike must give F = 24v at its centre [%s]", r->name, what);
                    fs_result_free(&res);
                }
    fs_case_free(&c);
}

void fs_case_one_pixel_images(const fs_runner *r)
{
    enum { V = 999 };
    static const int windows[7] = {0, 1, 3, 5, 9, 65, 7567};
    fs_case c;
    fs_case_init(&c, 1, 2, 1, 1);
    *fs_in(&c, 0, 1, 0, 0) = V;
    snprintf(c.desc, sizeof c.desc, "1x1, slice 0 = 0, slice 1 = %d", V);
    for (int k = 0; k < 3; k++)
        for (int m = 0; m < 2; m++)
            for (int b = 0; b < 3; b++)
                for (int w = 0; w < 7; w++) {
                    c.p = with(c.p, ksizes[k], measures[m], borders[b], windows[w]);
                    char what[320];
                    fs_describe(&c, c.p, what, sizeof what);
                    int g[7], s[7], d2[7], lap[7][7];
                    fs_spec_rows(c.p.ksize, g, s, d2);
                    fs_spec_laplacian(c.p.ksize, lap);
                    const int rr = c.p.ksize / 2;
                    /* ZERO: only the centre taps see the pixel, at every stage; the window adds nothing but 0s.
                     * REPLICATE/REFLECT101: every tap reads the one pixel, and the Laplacian sums to 0. */
                    int64_t want_v = 0;
                    if (c.p.border == FOCUS_STACK_BORDER_ZERO) {
                        const int64_t kc = lap[rr][rr] < 0 ? -lap[rr][rr] : lap[rr][rr];
                        want_v = kc * V * (c.p.measure == FOCUS_STACK_LOG_ABS ? (int64_t)g[rr] * g[rr] : 1);
                    }
                    fs_result res;
                    fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
                    cr_assert(fs_bits(res.best[0]) == fs_bits(real_value(want_v, c.p)) &&
                                  res.idx[0] == (want_v ? 1 : 0),
                              "%s: 1x1 image: best %.9g, idx %u; want V = %" PRId64 " (%.9g), idx %d [%s]", r->name,
                              (double)res.best[0], res.idx[0], want_v, (double)real_value(want_v, c.p), want_v ? 1 : 0,
                              what);
                    fs_result_free(&res);
                }
    fs_case_free(&c);
}

/* ---------------------------------------------------------------- test group 2: overflow probes */

void fs_case_overflow_probes(const fs_runner *r)
{
    /* LOG_ABS k=7: 65535 wherever K7 * G7 > 0 on the 13x13 support, centred in 25x25. The centre score is
     * 65535 times the sum of the positive entries, which docs/focus_stack.md states. Slice 0 is empty, so idx must be 1. */
    int64_t pat[13][13];
    fs_spec_log_pattern(7, pat);
    int64_t positive = 0;
    for (int a = 0; a < 13; a++)
        for (int b = 0; b < 13; b++) positive += pat[a][b] > 0 ? pat[a][b] : 0;
    cr_assert(positive * 65535 == INT64_C(63748253760), "the tap tables give a probe score of %" PRId64
              ", docs/focus_stack.md says 63,748,253,760", positive * 65535);
    for (int b = 0; b < 3; b++) {
        fs_case c;
        fs_case_init(&c, 1, 2, 25, 25);
        for (int y = 0; y < 13; y++)
            for (int x = 0; x < 13; x++) *fs_in(&c, 0, 1, 6 + y, 6 + x) = pat[y][x] > 0 ? 65535 : 0;
        snprintf(c.desc, sizeof c.desc, "overflow probe: 65535 where K7*G7 > 0, centred in slice 1");
        c.p = with(c.p, 7, FOCUS_STACK_LOG_ABS, borders[b], 0);
        int64_t *v = fs_oracle_scores(&c);
        const int64_t centre = v[(size_t)25 * 25 + 12 * 25 + 12];
        cr_assert(centre == INT64_C(63748253760), "oracle: probe centre V = %" PRId64 ", want 63,748,253,760", centre);
        fs_result res;
        fs_run_ok(r, &c, FS_PASS_ALL, v, &res);
        const float want = real_value(INT64_C(63748253760), c.p);
        cr_assert(fs_bits(focus_at(&c, &res, 0, 1, 12, 12)) == fs_bits(want) && res.idx[12 * 25 + 12] == 1,
                  "%s: LOG_ABS k=7 probe (%s): centre focus %.9g idx %u, want %.9g (V = 63,748,253,760) idx 1; an "
                  "int32 accumulator wraps", r->name, fs_border_name(borders[b]),
                  (double)focus_at(&c, &res, 0, 1, 12, 12), res.idx[12 * 25 + 12], (double)want);
        free(v);
        fs_result_free(&res);
        fs_case_free(&c);
    }

    /* LAP_ABS k=3, w=65, rows alternating 0/65535 on 97x97: |L| = 8 * 65535 in the interior, and the 65x65
     * window at the centre lies in the interior: 65^2 * 524280 = 2,215,083,000 > 2^31. */
    cr_assert(INT64_C(65) * 65 * 8 * 65535 == INT64_C(2215083000));
    for (int b = 0; b < 3; b++) {
        fs_case c;
        fs_case_init(&c, 1, 2, 97, 97);
        for (int y = 0; y < 97; y++)
            for (int x = 0; x < 97; x++) *fs_in(&c, 0, 1, y, x) = y % 2 ? 65535 : 0;
        snprintf(c.desc, sizeof c.desc, "overflow probe: slice 1 rows alternate 0/65535, slice 0 empty");
        c.p = with(c.p, 3, FOCUS_STACK_LAP_ABS, borders[b], 65);
        fs_result res;
        fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
        const float want = real_value(INT64_C(2215083000), c.p);
        cr_assert(fs_bits(focus_at(&c, &res, 0, 1, 48, 48)) == fs_bits(want) && fs_bits(res.best[48 * 97 + 48]) ==
                  fs_bits(want) && res.idx[48 * 97 + 48] == 1,
                  "%s: LAP_ABS k=3 w=65 probe (%s): centre focus %.9g best %.9g idx %u, want %.9g (V = 2,215,083,000) "
                  "idx 1; an int32 window sum wraps", r->name, fs_border_name(borders[b]),
                  (double)focus_at(&c, &res, 0, 1, 48, 48), (double)res.best[48 * 97 + 48], res.idx[48 * 97 + 48],
                  (double)want);
        fs_result_free(&res);
        fs_case_free(&c);
    }
}

/* ---------------------------------------------------------------- test group 3: odd sizes */

void fs_case_odd_sizes(const fs_runner *r)
{
    const int quick = fs_quick();
    /* T1 shapes (under GW_FS_QUICK, smaller odd shapes with the same stack/slice structure). */
    static const int t1[2][4] = {{1, 12, 256, 320}, {2, 17, 517, 389}};
    static const int t1_quick[2][4] = {{1, 4, 40, 52}, {2, 5, 37, 29}};
    for (int s = 0; s < 2; s++) {
        const int *d = quick ? t1_quick[s] : t1[s];
        fs_case c;
        fs_case_init(&c, d[0], d[1], d[2], d[3]);
        fs_fill_random(&c, 65535, 0x7100u + (uint64_t)s);
        for (int k = 0; k < 3; k++) {
            c.p = with(c.p, ksizes[k], FOCUS_STACK_LOG_ABS, FOCUS_STACK_BORDER_ZERO, 0); /* the defaults */
            fs_result res;
            fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
            fs_result_free(&res);
        }
        /* and one non-default combination per ksize */
        for (int k = 0; k < 3; k++) {
            c.p = with(c.p, ksizes[k], measures[(k + 1) % 2], borders[(k + 1) % 3], 2 * k + 1);
            fs_result res;
            fs_run_ok(r, &c, FS_PASS_BEST, NULL, &res);
            fs_result_free(&res);
        }
        fs_case_free(&c);
    }
    /* One pixel around the tile edges of kernels/focus_stack/focus_stack.cu and their multiples: the fast path
     * (defaults only) owns 60 x 32 tiles of 8-row warp strips, the general path 32 x 32 tiles and 40 x 40
     * score chunks; 16, 64 and 128 cover other common choices. Every shape runs the defaults (fast path), w = 1
     * (also fast) and one general combination per ksize. */
    static const int tiles[] = {8, 32, 60, 16, 40, 64, 120, 128};
    const size_t n_tiles = quick ? 3 : sizeof tiles / sizeof tiles[0];
    int combo = 0;
    for (size_t t = 0; t < n_tiles; t++) {
        const int e = tiles[t];
        const int shapes[4][2] = {{e - 1, e + 1}, {e + 1, e - 1}, {e + 1, e + 1}, {e - 1, 2 * e + 1}};
        for (int s = 0; s < 4; s++) {
            fs_case c;
            fs_case_init(&c, 1, 3, shapes[s][0], shapes[s][1]);
            fs_fill_random(&c, 65535, 0x7200u + (uint64_t)combo);
            for (int k = -2; k < 3; k++, combo++) {
                if (k < 0) /* the defaults, window 0 and 1 */
                    c.p = with(c.p, 3, FOCUS_STACK_LOG_ABS, FOCUS_STACK_BORDER_ZERO, k + 2);
                else
                    c.p = with(c.p, ksizes[k], measures[combo % 2], borders[combo % 3], (combo % 3) * 2 + 3);
                fs_result res;
                fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
                fs_result_free(&res);
            }
            fs_case_free(&c);
        }
    }
}

void fs_case_windows_wider_than_a_tile(const fs_runner *r)
{
    /* 11 and 15 overflow one 40 x 40 score chunk of a 32 x 32 tile (32 + 2 r_w > 40), 31 and 81 span several
     * chunks and tiles; the image is not a multiple of either. */
    static const int windows[4] = {11, 15, 31, 81};
    fs_case c;
    fs_case_init(&c, 2, 3, 83, 101);
    fs_fill_random(&c, 65535, 0x3C4u);
    const int quick = fs_quick(); /* w 15 and 81 with ksize 7 only */
    for (int w = quick ? 1 : 0; w < 4; w += quick ? 2 : 1)
        for (int k = quick ? 2 : 0; k < 3; k++)
            for (int m = 0; m < 2; m++)
                for (int b = 0; b < 3; b++) {
                    c.p = with(c.p, ksizes[k], measures[m], borders[b], windows[w]);
                    fs_result res;
                    fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
                    fs_result_free(&res);
                }
    fs_case_free(&c);
}

/* ---------------------------------------------------------------- test group 4: all combinations */

void fs_case_all_combinations(const fs_runner *r)
{
    static const int windows[5] = {0, 1, 3, 5, 9};
    for (int content = 0; content < 2; content++) {
        fs_case c;
        fs_case_init(&c, 2, 5, 23, 31);
        fs_fill_random(&c, content ? 3 : 65535, 0xA11C0u + (uint64_t)content);
        for (int k = 0; k < 3; k++)
            for (int m = 0; m < 2; m++)
                for (int b = 0; b < 3; b++)
                    for (int w = 0; w < 5; w++) {
                        c.p = with(c.p, ksizes[k], measures[m], borders[b], windows[w]);
                        fs_result res;
                        fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
                        fs_result_free(&res);
                    }
        fs_case_free(&c);
    }
}

/* ---------------------------------------------------------------- test group 5: comparison */

void fs_case_window_one_equals_zero(const fs_runner *r)
{
    fs_case c;
    fs_case_init(&c, 2, 3, 19, 23);
    fs_fill_random(&c, 65535, 0x1E0u);
    for (int k = 0; k < 3; k++)
        for (int m = 0; m < 2; m++)
            for (int b = 0; b < 3; b++) {
                fs_result w0, w1;
                c.p = with(c.p, ksizes[k], measures[m], borders[b], 0);
                fs_run_ok(r, &c, FS_PASS_ALL, NULL, &w0);
                c.p.window = 1;
                fs_run_ok(r, &c, FS_PASS_ALL, NULL, &w1);
                char what[320];
                cr_assert(fs_result_equal(&w0, &w1, FS_PASS_ALL), "%s: window 1 differs from window 0 [%s]", r->name,
                          fs_describe(&c, c.p, what, sizeof what));
                fs_result_free(&w0);
                fs_result_free(&w1);
            }
    fs_case_free(&c);
}

void fs_case_optional_outputs_do_not_change_idx_and_ff(const fs_runner *r)
{
    static const unsigned passes[3] = {0, FS_PASS_BEST, FS_PASS_FOCUS};
    fs_case c;
    fs_case_init(&c, 2, 4, 21, 26);
    fs_fill_random(&c, 65535, 0x0F7u);
    for (int k = 0; k < 3; k++)
        for (int m = 0; m < 2; m++)
            for (int b = 0; b < 3; b++)
                for (int w = 0; w < 2; w++) {
                    c.p = with(c.p, ksizes[k], measures[m], borders[b], 3 * w);
                    char what[320];
                    fs_describe(&c, c.p, what, sizeof what);
                    fs_result all;
                    fs_run_ok(r, &c, FS_PASS_ALL, NULL, &all);
                    for (int i = 0; i < 3; i++) {
                        fs_result some;
                        fs_run_ok(r, &c, passes[i], NULL, &some); /* checks that unpassed arrays stay poison */
                        cr_assert(fs_result_equal(&all, &some, passes[i]),
                                  "%s: with best %s and focus %s, idx/ff (or the given float output) change [%s]",
                                  r->name, passes[i] & FS_PASS_BEST ? "given" : "NULL",
                                  passes[i] & FS_PASS_FOCUS ? "given" : "NULL", what);
                        fs_result_free(&some);
                    }
                    fs_result_free(&all);
                }
    fs_case_free(&c);
}

/* ---------------------------------------------------------------- the identity G3 * K3 = K5 ("Taps") */

void fs_case_log3_equals_lap5_in_the_interior(const fs_runner *r)
{
    fs_case c;
    fs_case_init(&c, 1, 4, 40, 50);
    fs_fill_random(&c, 65535, 0x635u);
    for (int b = 0; b < 3; b++)
        for (int w = 0; w < 2; w++) {
            fs_result log3, lap5;
            c.p = with(c.p, 3, FOCUS_STACK_LOG_ABS, borders[b], 3 * w);
            fs_run_ok(r, &c, FS_PASS_ALL, NULL, &log3);
            c.p = with(c.p, 5, FOCUS_STACK_LAP_ABS, borders[b], 3 * w);
            fs_run_ok(r, &c, FS_PASS_ALL, NULL, &lap5);
            const int margin = 2 + fs_radius_window(c.p);
            size_t bad = 0, compared = 0;
            for (int y = margin; y < c.p.y - margin; y++)
                for (int x = margin; x < c.p.x - margin; x++) {
                    compared++;
                    for (int z = 0; z < c.p.z; z++) {
                        /* Same integer V; LOG's real value is V/16, LAP's V/1, and *16 is exact. */
                        const float a = focus_at(&c, &log3, 0, z, y, x) * 16.0f, e = focus_at(&c, &lap5, 0, z, y, x);
                        if (fs_bits(a) != fs_bits(e) && bad++ < SHOW)
                            cr_log_error("%s: (z=%d, y=%d, x=%d): LOG_ABS k=3 gives %.9g (x16), LAP_ABS k=5 %.9g", r->name,
                                         z, y, x, (double)a, (double)e);
                    }
                    const size_t i = pixel_index(&c, 0, y, x);
                    if (log3.idx[i] != lap5.idx[i] && bad++ < SHOW)
                        cr_log_error("%s: (y=%d, x=%d): idx %u for LOG_ABS k=3, %u for LAP_ABS k=5", r->name, y, x,
                                     log3.idx[i], lap5.idx[i]);
                }
            cr_assert(compared > 0 && bad == 0,
                      "%s: %zu interior differences between LOG_ABS k=3 and LAP_ABS k=5 (%s, w=%d): G3*K3 = K5", r->name,
                      bad, fs_border_name(borders[b]), 3 * w);
            fs_result_free(&log3);
            fs_result_free(&lap5);
        }
    fs_case_free(&c);
}

/* ---------------------------------------------------------------- large windows */

void fs_case_large_windows_on_tiny_images(const fs_runner *r)
{
    static const int shapes[7][2] = {{1, 1}, {1, 4}, {4, 1}, {2, 3}, {3, 2}, {2, 2}, {4, 4}};
    static const int windows[6] = {7, 9, 15, 65, 255, 7567};
    static const int windows_quick[3] = {7, 65, 7567};
    const int quick = fs_quick();
    for (int s = 0; s < 7; s++) {
        fs_case c;
        fs_case_init(&c, 1, 2, shapes[s][0], shapes[s][1]);
        fs_fill_random(&c, 65535, 0x716u + (uint64_t)s);
        for (int w = 0; w < (quick ? 3 : 6); w++)
            for (int k = 0; k < 3; k++)
                for (int m = 0; m < 2; m++)
                    for (int b = 0; b < 3; b++) {
                        c.p = with(c.p, ksizes[k], measures[m], borders[b], quick ? windows_quick[w] : windows[w]);
                        fs_result res;
                        fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
                        fs_result_free(&res);
                    }
        fs_case_free(&c);
    }
}

/* ---------------------------------------------------------------- test group 6: semantic */

enum { SEM_Y = 96, SEM_X = 112, SEM_Y0 = 32, SEM_Y1 = 64, SEM_X0 = 36, SEM_X1 = 76, SEM_Z = 5 };

/* Separable Gaussian with sigma px (radius ceil(4 sigma), normalised), clamped at the image edge, in double,
 * rounded to uint16. sigma 0 copies. */
static void gaussian_blur(const double *src, uint16_t *dst, int Y, int X, int sigma)
{
    if (sigma == 0) {
        for (size_t i = 0; i < (size_t)Y * X; i++) dst[i] = (uint16_t)lround(src[i]);
        return;
    }
    const int rad = 4 * sigma;
    double w[64], sum = 0;
    for (int i = -rad; i <= rad; i++) sum += w[i + rad] = exp(-(double)(i * i) / (2.0 * sigma * sigma));
    for (int i = 0; i <= 2 * rad; i++) w[i] /= sum;
    double *tmp = xcalloc((size_t)Y * X, sizeof *tmp);
    for (int y = 0; y < Y; y++)
        for (int x = 0; x < X; x++) {
            double acc = 0;
            for (int i = -rad; i <= rad; i++) {
                const int xx = x + i < 0 ? 0 : x + i >= X ? X - 1 : x + i;
                acc += w[i + rad] * src[(size_t)y * X + xx];
            }
            tmp[(size_t)y * X + x] = acc;
        }
    for (int y = 0; y < Y; y++)
        for (int x = 0; x < X; x++) {
            double acc = 0;
            for (int i = -rad; i <= rad; i++) {
                const int yy = y + i < 0 ? 0 : y + i >= Y ? Y - 1 : y + i;
                acc += w[i + rad] * tmp[(size_t)yy * X + x];
            }
            const long v = lround(acc);
            dst[(size_t)y * X + x] = (uint16_t)(v < 0 ? 0 : v > 65535 ? 65535 : v);
        }
    free(tmp);
}

void fs_case_semantic_checkerboard(const fs_runner *r)
{
    static const int z_focus[2] = {2, 4};
    fs_case c;
    fs_case_init(&c, 2, SEM_Z, SEM_Y, SEM_X);
    double *sharp = xcalloc((size_t)SEM_Y * SEM_X, sizeof *sharp);
    for (int y = 0; y < SEM_Y; y++)
        for (int x = 0; x < SEM_X; x++) {
            const int inside = y >= SEM_Y0 && y < SEM_Y1 && x >= SEM_X0 && x < SEM_X1;
            /* 2x2-pixel blocks: 1-px blocks sit at Nyquist, where the k=3 blur (1 2 1)/4 answers 0 */
            const int block = ((y - SEM_Y0) / 2 + (x - SEM_X0) / 2) % 2;
            sharp[(size_t)y * SEM_X + x] = inside ? (block ? 45000.0 : 20000.0) : 32500.0;
        }
    for (int n = 0; n < 2; n++)
        for (int z = 0; z < SEM_Z; z++)
            gaussian_blur(sharp, fs_in(&c, n, z, 0, 0), SEM_Y, SEM_X, abs(z - z_focus[n]));
    free(sharp);
    snprintf(c.desc, sizeof c.desc, "2x2 checkerboard 20000/45000 in rows %d..%d, cols %d..%d, else 32500; slice z "
             "blurred with sigma |z - z_focus|, z_focus %d and %d", SEM_Y0, SEM_Y1 - 1, SEM_X0, SEM_X1 - 1, z_focus[0],
             z_focus[1]);
    static const int windows[5] = {0, 1, 3, 5, 9};
    const int quick = fs_quick();
    for (int k = 0; k < 3; k++)
        for (int m = 0; m < 2; m++)
            for (int b = 0; b < 3; b++)
                for (int w = quick ? 3 : 0; w < (quick ? 4 : 5); w++) { /* quick: w = 5 only */
                    c.p = with(c.p, ksizes[k], measures[m], borders[b], windows[w]);
                    char what[320];
                    fs_describe(&c, c.p, what, sizeof what);
                    const int R = reach(c.p);
                    fs_result res;
                    fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
                    size_t textured = 0, flat = 0, bad = 0;
                    for (int n = 0; n < 2; n++)
                        for (int y = 0; y < SEM_Y; y++)
                            for (int x = 0; x < SEM_X; x++) {
                                const unsigned got = res.idx[pixel_index(&c, n, y, x)];
                                if (y - R >= SEM_Y0 && y + R < SEM_Y1 && x - R >= SEM_X0 && x + R < SEM_X1) {
                                    textured++;
                                    if (got != (unsigned)z_focus[n] && bad++ < SHOW)
                                        cr_log_error("%s: textured (n=%d, y=%d, x=%d): idx %u, want z_focus %d [%s]",
                                                     r->name, n, y, x, got, z_focus[n], what);
                                    continue;
                                }
                                /* Every slice identical over the pixel's reach (clamped to the image; border
                                 * rules only read pixels inside that box, or zeros). */
                                int same = 1;
                                for (int yy = y - R; same && yy <= y + R; yy++)
                                    for (int xx = x - R; same && xx <= x + R; xx++) {
                                        if (yy < 0 || yy >= SEM_Y || xx < 0 || xx >= SEM_X) continue;
                                        for (int z = 1; same && z < SEM_Z; z++)
                                            same = *fs_in(&c, n, z, yy, xx) == *fs_in(&c, n, 0, yy, xx);
                                    }
                                if (!same) continue;
                                flat++;
                                if (got != 0 && bad++ < SHOW)
                                    cr_log_error("%s: (n=%d, y=%d, x=%d) sees the same values in every slice, yet idx "
                                                 "is %u [%s]", r->name, n, y, x, got, what);
                            }
                    cr_assert(textured > 0 && flat > 0, "semantic test geometry: %zu textured and %zu flat pixels [%s]",
                              textured, flat, what);
                    cr_assert(bad == 0, "%s: %zu pixels break the semantic rule [%s]", r->name, bad, what);
                    fs_result_free(&res);
                }
    fs_case_free(&c);
}

/* ---------------------------------------------------------------- test group 7: bad input */

void fs_case_bad_input(const fs_runner *r)
{
    fs_case c;
    fs_case_init(&c, 2, 3, 5, 7);
    fs_fill_random(&c, 65535, 0xBAD0u);
    const focus_stack_params ok = c.p;
    typedef struct row {
        const char *name;
        unsigned flags;
        int code;
        int field, value; /* field: 0 none, 1 n, 2 z, 3 y, 4 x, 5 ksize, 6 window, 7 measure, 8 border */
        int field2, value2;
    } row;
    enum { NONE, N, Z, Y, X, K, W, M, B };
    static const row rows[] = {
        {"in NULL", FS_NULL_IN, FOCUS_STACK_ERR_NULL, NONE, 0, NONE, 0},
        {"idx NULL", FS_NULL_IDX, FOCUS_STACK_ERR_NULL, NONE, 0, NONE, 0},
        {"ff NULL", FS_NULL_FF, FOCUS_STACK_ERR_NULL, NONE, 0, NONE, 0},
        {"in, idx and ff NULL", FS_NULL_IN | FS_NULL_IDX | FS_NULL_FF, FOCUS_STACK_ERR_NULL, NONE, 0, NONE, 0},
        {"ff NULL and n = 0 (NULL is checked first)", FS_NULL_FF, FOCUS_STACK_ERR_NULL, N, 0, NONE, 0},
        {"n = 0", 0, FOCUS_STACK_ERR_DIM, N, 0, NONE, 0},
        {"n = -1", 0, FOCUS_STACK_ERR_DIM, N, -1, NONE, 0},
        {"z = 0", 0, FOCUS_STACK_ERR_DIM, Z, 0, NONE, 0},
        {"z = 256 (idx is uint8)", 0, FOCUS_STACK_ERR_DIM, Z, 256, NONE, 0},
        {"z = INT_MAX", 0, FOCUS_STACK_ERR_DIM, Z, INT_MAX, NONE, 0},
        {"y = 0", 0, FOCUS_STACK_ERR_DIM, Y, 0, NONE, 0},
        {"y = INT_MIN", 0, FOCUS_STACK_ERR_DIM, Y, INT_MIN, NONE, 0},
        {"x = 0", 0, FOCUS_STACK_ERR_DIM, X, 0, NONE, 0},
        {"x = -7", 0, FOCUS_STACK_ERR_DIM, X, -7, NONE, 0},
        {"z = 256 and ksize 4 (DIM first)", 0, FOCUS_STACK_ERR_DIM, Z, 256, K, 4},
        {"ksize 0", 0, FOCUS_STACK_ERR_KSIZE, K, 0, NONE, 0},
        {"ksize 1", 0, FOCUS_STACK_ERR_KSIZE, K, 1, NONE, 0},
        {"ksize 2", 0, FOCUS_STACK_ERR_KSIZE, K, 2, NONE, 0},
        {"ksize 4", 0, FOCUS_STACK_ERR_KSIZE, K, 4, NONE, 0},
        {"ksize 6", 0, FOCUS_STACK_ERR_KSIZE, K, 6, NONE, 0},
        {"ksize 9", 0, FOCUS_STACK_ERR_KSIZE, K, 9, NONE, 0},
        {"ksize -3", 0, FOCUS_STACK_ERR_KSIZE, K, -3, NONE, 0},
        {"ksize 4 and window 2 (KSIZE first)", 0, FOCUS_STACK_ERR_KSIZE, K, 4, W, 2},
        {"window -1", 0, FOCUS_STACK_ERR_WINDOW, W, -1, NONE, 0},
        {"window 2", 0, FOCUS_STACK_ERR_WINDOW, W, 2, NONE, 0},
        {"window 4", 0, FOCUS_STACK_ERR_WINDOW, W, 4, NONE, 0},
        {"window 7566 (even)", 0, FOCUS_STACK_ERR_WINDOW, W, 7566, NONE, 0},
        {"window 7569 (odd, above 7567)", 0, FOCUS_STACK_ERR_WINDOW, W, 7569, NONE, 0},
        {"window INT_MIN", 0, FOCUS_STACK_ERR_WINDOW, W, INT_MIN, NONE, 0},
        {"window 2 and measure 2 (WINDOW first)", 0, FOCUS_STACK_ERR_WINDOW, W, 2, M, 2},
        {"measure 2", 0, FOCUS_STACK_ERR_ENUM, M, 2, NONE, 0},
        {"measure -1", 0, FOCUS_STACK_ERR_ENUM, M, -1, NONE, 0},
        {"border 3", 0, FOCUS_STACK_ERR_ENUM, B, 3, NONE, 0},
        {"border -1", 0, FOCUS_STACK_ERR_ENUM, B, -1, NONE, 0},
        {"measure 2 and n*z*y*x*4 overflows (ENUM first)", 0, FOCUS_STACK_ERR_ENUM, M, 2, N, INT_MAX},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        focus_stack_params p = ok;
        const int fields[2] = {rows[i].field, rows[i].field2}, values[2] = {rows[i].value, rows[i].value2};
        for (int f = 0; f < 2; f++) {
            switch (fields[f]) {
            case N: p.n = values[f]; break;
            case Z: p.z = values[f]; break;
            case Y: p.y = values[f]; break;
            case X: p.x = values[f]; break;
            case K: p.ksize = values[f]; break;
            case W: p.window = values[f]; break;
            case M: p.measure = values[f]; break;
            case B: p.border = values[f]; break;
            default: break;
            }
        }
        if (rows[i].field2 == N) p.z = 255, p.y = INT_MAX, p.x = INT_MAX; /* the overflow half of the last row */
        fs_run_error(r, &c, p, rows[i].flags | FS_PASS_ALL, rows[i].code, rows[i].name);
    }
    /* Sizes whose focus volume (n*z*y*x*4 bytes) overflows int64 / size_t; the buffers are never read. */
    static const struct {
        const char *name;
        int n, z, y, x;
    } big[] = {
        {"n*z*y*x*4 = 2^63 exactly (n = 2^30, z = 128, y = 2^24, x = 1)", 1 << 30, 128, 1 << 24, 1},
        {"n = y = x = INT_MAX, z = 255", INT_MAX, 255, INT_MAX, INT_MAX},
        {"n = 2^30, z = 255, y = 2^30, x = 2^30", 1 << 30, 255, 1 << 30, 1 << 30},
        {"y = x = INT_MAX: 4*(2^31-1)^2 bytes > INT64_MAX", 1, 1, INT_MAX, INT_MAX},
    };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        focus_stack_params p = ok;
        p.n = big[i].n, p.z = big[i].z, p.y = big[i].y, p.x = big[i].x;
        fs_run_error(r, &c, p, FS_PASS_ALL, FOCUS_STACK_ERR_OVERFLOW, big[i].name);
    }
    /* Optional outputs may be NULL in a rejected call too. */
    focus_stack_params p = ok;
    p.ksize = 4;
    fs_run_error(r, &c, p, 0, FOCUS_STACK_ERR_KSIZE, "ksize 4 with best and focus NULL");
    /* and after all that, the same buffers still give a correct result */
    fs_result res;
    fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
    fs_result_free(&res);
    fs_case_free(&c);
}

void fs_case_limits_are_accepted(const fs_runner *r)
{
    fs_result res;
    fs_case c;
    fs_case_init(&c, 1, 255, 2, 3); /* z = 255: idx uses every value but the poison */
    fs_fill_random(&c, 65535, 0x255u);
    fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
    fs_result_free(&res);
    /* a stack whose slices get sharper with z, so that idx reaches 254 */
    for (int z = 0; z < 255; z++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 3; x++) *fs_in(&c, 0, z, y, x) = (uint16_t)((x + y) % 2 ? 0 : 200 * z);
    snprintf(c.desc, sizeof c.desc, "255 slices, checker contrast 200*z");
    fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
    cr_assert(res.idx[0] == 254, "%s: 255 slices with rising contrast: idx %u, want 254", r->name, res.idx[0]);
    fs_result_free(&res);
    fs_case_free(&c);

    fs_case_init(&c, 1, 2, 2, 3);
    fs_fill_random(&c, 65535, 0x7567u);
    static const int windows[3] = {1, 7565, 7567};
    for (int w = 0; w < 3; w++)
        for (int b = 0; b < 3; b++) {
            c.p = with(c.p, 7, FOCUS_STACK_LOG_ABS, borders[b], windows[w]);
            fs_run_ok(r, &c, FS_PASS_ALL, NULL, &res);
            fs_result_free(&res);
        }
    fs_case_free(&c);
}

void fs_case_determinism(const fs_runner *r)
{
    fs_case c;
    fs_case_init(&c, 2, 5, 33, 47);
    fs_fill_random(&c, 65535, 0xDE7u);
    c.p = with(c.p, 5, FOCUS_STACK_LOG_ABS, FOCUS_STACK_BORDER_REFLECT101, 3);
    fs_result a, b;
    fs_run_ok(r, &c, FS_PASS_ALL, NULL, &a);
    fs_run_ok(r, &c, FS_PASS_ALL, NULL, &b);
    cr_assert(fs_result_equal(&a, &b, FS_PASS_ALL), "%s: two runs of the same call differ", r->name);
    fs_result_free(&a);
    fs_result_free(&b);
    fs_case_free(&c);
}
