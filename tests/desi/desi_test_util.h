/* SPDX-License-Identifier: MIT
 * Small helpers of the gw_desi tests: every kept parameter of a PSF as a list, and a zeroed check.
 */
#ifndef DESI_TEST_UTIL_H
#define DESI_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex2d_psf.h"

#define DESI_MAX_PARAMS (4 + (EX2D_MAX_DEGREE + 1) * (EX2D_MAX_DEGREE + 1) + EX2D_TAIL_TERMS)

/* x, y, sigx, sigy, gh[i][j] (i <= gx, j <= gy, i major), tail[0..4]; names into names[][16]. */
static inline int desi_params(ex2d_psf *p, ex2d_psf_param **out, char (*names)[16])
{
    int n = 0;
    ex2d_psf_param *fixed[4] = {&p->x, &p->y, &p->sigx, &p->sigy};
    static const char *const fixed_names[4] = {"X", "Y", "GHSIGX", "GHSIGY"};
    static const char *const tails[EX2D_TAIL_TERMS] = {"TAILAMP", "TAILCORE", "TAILXSCA", "TAILYSCA", "TAILINDE"};
    for (int i = 0; i < 4; i++, n++) {
        out[n] = fixed[i];
        strcpy(names[n], fixed_names[i]);
    }
    for (int i = 0; i <= p->gx; i++)
        for (int j = 0; j <= p->gy; j++, n++) {
            out[n] = &p->gh[i][j];
            snprintf(names[n], 16, "GH-%d-%d", i & 15, j & 15); /* i, j <= EX2D_MAX_DEGREE */
        }
    for (int t = 0; t < EX2D_TAIL_TERMS; t++, n++) {
        out[n] = &p->tail[t];
        strcpy(names[n], tails[t]);
    }
    return n;
}

/* ex2d_psf_free's contract (free the storage, zero the struct), local so the tests need no reference library. */
static inline void desi_psf_free(ex2d_psf *p)
{
    free(p->storage);
    memset(p, 0, sizeof *p);
}

static inline int desi_psf_is_zeroed(const ex2d_psf *p)
{
    static const ex2d_psf zero;
    return memcmp(p, &zero, sizeof zero) == 0;
}

#endif /* DESI_TEST_UTIL_H */
