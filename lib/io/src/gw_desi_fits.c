/* SPDX-License-Identifier: MIT
 * cfitsio plumbing of gw_desi (gw_desi_fits.h). cfitsio opens paths itself, so it is never given one: a FIFO
 * put where a file was would block it, and its extended file-name syntax ("x.fits[1]", "!x.fits") would read
 * meaning into the caller's path. It gets bytes instead, read through gw_infile's descriptor (reading) or a
 * buffer that gw_outfile stages (writing).
 */
#define _POSIX_C_SOURCE 200809L
#include "gw_desi_fits.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_infile.h"
#include "gw_io_err.h"
#include "gw_outfile.h"

static const char fits_magic[] = "SIMPLE  ="; /* every FITS file's first card */

const char *gw_fits_said(int status, char *buf, size_t size)
{
    fits_clear_errmsg(); /* cfitsio's message stack is global: keep it from filling across calls */
    if (status == 0) return "";
    char text[FLEN_STATUS] = "";
    fits_get_errstatus(status, text);
    snprintf(buf, size, " (cfitsio: %s)", text);
    return buf;
}

/* The whole file into in->buf; 0 or -1 (err set). */
static int slurp(int fd, const struct stat *st, const char *path, gw_fits_in *in, char *err, size_t err_size)
{
    const size_t size = (size_t)st->st_size;
    in->buf = malloc(size + 1);
    if (!in->buf) {
        set_err(err, err_size, "%s: out of memory reading %zu bytes", path, size);
        return -1;
    }
    size_t got = 0;
    while (got <= size) { /* one byte more than the size: a file that grows while read is caught */
        const ssize_t n = read(fd, (char *)in->buf + got, size + 1 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            set_err(err, err_size, "%s: cannot read: %s", path, strerror(errno));
            return -1;
        }
        if (n == 0) break;
        got += (size_t)n;
    }
    if (got != size) {
        set_err(err, err_size, "%s: the file changed while read (%zu bytes, then %zu)", path, size, got);
        return -1;
    }
    in->size = size;
    return 0;
}

int gw_fits_open_read(const char *path, gw_fits_in *in, char *err, size_t err_size)
{
    memset(in, 0, sizeof *in);
    struct stat st;
    const int fd = gw_infile_open(path, &st, err, err_size);
    if (fd < 0) return -1;
    const int rc = slurp(fd, &st, path, in, err, err_size);
    close(fd);
    if (rc != 0) goto fail;
    if (in->size == 0) {
        set_err(err, err_size, "%s: empty file (0 bytes): not a FITS file", path);
        goto fail;
    }
    if (in->size < sizeof fits_magic - 1 || memcmp(in->buf, fits_magic, sizeof fits_magic - 1) != 0) {
        set_err(err, err_size, "%s: not a FITS file (it does not begin with the card 'SIMPLE  =')", path);
        goto fail;
    }
    if (in->size % 2880 != 0) { /* FITS files are whole 2880-byte blocks */
        set_err(err, err_size, "%s: truncated FITS file: %zu bytes, not a whole number of 2880-byte blocks", path,
                in->size);
        goto fail;
    }
    int status = 0;
    /* The name is only a label for cfitsio (no extended syntax in it); the buffer is read in place. */
    if (fits_open_memfile(&in->f, "gw_desi", READONLY, &in->buf, &in->size, 0, NULL, &status)) {
        char said[64];
        set_err(err, err_size, "%s: not a readable FITS file%s", path, gw_fits_said(status, said, sizeof said));
        in->f = NULL;
        goto fail;
    }
    return 0;
fail:
    gw_fits_close_read(in);
    return -1;
}

void gw_fits_close_read(gw_fits_in *in)
{
    if (in->f) {
        int status = 0;
        fits_close_file(in->f, &status);
        fits_clear_errmsg();
    }
    free(in->buf);
    memset(in, 0, sizeof *in);
}

int gw_fits_check_extent(const gw_fits_in *in, const char *path, const char *hdu, char *err, size_t err_size)
{
    LONGLONG head = 0, data = 0, end = 0;
    int status = 0;
    char said[64];
    if (fits_get_hduaddrll(in->f, &head, &data, &end, &status)) {
        set_err(err, err_size, "%s: HDU %s: unreadable header%s", path, hdu, gw_fits_said(status, said, sizeof said));
        return -1;
    }
    if (end < 0 || (unsigned long long)end > in->size) {
        set_err(err, err_size, "%s: HDU %s: truncated: its header sizes its data to end at byte %lld, the file "
                "holds %zu bytes", path, hdu, (long long)end, in->size);
        return -1;
    }
    return 0;
}

int gw_fits_key_double(fitsfile *f, const char *path, const char *hdu, const char *key, double *out, char *err,
                       size_t err_size)
{
    int status = 0;
    char said[64];
    double v = 0;
    if (fits_read_key(f, TDOUBLE, key, &v, NULL, &status)) {
        if (status == KEY_NO_EXIST) {
            fits_clear_errmsg();
            set_err(err, err_size, "%s: HDU %s: keyword %s missing", path, hdu, key);
        } else {
            set_err(err, err_size, "%s: HDU %s: keyword %s: not a number%s", path, hdu, key,
                    gw_fits_said(status, said, sizeof said));
        }
        return -1;
    }
    if (!isfinite(v)) {
        set_err(err, err_size, "%s: HDU %s: keyword %s = %g: not finite", path, hdu, key, v);
        return -1;
    }
    *out = v;
    return 0;
}

int gw_fits_key_int(fitsfile *f, const char *path, const char *hdu, const char *key, long lo, long hi,
                    const char *why, int *out, char *err, size_t err_size)
{
    double v = 0;
    if (gw_fits_key_double(f, path, hdu, key, &v, err, err_size) != 0) return -1;
    if (v != floor(v) || v < (double)lo || v > (double)hi) {
        set_err(err, err_size, "%s: HDU %s: keyword %s = %.17g: expected an integer in %ld..%ld%s", path, hdu, key,
                v, lo, hi, why ? why : "");
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* cfitsio's memory driver grows the buffer with the realloc it is given and then reads parts of it it has
 * not written (fill bytes, tiles it checks before compressing): with plain realloc those reads are of
 * uninitialised memory. This realloc zeroes what it adds; it keeps the size in a header before the block. */
#define ZHDR 16
static void *zero_realloc(void *p, size_t n)
{
    char *base = p ? (char *)p - ZHDR : NULL;
    size_t old = 0;
    if (base) memcpy(&old, base, sizeof old);
    char *grown = realloc(base, ZHDR + n);
    if (!grown) return NULL;
    if (n > old) memset(grown + ZHDR + old, 0, n - old);
    memcpy(grown, &n, sizeof n);
    return grown + ZHDR;
}

static void zero_free(void *p)
{
    if (p) free((char *)p - ZHDR);
}

int gw_fits_begin_write(gw_fits_out *out, const char *path, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    out->size = 4 * 2880;
    out->buf = zero_realloc(NULL, out->size);
    int status = 0;
    char said[64];
    if (!out->buf) {
        set_err(err, err_size, "%s: out of memory", path);
        return -1;
    }
    /* Grows by realloc, 16 MiB at a time (cfitsio would otherwise grow it one block per write). */
    if (fits_create_memfile(&out->f, &out->buf, &out->size, (size_t)16 << 20, zero_realloc, &status)) {
        out->f = NULL;
        goto fail;
    }
    return 0;
fail:
    set_err(err, err_size, "%s: cannot start the FITS file%s", path, gw_fits_said(status, said, sizeof said));
    gw_fits_abort_write(out);
    return -1;
}

void gw_fits_put_image(fitsfile *f, const char *extname, int bitpix, int naxis, const LONGLONG *naxes, int datatype,
                       const void *data, int *status)
{
    if (*status) return;
    fits_create_imgll(f, bitpix, naxis, (LONGLONG *)naxes, status);
    if (extname) fits_update_key(f, TSTRING, "EXTNAME", (char *)extname, NULL, status);
    LONGLONG n = 1;
    for (int k = 0; k < naxis; k++) n *= naxes[k];
    if (naxis == 0 || n == 0 || *status) return;
    if (data) {
        fits_write_img(f, datatype, 1, n, (void *)data, status);
        return;
    }
    /* zeros, one row at a time (a CCD-sized zero array is not allocated for this); as int, since cfitsio
     * refuses float data into a RICE-compressed integer image */
    int *zero = calloc((size_t)naxes[0], sizeof *zero);
    if (!zero) {
        *status = MEMORY_ALLOCATION;
        return;
    }
    for (LONGLONG first = 1; first <= n && *status == 0; first += naxes[0])
        fits_write_img(f, TINT, first, naxes[0], zero, status);
    free(zero);
}

void gw_fits_abort_write(gw_fits_out *out)
{
    if (out->f) {
        int status = 0;
        fits_close_file(out->f, &status);
        fits_clear_errmsg();
    }
    zero_free(out->buf);
    memset(out, 0, sizeof *out);
}

/* The length of the finished FITS file in buf: the end of its HDU number nhdu (1-based), found by reading
 * the closed file back (which also proves it parses). */
static int written_length(gw_fits_out *out, int nhdu, size_t *len)
{
    fitsfile *g = NULL;
    int status = 0;
    LONGLONG head = 0, data = 0, end = 0;
    fits_open_memfile(&g, "gw_desi", READONLY, &out->buf, &out->size, 0, NULL, &status);
    fits_movabs_hdu(g, nhdu, NULL, &status);
    fits_get_hduaddrll(g, &head, &data, &end, &status);
    if (g) {
        int st2 = 0;
        fits_close_file(g, &st2);
    }
    if (status == 0 && (end <= 0 || (unsigned long long)end > out->size || end % 2880 != 0)) status = -1;
    *len = (size_t)end;
    return status;
}

int gw_fits_commit_write(gw_fits_out *out, const char *path, char *err, size_t err_size)
{
    int status = 0, nhdu = 0;
    char said[64];
    fits_get_num_hdus(out->f, &nhdu, &status);
    /* CHECKSUM and DATASUM in every HDU, as desispec writes its files (checksum=True) */
    for (int h = 1; h <= nhdu && status == 0; h++) {
        fits_movabs_hdu(out->f, h, NULL, &status);
        fits_write_chksum(out->f, &status);
    }
    fits_close_file(out->f, &status); /* writes the last HDU's fill: the file is complete */
    out->f = NULL;
    size_t len = 0;
    if (status == 0) status = written_length(out, nhdu, &len);
    if (status) {
        set_err(err, err_size, "%s: cfitsio could not finish the file%s", path,
                status > 0 ? gw_fits_said(status, said, sizeof said) : " (its length is not whole blocks)");
        gw_fits_abort_write(out);
        return -1;
    }
    gw_outfile f = GW_OUTFILE_INIT;
    int rc = gw_outfile_open(&f, path, err, err_size);
    if (rc == 0) rc = gw_outfile_write(&f, out->buf, len, err, err_size);
    if (rc == 0) rc = gw_outfile_finish(&f, err, err_size);
    if (rc == 0) rc = gw_outfile_commit(&f, err, err_size);
    gw_outfile_discard(&f);
    gw_fits_abort_write(out);
    return rc;
}

int gw_fits_check_values(const char *path, const char *what, const double *v, size_t n, size_t nx, int ivar,
                         char *err, size_t err_size)
{
    for (size_t i = 0; i < n; i++) {
        if (isfinite(v[i]) && (!ivar || v[i] >= 0)) continue;
        set_err(err, err_size, "%s: %s[%zu][%zu] is %g: expected finite%s", path, what, i / nx, i % nx, v[i],
                ivar ? " and >= 0" : "");
        return -1;
    }
    return 0;
}
