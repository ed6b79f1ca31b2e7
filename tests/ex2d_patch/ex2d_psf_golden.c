/* SPDX-License-Identifier: MIT
 * specter's golden PSF evaluation, loaded and compared (contract in ex2d_psf_golden.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "ex2d_psf_golden.h"
#include "gw_desi.h"
#include "gw_test_util.h"

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(v), "psf_golden.jsonl: a line lacks the number \"%s\"", key);
    return v->valuedouble;
}

static void *grow(void *p, int count, size_t size)
{
    void *q = realloc(p, (size_t)(count + 1) * size);
    cr_assert(q, "out of memory");
    return q;
}

static void parse_line(ex2d_golden *g, const char *line)
{
    cJSON *o = cJSON_Parse(line);
    cr_assert(o, "psf_golden.jsonl: a line is not JSON");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
    cr_assert(cJSON_IsString(kind), "psf_golden.jsonl: a line has no \"kind\"");
    if (strcmp(kind->valuestring, "trace") == 0) {
        g->trace = grow(g->trace, g->ntrace, 4 * sizeof(double));
        double *t = g->trace + 4 * g->ntrace++;
        t[0] = num(o, "fibre"), t[1] = num(o, "wave"), t[2] = num(o, "x"), t[3] = num(o, "y");
    } else {
        cr_assert(strcmp(kind->valuestring, "spot") == 0, "psf_golden.jsonl: unknown kind %s", kind->valuestring);
        g->spots = grow(g->spots, g->nspot, sizeof(ex2d_golden_spot));
        ex2d_golden_spot *s = &g->spots[g->nspot++];
        s->fibre = (int)num(o, "fibre"), s->wave = num(o, "wave"), s->x = num(o, "x"), s->y = num(o, "y");
        s->x0 = (int)num(o, "x0"), s->y0 = (int)num(o, "y0"), s->ny = (int)num(o, "ny"), s->nx = (int)num(o, "nx");
        const cJSON *pix = cJSON_GetObjectItemCaseSensitive(o, "pix");
        cr_assert(cJSON_IsArray(pix) && cJSON_GetArraySize(pix) == s->ny * s->nx, "psf_golden.jsonl: pix size");
        s->pix = malloc((size_t)s->ny * s->nx * sizeof(double));
        cr_assert(s->pix);
        int i = 0;
        for (const cJSON *v = pix->child; v; v = v->next) s->pix[i++] = v->valuedouble;
    }
    cJSON_Delete(o);
}

/* One table bin per golden spot, evaluated by ex2d_psf_entry_at: what ex2d_frame_make puts in a frame's table. */
static void build_table(ex2d_golden *g)
{
    const ex2d_psf *psf = &g->psf;
    const int n = g->nspot, ncoef = (psf->gx + 1) * (psf->gy + 1);
    g->sigx = calloc((size_t)n, sizeof(double)), g->sigy = calloc((size_t)n, sizeof(double));
    g->dx = calloc((size_t)n, sizeof(double)), g->dy = calloc((size_t)n, sizeof(double));
    g->c = calloc((size_t)n * ncoef, sizeof(double)), g->tail = calloc((size_t)n * EX2D_TAIL_TERMS, sizeof(double));
    g->xc = calloc((size_t)n, sizeof(int32_t)), g->yc = calloc((size_t)n, sizeof(int32_t));
    cr_assert(g->sigx && g->sigy && g->dx && g->dy && g->c && g->tail && g->xc && g->yc, "out of memory");
    for (int e = 0; e < n; e++) {
        ex2d_psf_entry pe;
        ex2d_psf_entry_at(psf, g->spots[e].fibre, g->spots[e].wave, &pe);
        g->sigx[e] = pe.sigx, g->sigy[e] = pe.sigy, g->dx[e] = pe.dx, g->dy[e] = pe.dy;
        g->xc[e] = pe.xc, g->yc[e] = pe.yc;
        memcpy(g->c + (size_t)e * ncoef, pe.c, (size_t)ncoef * sizeof(double));
        memcpy(g->tail + (size_t)e * EX2D_TAIL_TERMS, pe.tail, sizeof pe.tail);
    }
    /* Sizes K1 needs; the frame-only ones (image, outputs, patches) are 1 because K1 never reads them. */
    g->params = (ex2d_params){.nspec_tab = 1, .nwave_tab = n, .gx = psf->gx, .gy = psf->gy, .hsizex = psf->hsizex,
                              .hsizey = psf->hsizey, .npix_x = psf->npix_x, .npix_y = psf->npix_y, .nspec_out = 1,
                              .nwave_out = 1, .m = 2 * psf->hsizey + 1, .wavepad = 0, .max_nspecpad = 1,
                              .max_ncore = 1, .max_box_pixels = 1};
    ex2d_params_set_numerics_default(&g->params);
    g->inputs = (ex2d_inputs){.psf_sigx = g->sigx, .psf_sigy = g->sigy, .psf_dx = g->dx, .psf_dy = g->dy,
                              .psf_c = g->c, .psf_xc = g->xc, .psf_yc = g->yc, .psf_tail = g->tail};
}

void ex2d_golden_load(ex2d_golden *g)
{
    memset(g, 0, sizeof(*g));
    char path[4096], err[512];
    gw_data_path("desi/psf-gausshermite.fits", "the DESI test PSF (GAUSS-HERMITE, PSFVER 2)", path, sizeof path);
    cr_assert(gw_desi_psf_read(path, &g->psf, err, sizeof err) == 0, "%s", err);
    gw_data_path("desi/psf_golden.jsonl", "specter's evaluation of the DESI test PSF", path, sizeof path);
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot open %s", path);
    static char line[1 << 16];
    while (fgets(line, sizeof line, f)) {
        cr_assert(strchr(line, '\n'), "psf_golden.jsonl: a line longer than %zu bytes", sizeof line);
        parse_line(g, line);
    }
    fclose(f);
    cr_assert(g->ntrace == 25 * 25 && g->nspot == 25 * 6, "psf_golden.jsonl: %d trace points and %d spots, expected 625 and 150",
              g->ntrace, g->nspot);
    build_table(g);
}

void ex2d_golden_free(ex2d_golden *g)
{
    for (int i = 0; i < g->nspot; i++) free(g->spots[i].pix);
    free(g->spots), free(g->trace);
    free(g->sigx), free(g->sigy), free(g->dx), free(g->dy), free(g->c), free(g->tail), free(g->xc), free(g->yc);
    ex2d_psf_free(&g->psf);
    memset(g, 0, sizeof(*g));
}

void ex2d_golden_check_trace(const ex2d_golden *g, double *max_diff)
{
    double worst = 0.0;
    for (int i = 0; i < g->ntrace; i++) {
        const double *t = g->trace + 4 * i;
        const int f = (int)t[0];
        const double dx = fabs(ex2d_psf_eval(&g->psf.x, f, t[1]) - t[2]);
        const double dy = fabs(ex2d_psf_eval(&g->psf.y, f, t[1]) - t[3]);
        cr_expect(dx <= EX2D_GOLDEN_TRACE_TOL && dy <= EX2D_GOLDEN_TRACE_TOL,
                  "trace of fibre %d at %.10f A: |dx| %.3g, |dy| %.3g px (tolerance %.0e)", f, t[1], dx, dy,
                  EX2D_GOLDEN_TRACE_TOL);
        worst = fmax(worst, fmax(dx, dy));
    }
    *max_diff = worst;
}

void ex2d_golden_check_spots(const ex2d_golden *g, const double *spots, const char *who, double *max_diff)
{
    const int nx = 2 * g->psf.hsizex + 1, ny = 2 * g->psf.hsizey + 1;
    double worst = 0.0;
    int bad = 0;
    for (int e = 0; e < g->nspot; e++) {
        const ex2d_golden_spot *s = &g->spots[e];
        cr_assert(s->nx == nx && s->ny == ny, "spot %d: specter's box is %d x %d, the PSF's %d x %d", e, s->ny, s->nx,
                  ny, nx);
        cr_expect(g->xc[e] == s->x0 && g->yc[e] == s->y0,
                  "spot of fibre %d at %.10f A: corner (%d, %d), specter's (%d, %d)", s->fibre, s->wave, g->xc[e],
                  g->yc[e], s->x0, s->y0);
        for (int q = 0; q < nx * ny; q++) {
            const double d = fabs(spots[(size_t)e * nx * ny + q] - s->pix[q]);
            if (!(d <= EX2D_GOLDEN_SPOT_TOL) && bad++ < 5)
                cr_expect(0, "%s: spot of fibre %d at %.10f A, pixel (%d, %d): %.17g, specter %.17g (|d| %.3g)", who,
                          s->fibre, s->wave, q / nx, q % nx, spots[(size_t)e * nx * ny + q], s->pix[q], d);
            worst = fmax(worst, d);
        }
    }
    cr_expect(bad == 0, "%s: %d spot pixels beyond %.0e of specter's (largest %.3g)", who, bad, EX2D_GOLDEN_SPOT_TOL,
              worst);
    *max_diff = worst;
}
