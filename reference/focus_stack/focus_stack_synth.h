/* SPDX-License-Identifier: MIT
 * A synthetic Z stack whose best-focus slice is known per pixel, for `gpuwitness check`, `doctor` and the
 * CLI tests (docs/focus_stack.md, "Test groups", item 6). Plain C, no CUDA.
 *
 * Each image is cut into 64x64 cells. A cell that lies fully inside the image is textured (3 in 4, drawn
 * from the seed; the first always is) or flat; partial cells at the right and bottom edges are flat. A
 * textured cell holds a centred 32x32 patch of a checkerboard of 2x2-pixel blocks (20000 / 45000) on the
 * texture mean 32500, in focus at a slice zf drawn from the seed: slice z is the patch blurred with a
 * Gaussian of sigma = |z - zf| px (taps to 3 sigma, normalised), evaluated over its own cell only, plus the
 * mean, rounded to uint16. Flat cells are 32500 in every slice.
 *
 * Known answer for focus_stack with margin m = r_G + r_K + r_w (focus_stack_synth_margin): idx == zf on every
 * patch pixel farther than m from the patch edge, and idx == 0 on every pixel whose m-neighbourhood touches
 * no textured cell (its neighbourhood is identical in all slices, so the first slice wins).
 */
#ifndef FOCUS_STACK_SYNTH_H
#define FOCUS_STACK_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FOCUS_STACK_SYNTH_CELL 64
#define FOCUS_STACK_SYNTH_PATCH 32

typedef struct focus_stack_synth {
    int n, z, y, x;
    int cells_y, cells_x; /* cells fully inside the image */
    int16_t *focus;       /* [n][cells_y][cells_x]: zf of a textured cell, -1 for a flat one */
} focus_stack_synth;

/* Fills in ([n][z][y][x], caller-allocated) and s. 0, or -1 (bad sizes or out of memory; s zeroed). */
int focus_stack_synth_make(focus_stack_synth *s, int n, int z, int y, int x, uint64_t seed, uint16_t *in);
void focus_stack_synth_free(focus_stack_synth *s);

/* r_G + r_K + r_w for these parameters (measure 0 = LOG_ABS). */
int focus_stack_synth_margin(int ksize, int measure, int window);

typedef struct focus_stack_synth_report {
    size_t textured_checked, textured_wrong; /* pixels where idx must be zf */
    size_t flat_checked, flat_wrong;         /* pixels where idx must be 0 */
    int first_n, first_y, first_x, first_got, first_want; /* the first wrong pixel, when there is one */
} focus_stack_synth_report;

/* Checks idx ([n][y][x]) against the known answer; returns the number of wrong pixels. */
size_t focus_stack_synth_verify(const focus_stack_synth *s, const uint8_t *idx, int margin, focus_stack_synth_report *r);

/* Uniform random uint16 values for the bit-exactness cases; deterministic for a seed. */
void focus_stack_random_u16(uint16_t *data, size_t count, uint64_t seed, unsigned max_value);

#ifdef __cplusplus
}
#endif

#endif /* FOCUS_STACK_SYNTH_H */
