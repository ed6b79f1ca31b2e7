/* SPDX-License-Identifier: MIT
 * ex2d_synth, part 1: the configuration (defaults, tier presets, its check), the corner rule and the random
 * numbers (contract in ex2d_synth.h). The frame itself is built in ex2d_synth_frame.c.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ex2d_patch_ref.h"
#include "ex2d_synth.h"

void ex2d_frame_config_default(ex2d_frame_config *cfg)
{
    if (!cfg) return;
    const ex2d_frame_config d = {
        .fibre_first = 0, .nfibre = 500, .wave_first = 0, .nwave = 2326,
        .nfibre_camera = 500, .nwave_camera = 2326,
        .wave_min = 5760.0, .wave_step = 0.8, .wave_span = 1860.0,
        .ccd_npix_x = 4114, .ccd_npix_y = 4128,
        .trace_x0 = 60.0, .fibre_pitch = 7.3, .bundle_gap = 12.0,
        .trace_y0 = 40.0, .y_per_angstrom = 1.85,
        .sigx0 = 1.05, .sigx1 = 0.05, .sigy0 = 1.10, .sigy1 = 0.08,
        .hsizex = 8, .hsizey = 5, .gx = 4, .gy = 4,
        .bundle_size = 25, .subbundle_size = 5, .nwavestep = 50, .wavepad = 12,
        .line_amp = 2000.0, .line_period = 97, .line_phase = 41,
        .image_kind = EX2D_IMAGE_FRAME, .ivar_kind = EX2D_IVAR_MODEL, .add_noise = 1, .read_noise = 3.0,
        .seed = 0x5eed2dULL, .crop_to_boxes = 0, .nmasked_cols = 0, .nthreads = 0,
    };
    *cfg = d;
}

int ex2d_frame_config_tier(ex2d_frame_config *cfg, int tier)
{
    if (!cfg) return EX2D_SYNTH_ERR_NULL;
    if (tier < EX2D_TIER_S || tier > EX2D_TIER_XL_FRAME) return EX2D_SYNTH_ERR_TIER;
    ex2d_frame_config c;
    ex2d_frame_config_default(&c);
    switch (tier) {
    case EX2D_TIER_S: /* 1 core fibre (12, mid-bundle) + its 2 neighbours; 10 + 2*4 bins */
        c.fibre_first = 12, c.nfibre = 1, c.subbundle_size = 1;
        c.wave_first = 600, c.nwave = 10, c.nwavestep = 10, c.wavepad = 4;
        break;
    case EX2D_TIER_M: /* subbundle 1 of bundle 0: fibres 5..9 + pads 4 and 10 (n = 7*74) */
        c.fibre_first = 5, c.nfibre = 5, c.wave_first = 600, c.nwave = 50;
        break;
    case EX2D_TIER_L: /* the same subbundle over the whole camera: 47 patches */
        c.fibre_first = 5, c.nfibre = 5;
        break;
    case EX2D_TIER_XL_BUNDLE:
        c.fibre_first = 0, c.nfibre = 25;
        break;
    default: /* EX2D_TIER_XL_FRAME: the defaults */
        break;
    }
    if (tier == EX2D_TIER_S || tier == EX2D_TIER_M) {
        c.image_kind = EX2D_IMAGE_PATCH, c.ivar_kind = EX2D_IVAR_ONE, c.add_noise = 0;
    }
    c.crop_to_boxes = tier != EX2D_TIER_XL_FRAME;
    *cfg = c;
    return EX2D_SYNTH_OK;
}

int ex2d_tier_parse(const char *name, int *tier)
{
    static const struct {
        const char *name;
        int tier;
    } names[] = {{"S", EX2D_TIER_S},          {"M", EX2D_TIER_M},          {"L", EX2D_TIER_L},
                 {"XL_BUNDLE", EX2D_TIER_XL_BUNDLE}, {"XL-BUNDLE", EX2D_TIER_XL_BUNDLE},
                 {"XL_FRAME", EX2D_TIER_XL_FRAME},   {"XL-FRAME", EX2D_TIER_XL_FRAME}, {"XL", EX2D_TIER_XL_FRAME}};
    if (!name || !tier) return EX2D_SYNTH_ERR_NULL;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t j = 0;
        while (names[i].name[j] && toupper((unsigned char)name[j]) == names[i].name[j]) j++;
        if (!names[i].name[j] && !name[j]) {
            *tier = names[i].tier;
            return EX2D_SYNTH_OK;
        }
    }
    return EX2D_SYNTH_ERR_TIER;
}

/* The corner rule (docs/ex2d_patch.md, "Corner rule"): the centre pixel is floor(pos + 0.5), computed so that
 * a half-way pos rounds up exactly; the spot starts hsize pixels before it. */
void ex2d_synth_corner(double pos, int hsize, int32_t *corner, double *offset)
{
    double centre = floor(pos);
    if (pos - centre >= 0.5) centre += 1.0;
    *corner = (int32_t)centre - hsize;
    *offset = pos - centre;
}

uint64_t ex2d_splitmix64_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double ex2d_unit_double(uint64_t x) { return (double)(x >> 11) * 0x1.0p-53; }

double ex2d_normal_draw(uint64_t *state)
{
    const double u1 = ex2d_unit_double(ex2d_splitmix64_next(state));
    const double u2 = ex2d_unit_double(ex2d_splitmix64_next(state));
    /* 1 - u1 lies in (0, 1], so the log is finite */
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

double ex2d_synth_f_true(const ex2d_frame_config *cfg, int fibre, int w)
{
    const double lambda = cfg->wave_min + cfg->wave_step * w;
    double f = 100.0 + 50.0 * sin(lambda / 37.0 + fibre);
    if (cfg->line_period > 0 && w >= 0 && w % cfg->line_period == cfg->line_phase) f += cfg->line_amp;
    return f;
}

double ex2d_synth_r_truth(const ex2d_frame *f, const double *qblk, int patch, int c, int j)
{
    const ex2d_params *p = &f->params;
    const ex2d_patch_desc *d = &f->patches[patch];
    const double *q = qblk + (size_t)c * p->m * p->m;
    const int jp = j + p->wavepad, sp = d->core_first + c;
    double s = 0.0, v = 0.0;
    for (int i = 0; i < p->m; i++) s += q[jp * p->m + i];
    for (int i = 0; i < p->m; i++) v += q[jp * p->m + i] / s * f->f_true[ex2d_ref_entry(p, d, sp * p->m + i)];
    return v;
}

const char *ex2d_synth_error_str(int code)
{
    switch (code) {
    case EX2D_SYNTH_OK: return "ok";
    case EX2D_SYNTH_ERR_NULL: return "a required pointer (cfg, frame, name or tier) is NULL";
    case EX2D_SYNTH_ERR_CONFIG: return "bad frame configuration (ex2d_frame_config_check names the field and the rule)";
    case EX2D_SYNTH_ERR_GEOMETRY: return "a spot footprint leaves the CCD, or a patch exceeds n <= 1024 (EX2D_MAX_N)";
    case EX2D_SYNTH_ERR_ALLOC: return "out of host memory while building the frame";
    case EX2D_SYNTH_ERR_TIER: return "unknown tier: use S, M, L, XL_BUNDLE or XL_FRAME";
    case EX2D_SYNTH_ERR_PSF: return "the PSF gives a width <= 0 or a value that is not finite at a table wavelength";
    }
    return "unknown ex2d_synth error";
}
