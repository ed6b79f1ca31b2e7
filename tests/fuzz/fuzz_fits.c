/* SPDX-License-Identifier: MIT
 * gw_desi's readers on arbitrary bytes as a file (through fuzz_memfile: the readers take only a path, which
 * they open with gw_infile_open): the same bytes read as a GAUSS-HERMITE PSF and as a preprocessed image.
 * cfitsio parses the bytes (it is not instrumented: a crash inside it still stops the run, with its stack).
 * Accepted: the PSF keeps every rule of gw_desi.h (degrees, half sizes, sizes, ordered domains, finite
 * coefficients) and the image every value finite, ivar >= 0, nmasked within the image. Rejected: -1, the
 * output zeroed, the message starting with the file's path.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_memfile.h"
#include "gw_desi.h"

static void check_param(const ex2d_psf *psf, const ex2d_psf_param *p, const char *what)
{
    FUZZ_REQUIRE(p->coeff && p->ncoef >= 1 && p->ncoef <= EX2D_PSF_MAX_LEGENDRE, "%s: ncoef %d", what, p->ncoef);
    FUZZ_REQUIRE(isfinite(p->wavemin) && isfinite(p->wavemax) && p->wavemin < p->wavemax, "%s: domain (%g, %g)", what,
                 p->wavemin, p->wavemax);
    for (size_t i = 0; i < (size_t)psf->nfibre * (size_t)p->ncoef; i++)
        FUZZ_REQUIRE(isfinite(p->coeff[i]), "%s: coefficient %zu is %g", what, i, p->coeff[i]);
}

static void check_psf(const ex2d_psf *psf)
{
    FUZZ_REQUIRE(psf->psfver == 2 || psf->psfver == 3, "psfver %d", psf->psfver);
    FUZZ_REQUIRE(psf->nfibre >= 1 && psf->fibre_min >= 0 && psf->npix_x >= 1 && psf->npix_y >= 1, "sizes");
    FUZZ_REQUIRE(psf->gx >= 0 && psf->gx <= EX2D_MAX_DEGREE && psf->gy >= 0 && psf->gy <= EX2D_MAX_DEGREE, "degrees");
    FUZZ_REQUIRE(psf->hsizex >= 0 && psf->hsizex <= EX2D_MAX_HALF_SIZE && psf->hsizey >= 0 &&
                     psf->hsizey <= EX2D_MAX_HALF_SIZE, "half sizes");
    check_param(psf, &psf->x, "X");
    check_param(psf, &psf->y, "Y");
    check_param(psf, &psf->sigx, "GHSIGX");
    check_param(psf, &psf->sigy, "GHSIGY");
    for (int i = 0; i <= psf->gx; i++)
        for (int j = 0; j <= psf->gy; j++) check_param(psf, &psf->gh[i][j], "GH-i-j");
    for (int t = 0; t < EX2D_TAIL_TERMS; t++) check_param(psf, &psf->tail[t], "tail");
}

/* cfitsio (not our code) sizes some allocations from header values before it validates them: a mangled
 * table header made it ask calloc for 2.8 PB. glibc returns NULL there and cfitsio reports an error, which is
 * what the readers then return; ASan's default is to abort instead. Returning NULL as glibc does keeps the
 * fuzzer on the readers' behaviour. Our own allocations are sized only after the header's claims are checked
 * against the file (gw_desi.h), so this hides nothing of ours that a size check would not catch first. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

/* cfitsio 4.2 leaks a tile buffer when a compressed tile fails to decompress: cfitsio's leak, not the readers' */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:imcomp_decompress_tile\n";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    char err[1024] = "";
    ex2d_psf psf;
    if (gw_desi_psf_read(path, &psf, err, sizeof err) == 0) {
        check_psf(&psf);
        free(psf.storage);
    } else {
        static const ex2d_psf zero;
        FUZZ_REQUIRE(memcmp(&psf, &zero, sizeof psf) == 0, "psf not zeroed after: %s", err);
        FUZZ_REQUIRE(strncmp(err, path, strlen(path)) == 0, "the message does not name the file: '%s'", err);
    }
    gw_desi_image img;
    if (gw_desi_image_read(path, &img, err, sizeof err) == 0) {
        const size_t n = (size_t)img.npix_x * (size_t)img.npix_y;
        FUZZ_REQUIRE(img.npix_x >= 1 && img.npix_y >= 1 && n <= GW_DESI_MAX_PIXELS && img.nmasked <= n, "sizes");
        for (size_t i = 0; i < n; i++)
            FUZZ_REQUIRE(isfinite(img.image[i]) && isfinite(img.ivar[i]) && img.ivar[i] >= 0, "pixel %zu", i);
        gw_desi_image_free(&img);
    } else {
        static const gw_desi_image zero;
        FUZZ_REQUIRE(memcmp(&img, &zero, sizeof img) == 0, "image not zeroed after: %s", err);
        FUZZ_REQUIRE(strncmp(err, path, strlen(path)) == 0, "the message does not name the file: '%s'", err);
    }
    return 0;
}
