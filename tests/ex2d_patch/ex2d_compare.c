/* SPDX-License-Identifier: MIT */
#include "ex2d_compare.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int ex2d_is_poison(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits == UINT64_MAX;
}

void ex2d_cmp_init(ex2d_cmp *c, const char *what, size_t row_len)
{
    memset(c, 0, sizeof *c);
    c->what = what;
    c->row_len = row_len;
}

static void print_index(const ex2d_cmp *c, size_t index)
{
    if (c->row_len)
        fprintf(stderr, "  %s [%zu][%zu]: ", c->what, index / c->row_len, index % c->row_len);
    else
        fprintf(stderr, "  %s [%zu]: ", c->what, index);
}

/* Counts a failure and prints it while fewer than EX2D_CMP_SHOW have been printed. */
static void fail(ex2d_cmp *c, size_t index, double got, double want, double bound, const char *why)
{
    c->failed++;
    if (ex2d_is_poison(got)) c->poisoned++;
    if (c->failed > EX2D_CMP_SHOW) return;
    print_index(c, index);
    if (ex2d_is_poison(got))
        fprintf(stderr, "still holds the poison (never written)\n");
    else if (why)
        fprintf(stderr, "gpu %.17g: %s\n", got, why);
    else
        fprintf(stderr, "gpu %.17g ref %.17g |diff| %.3g bound %.3g\n", got, want, fabs(got - want), bound);
}

int ex2d_cmp_bits(ex2d_cmp *c, size_t index, double got, double want)
{
    c->checked++;
    if (memcmp(&got, &want, sizeof got) == 0) return 1;
    fail(c, index, got, want, 0.0, NULL);
    return 0;
}

int ex2d_cmp_close(ex2d_cmp *c, size_t index, double got, double want, double atol, double rtol)
{
    c->checked++;
    const double bound = atol + rtol * fabs(want), diff = fabs(got - want);
    /* written as a negation: NaN in got or want fails */
    if (!(diff <= bound)) {
        fail(c, index, got, want, bound, NULL);
        return 0;
    }
    if (bound > 0.0 && diff / bound > c->worst) c->worst = diff / bound;
    return 1;
}

int ex2d_cmp_written(ex2d_cmp *c, size_t index, double got)
{
    c->checked++;
    if (!ex2d_is_poison(got)) return 1;
    fail(c, index, got, 0.0, 0.0, NULL);
    return 0;
}

int ex2d_cmp_untouched(ex2d_cmp *c, size_t index, double got)
{
    c->checked++;
    if (ex2d_is_poison(got)) return 1;
    fail(c, index, got, 0.0, 0.0, "written, but this call must leave it alone (the poison is gone)");
    return 0;
}

size_t ex2d_cmp_report(const ex2d_cmp *c)
{
    if (c->failed)
        fprintf(stderr, "%s: %zu of %zu elements fail (%zu still hold the poison)\n", c->what, c->failed, c->checked,
                c->poisoned);
    return c->failed;
}

double ex2d_max_abs(const double *v, size_t count)
{
    double max = 0.0;
    for (size_t i = 0; i < count; i++)
        if (fabs(v[i]) > max) max = fabs(v[i]);
    return max;
}
