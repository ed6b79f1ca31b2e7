/* SPDX-License-Identifier: MIT
 * ex2d_patch reference, K4-K6 (docs/ex2d_patch.md, "The model and the stages K1-K7"), textbook loops in FP64:
 *   K4  iCov = L L^T (left-looking Cholesky, L in the lower triangle), L z = y, L^T xflux = z.
 *   K5  X_b = L^-1 E_b by forward substitution (X_b is zero above row b*m), C_bb = X_b^T X_b, for each core
 *       spectrum b: the diagonal blocks of iCov^-1 = L^-T L^-1 without forming the inverse.
 *   K6  Q_b = C_bb^(-1/2) = V diag(u^-1/2) V^T by cyclic Jacobi (conventions in ex2d_patch_ref.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ex2d_patch_ref.h"
#include "ex2d_ref_internal.h"

int ex2d_ref_patch_cholesky(const ex2d_params *p, const ex2d_patch_desc *d, const ex2d_slot *s)
{
    const int n = d->nspecpad * p->m;
    const size_t ld = s->ld;
    double *l = s->icov;
    for (int j = 0; j < n; j++) {
        double *lj = l + (size_t)j * ld;
        double diag = lj[j];
        for (int k = 0; k < j; k++) diag -= lj[k] * lj[k];
        if (!(diag > 0.0) || !isfinite(diag)) return EX2D_PATCH_NOT_POSDEF;
        const double pivot = sqrt(diag);
        lj[j] = pivot;
        for (int i = j + 1; i < n; i++) {
            double *li = l + (size_t)i * ld;
            double v = li[j];
            for (int k = 0; k < j; k++) v -= li[k] * lj[k];
            li[j] = v / pivot;
        }
    }
    /* L z = y (z kept in xflux), then L^T xflux = z in place. */
    for (int i = 0; i < n; i++) {
        const double *li = l + (size_t)i * ld;
        double v = s->y[i];
        for (int k = 0; k < i; k++) v -= li[k] * s->xflux[k];
        s->xflux[i] = v / li[i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double v = s->xflux[i];
        for (int k = i + 1; k < n; k++) v -= l[(size_t)k * ld + i] * s->xflux[k];
        s->xflux[i] = v / l[(size_t)i * ld + i];
    }
    return EX2D_PATCH_OK;
}

void ex2d_ref_patch_cblocks(const ex2d_params *p, const ex2d_patch_desc *d, const ex2d_slot *s)
{
    const int n = d->nspecpad * p->m, m = p->m;
    const size_t ld = s->ld;
    const double *l = s->icov;
    for (int c = 0; c < d->ncore; c++) {
        /* X_b rows b*m..n-1, row-major, m columns, in block c of the workspace's K5 scratch */
        double *x = s->xscr + (size_t)c * s->ld * m;
        const int r0 = (d->core_first + c) * m, rows = n - r0;
        /* Row i of L X = E_b: X[i][j] = (delta(i, r0+j) - sum_{k<i} L[i][k] X[k][j]) / L[i][i]; rows below r0
         * of X are zero, so the sum starts at r0. Row-oriented: each element still sums k upwards. */
        for (int i = 0; i < rows; i++) {
            const double *li = l + (size_t)(r0 + i) * ld + r0;
            double *xi = x + (size_t)i * m;
            for (int j = 0; j < m; j++) xi[j] = (i == j) ? 1.0 : 0.0;
            for (int k = 0; k < i; k++) {
                const double lik = li[k];
                const double *xk = x + (size_t)k * m;
                for (int j = 0; j < m; j++) xi[j] -= lik * xk[j];
            }
            for (int j = 0; j < m; j++) xi[j] /= li[i];
        }
        double *cb = s->cblk + (size_t)c * m * m;
        for (int a = 0; a < m; a++)
            for (int b = a; b < m; b++) {
                double acc = 0.0;
                for (int i = 0; i < rows; i++) acc += x[(size_t)i * m + a] * x[(size_t)i * m + b];
                cb[a * m + b] = acc;
                cb[b * m + a] = acc;
            }
    }
}

/* One Jacobi rotation in the (p, q) plane that zeroes a[p][q] (Golub & Van Loan, sym.schur2). */
static void rotate(double *a, double *v, int m, int p, int q)
{
    const double apq = a[p * m + q];
    const double theta = (a[q * m + q] - a[p * m + p]) / (2.0 * apq);
    const double t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
    const double c = 1.0 / sqrt(t * t + 1.0), sn = t * c;
    for (int k = 0; k < m; k++) { /* columns p, q: A J */
        const double akp = a[k * m + p], akq = a[k * m + q];
        a[k * m + p] = c * akp - sn * akq;
        a[k * m + q] = sn * akp + c * akq;
    }
    for (int k = 0; k < m; k++) { /* rows p, q: J^T (A J) */
        const double apk = a[p * m + k], aqk = a[q * m + k];
        a[p * m + k] = c * apk - sn * aqk;
        a[q * m + k] = sn * apk + c * aqk;
    }
    a[p * m + q] = 0.0; /* zero by construction; the rounding residue would only cost a sweep */
    a[q * m + p] = 0.0;
    for (int k = 0; k < m; k++) {
        const double vkp = v[k * m + p], vkq = v[k * m + q];
        v[k * m + p] = c * vkp - sn * vkq;
        v[k * m + q] = sn * vkp + c * vkq;
    }
}

static int off_diagonal_small(const double *a, int m, int p, int q, double tol)
{
    return fabs(a[p * m + q]) <= tol * sqrt(a[p * m + p] * a[q * m + q]);
}

/* Diagonalises a (m x m, symmetric) into a's diagonal and V; returns the sweeps run, or -1 when not
 * converged within max_sweeps. */
static int jacobi(double *a, double *v, int m, double tol, int max_sweeps)
{
    for (int i = 0; i < m * m; i++) v[i] = 0.0;
    for (int i = 0; i < m; i++) v[i * m + i] = 1.0;
    for (int sweep = 1; sweep <= max_sweeps; sweep++) {
        for (int p = 0; p < m - 1; p++)
            for (int q = p + 1; q < m; q++)
                if (!off_diagonal_small(a, m, p, q, tol)) rotate(a, v, m, p, q);
        int converged = 1;
        for (int p = 0; p < m - 1 && converged; p++)
            for (int q = p + 1; q < m && converged; q++) converged = off_diagonal_small(a, m, p, q, tol);
        if (converged) return sweep;
    }
    return -1;
}

int ex2d_ref_patch_jacobi(const ex2d_params *p, const ex2d_patch_desc *d, const ex2d_slot *s,
                          ex2d_patch_info *info)
{
    const int m = p->m;
    double *a = malloc(2 * (size_t)m * m * sizeof(double) + (size_t)m * sizeof(double));
    if (!a) return EX2D_REF_ERR_ALLOC;
    double *v = a + (size_t)m * m, *scale = v + (size_t)m * m;
    int clipped = 0, sweeps_min = 0, sweeps_max = 0, status = EX2D_PATCH_OK;
    for (int c = 0; c < d->ncore && status == EX2D_PATCH_OK; c++) {
        memcpy(a, s->cblk + (size_t)c * m * m, (size_t)m * m * sizeof(double));
        const int sweeps = jacobi(a, v, m, p->jacobi_tol, p->jacobi_max_sweeps);
        if (sweeps < 0) {
            status = EX2D_PATCH_NOT_CONVERGED;
            sweeps_max = p->jacobi_max_sweeps;
            if (sweeps_min == 0) sweeps_min = p->jacobi_max_sweeps;
            break;
        }
        sweeps_min = (c == 0 || sweeps < sweeps_min) ? sweeps : sweeps_min;
        sweeps_max = sweeps > sweeps_max ? sweeps : sweeps_max;
        double u_max = a[0];
        for (int i = 1; i < m; i++)
            if (a[i * m + i] > u_max) u_max = a[i * m + i];
        const double floor_u = 1e-14 * u_max; /* gpu_specter clipped_eigh */
        for (int i = 0; i < m; i++) {
            double u = a[i * m + i];
            if (u < floor_u) {
                u = floor_u;
                clipped++;
            }
            scale[i] = 1.0 / sqrt(u);
        }
        double *q = s->qblk + (size_t)c * m * m;
        for (int i = 0; i < m; i++)
            for (int j = i; j < m; j++) {
                double acc = 0.0;
                for (int k = 0; k < m; k++) acc += (v[i * m + k] * scale[k]) * v[j * m + k];
                q[i * m + j] = acc;
                q[j * m + i] = acc;
            }
    }
    free(a);
    info->status = status;
    info->clipped = clipped;
    info->sweeps_min = sweeps_min;
    info->sweeps_max = sweeps_max;
    return EX2D_OK;
}
