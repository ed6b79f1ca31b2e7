/* SPDX-License-Identifier: MIT
 * Test fixtures for focus_stack, shared by the CPU reference tests and the GPU tests.
 *
 * An fs_case is one input (parameters plus an [n][z][y][x] uint16 volume); an fs_result holds what one
 * call wrote (idx, ff, best, focus, each with FS_SLACK poisoned elements before and after it). An
 * fs_runner executes a case: the CPU test wraps focus_stack_ref, the GPU test wraps focus_stack_launch
 * (upload, poison, launch, download). The groups in focus_stack_cases.h only talk to a runner, so the
 * logic of every GPU test also runs, and is debugged, on the reference on machines without a GPU.
 *
 * Every call made through fs_run_ok()/fs_run_error() poisons all outputs first (idx 0xFF, which no Z <= 255
 * can produce; ff 0xA5A5; floats all-ones bytes, a NaN no score can be) and then checks, in this order:
 * the status; the invariants of docs/focus_stack.md, "Test groups", item 5 (idx < Z, ff == in[idx], best ==
 * focus[idx]); the outputs against the oracle below; for runners that ask for it, against focus_stack_ref
 * byte for byte; then the runner's witness. Each failed check prints its own words before the test stops,
 * so a planted fault is named by the guard meant to catch it even when an earlier guard also fires.
 *
 * The oracle is written apart from the reference: the 2-D Laplacian tables are typed in from
 * docs/focus_stack.md, "Taps" (not derived from s and d2), REFLECT101 is a walk that bounces between the
 * edges (not the modulo formula), and the window is a weighted sum over how often each image pixel is hit
 * (not separable).
 */
#ifndef FOCUS_STACK_FIXTURE_H
#define FOCUS_STACK_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "focus_stack.h"

#define FS_POISON_IDX 0xFFu           /* never a valid index: Z <= 255 */
#define FS_POISON_FF 0xA5A5u          /* memset byte 0xA5 */
#define FS_POISON_FLOAT 0xFFFFFFFFu   /* memset byte 0xFF: a NaN; every score is finite and >= 0 */
#define FS_SLACK 64                   /* poisoned elements on each side of every output array */

/* Flags of one call. */
enum {
    FS_PASS_BEST = 1u,  /* pass best (else NULL) */
    FS_PASS_FOCUS = 2u, /* pass focus (else NULL) */
    FS_PASS_ALL = 3u,
    FS_NULL_IN = 4u,    /* bad-input rows: pass NULL for in, idx or ff */
    FS_NULL_IDX = 8u,
    FS_NULL_FF = 16u,
};

typedef struct fs_case {
    focus_stack_params p;
    size_t pixels, voxels; /* n*y*x, n*z*y*x */
    uint16_t *in;
    char desc[200];        /* how the content was made (pattern, seeds): part of every failure message */
} fs_case;

typedef struct fs_result {
    size_t pixels, voxels;
    uint8_t *idx, *idx_alloc; /* idx = idx_alloc + FS_SLACK, and so on */
    uint16_t *ff, *ff_alloc;
    float *best, *best_alloc;
    float *focus, *focus_alloc;
} fs_result;

typedef struct fs_runner {
    const char *name;
    /* Runs one call with parameters p over the buffers of c (p differs from c->p only in bad-input rows),
     * passing best/focus per FS_PASS_* and NULL pointers per FS_NULL_*. On entry every element of res, slack
     * included, holds the poison; a device runner poisons its own buffers the same way before every call and
     * copies all of them back, slack included. Returns the call's status. A failure of the runner's own
     * machinery (a CUDA call) ends the test. */
    int (*run)(void *ctx, const fs_case *c, focus_stack_params p, unsigned flags, fs_result *res);
    /* Evidence that the last run executed where it should (NULL for the CPU): 0 or the number of violations,
     * explained in msg. launches 0 means "nothing may have been recorded". */
    int (*check_witness)(void *ctx, uint64_t launches, uint64_t items, char *msg, size_t msg_size);
    void *ctx;
    int compare_with_ref; /* also compare every result with focus_stack_ref byte for byte */
} fs_runner;

/* ---- random numbers: splitmix64; every seed is printed in the case description ---- */
typedef struct fs_rng {
    uint64_t state;
} fs_rng;
uint64_t fs_rng_next(fs_rng *rng);
uint32_t fs_rng_below(fs_rng *rng, uint32_t bound); /* uniform in [0, bound), bound >= 1 */

/* ---- cases ---- */
/* Sizes as given; ksize 3, LOG_ABS, ZERO, window 0; input all 0. */
void fs_case_init(fs_case *c, int n, int z, int y, int x);
void fs_case_free(fs_case *c);
void fs_case_copy(fs_case *dst, const fs_case *src);
static inline uint16_t *fs_in(const fs_case *c, int n, int z, int y, int x)
{
    return c->in + (((size_t)n * (size_t)c->p.z + (size_t)z) * (size_t)c->p.y + (size_t)y) * (size_t)c->p.x +
           (size_t)x;
}
/* Content: uniform in 0..max_value; each fill sets desc. */
void fs_fill_random(fs_case *c, unsigned max_value, uint64_t seed);
/* Names the parameters and content in buf, e.g. "2x5x23x31 k=5 LAP_ABS REFLECT101 w=3: random 0..65535 (seed 0x..)". */
const char *fs_describe(const fs_case *c, focus_stack_params p, char *buf, size_t size);
const char *fs_border_name(int border);
const char *fs_measure_name(int measure);

/* ---- results ---- */
void fs_result_init(fs_result *res, const fs_case *c);
void fs_result_free(fs_result *res);
void fs_result_poison(fs_result *res); /* every element of every array, slack included */
static inline uint32_t fs_bits(float f)
{
    union {
        float f;
        uint32_t u;
    } v = {f};
    return v.u;
}

/* ---- the oracle ---- */
/* The radius of each stage for these parameters: r_G (0 for LAP_ABS), r_K, r_w. */
int fs_radius_blur(focus_stack_params p);
int fs_radius_lap(focus_stack_params p);
int fs_radius_window(focus_stack_params p);
/* S = 4^(k-1) for LOG_ABS, 1 for LAP_ABS. */
int64_t fs_scale(focus_stack_params p);
/* The tables, as typed in from docs/focus_stack.md, "Taps": 1-D rows g, s, d2 and the 2-D K. Entries
 * beyond k are 0. */
void fs_spec_rows(int ksize, int g[7], int s[7], int d2[7]);
void fs_spec_laplacian(int ksize, int k2d[7][7]);
/* REFLECT101 / REPLICATE / ZERO of docs/focus_stack.md, "Borders", by walking: -1 for "outside" (ZERO). */
int fs_oracle_border(int64_t p, int n, int border);
/* V for every (n, z, y, x), int64 (malloc; free it). c->p must be valid. */
int64_t *fs_oracle_scores(const fs_case *c);
/* idx, ff, best, focus of docs/focus_stack.md, "Stages", steps 5-6, from the scores (every array of want is
 * written). */
void fs_oracle_outputs(const fs_case *c, const int64_t *v, fs_result *want);

/* ---- checks ---- */
/* Compares the arrays the call was given (pass), floats as bits; then every slack element of got and every
 * array it was not given must still hold the poison. Returns the number of problems; the first few with
 * (n, z, y, x) and both values, and "N of M ... still hold the poison" counts, go into msg. */
size_t fs_compare(const fs_case *c, const fs_result *got, const fs_result *want, unsigned pass, char *msg,
                  size_t msg_size);
/* The invariants of docs/focus_stack.md, "Test groups", item 5, independent of any reference: idx < Z,
 * ff == in[n][idx][y][x], and best == focus[idx] (bits) when both were given. */
size_t fs_check_invariants(const fs_case *c, const fs_result *got, unsigned pass, char *msg, size_t msg_size);

/* Runs c through r and asserts the full check (status OK, invariants, oracle unless c is above
 * FS_ORACLE_MAX_VOXELS, focus_stack_ref when r asks for it, witness: one launch, n*y*x items). res is
 * initialised here (free it with fs_result_free) and keeps the checked result. scores: the oracle's V for c
 * when the caller already has it, else NULL. */
#define FS_ORACLE_MAX_VOXELS 20000000u
void fs_run_ok(const fs_runner *r, const fs_case *c, unsigned pass, const int64_t *scores, fs_result *res);
/* Runs parameters p over c's buffers with flags, and expects status `code`: every output element, slack
 * included, still the poison, and the witness (no launch) when the runner has one. */
void fs_run_error(const fs_runner *r, const fs_case *c, focus_stack_params p, unsigned flags, int code,
                  const char *row);
/* Two results of the same case: the given arrays equal, byte for byte. */
int fs_result_equal(const fs_result *a, const fs_result *b, unsigned pass);

#endif /* FOCUS_STACK_FIXTURE_H */
