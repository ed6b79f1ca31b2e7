/* SPDX-License-Identifier: MIT
 * The synthetic known-focus stack of focus_stack_synth.h. The blur is separable and works on the patch's
 * support only (the texture is zero-mean outside it), so a 512x512x17 stack takes well under a second.
 */
#include "focus_stack_synth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CELL = FOCUS_STACK_SYNTH_CELL, PATCH = FOCUS_STACK_SYNTH_PATCH, INSET = (CELL - PATCH) / 2 };
static const double mean_value = 32500.0, amplitude = 12500.0; /* blocks of 20000 and 45000 */

/* splitmix64: tiny, seedable and the same everywhere, so a seed names one problem on every machine. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t v = (*state += 0x9E3779B97F4A7C15ull);
    v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9ull;
    v = (v ^ (v >> 27)) * 0x94D049BB133111EBull;
    return v ^ (v >> 31);
}

void focus_stack_random_u16(uint16_t *data, size_t count, uint64_t seed, unsigned max_value)
{
    uint64_t state = seed ^ 0x243F6A8885A308D3ull;
    const uint64_t range = (uint64_t)max_value + 1;
    for (size_t i = 0; i < count; i++) data[i] = (uint16_t)(((next_random(&state) >> 32) * range) >> 32);
}

int focus_stack_synth_margin(int ksize, int measure, int window)
{
    const int r = ksize / 2;
    return (measure == 0 ? r : 0) + r + (window >= 3 ? window / 2 : 0);
}

/* The texture around the mean at patch coordinates (py, px): 2x2-pixel blocks of +-amplitude. */
static double texture(int py, int px)
{
    return ((py / 2 + px / 2) & 1) ? amplitude : -amplitude;
}

static uint16_t to_u16(double v)
{
    const double r = floor(v + 0.5);
    return (uint16_t)(r < 0 ? 0 : r > 65535 ? 65535 : r);
}

/* Writes slice values of one textured cell, blurred with sigma, into plane (the slice's y x x image). */
static void blur_cell(uint16_t *plane, int width, int cell_y, int cell_x, int sigma, double *taps, double *rows)
{
    uint16_t *origin = plane + (size_t)cell_y * width + cell_x;
    if (sigma == 0) {
        for (int py = 0; py < PATCH; py++)
            for (int px = 0; px < PATCH; px++)
                origin[(size_t)(py + INSET) * width + px + INSET] = to_u16(mean_value + texture(py, px));
        return;
    }
    const int radius = 3 * sigma;
    double sum = 0;
    for (int k = -radius; k <= radius; k++) sum += taps[k + radius] = exp(-(double)k * k / (2.0 * sigma * sigma));
    for (int k = 0; k <= 2 * radius; k++) taps[k] /= sum;
    /* rows[py][cx]: the patch rows blurred along x, over the whole cell width */
    for (int py = 0; py < PATCH; py++) {
        for (int cx = 0; cx < CELL; cx++) {
            double v = 0;
            for (int px = 0; px < PATCH; px++) {
                const int k = cx - (px + INSET);
                if (k >= -radius && k <= radius) v += taps[k + radius] * texture(py, px);
            }
            rows[py * CELL + cx] = v;
        }
    }
    for (int cy = 0; cy < CELL; cy++) {
        for (int cx = 0; cx < CELL; cx++) {
            double v = 0;
            for (int py = 0; py < PATCH; py++) {
                const int k = cy - (py + INSET);
                if (k >= -radius && k <= radius) v += taps[k + radius] * rows[py * CELL + cx];
            }
            origin[(size_t)cy * width + cx] = to_u16(mean_value + v);
        }
    }
}

int focus_stack_synth_make(focus_stack_synth *s, int n, int z, int y, int x, uint64_t seed, uint16_t *in)
{
    memset(s, 0, sizeof *s);
    if (n < 1 || z < 1 || z > 255 || y < 1 || x < 1 || !in) return -1;
    const int cells_y = y / CELL, cells_x = x / CELL;
    const size_t n_cells = (size_t)n * cells_y * cells_x;
    int16_t *focus = malloc((n_cells + 1) * sizeof *focus);
    double *taps = malloc((size_t)(2 * 3 * 255 + 1) * sizeof *taps);
    double *rows = malloc((size_t)PATCH * CELL * sizeof *rows);
    if (!focus || !taps || !rows) {
        free(focus);
        free(taps);
        free(rows);
        return -1;
    }
    uint64_t state = seed;
    for (size_t c = 0; c < n_cells; c++) {
        const uint64_t r = next_random(&state);
        const int textured = c % ((size_t)cells_y * cells_x) == 0 || (r & 3u) != 0;
        focus[c] = textured ? (int16_t)((r >> 8) % (uint64_t)z) : -1;
    }
    const size_t plane = (size_t)y * x;
    for (size_t i = 0; i < (size_t)n * z * plane; i++) in[i] = (uint16_t)mean_value;
    for (int b = 0; b < n; b++) {
        for (int cy = 0; cy < cells_y; cy++) {
            for (int cx = 0; cx < cells_x; cx++) {
                const int zf = focus[((size_t)b * cells_y + cy) * cells_x + cx];
                if (zf < 0) continue;
                for (int k = 0; k < z; k++)
                    blur_cell(in + ((size_t)b * z + k) * plane, x, cy * CELL, cx * CELL, abs(k - zf), taps, rows);
            }
        }
    }
    free(taps);
    free(rows);
    s->n = n;
    s->z = z;
    s->y = y;
    s->x = x;
    s->cells_y = cells_y;
    s->cells_x = cells_x;
    s->focus = focus;
    return 0;
}

void focus_stack_synth_free(focus_stack_synth *s)
{
    free(s->focus);
    memset(s, 0, sizeof *s);
}

static int cell_focus(const focus_stack_synth *s, int b, int cy, int cx)
{
    if (cy < 0 || cx < 0 || cy >= s->cells_y || cx >= s->cells_x) return -1;
    return s->focus[((size_t)b * s->cells_y + cy) * s->cells_x + cx];
}

/* 1 when the box of radius m around (py, px) touches a textured cell. */
static int near_texture(const focus_stack_synth *s, int b, int py, int px, int m)
{
    const int y0 = (py - m < 0 ? 0 : py - m) / CELL, y1 = (py + m) / CELL;
    const int x0 = (px - m < 0 ? 0 : px - m) / CELL, x1 = (px + m) / CELL;
    for (int cy = y0; cy <= y1; cy++)
        for (int cx = x0; cx <= x1; cx++)
            if (cell_focus(s, b, cy, cx) >= 0) return 1;
    return 0;
}

size_t focus_stack_synth_verify(const focus_stack_synth *s, const uint8_t *idx, int margin, focus_stack_synth_report *r)
{
    memset(r, 0, sizeof *r);
    size_t wrong = 0;
    for (int b = 0; b < s->n; b++) {
        for (int py = 0; py < s->y; py++) {
            for (int px = 0; px < s->x; px++) {
                const int cy = py / CELL, cx = px / CELL;
                const int ly = py - cy * CELL - INSET, lx = px - cx * CELL - INSET; /* patch coordinates */
                const int zf = cell_focus(s, b, cy, cx);
                int want, textured = 0;
                if (zf >= 0 && ly >= margin && ly < PATCH - margin && lx >= margin && lx < PATCH - margin) {
                    want = zf;
                    textured = 1;
                    r->textured_checked++;
                } else if (!near_texture(s, b, py, px, margin)) {
                    want = 0;
                    r->flat_checked++;
                } else {
                    continue; /* a blur tail or a patch edge: no simple known answer */
                }
                const int got = idx[((size_t)b * s->y + py) * s->x + px];
                if (got == want) continue;
                if (wrong++ == 0) {
                    r->first_n = b;
                    r->first_y = py;
                    r->first_x = px;
                    r->first_got = got;
                    r->first_want = want;
                }
                if (textured) r->textured_wrong++;
                else r->flat_wrong++;
            }
        }
    }
    return wrong;
}
