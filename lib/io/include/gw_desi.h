/* SPDX-License-Identifier: MIT
 * DESI FITS files through cfitsio (the reference FITS library), plain C11, no CUDA: GAUSS-HERMITE PSFs and
 * preprocessed CCD images are read; CCD images (with an optional truth) and extracted frames are written.
 *
 * Read. The path is opened with gw_infile_open (gw_infile.h): a FIFO, a device or a directory fails at once
 * ("x.fits: not a regular file (a FIFO)") instead of blocking. The whole file is read through that one
 * descriptor and cfitsio parses the bytes in memory (fits_open_memfile): the file checked is the file read.
 * Every HDU's header is read once, in order, before anything else, and the file is refused when cfitsio
 * cannot parse one (with cfitsio's words: "img.fits: HDU 1: corrupt tile-compressed image header (cfitsio:
 * ...)"), when an HDU's data would end past the end of the file or the file ends inside a header ("...:
 * truncated ...", before any allocation sized from a header), and when anything follows the last HDU
 * ("psf.fits: 100 bytes after the last HDU (HDU 1 ends at byte 164160): a FITS file ends with its last HDU and
 * is a whole number of 2880-byte blocks"; whole blocks there too, even FITS "special records", which no DESI
 * file holds: bytes after the end are damage or a file appended to). HDUs are found by EXTNAME (case aside, as
 * cfitsio and astropy compare); a name looked up that two HDUs bear is refused ("img.fits: HDUs 1 and 4 are
 * both named 'IMAGE': expected one"), as is an HDU of the wrong kind (a table named IMAGE). Headers that
 * crash cfitsio 4.2 are refused before it reads them, each with a FITS rule they break: a TTYPEn not in
 * quotes, an unquoted value of 29 characters or more for a Z keyword, a ZTILEn that is not a positive whole
 * number, TFIELDS above 999, a tile-compressed image without its COMPRESSED_DATA column. Every GZIP_1/GZIP_2
 * tile of a tile-compressed image is inflated once with zlib at open and must end within the tile (exactly
 * its bytes, all its input): cfitsio 4.2 loops for ever on one that does not. Errors name the
 * file, the HDU (its number, 0 = primary, or its EXTNAME), the keyword, column or parameter, and the rule,
 * with cfitsio's own status text appended where it said something, e.g.
 *   "psf.fits: HDU 1: keyword HSIZEX missing"
 *   "psf.fits: HDU 'PSF': column COEFF: row 'GH-3-2' holds 150 values, expected nfibre*ncoef = 200"
 *   "img.fits: HDU 'IVAR': pixel (row 12, column 40) is -1: ivar must be >= 0"
 * and leave the output zeroed, nothing allocated, cfitsio's file closed.
 *
 * PSF (gw_desi_psf_read): the GAUSS-HERMITE format of specex, as desihub/specter's GaussHermitePSF reads it.
 * Primary header: PSFTYPE = 'GAUSS-HERMITE', PSFVER 2 or 3 (a string or a number, integer-valued). The table
 * HDU (PSFVER 2: HDU 1; 3: EXTNAME 'PSF'; PSFTYPE there too when present) holds FIBERMIN, FIBERMAX, NPIX_X,
 * NPIX_Y, HSIZEX, HSIZEY, GHDEGX, GHDEGY (integer-valued numbers) and one row per parameter: PARAM (its name,
 * blanks and NULs around it ignored) and COEFF ([nfibre][ncoef] per row: TDIM (ncoef, nfibre), or no TDIM
 * and a repeat that nfibre divides). Rules: FIBERMIN >= 0, FIBERMAX >= FIBERMIN, NPIX_* > 0 and
 * NPIX_X * NPIX_Y <= GW_DESI_MAX_PIXELS (the CCD is the size of the image the PSF extracts from),
 * 0 <= HSIZE* <= EX2D_MAX_HALF_SIZE, 0 <= GHDEG* <= EX2D_MAX_DEGREE, 1 <= ncoef <= EX2D_PSF_MAX_LEGENDRE, no
 * PARAM twice, every coefficient finite, every domain WAVEMIN < WAVEMAX (finite). Needed parameters: GHSIGX,
 * GHSIGY, GH-i-j for 0 <= i <= GHDEGX, 0 <= j <= GHDEGY, TAILAMP, TAILCORE, TAILXSCA, TAILYSCA, TAILINDE, and
 * the traces X and Y; any other row (CONT, GH-i-j beyond the degrees, ...) is ignored.
 *   PSFVER 2: X and Y are rows of the table; each row has its own domain, from its WAVEMIN and WAVEMAX
 *     columns. (specter's loop gives every parameter the domain of the LAST row, a quirk that changes nothing
 *     in real files, where all rows share one domain; a file whose rows differ is read here row by row.)
 *   PSFVER 3: every table row has the domain of the table header's WAVEMIN and WAVEMAX; X and Y come from the
 *     image HDUs 'XTRACE' and 'YTRACE' ([nfibre][ncoef] each, their own ncoef and their own WAVEMIN, WAVEMAX
 *     keywords); X or Y rows in the table are ignored, as specter ignores them.
 * Every coefficient lives in one block, psf->storage (free it with ex2d_psf_free).
 *
 * Image (gw_desi_image_read): a preprocessed CCD image with image HDUs (compressed tile images too) named by
 * EXTNAME 'IMAGE' (may be the primary), 'IVAR' and 'MASK', all three 2-D of one shape [npix_y][npix_x] with at
 * most GW_DESI_MAX_PIXELS pixels. IMAGE and IVAR: any BITPIX, read as double; MASK: an integer BITPIX (uint32
 * through BZERO included); a nonzero MASK pixel sets that pixel's ivar to 0 (counted in nmasked). So does an
 * undefined pixel of an integer HDU, in any of the three (FITS BLANK; when tile-compressed, ZBLANK or the
 * tile's null value): an undefined IMAGE or IVAR pixel has no value, so no weight, and an undefined MASK pixel
 * is not known to be good. Then, where ivar is 0 (masked or not) an IMAGE value that is not finite is read as
 * 0: the pixel has no weight. Elsewhere IMAGE must be finite and IVAR finite and >= 0. Each HDU is read with
 * one cfitsio call, so any tiling costs one decompression per tile; the read holds the file's bytes and 17
 * bytes a pixel (IMAGE and IVAR as doubles, a mask flag).
 *
 * Write (gw_desi_image_write, gw_desi_frame_write): cfitsio builds the file in memory, which then goes through
 * gw_outfile (gw_outfile.h): a temporary file beside the target, fsync, rename; a failed write leaves no file
 * (an existing target is kept). Values are checked first (finite, ivar >= 0): what is written reads back.
 * Every HDU carries CHECKSUM and DATASUM, as desispec's files do.
 *   Image file: HDU 0 empty (the COMMENT card if given), then 'IMAGE' and 'IVAR' (float64, tile-compressed
 *   GZIP_2 without quantization: lossless, the doubles come back bit for bit) and 'MASK' (int32, RICE_1), one
 *   tile per row; then, when truth is given, 'TRUTH' (float64 [truth_nspec][truth_nwave], uncompressed) with
 *   FIBERMIN (global fibre of row 0), NSPEC, NWAVE, CRVAL1 (Angstrom of column 0), CDELT1 (step), CRPIX1 = 1,
 *   CTYPE1 = 'WAVE', CUNIT1 = 'Angstrom'.
 *   Frame file, desispec's write_frame layout: HDU 0 'FLUX' [nspec][nwave] with BUNIT, NSPEC, NWAVE, FIBERMIN,
 *   SPECMIN (= FIBERMIN), SPECMAX (= FIBERMIN + NSPEC - 1, inclusive like a PSF's FIBERMAX), WAVEMIN, WAVEMAX
 *   (first and last wavelength), NDIAG; 'IVAR'; 'MASK' (uint32: BITPIX 32, BZERO 2147483648, as astropy writes
 *   uint32); 'WAVELENGTH' [nwave] with BUNIT 'Angstrom'; 'RESOLUTION' [nspec][2 ndiag + 1][nwave] with NDIAG;
 *   'CHI2PIX' [nspec][nwave] when given. FLUX, IVAR, RESOLUTION and CHI2PIX are float64 (BITPIX -64), where
 *   desispec writes float32: this project keeps FP64 end to end. Uncompressed, as desispec writes frames.
 */
#ifndef GW_DESI_H
#define GW_DESI_H

#include <stddef.h>
#include <stdint.h>

#include "ex2d_psf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A larger image is refused, and a PSF whose CCD (NPIX_X x NPIX_Y) is larger: a compressed header could
 * otherwise ask for any allocation. 2^25 = 33,554,432 pixels is 1.98 times the CCD of the DESI PSF in
 * specter's tests (4114 x 4128 = 16,982,592) and costs 544 MiB to read (17 bytes a pixel). */
#define GW_DESI_MAX_PIXELS ((size_t)1 << 25)

/* Reads the PSF at path into *psf (zeroed first). 0, or -1 with err filled and *psf zeroed. */
int gw_desi_psf_read(const char *path, ex2d_psf *psf, char *err, size_t err_size);

typedef struct gw_desi_image {
    int npix_x, npix_y;   /* columns, rows */
    double *image, *ivar; /* [npix_y][npix_x], owned; ivar is 0 where masked */
    size_t nmasked;       /* pixels masked: a nonzero MASK, or undefined (BLANK) in IMAGE, IVAR or MASK */
} gw_desi_image;

/* Reads a preprocessed image. 0, or -1 with err filled and *img zeroed. */
int gw_desi_image_read(const char *path, gw_desi_image *img, char *err, size_t err_size);
/* Frees and zeroes (NULL: no effect). */
void gw_desi_image_free(gw_desi_image *img);

typedef struct gw_desi_image_out {
    int npix_x, npix_y;
    const double *image, *ivar; /* [npix_y][npix_x] */
    const int32_t *mask;        /* [npix_y][npix_x], may be NULL: zeros */
    /* optional truth HDU 'TRUTH' (truth NULL: none), keywords above */
    const double *truth; /* [truth_nspec][truth_nwave] */
    int truth_nspec, truth_nwave, truth_fibre_first;
    double truth_wave0, truth_dwave;
    const char *comment; /* optional: one COMMENT card in HDU 0, e.g. the command line that made the file */
} gw_desi_image_out;

/* Writes im to path (staged). 0, or -1 with err and no file left behind. */
int gw_desi_image_write(const char *path, const gw_desi_image_out *im, char *err, size_t err_size);

typedef struct gw_desi_frame {
    int nspec, nwave, ndiag;   /* RESOLUTION holds 2*ndiag+1 diagonals */
    int fibre_first;           /* global fibre of spectrum 0 (FIBERMIN, SPECMIN) */
    const double *wave;        /* [nwave], Angstrom */
    const double *flux, *ivar; /* [nspec][nwave] */
    const uint32_t *mask;      /* [nspec][nwave], may be NULL: zeros */
    const double *rdiags;      /* [nspec][2*ndiag+1][nwave], offsets ndiag..-ndiag (scipy dia_matrix) */
    const double *chi2pix;     /* [nspec][nwave], may be NULL: no CHI2PIX HDU */
    const char *bunit;         /* flux unit, e.g. "electron/Angstrom"; NULL: no BUNIT */
    const char *comment;       /* optional COMMENT card in HDU 0 */
} gw_desi_frame;

/* Writes fr to path (staged). 0, or -1 with err and no file left behind. */
int gw_desi_frame_write(const char *path, const gw_desi_frame *fr, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* GW_DESI_H */
