/* SPDX-License-Identifier: MIT
 * cfitsio plumbing of gw_desi (gw_desi_fits.h). cfitsio opens paths itself, so it is never given one: a FIFO
 * put where a file was would block it, and its extended file-name syntax ("x.fits[1]", "!x.fits") would read
 * meaning into the caller's path. It gets bytes instead, read through gw_infile's descriptor (reading) or a
 * buffer that gw_outfile stages (writing). zlib inflates every GZIP tile once before cfitsio may
 * (check_tiles).
 */
#define _POSIX_C_SOURCE 200809L
#include "gw_desi_fits.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "gw_infile.h"
#include "gw_io_err.h"
#include "gw_outfile.h"

/* A keyword name as cfitsio reads it: 8 characters, or up to 71 after HIERARCH (FLEN_KEYWORD is 75). */
enum { GW_FITS_NAME_MAX = 76 };

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

/* gw_fits_said with the messages cfitsio stacked (they name the keyword), for the headers the walk reads. */
static const char *said_all(int status, char *buf, size_t size)
{
    char text[FLEN_STATUS] = "", msg[FLEN_ERRMSG];
    fits_get_errstatus(status, text);
    size_t n = (size_t)snprintf(buf, size, " (cfitsio: %s", text);
    for (int first = 1; fits_read_errmsg(msg);) {
        /* not "Failed to move to HDU number 3 (ffmahd)", said already, nor the optional columns it looked for */
        if (strstr(msg, "(ffmahd)") || strstr(msg, "could not find column") || n >= size) continue;
        /* a message ending in ':' goes on in the next ("Unknown image compression type:", "GARBAGE") */
        n += (size_t)snprintf(buf + n, size - n, "%s%s", first ? ": " : buf[n - 1] == ':' ? " " : "; ", msg);
        first = 0;
    }
    if (n < size) snprintf(buf + n, size - n, ")");
    return buf;
}

static const char *type_name(int type)
{
    switch (type) {
    case IMAGE_HDU: return "an image";
    case BINARY_TBL: return "a binary table";
    case ASCII_TBL: return "an ASCII table";
    default: return "of unknown type";
    }
}

/* The keyword name of card c as cfitsio reads it (ffgknm), upper-cased into name (it compares names so): after
 * "HIERARCH " up to the '=', blanks aside; else up to the first blank, '=' or NUL. */
static void card_name(const char *c, char name[GW_FITS_NAME_MAX])
{
    const char *p = c, *e = c + 80;
    if (strncmp(c, "HIERARCH ", 9) == 0) {
        for (p = c + 9; p < e && *p == ' ';) p++;
        const char *eq = memchr(p, '=', (size_t)(e - p));
        for (e = eq ? eq : e; e > p && e[-1] == ' ';) e--;
    } else {
        const char *stop = p;
        while (stop < e && *stop != ' ' && *stop != '=' && *stop != '\0') stop++;
        e = stop;
    }
    size_t n = 0;
    for (; p < e && n + 1 < GW_FITS_NAME_MAX; p++) name[n++] = (char)toupper((unsigned char)*p);
    name[n] = '\0';
}

/* Whether name is root followed by one or more digits (TTYPEn, ZTILEn, ZNAXISn). */
static int indexed(const char *name, const char *root)
{
    const size_t len = strlen(root);
    if (strncmp(name, root, len) != 0 || !name[len]) return 0;
    for (const char *d = name + len; *d; d++)
        if (*d < '0' || *d > '9') return 0;
    return 1;
}

/* How many cards the header at hdr has before its END card (the name END, as cfitsio ends a header: case and all),
 * or in avail bytes when it has none. */
static size_t header_cards(const char *hdr, size_t avail)
{
    char name[GW_FITS_NAME_MAX];
    size_t n = 0;
    for (; 80 * (n + 1) <= avail; n++) {
        card_name(hdr + 80 * n, name);
        if (strcmp(name, "END") == 0) break;
    }
    return n;
}

/* The first non-blank character of card c's value, found as cfitsio finds it (after "= " in columns 9-10,
 * else after the first '='), or NULL when the card has no value. */
static const char *value_of(const char *c)
{
    const char *v = strncmp(c + 8, "= ", 2) == 0 ? c + 10 : memchr(c, '=', 80);
    if (!v) return NULL;
    if (v != c + 10) v++;
    while (v < c + 80 && *v == ' ') v++;
    return v < c + 80 ? v : NULL;
}

/* A value (up to the end e of its card) that is a whole number of at most 9 digits, comment aside; else -1. */
static long whole_number(const char *v, const char *e)
{
    if (v < e && *v == '+') v++;
    long n = 0;
    int digits = 0;
    for (; v < e && *v >= '0' && *v <= '9' && digits < 10; v++, digits++) n = 10 * n + (*v - '0');
    while (v < e && *v == ' ') v++;
    return digits > 0 && digits <= 9 && (v == e || *v == '/') ? n : -1;
}

/* Whether the header at hdr says ZIMAGE = T: a tile-compressed image. */
static int is_compressed(const char *hdr, size_t avail)
{
    char name[GW_FITS_NAME_MAX];
    for (size_t k = 0, n = header_cards(hdr, avail); k < n; k++) {
        card_name(hdr + 80 * k, name);
        if (strcmp(name, "ZIMAGE") != 0) continue;
        const char *v = value_of(hdr + 80 * k);
        return v && *v == 'T';
    }
    return 0;
}

/* Whether the header at hdr may name Rice compression in any ZCMPTYPE card as cfitsio 4.2 reads one: 'RICE_1' or
 * 'RICE_ONE', quoted or not (cfitsio takes an unquoted value as it is), trailing blanks aside, a quoted string
 * ending at its closing quote or at a NUL byte, where cfitsio's C string ends (fuzz_fits: 'RICE_1 \0' was Rice to
 * cfitsio); case aside, which only errs on the safe side. */
static int is_rice(const char *hdr, size_t avail)
{
    char name[GW_FITS_NAME_MAX];
    for (size_t k = 0, n = header_cards(hdr, avail); k < n; k++) {
        const char *c = hdr + 80 * k;
        card_name(c, name);
        const char *v = strcmp(name, "ZCMPTYPE") == 0 ? value_of(c) : NULL;
        if (!v) continue;
        const int quoted = *v == '\'';
        size_t len = 0;
        v += quoted;
        while (v + len < c + 80 && v[len] != '\0' && v[len] != (quoted ? '\'' : '/')) len++;
        while (len > 0 && v[len - 1] == ' ') len--;
        if ((len == 6 && strncasecmp(v, "RICE_1", 6) == 0) || (len == 8 && strncasecmp(v, "RICE_ONE", 8) == 0))
            return 1;
    }
    return 0;
}

/* Cards that crash cfitsio 4.2 (Debian 12's) while it reads a header, refused before it does; FITS allows
 * none of them (each found by fuzz_fits, the first three kill the process). Names are read as cfitsio reads them
 * (card_name: case aside, HIERARCH's too: fuzz_fits found a ZNAxIS1 of 0 without ZTILE1, the ZNAXIS1 that cfitsio
 * divided by):
 *   a TTYPEn value not in quotes: cfitsio copies it with strcpy into a 70-byte column name, 70 or 71
 *     characters overflow it, and the fortified strcpy aborts (its source today still does so);
 *   an unquoted value of 29 characters or more for a Z keyword (tile compression), which cfitsio reads as a
 *     number: when that fails, its message ("Error in ffc2j ...: " and 30 characters) overflows an 81-byte
 *     buffer, and the fortified strncat aborts;
 *   a ZTILEn or a ZNAXISn that is not a positive whole number: cfitsio 4.2 divides by a tile size of 0, and a
 *     missing ZTILEn is ZNAXISn (SIGFPE; later versions check);
 *   a ZVAL1 that is not a positive whole number in a Rice-compressed header: cfitsio 4.2 takes it as the
 *     block size, whatever ZNAME1 says, and divides by it (SIGFPE; 4.6 refuses 0); a negative one would make its
 *     decoder's block loop stand still;
 *   TFIELDS above 999, the FITS limit: cfitsio allocates column descriptors for as many as it says (10 GB for
 *     a fuzzed header);
 *   a structural keyword (the table's, tile compression's, the image's) given twice: cfitsio looks a keyword up
 *     from wherever its header pointer is, wrapping around, so cfitsio at open and the checks here may read
 *     either (fuzz_fits: a second ZTILE2 of 32, then a heap overflow in cfitsio's tile decoder).
 * The rule broken, with the card's keyword name in key, or NULL. */
static const char *unsafe_card(const char *hdr, size_t avail, char key[GW_FITS_NAME_MAX])
{
    const int rice = is_rice(hdr, avail);
    char name[GW_FITS_NAME_MAX], earlier[GW_FITS_NAME_MAX];
    for (size_t k = 0, n = header_cards(hdr, avail); k < n; k++) {
        const char *c = hdr + 80 * k, *why = NULL;
        card_name(c, name);
        const int ttype = indexed(name, "TTYPE"), ztile = indexed(name, "ZTILE"), zaxis = indexed(name, "ZNAXIS"),
                  tfields = strcmp(name, "TFIELDS") == 0, z = name[0] == 'Z',
                  rice_block = rice && strcmp(name, "ZVAL1") == 0;
        const int structural = z || name[0] == 'T' || strncmp(name, "NAXIS", 5) == 0 || strcmp(name, "PCOUNT") == 0 ||
                               strcmp(name, "GCOUNT") == 0 || strcmp(name, "BITPIX") == 0 ||
                               strcmp(name, "BLANK") == 0 || strcmp(name, "BSCALE") == 0 ||
                               strcmp(name, "BZERO") == 0 || strcmp(name, "EXTNAME") == 0 ||
                               strcmp(name, "THEAP") == 0;
        for (size_t j = 0; structural && j < k && !why; j++) {
            card_name(hdr + 80 * j, earlier);
            if (strcmp(earlier, name) == 0) why = "given twice: a header names each keyword once (FITS)";
        }
        const char *v = !why && (ttype || z || tfields) ? value_of(c) : NULL;
        if (v) {
            /* an unquoted value as cfitsio cuts it: a complex one "(...)" up to its ')', wherever that is (past a
             * '/' too); any other up to its comment; trailing blanks aside */
            const char *end = memchr(v, *v == '(' ? ')' : '/', (size_t)(c + 80 - v));
            end = !end ? c + 80 : *v == '(' ? end + 1 : end;
            size_t len = (size_t)(end - v);
            while (len > 0 && v[len - 1] == ' ') len--;
            if (ttype && *v != '\'') why = "not a string in quotes, as FITS requires of a column name";
            if (zaxis && whole_number(v, c + 80) < 1)
                why = "not a positive whole number (cfitsio 4.2 divides by it where no ZTILEn is given)";
            if (z && *v != '\'' && len >= 29)
                why = "an unquoted value of 29 characters or more, which no tile-compression keyword takes";
            if (ztile && whole_number(v, c + 80) < 1)
                why = "not a positive whole number, as FITS requires of a tile size";
            if (rice_block && whole_number(v, c + 80) < 1)
                why = "not a positive whole number, as a RICE_1 block size must be (cfitsio 4.2 divides by it)";
            if (tfields && (unsigned long)whole_number(v, c + 80) > 999) why = "not a whole number 0..999 (FITS)";
        }
        if (!why) continue;
        memcpy(key, name, GW_FITS_NAME_MAX);
        return why;
    }
    return NULL;
}

/* The pixels of tile t (0-based, axis 1 fastest, as the table's rows go) of an image of naxis[zndim] pixels in
 * tiles of tile[zndim]: ZTILEn each way, fewer where the image's edge cuts the tile; ULLONG_MAX when too many. */
static unsigned long long tile_pixels(LONGLONG t, int zndim, const LONGLONG *naxis, const LONGLONG *tile)
{
    unsigned long long n = 1;
    for (int k = 0; k < zndim; k++) {
        const LONGLONG along = naxis[k] > 0 ? (naxis[k] - 1) / tile[k] + 1 : 1; /* tiles along axis k */
        const LONGLONG first = t % along * tile[k]; /* the tile's first pixel along axis k, 0-based */
        const LONGLONG len = naxis[k] - first < tile[k] ? naxis[k] - first : tile[k];
        t /= along;
        if (len <= 0) return 0;
        n = n > ULLONG_MAX / (unsigned long long)len ? ULLONG_MAX : n * (unsigned long long)len;
    }
    return n;
}

/* Every tile of a tile-compressed HDU: its COMPRESSED_DATA descriptor must lie inside the heap, whatever the
 * algorithm, because cfitsio allocates what a descriptor says before it reads the tile (a damaged descriptor
 * of 0xFFFFFFFF bytes asked for 4 GiB). And cfitsio (4.2, and its source today) inflates a GZIP_1 or GZIP_2 tile into a buffer that it grows by 28800
 * bytes whenever inflate stops short of the stream's end, and zlib stops short for good when the tile's bytes
 * end before its stream does: a tile cut short grows the buffer for ever (a 20 KB image hung its read). So
 * every GZIP tile of a tile-compressed HDU (hdu, its data at byte data, its COMPRESSED_DATA column col) is
 * inflated here first, at open, into a small scratch buffer (gzip or zlib header, up to the tile's bytes plus
 * one), and must end (Z_STREAM_END) having used all its bytes and given exactly the tile's: its pixels (ZTILEn
 * each way, fewer at the image's edges) times ZBITPIX's bytes; a float image's pixels take 8 or 4 bytes,
 * because cfitsio gzips lossless floats as its caller gave them (doubles into a ZBITPIX -32 image too) and
 * quantized ones as int32. A tile whose COMPRESSED_DATA is empty is held in another column, which cfitsio
 * inflates into a buffer it does not grow. RICE_1, HCOMPRESS_1, PLIO_1 and NOCOMPRESS tiles are left to
 * cfitsio once their descriptors are in the heap. */
static int check_tiles(gw_fits_in *in, const char *path, const char *hdu, LONGLONG data, int col, char *err,
                       size_t err_size)
{
    int status = 0, zbitpix = 0, zndim = 0, code = 0;
    char cmp[FLEN_VALUE] = "", key[FLEN_KEYWORD], said[512];
    LONGLONG naxis[6] = {0}, tile[6] = {0}, rowlen = 0, rows = 0, pcount = 0, theap = 0, repeat = 0, width = 0;
    fits_read_key(in->f, TSTRING, "ZCMPTYPE", cmp, NULL, &status);
    const int gzip = !strcmp(cmp, "GZIP_1") || !strcmp(cmp, "GZIP_2"); /* compared as cfitsio compares: case and all */
    /* Any other name cfitsio should refuse, but fuzz_fits found a 'GZIP_ 1' MASK that it opened and then inflated
     * as GZIP, past this check, for ever: only FITS's names pass. */
    static const char *const algorithms[] = {"GZIP_1", "GZIP_2", "RICE_1", "RICE_ONE", "HCOMPRESS_1", "PLIO_1",
                                             "BZIP2_1", "NOCOMPRESS"};
    int named = 0;
    for (size_t i = 0; i < sizeof algorithms / sizeof algorithms[0]; i++) named |= !strcmp(cmp, algorithms[i]);
    if (!status && !named) {
        set_err(err, err_size, "%s: %s: keyword ZCMPTYPE = '%s': not a tile-compression algorithm of FITS (GZIP_1, "
                "GZIP_2, RICE_1, RICE_ONE, HCOMPRESS_1, PLIO_1, BZIP2_1, NOCOMPRESS)", path, hdu, cmp);
        return -1;
    }
    fits_read_key(in->f, TINT, "ZBITPIX", &zbitpix, NULL, &status);
    fits_read_key(in->f, TINT, "ZNAXIS", &zndim, NULL, &status);
    for (int k = 0; k < zndim && k < 6 && status == 0; k++) {
        int absent = 0;
        snprintf(key, sizeof key, "ZNAXIS%d", k + 1);
        fits_read_key(in->f, TLONGLONG, key, &naxis[k], NULL, &status);
        snprintf(key, sizeof key, "ZTILE%d", k + 1);
        if (fits_read_key(in->f, TLONGLONG, key, &tile[k], NULL, &absent)) tile[k] = k == 0 ? naxis[0] : 1;
        if (absent != 0 && absent != KEY_NO_EXIST) status = absent;
        if (tile[k] < 1) tile[k] = 1; /* only for the count: cfitsio refuses a tile of 0 itself */
        /* cfitsio sizes its tile buffers from ZTILEn: a tile beyond its image asks for memory no image needs */
        if (!status && tile[k] > naxis[k] && naxis[k] > 0) {
            set_err(err, err_size, "%s: %s: keyword ZTILE%d = %lld: more than ZNAXIS%d = %lld: a tile larger than its "
                    "image", path, hdu, k + 1, (long long)tile[k], k + 1, (long long)naxis[k]);
            return -1;
        }
    }
    fits_read_key(in->f, TLONGLONG, "NAXIS1", &rowlen, NULL, &status);
    fits_read_key(in->f, TLONGLONG, "NAXIS2", &rows, NULL, &status);
    fits_read_key(in->f, TLONGLONG, "PCOUNT", &pcount, NULL, &status);
    fits_get_coltypell(in->f, col, &code, &repeat, &width, &status);
    if (status || zndim < 1 || zndim > 6) { /* read and checked by cfitsio at its open: not seen */
        set_err(err, err_size, "%s: %s: unreadable tile-compression keywords%s", path, hdu,
                said_all(status, said, sizeof said));
        fits_clear_errmsg();
        return -1;
    }
    const int bytes = zbitpix == 8 || zbitpix == 16 || zbitpix == 32 || zbitpix == 64 ? zbitpix / 8
                      : zbitpix == -32 || zbitpix == -64                           ? 8 /* or 4 */
                                                                                   : 0;
    if (!bytes) {
        set_err(err, err_size, "%s: %s: keyword ZBITPIX = %d: expected 8, 16, 32, 64, -32 or -64 (FITS)", path, hdu,
                zbitpix);
        return -1;
    }
    if (gzip && code != -TBYTE) {
        set_err(err, err_size, "%s: %s: column COMPRESSED_DATA: not of bytes (1PB or 1QB), as GZIP tiles are", path,
                hdu);
        return -1;
    }
    /* the heap: bytes lo..hi of the table's data, THEAP (default NAXIS1 * NAXIS2) to NAXIS1 * NAXIS2 + PCOUNT,
     * inside the file (the walk checked the HDU's end); empty when the header says otherwise */
    unsigned long long lo = 0, hi = 0;
    const unsigned long long avail = in->size - (size_t)data;
    if (rowlen >= 0 && rows >= 0 && pcount >= 0 &&
        (rows == 0 || (unsigned long long)rowlen <= avail / (unsigned long long)rows) &&
        (unsigned long long)pcount <= avail - (unsigned long long)rowlen * (unsigned long long)rows) {
        lo = (unsigned long long)rowlen * (unsigned long long)rows;
        hi = lo + (unsigned long long)pcount;
        int absent = 0;
        if (fits_read_key(in->f, TLONGLONG, "THEAP", &theap, NULL, &absent) == 0)
            lo = theap >= 0 && (unsigned long long)theap <= hi ? (unsigned long long)theap : hi;
        fits_clear_errmsg();
    }
    /* an empty COMPRESSED_DATA tile is read from one of these; with neither, cfitsio 4.2 frees a pointer it never
     * allocated (fuzz_fits) */
    int absent = 0, other = fits_get_colnum(in->f, CASEINSEN, "UNCOMPRESSED_DATA", &(int){0}, &absent) == 0;
    absent = 0;
    other |= fits_get_colnum(in->f, CASEINSEN, "GZIP_COMPRESSED_DATA", &(int){0}, &absent) == 0;
    fits_clear_errmsg();
    unsigned char scratch[16384];
    for (LONGLONG r = 1; r <= rows; r++) {
        LONGLONG len = 0, off = 0;
        if (fits_read_descriptll(in->f, col, r, &len, &off, &status)) {
            set_err(err, err_size, "%s: %s: tile %lld: unreadable descriptor%s", path, hdu, (long long)r,
                    gw_fits_said(status, said, sizeof said));
            return -1;
        }
        if (len == 0 && !other) {
            set_err(err, err_size, "%s: %s: tile %lld: no bytes, and no UNCOMPRESSED_DATA or GZIP_COMPRESSED_DATA "
                    "column holds it: a damaged tile", path, hdu, (long long)r);
            return -1;
        }
        if (len == 0) continue;
        const unsigned long long at = (unsigned long long)off, heap = hi - lo;
        if (len < 0 || off < 0 || at > heap || (unsigned long long)len > heap - at) {
            set_err(err, err_size, "%s: %s: tile %lld: its %lld bytes at heap offset %lld lie outside the heap (bytes "
                    "%llu to %llu of the table's data): a damaged tile", path, hdu, (long long)r, (long long)len,
                    (long long)off, lo, hi);
            return -1;
        }
        if (!gzip) continue;
        const unsigned long long pixels = tile_pixels(r - 1, zndim, naxis, tile);
        const unsigned long long want = pixels > (ULLONG_MAX - 1) / (unsigned)bytes ? ULLONG_MAX - 1 : pixels * bytes;
        unsigned char *next = (unsigned char *)in->buf + data + lo + off;
        unsigned long long left = (unsigned long long)len, out = 0;
        z_stream z;
        memset(&z, 0, sizeof z);
        int rc = inflateInit2(&z, 15 + 32); /* 32: a gzip header (cfitsio's) or a zlib one */
        /* inflate returns Z_OK only when it made progress, so this ends: at the stream's end, on an error, when
         * the input is spent (Z_BUF_ERROR), or one byte past the tile's */
        while (rc == Z_OK && out <= want) {
            if (z.avail_in == 0 && left > 0) {
                z.next_in = next;
                z.avail_in = left < (1u << 30) ? (uInt)left : 1u << 30;
                next += z.avail_in;
                left -= z.avail_in;
            }
            const unsigned long long room = want - out + 1;
            z.next_out = scratch;
            z.avail_out = room < sizeof scratch ? (uInt)room : (uInt)sizeof scratch;
            rc = inflate(&z, Z_NO_FLUSH);
            out += (unsigned long long)(z.next_out - scratch);
        }
        const unsigned long long unused = left + z.avail_in;
        char zsaid[128];
        if (out > want) snprintf(zsaid, sizeof zsaid, "more bytes follow");
        else if (rc == Z_BUF_ERROR)
            snprintf(zsaid, sizeof zsaid, "buffer error: its %lld bytes end before the stream does", (long long)len);
        else snprintf(zsaid, sizeof zsaid, "%s", z.msg ? z.msg : zError(rc));
        inflateEnd(&z);
        if (rc == Z_MEM_ERROR) {
            set_err(err, err_size, "%s: %s: tile %lld: out of memory to inflate it", path, hdu, (long long)r);
            return -1;
        }
        if (rc != Z_STREAM_END || out > want) {
            set_err(err, err_size, "%s: %s: tile %lld: its GZIP data does not end within the tile's %llu bytes (zlib: "
                    "%s): a damaged tile", path, hdu, (long long)r, want, zsaid);
            return -1;
        }
        if (out != want && !(zbitpix < 0 && out == 4 * pixels)) {
            char also[32] = "";
            if (zbitpix < 0) snprintf(also, sizeof also, " or %llu", 4 * pixels);
            set_err(err, err_size, "%s: %s: tile %lld: its GZIP data ends after %llu bytes, where the tile's %llu "
                    "pixels take %llu%s: a damaged tile", path, hdu, (long long)r, out, pixels, want, also);
            return -1;
        }
        if (unused > 0) {
            set_err(err, err_size, "%s: %s: tile %lld: its GZIP data ends %llu bytes before the tile's %lld bytes "
                    "do: a damaged tile", path, hdu, (long long)r, unused, (long long)len);
            return -1;
        }
    }
    return 0;
}

/* Every HDU's header, once, in order; the EXTNAMEs and types kept for gw_fits_move_named (which, unlike
 * cfitsio's fits_movnam_hdu, must see every HDU to find a name given twice, and says "corrupt header" where
 * cfitsio's says "not found"). HDU h + 1 starts where HDU h's data ends, and the last HDU ends the file. */
static int walk_hdus(gw_fits_in *in, const char *path, char *err, size_t err_size)
{
    LONGLONG end = 0; /* where the HDUs read so far end */
    int cap = 0;
    for (int h = 1;; h++) {
        int status = 0, type = 0;
        char said[512];
        if (h > 1) {
            if ((unsigned long long)end == in->size) break;
            const size_t left = in->size - (size_t)end;
            const char *next = (const char *)in->buf + end;
            if (left < 8 || memcmp(next, "XTENSION", 8) != 0) { /* not an extension, so not an HDU */
                set_err(err, err_size, "%s: %zu bytes after the last HDU (HDU %d ends at byte %lld): a FITS file "
                        "ends with its last HDU%s", path, left, h - 2, (long long)end,
                        left % 2880 ? " and is a whole number of 2880-byte blocks" : "");
                return -1;
            }
            char key[GW_FITS_NAME_MAX];
            const char *why = unsafe_card(next, left, key);
            if (why) {
                set_err(err, err_size, "%s: HDU %d: %skeyword %s: %s", path, h - 1,
                        (key[0] | 0x20) == 'z' ? "corrupt tile-compressed image header: " : "", key, why);
                return -1;
            }
            /* an extension begun in the last, partial block, which cfitsio is not given, ends there too */
            if ((size_t)end == in->blocks || fits_movabs_hdu(in->f, h, &type, &status)) {
                if ((size_t)end == in->blocks || status == END_OF_FILE)
                    set_err(err, err_size, "%s: HDU %d: truncated inside its header: it starts at byte %lld, the file "
                            "ends at byte %zu before its END card", path, h - 1, (long long)end, in->size);
                else
                    set_err(err, err_size, "%s: HDU %d: corrupt %sheader%s", path, h - 1,
                            is_compressed(next, left) ? "tile-compressed image " : "",
                            said_all(status, said, sizeof said));
                fits_clear_errmsg();
                return -1;
            }
        }
        LONGLONG head = 0, data = 0;
        if (fits_get_hdu_type(in->f, &type, &status) || fits_get_hduaddrll(in->f, &head, &data, &end, &status)) {
            set_err(err, err_size, "%s: HDU %d: unreadable header%s", path, h - 1, said_all(status, said, sizeof said));
            fits_clear_errmsg();
            return -1;
        }
        /* cfitsio 4.2 reads the tiles of a compressed image whose table lacks COMPRESSED_DATA from column 0,
         * out of bounds (SIGSEGV); FITS tile compression requires that column, of variable-length arrays */
        int col = 0, code = 0;
        LONGLONG repeat = 0, width = 0;
        const int compressed = fits_is_compressed_image(in->f, &status);
        if (compressed &&
            (fits_get_colnum(in->f, CASEINSEN, "COMPRESSED_DATA", &col, &status) ||
             fits_get_coltypell(in->f, col, &code, &repeat, &width, &status) || code >= 0)) {
            set_err(err, err_size, "%s: HDU %d: a tile-compressed image without a COMPRESSED_DATA column of "
                    "variable-length arrays", path, h - 1);
            fits_clear_errmsg();
            return -1;
        }
        if (end < 0 || (unsigned long long)end > in->blocks) { /* whole blocks: past blocks is past the end */
            set_err(err, err_size, "%s: HDU %d: truncated: its header sizes its data to end at byte %lld, the file "
                    "holds %zu bytes", path, h - 1, (long long)end, in->size);
            return -1;
        }
        if (h > cap) {
            cap = cap ? 2 * cap : 8;
            gw_fits_hdu *grown = realloc(in->hdus, (size_t)cap * sizeof *grown);
            if (!grown) {
                set_err(err, err_size, "%s: out of memory for %d HDUs", path, cap);
                return -1;
            }
            in->hdus = grown;
        }
        gw_fits_hdu *u = &in->hdus[h - 1];
        u->type = type;
        u->name[0] = '\0';
        if (fits_read_key(in->f, TSTRING, "EXTNAME", u->name, NULL, &status)) u->name[0] = '\0';
        fits_clear_errmsg();
        char label[FLEN_VALUE + 8];
        if (u->name[0]) snprintf(label, sizeof label, "HDU '%s'", u->name);
        else snprintf(label, sizeof label, "HDU %d", h - 1);
        if (compressed && check_tiles(in, path, label, data, col, err, err_size) != 0) return -1;
        in->nhdu = h;
    }
    int status = 0;
    char said[64];
    if (fits_movabs_hdu(in->f, 1, NULL, &status)) { /* back to the primary, where the readers start */
        set_err(err, err_size, "%s: HDU 0: unreadable%s", path, gw_fits_said(status, said, sizeof said));
        return -1;
    }
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
    int status = 0;
    /* The name is only a label for cfitsio (no extended syntax in it); the buffer is read in place. cfitsio
     * gets the file's whole blocks: what it reads of a file that is not whole blocks is only the headers the
     * walk reads to say what is wrong with it. */
    in->blocks = in->size - in->size % 2880;
    if (fits_open_memfile(&in->f, "gw_desi", READONLY, &in->buf, &in->blocks, 0, NULL, &status)) {
        char said[512];
        if (status == END_OF_FILE)
            set_err(err, err_size, "%s: truncated inside the primary header: the file ends at byte %zu, before its "
                    "END card", path, in->size);
        else
            set_err(err, err_size, "%s: not a readable FITS file%s", path, said_all(status, said, sizeof said));
        in->f = NULL;
        goto fail;
    }
    if (walk_hdus(in, path, err, err_size) == 0) return 0;
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
    free(in->hdus);
    memset(in, 0, sizeof *in);
}

int gw_fits_move_named(gw_fits_in *in, const char *path, const char *name, int type, const char *missing, char *err,
                       size_t err_size)
{
    int first = 0;
    for (int h = 1; h <= in->nhdu; h++) {
        if (strcasecmp(in->hdus[h - 1].name, name) != 0) continue;
        if (first) {
            set_err(err, err_size, "%s: HDUs %d and %d are both named '%s': expected one", path, first - 1, h - 1,
                    name);
            return -1;
        }
        first = h;
    }
    if (!first) {
        set_err(err, err_size, "%s: HDU '%s' missing%s", path, name, missing);
        return -1;
    }
    if (in->hdus[first - 1].type != type) {
        set_err(err, err_size, "%s: HDU '%s' (HDU %d) is %s: expected %s", path, name, first - 1,
                type_name(in->hdus[first - 1].type), type_name(type));
        return -1;
    }
    int status = 0;
    char said[64];
    if (fits_movabs_hdu(in->f, first, NULL, &status)) { /* read once at open: cannot fail but for memory */
        set_err(err, err_size, "%s: HDU '%s': unreadable%s", path, name, gw_fits_said(status, said, sizeof said));
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
