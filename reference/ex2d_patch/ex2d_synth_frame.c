/* SPDX-License-Identifier: MIT
 * ex2d_synth, part 2: the frame (contract in ex2d_synth.h; formulas in docs/ex2d_patch.md,
 * "The synthetic frame").
 * Order of work: patch layout (fibre ranges) -> PSF table (synthetic, or from a real PSF) with CCD corners -> patch boxes -> image window ->
 * corners and boxes shifted into the window (integer shifts: exact) -> params -> spots (K1 of the reference)
 * -> truth, model, ivar, noise, masks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ex2d_patch_ref.h"
#include "ex2d_synth.h"

/* The spectra of one subbundle's patches: core fibres [core_lo, core_hi), padding [pad_lo, pad_hi]. */
typedef struct fibre_group {
    int core_lo, core_hi, pad_lo, pad_hi;
} fibre_group;

/* The group that starts at fibre (inside the frame), and the fibre after it. One neighbour of padding on each
 * side unless that side is a bundle edge (gpu_specter get_spec_padding). */
static fibre_group group_at(const ex2d_frame_config *cfg, int fibre)
{
    const int bundle_lo = fibre / cfg->bundle_size * cfg->bundle_size;
    int bundle_hi = bundle_lo + cfg->bundle_size;
    if (bundle_hi > cfg->nfibre_camera) bundle_hi = cfg->nfibre_camera;
    int sub_hi = bundle_lo + ((fibre - bundle_lo) / cfg->subbundle_size + 1) * cfg->subbundle_size;
    if (sub_hi > bundle_hi) sub_hi = bundle_hi;
    const int frame_hi = cfg->fibre_first + cfg->nfibre;
    fibre_group g = {fibre, sub_hi < frame_hi ? sub_hi : frame_hi, 0, 0};
    g.pad_lo = g.core_lo > bundle_lo ? g.core_lo - 1 : g.core_lo;
    g.pad_hi = g.core_hi < bundle_hi ? g.core_hi : g.core_hi - 1;
    return g;
}

static int wave_steps(const ex2d_frame_config *cfg) { return (cfg->nwave + cfg->nwavestep - 1) / cfg->nwavestep; }

int ex2d_synth_count_patches(const ex2d_frame_config *cfg)
{
    if (!cfg || cfg->nfibre < 1 || cfg->nwave < 1 || cfg->bundle_size < 1 || cfg->subbundle_size < 1 ||
        cfg->nwavestep < 1)
        return -1;
    int groups = 0;
    for (int f = cfg->fibre_first; f < cfg->fibre_first + cfg->nfibre; f = group_at(cfg, f).core_hi) groups++;
    return groups * wave_steps(cfg);
}

/* sigma0 + sigma1*t must stay > 0 over the table's t range (it is linear in t, so both ends decide). */
static int width_positive(double sigma0, double sigma1, double t_lo, double t_hi)
{
    return sigma0 + sigma1 * t_lo > 0.0 && sigma0 + sigma1 * t_hi > 0.0;
}

const char *ex2d_frame_config_check(const ex2d_frame_config *cfg)
{
    if (!cfg) return "cfg is NULL";
    if (cfg->nfibre_camera < 1) return "nfibre_camera must be >= 1";
    if (cfg->nwave_camera < 1) return "nwave_camera must be >= 1";
    if (cfg->nfibre < 1 || cfg->fibre_first < 0 || cfg->fibre_first > cfg->nfibre_camera - cfg->nfibre)
        return "fibres: nfibre >= 1 and 0 <= fibre_first <= nfibre_camera - nfibre";
    if (cfg->nwave < 1 || cfg->wave_first < 0 || cfg->wave_first > cfg->nwave_camera - cfg->nwave)
        return "wavelengths: nwave >= 1 and 0 <= wave_first <= nwave_camera - nwave";
    if (!(cfg->wave_step > 0.0 && cfg->wave_step < 1e6) || !(cfg->wave_span > 0.0 && cfg->wave_span < 1e9) ||
        !isfinite(cfg->wave_min))
        return "wave_min must be finite, wave_step and wave_span > 0 and finite";
    if (cfg->ccd_npix_x < 1 || cfg->ccd_npix_y < 1) return "ccd_npix_x and ccd_npix_y must be >= 1";
    if (!isfinite(cfg->trace_x0) || !isfinite(cfg->fibre_pitch) || !isfinite(cfg->bundle_gap) ||
        !isfinite(cfg->trace_y0) || !isfinite(cfg->y_per_angstrom))
        return "trace_x0, fibre_pitch, bundle_gap, trace_y0 and y_per_angstrom must be finite";
    if (cfg->hsizex < 0 || cfg->hsizex > EX2D_MAX_HALF_SIZE || cfg->hsizey < 0 || cfg->hsizey > EX2D_MAX_HALF_SIZE)
        return "hsizex and hsizey must be 0..15 (EX2D_MAX_HALF_SIZE)";
    if (cfg->gx < 0 || cfg->gx > EX2D_MAX_DEGREE || cfg->gy < 0 || cfg->gy > EX2D_MAX_DEGREE)
        return "gx and gy must be 0..8 (EX2D_MAX_DEGREE)";
    if (cfg->bundle_size < 1 || cfg->subbundle_size < 1 || cfg->subbundle_size > cfg->bundle_size)
        return "bundle_size >= 1 and 1 <= subbundle_size <= bundle_size";
    /* wavepad > EX2D_MAX_M first: 2*wavepad must not overflow */
    if (cfg->nwavestep < 1 || cfg->wavepad < 0 || cfg->wavepad > EX2D_MAX_M ||
        cfg->nwavestep > EX2D_MAX_M - 2 * cfg->wavepad)
        return "nwavestep >= 1, wavepad >= 0 and m = nwavestep + 2*wavepad <= 112 (EX2D_MAX_M)";
    if (cfg->nwavestep + 2 * cfg->wavepad <= cfg->hsizey)
        return "m = nwavestep + 2*wavepad must exceed hsizey (the Rdiags half width ndiag = hsizey)";
    if (cfg->psf) {
        const ex2d_psf *psf = cfg->psf;
        const char *why = ex2d_psf_check(psf);
        if (why) return why;
        if (cfg->nfibre_camera != psf->nfibre || cfg->ccd_npix_x != psf->npix_x || cfg->ccd_npix_y != psf->npix_y ||
            cfg->hsizex != psf->hsizex || cfg->hsizey != psf->hsizey || cfg->gx != psf->gx || cfg->gy != psf->gy)
            return "psf: the camera (fibres, CCD, spot size, degrees) must be the PSF's (ex2d_frame_config_use_psf)";
        double lo, hi;
        ex2d_psf_wave_range(psf, &lo, &hi);
        const double w_lo = cfg->wave_min + cfg->wave_step * (cfg->wave_first - cfg->wavepad);
        const double w_hi =
            cfg->wave_min + cfg->wave_step * (cfg->wave_first + cfg->nwave + cfg->wavepad + cfg->nwavestep - 1);
        if (!(w_lo >= lo && w_hi <= hi))
            return "wavelengths: every table wavelength (wavepad bins below the first, wavepad + nwavestep above the "
                   "last) must lie inside the PSF's domain";
    } else {
        const double t_lo = 2.0 * cfg->wave_step * (cfg->wave_first - cfg->wavepad) / cfg->wave_span - 1.0;
        const double t_hi =
            2.0 * cfg->wave_step * (cfg->wave_first + cfg->nwave + cfg->wavepad + cfg->nwavestep) / cfg->wave_span -
            1.0;
        if (!width_positive(cfg->sigx0, cfg->sigx1, t_lo, t_hi) || !width_positive(cfg->sigy0, cfg->sigy1, t_lo, t_hi))
            return "sigx0 + sigx1*t and sigy0 + sigy1*t must be > 0 over the table's wavelengths";
    }
    if (!isfinite(cfg->line_amp) || cfg->line_period < 0 ||
        (cfg->line_period > 0 && (cfg->line_phase < 0 || cfg->line_phase >= cfg->line_period)))
        return "line_amp finite, line_period >= 0, 0 <= line_phase < line_period";
    if (cfg->image_kind != EX2D_IMAGE_FRAME && cfg->image_kind != EX2D_IMAGE_PATCH)
        return "image_kind must be EX2D_IMAGE_FRAME or EX2D_IMAGE_PATCH";
    if (cfg->ivar_kind != EX2D_IVAR_MODEL && cfg->ivar_kind != EX2D_IVAR_ONE)
        return "ivar_kind must be EX2D_IVAR_MODEL or EX2D_IVAR_ONE";
    if ((cfg->add_noise != 0 && cfg->add_noise != 1) || (cfg->crop_to_boxes != 0 && cfg->crop_to_boxes != 1))
        return "add_noise and crop_to_boxes must be 0 or 1";
    if (!(cfg->read_noise > 0.0 && cfg->read_noise < 1e100))
        return "read_noise must be > 0 and finite (the variance must stay positive where no light falls)";
    if (cfg->nmasked_cols < 0 || cfg->nmasked_cols > EX2D_SYNTH_MAX_MASKED_COLS)
        return "nmasked_cols must be 0..8 (EX2D_SYNTH_MAX_MASKED_COLS)";
    if (cfg->image_kind == EX2D_IMAGE_PATCH && ex2d_synth_count_patches(cfg) != 1)
        return "image_kind EX2D_IMAGE_PATCH needs a frame of exactly one patch";
    return NULL;
}

void ex2d_frame_config_use_psf(ex2d_frame_config *cfg, const ex2d_psf *psf)
{
    cfg->psf = psf;
    cfg->nfibre_camera = psf->nfibre;
    cfg->ccd_npix_x = psf->npix_x, cfg->ccd_npix_y = psf->npix_y;
    cfg->hsizex = psf->hsizex, cfg->hsizey = psf->hsizey;
    cfg->gx = psf->gx, cfg->gy = psf->gy;
}

/* The trace, widths and Gauss-Hermite coefficients of global fibre i at camera bin w
 * (docs/ex2d_patch.md, "PSF model and trace"). */
static void psf_at(const ex2d_frame_config *cfg, int i, int w, double *x, double *y, double *sigx, double *sigy,
                   double *c)
{
    const double lambda = cfg->wave_min + cfg->wave_step * w;
    const double t = 2.0 * (lambda - cfg->wave_min) / cfg->wave_span - 1.0;
    const double xc = cfg->trace_x0 + cfg->fibre_pitch * i + cfg->bundle_gap * (double)(i / cfg->bundle_size);
    /* 2040 and 250: the CCD's and the camera's middle, around which the traces bow and tilt */
    *x = xc + 3.0 * t * t * (xc - 2040.0) / 2040.0 - 0.5 * t;
    *y = cfg->trace_y0 + cfg->y_per_angstrom * (lambda - cfg->wave_min) + 0.002 * (i - 250) + 8.0 * t * t;
    *sigx = cfg->sigx0 + cfg->sigx1 * t;
    *sigy = cfg->sigy0 + cfg->sigy1 * t;
    const int ncy = cfg->gy + 1;
    memset(c, 0, (size_t)(cfg->gx + 1) * ncy * sizeof(double));
    const struct {
        int i, j;
        double v;
    } terms[] = {{0, 0, 1.0},          {1, 0, 0.005},        {1, 1, 0.02 * t}, {2, 0, 0.03 + 0.01 * t},
                 {0, 2, 0.04 - 0.01 * t}, {2, 2, 0.005},     {3, 0, -0.01 * t}, {4, 0, 0.01},
                 {0, 4, 0.008}};
    for (size_t k = 0; k < sizeof(terms) / sizeof(terms[0]); k++)
        if (terms[k].i <= cfg->gx && terms[k].j <= cfg->gy) c[terms[k].i * ncy + terms[k].j] = terms[k].v;
}

static int entry_finite(const ex2d_frame *f, size_t e, int ncoef)
{
    int ok = isfinite(f->trace_x[e]) && isfinite(f->trace_y[e]) && f->sigx[e] > 0.0 && f->sigy[e] > 0.0 &&
             isfinite(f->sigx[e]) && isfinite(f->sigy[e]);
    for (int k = 0; k < ncoef; k++) ok = ok && isfinite(f->psf_c[e * ncoef + k]);
    for (int t = 0; t < EX2D_TAIL_TERMS; t++) ok = ok && isfinite(f->tail[e * EX2D_TAIL_TERMS + t]);
    return ok;
}

static void *alloc_array(size_t count, size_t size, int *failed)
{
    void *p = count ? malloc(count * size) : NULL;
    if (!p) *failed = 1;
    return p;
}

/* Fills the table (CCD corners), or returns EX2D_SYNTH_ERR_GEOMETRY when a footprint leaves the CCD. */
static int build_table(ex2d_frame *f)
{
    const ex2d_frame_config *cfg = &f->cfg;
    const ex2d_params *p = &f->params;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1, ncoef = (p->gx + 1) * (p->gy + 1);
    for (int s = 0; s < p->nspec_tab; s++)
        for (int w = 0; w < p->nwave_tab; w++) {
            const size_t e = (size_t)s * p->nwave_tab + w;
            const int fibre = f->tab_fibre_first + s, wave = f->tab_wave_first + w;
            if (cfg->psf) {
                ex2d_psf_entry pe;
                ex2d_psf_entry_at(cfg->psf, fibre, cfg->wave_min + cfg->wave_step * wave, &pe);
                f->trace_x[e] = pe.x, f->trace_y[e] = pe.y, f->sigx[e] = pe.sigx, f->sigy[e] = pe.sigy;
                f->xc[e] = pe.xc, f->yc[e] = pe.yc, f->dx[e] = pe.dx, f->dy[e] = pe.dy;
                memcpy(f->psf_c + e * ncoef, pe.c, (size_t)ncoef * sizeof(double));
                memcpy(f->tail + e * EX2D_TAIL_TERMS, pe.tail, sizeof(pe.tail));
                if (!entry_finite(f, e, ncoef)) return EX2D_SYNTH_ERR_PSF;
                /* A spot starting left of the CCD would be cut short by the C truncation: refused below. */
                if (pe.x - p->hsizex + 0.5 < 0.0 || pe.y - p->hsizey + 0.5 < 0.0) return EX2D_SYNTH_ERR_GEOMETRY;
            } else {
                psf_at(cfg, fibre, wave, &f->trace_x[e], &f->trace_y[e], &f->sigx[e], &f->sigy[e],
                       f->psf_c + e * ncoef);
                ex2d_synth_corner(f->trace_x[e], p->hsizex, &f->xc[e], &f->dx[e]);
                ex2d_synth_corner(f->trace_y[e], p->hsizey, &f->yc[e], &f->dy[e]);
            }
            if (f->xc[e] < 0 || f->xc[e] > cfg->ccd_npix_x - nx || f->yc[e] < 0 || f->yc[e] > cfg->ccd_npix_y - ny)
                return EX2D_SYNTH_ERR_GEOMETRY;
            f->f_true[e] = ex2d_synth_f_true(cfg, fibre, wave);
        }
    return EX2D_SYNTH_OK;
}

/* Patch descriptors with CCD boxes; max_nspecpad, max_ncore and max_box_pixels into params. */
static void build_patches(ex2d_frame *f)
{
    const ex2d_frame_config *cfg = &f->cfg;
    ex2d_params *p = &f->params;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1, nsteps = wave_steps(cfg);
    int i = 0;
    p->max_nspecpad = p->max_ncore = p->max_box_pixels = 1;
    for (int fibre = cfg->fibre_first; fibre < cfg->fibre_first + cfg->nfibre;) {
        const fibre_group g = group_at(cfg, fibre);
        for (int st = 0; st < nsteps; st++, i++) {
            ex2d_patch_desc d = {
                .spec_first = g.pad_lo - f->tab_fibre_first,
                .nspecpad = g.pad_hi - g.pad_lo + 1,
                .core_first = g.core_lo - g.pad_lo,
                .ncore = g.core_hi - g.core_lo,
                .wave_first = st * cfg->nwavestep,
                .ncore_wave = cfg->nwave - st * cfg->nwavestep < cfg->nwavestep ? cfg->nwave - st * cfg->nwavestep
                                                                                : cfg->nwavestep,
                .out_spec_first = g.core_lo - cfg->fibre_first,
                .out_wave_first = st * cfg->nwavestep,
            };
            /* The full padded box (pixpad_frac = 1): every footprint of the patch lies inside. */
            d.xmin = d.ymin = INT32_MAX;
            d.xmax = d.ymax = INT32_MIN;
            for (int s = 0; s < d.nspecpad; s++)
                for (int w = 0; w < p->m; w++) {
                    const size_t e = (size_t)(d.spec_first + s) * p->nwave_tab + d.wave_first + w;
                    if (f->xc[e] < d.xmin) d.xmin = f->xc[e];
                    if (f->xc[e] + nx > d.xmax) d.xmax = f->xc[e] + nx;
                    if (f->yc[e] < d.ymin) d.ymin = f->yc[e];
                    if (f->yc[e] + ny > d.ymax) d.ymax = f->yc[e] + ny;
                }
            const int pixels = (d.xmax - d.xmin) * (d.ymax - d.ymin);
            if (d.nspecpad > p->max_nspecpad) p->max_nspecpad = d.nspecpad;
            if (d.ncore > p->max_ncore) p->max_ncore = d.ncore;
            if (pixels > p->max_box_pixels) p->max_box_pixels = pixels;
            f->patches[i] = d;
        }
        fibre = g.core_hi;
    }
}

/* The image window, then every corner and box moved into it. */
static void place_window(ex2d_frame *f)
{
    ex2d_params *p = &f->params;
    f->image_x0 = f->image_y0 = 0;
    p->npix_x = f->cfg.ccd_npix_x;
    p->npix_y = f->cfg.ccd_npix_y;
    if (!f->cfg.crop_to_boxes) return;
    int x0 = INT32_MAX, x1 = INT32_MIN, y0 = INT32_MAX, y1 = INT32_MIN;
    for (int i = 0; i < f->npatch; i++) {
        const ex2d_patch_desc *d = &f->patches[i];
        x0 = d->xmin < x0 ? d->xmin : x0;
        x1 = d->xmax > x1 ? d->xmax : x1;
        y0 = d->ymin < y0 ? d->ymin : y0;
        y1 = d->ymax > y1 ? d->ymax : y1;
    }
    f->image_x0 = x0, f->image_y0 = y0;
    p->npix_x = x1 - x0, p->npix_y = y1 - y0;
    for (size_t e = 0; e < (size_t)p->nspec_tab * p->nwave_tab; e++) f->xc[e] -= x0, f->yc[e] -= y0;
    for (int i = 0; i < f->npatch; i++) {
        ex2d_patch_desc *d = &f->patches[i];
        d->xmin -= x0, d->xmax -= x0, d->ymin -= y0, d->ymax -= y0;
    }
}

/* Adds f_true*spot of entry e to the model, clipped to the image (the window may cut off table bins that no
 * patch uses). */
static void add_spot(ex2d_frame *f, size_t e)
{
    const ex2d_params *p = &f->params;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1;
    const double *spot = f->spots + e * nx * ny;
    for (int iy = 0; iy < ny; iy++) {
        const int y = f->yc[e] + iy;
        if (y < 0 || y >= p->npix_y) continue;
        for (int ix = 0; ix < nx; ix++) {
            const int x = f->xc[e] + ix;
            if (x >= 0 && x < p->npix_x) f->model[(size_t)y * p->npix_x + x] += f->f_true[e] * spot[iy * nx + ix];
        }
    }
}

static void build_image(ex2d_frame *f)
{
    const ex2d_frame_config *cfg = &f->cfg;
    const ex2d_params *p = &f->params;
    const size_t npix = (size_t)p->npix_x * p->npix_y;
    memset(f->model, 0, npix * sizeof(double));
    if (cfg->image_kind == EX2D_IMAGE_PATCH) {
        const ex2d_patch_desc *d = &f->patches[0]; /* model_p = sum_k A_pk f_k, k = s*m + w upwards */
        for (int s = 0; s < d->nspecpad; s++)
            for (int w = 0; w < p->m; w++) add_spot(f, (size_t)(d->spec_first + s) * p->nwave_tab + d->wave_first + w);
    } else {
        for (size_t e = 0; e < (size_t)p->nspec_tab * p->nwave_tab; e++) add_spot(f, e);
    }
    const double read_var = cfg->read_noise * cfg->read_noise;
    uint64_t state = cfg->seed;
    for (size_t i = 0; i < npix; i++) {
        const double var = read_var + f->model[i];
        f->ivar[i] = cfg->ivar_kind == EX2D_IVAR_ONE ? 1.0 : 1.0 / var;
        f->image[i] = cfg->add_noise ? f->model[i] + sqrt(var) * ex2d_normal_draw(&state) : f->model[i];
    }
    for (int c = 0; c < cfg->nmasked_cols; c++) {
        const int x = cfg->masked_cols[c] - f->image_x0;
        if (x < 0 || x >= p->npix_x) continue;
        for (int y = 0; y < p->npix_y; y++) f->ivar[(size_t)y * p->npix_x + x] = 0.0;
    }
}

void ex2d_frame_free(ex2d_frame *f)
{
    if (!f) return;
    free(f->trace_x);
    free(f->trace_y);
    free(f->sigx);
    free(f->sigy);
    free(f->dx);
    free(f->dy);
    free(f->psf_c);
    free(f->tail);
    free(f->xc);
    free(f->yc);
    free(f->spots);
    free(f->f_true);
    free(f->model);
    free(f->image);
    free(f->ivar);
    free(f->patches);
    memset(f, 0, sizeof(*f));
}

int ex2d_frame_make(const ex2d_frame_config *cfg, ex2d_frame *out)
{
    if (!cfg || !out) return EX2D_SYNTH_ERR_NULL;
    if (ex2d_frame_config_check(cfg)) return EX2D_SYNTH_ERR_CONFIG;
    ex2d_frame f;
    memset(&f, 0, sizeof(f));
    f.cfg = *cfg;
    ex2d_params *p = &f.params;

    /* Table extent: the padded fibres of every group, the core bins plus wavepad below and wavepad + nwavestep
     * above (docs/ex2d_patch.md, "Patches": the last step always fits). */
    int lo = cfg->nfibre_camera, hi = -1;
    for (int fibre = cfg->fibre_first; fibre < cfg->fibre_first + cfg->nfibre;) {
        const fibre_group g = group_at(cfg, fibre);
        lo = g.pad_lo < lo ? g.pad_lo : lo;
        hi = g.pad_hi > hi ? g.pad_hi : hi;
        fibre = g.core_hi;
    }
    f.tab_fibre_first = lo;
    f.tab_wave_first = cfg->wave_first - cfg->wavepad;
    f.npatch = ex2d_synth_count_patches(cfg);
    p->nspec_tab = hi - lo + 1;
    p->nwave_tab = cfg->nwave + 2 * cfg->wavepad + cfg->nwavestep;
    p->gx = cfg->gx, p->gy = cfg->gy, p->hsizex = cfg->hsizex, p->hsizey = cfg->hsizey;
    p->nspec_out = cfg->nfibre, p->nwave_out = cfg->nwave;
    p->m = cfg->nwavestep + 2 * cfg->wavepad, p->wavepad = cfg->wavepad;
    ex2d_params_set_numerics_default(p);

    const size_t entries = (size_t)p->nspec_tab * p->nwave_tab;
    if (entries > INT32_MAX) return EX2D_SYNTH_ERR_GEOMETRY; /* K1 counts entries in int */
    const size_t spot_size = (size_t)(2 * p->hsizex + 1) * (2 * p->hsizey + 1);
    int failed = 0;
    f.trace_x = alloc_array(entries, sizeof(double), &failed);
    f.trace_y = alloc_array(entries, sizeof(double), &failed);
    f.sigx = alloc_array(entries, sizeof(double), &failed);
    f.sigy = alloc_array(entries, sizeof(double), &failed);
    f.dx = alloc_array(entries, sizeof(double), &failed);
    f.dy = alloc_array(entries, sizeof(double), &failed);
    f.psf_c = alloc_array(entries * (size_t)(p->gx + 1) * (p->gy + 1), sizeof(double), &failed);
    f.xc = alloc_array(entries, sizeof(int32_t), &failed);
    f.yc = alloc_array(entries, sizeof(int32_t), &failed);
    f.f_true = alloc_array(entries, sizeof(double), &failed);
    f.spots = alloc_array(entries * spot_size, sizeof(double), &failed);
    if (cfg->psf) f.tail = alloc_array(entries * EX2D_TAIL_TERMS, sizeof(double), &failed);
    f.patches = alloc_array((size_t)f.npatch, sizeof(ex2d_patch_desc), &failed);
    if (failed) {
        ex2d_frame_free(&f);
        return EX2D_SYNTH_ERR_ALLOC;
    }
    int rc = build_table(&f);
    if (rc) {
        ex2d_frame_free(&f);
        return rc;
    }
    build_patches(&f);
    if (p->max_nspecpad > EX2D_MAX_N / p->m) {
        ex2d_frame_free(&f);
        return EX2D_SYNTH_ERR_GEOMETRY;
    }
    place_window(&f);

    const size_t npix = (size_t)p->npix_x * p->npix_y;
    f.model = alloc_array(npix, sizeof(double), &failed);
    f.image = alloc_array(npix, sizeof(double), &failed);
    f.ivar = alloc_array(npix, sizeof(double), &failed);
    if (failed) {
        ex2d_frame_free(&f);
        return EX2D_SYNTH_ERR_ALLOC;
    }
    f.inputs = (ex2d_inputs){
        .image = f.image, .ivar = f.ivar, .psf_sigx = f.sigx, .psf_sigy = f.sigy, .psf_dx = f.dx, .psf_dy = f.dy,
        .psf_c = f.psf_c, .psf_xc = f.xc, .psf_yc = f.yc, .patches = f.patches, .npatch = f.npatch,
        .psf_tail = f.tail,
    };
    /* Sizes and limits were checked above, so K1 cannot refuse them. */
    if (ex2d_ref_spots(p, &f.inputs, 0, (int)entries, f.spots, cfg->nthreads)) {
        ex2d_frame_free(&f);
        return EX2D_SYNTH_ERR_GEOMETRY;
    }
    build_image(&f);
    *out = f;
    return EX2D_SYNTH_OK;
}
