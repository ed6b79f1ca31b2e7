/* SPDX-License-Identifier: MIT
 * Element-wise comparison for the ex2d_patch GPU tests (docs/ex2d_patch.md, "Numerics and tolerances"): a result
 * passes when |got - want| <= atol + rtol |want|, or when its bits equal want's (K3). NaN never passes, and an
 * element that still holds the poison (all-ones bytes, written before every GPU call) is reported as such, in words
 * that name the guard ("still holds the poison"). The first EX2D_CMP_SHOW failures are printed with their index and
 * both values; all of them are counted. Plain C, no CUDA.
 *
 *   ex2d_cmp c;
 *   ex2d_cmp_init(&c, "K3 iCov, patch 0", n);          // indices print as [row][col]
 *   for (...) ex2d_cmp_bits(&c, i, got[i], want[i]);
 *   cr_expect(ex2d_cmp_report(&c) == 0, ...);          // prints "K3 iCov, patch 0: 3 of 268324 differ"
 */
#ifndef EX2D_COMPARE_H
#define EX2D_COMPARE_H

#include <stddef.h>

#define EX2D_CMP_SHOW 8

typedef struct ex2d_cmp {
    const char *what;
    size_t row_len;   /* > 0: print index i as [i / row_len][i % row_len] */
    size_t checked;   /* elements compared */
    size_t failed;    /* of which outside the tolerance (poison included) */
    size_t poisoned;  /* of which still holding the poison */
    double worst;     /* largest |got - want| / bound over the elements checked (0 for bit comparisons) */
} ex2d_cmp;

/* The poison: every byte 0xFF (a NaN no stage can produce). */
int ex2d_is_poison(double v);

void ex2d_cmp_init(ex2d_cmp *c, const char *what, size_t row_len);

/* One element each; return 1 when it passes. */
int ex2d_cmp_bits(ex2d_cmp *c, size_t index, double got, double want);
int ex2d_cmp_close(ex2d_cmp *c, size_t index, double got, double want, double atol, double rtol);

/* got must be anything but the poison (an element the stage must write; no reference value). */
int ex2d_cmp_written(ex2d_cmp *c, size_t index, double got);

/* got must still be the poison (an element the stage must not write). */
int ex2d_cmp_untouched(ex2d_cmp *c, size_t index, double got);

/* Prints one summary line to stderr when anything failed; returns the number of failures. */
size_t ex2d_cmp_report(const ex2d_cmp *c);

/* Largest |v[i]| of count values (NaN ignored). */
double ex2d_max_abs(const double *v, size_t count);

#endif /* EX2D_COMPARE_H */
