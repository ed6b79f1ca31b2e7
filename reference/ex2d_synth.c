/* SPDX-License-Identifier: MIT
 * ex2d_synth, part 1: the configuration (defaults, tier presets, its check), the corner rule and the random
 * numbers (contract in ex2d_synth.h). The frame itself is built in ex2d_synth_frame.c.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
    const double t_lo = 2.0 * cfg->wave_step * (cfg->wave_first - cfg->wavepad) / cfg->wave_span - 1.0;
    const double t_hi =
        2.0 * cfg->wave_step * (cfg->wave_first + cfg->nwave + cfg->wavepad + cfg->nwavestep) / cfg->wave_span - 1.0;
    if (!width_positive(cfg->sigx0, cfg->sigx1, t_lo, t_hi) || !width_positive(cfg->sigy0, cfg->sigy1, t_lo, t_hi))
        return "sigx0 + sigx1*t and sigy0 + sigy1*t must be > 0 over the table's wavelengths";
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

/* floor(pos + 0.5) evaluated exactly: pos + 0.5 itself can round up to the next integer (pos = 0.5 - 2^-54
 * gives 1.0), which would put the offset at -0.5 - 2^-54, outside [-0.5, 0.5). pos - floor(pos) is exact. */
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

const char *ex2d_synth_error_str(int code)
{
    switch (code) {
    case EX2D_SYNTH_OK: return "ok";
    case EX2D_SYNTH_ERR_NULL: return "a required pointer (cfg, frame, name or tier) is NULL";
    case EX2D_SYNTH_ERR_CONFIG: return "bad frame configuration (ex2d_frame_config_check names the field and the rule)";
    case EX2D_SYNTH_ERR_GEOMETRY: return "a spot footprint leaves the CCD, or a patch exceeds n <= 1024 (EX2D_MAX_N)";
    case EX2D_SYNTH_ERR_ALLOC: return "out of host memory while building the frame";
    case EX2D_SYNTH_ERR_TIER: return "unknown tier: use S, M, L, XL_BUNDLE or XL_FRAME";
    }
    return "unknown ex2d_synth error";
}
