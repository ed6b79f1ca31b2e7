/* SPDX-License-Identifier: MIT
 * .npy read and write (see gw_npy.h). The header is a Python dict literal; rather than evaluate it, a small
 * recursive-descent parser accepts exactly what numpy writes (and what numpy.lib.format reads): string keys,
 * a string descr, True/False, a tuple of integers (Python 2 files may carry an 'L' suffix), commas, spaces.
 */
#define _POSIX_C_SOURCE 200809L
#include "gw_npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_infile.h"
#include "gw_io_err.h"

static const uint8_t npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

const char *gw_npy_dtype_descr(gw_npy_dtype dtype)
{
    switch (dtype) {
    case GW_NPY_U1: return "|u1";
    case GW_NPY_U2: return "<u2";
    case GW_NPY_F4: return "<f4";
    case GW_NPY_F8: return "<f8";
    case GW_NPY_I4: return "<i4";
    default: return "?";
    }
}

const char *gw_npy_dtype_name(gw_npy_dtype dtype)
{
    switch (dtype) {
    case GW_NPY_U1: return "uint8";
    case GW_NPY_U2: return "uint16";
    case GW_NPY_F4: return "float32";
    case GW_NPY_F8: return "float64";
    case GW_NPY_I4: return "int32";
    default: return "?";
    }
}

size_t gw_npy_dtype_size(gw_npy_dtype dtype)
{
    switch (dtype) {
    case GW_NPY_U1: return 1;
    case GW_NPY_U2: return 2;
    case GW_NPY_F4: return 4;
    case GW_NPY_F8: return 8;
    case GW_NPY_I4: return 4;
    default: return 0;
    }
}

void gw_npy_format_shape(int ndim, const int64_t *shape, char *buf, size_t buf_size)
{
    if (!buf || buf_size == 0) return;
    if (ndim < 0 || ndim > GW_NPY_MAX_NDIM || (ndim > 0 && !shape)) { /* never read past shape[GW_NPY_MAX_NDIM] */
        snprintf(buf, buf_size, "(invalid shape: ndim %d)", ndim);
        return;
    }
    size_t used = (size_t)snprintf(buf, buf_size, "(");
    for (int i = 0; i < ndim && used < buf_size; i++)
        used += (size_t)snprintf(buf + used, buf_size - used, "%s%" PRId64, i ? ", " : "", shape[i]);
    if (used < buf_size) snprintf(buf + used, buf_size - used, ndim == 1 ? ",)" : ")");
}

/* ---- header parsing ---- */

typedef struct header {
    char descr[32];
    int fortran_order;
    int ndim;                       /* may exceed GW_NPY_MAX_NDIM: only the first ones are stored */
    int64_t shape[GW_NPY_MAX_NDIM];
    int dim_too_large;              /* a dimension beyond int64 */
    char shape_text[128];           /* the tuple as written, for messages */
} header;

typedef struct parser {
    const char *s;
    size_t len, pos;
    char *err;
    size_t err_size;
    const char *path;
} parser;

static int parse_fail(parser *ps, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    set_err(ps->err, ps->err_size, "%s: header: %s at header byte %zu (the header must be a dict like {'descr': "
            "'<u2', 'fortran_order': False, 'shape': (17, 512, 512), })", ps->path, what, ps->pos);
    return -1;
}

static void skip_space(parser *ps)
{
    while (ps->pos < ps->len && (ps->s[ps->pos] == ' ' || ps->s[ps->pos] == '\t' || ps->s[ps->pos] == '\n' ||
                                 ps->s[ps->pos] == '\r'))
        ps->pos++;
}

static int peek(parser *ps)
{
    return ps->pos < ps->len ? (unsigned char)ps->s[ps->pos] : -1;
}

static int expect_char(parser *ps, char c, const char *what)
{
    skip_space(ps);
    if (peek(ps) != (unsigned char)c) {
        if (peek(ps) < 0) return parse_fail(ps, "unexpected end of the header, expected %s", what);
        return parse_fail(ps, "expected %s, found '%c'", what, ps->s[ps->pos]);
    }
    ps->pos++;
    return 0;
}

/* A quoted string without escapes into out. */
static int parse_string(parser *ps, char *out, size_t out_size, const char *what)
{
    skip_space(ps);
    const int q = peek(ps);
    if (q != '\'' && q != '"') {
        if (q < 0) return parse_fail(ps, "unexpected end of the header, expected %s", what);
        return parse_fail(ps, "expected %s (a quoted string), found '%c'", what, ps->s[ps->pos]);
    }
    const size_t start = ++ps->pos;
    while (ps->pos < ps->len && ps->s[ps->pos] != q) {
        if (ps->s[ps->pos] == '\\') return parse_fail(ps, "escape sequences in strings are not supported");
        ps->pos++;
    }
    if (ps->pos >= ps->len) return parse_fail(ps, "unterminated string");
    const size_t n = ps->pos - start;
    ps->pos++;
    if (n + 1 > out_size) {
        ps->pos = start;
        return parse_fail(ps, "%s is too long (%zu characters)", what, n);
    }
    memcpy(out, ps->s + start, n);
    out[n] = '\0';
    return 0;
}

static int parse_bool(parser *ps, int *value)
{
    skip_space(ps);
    if (ps->len - ps->pos >= 4 && memcmp(ps->s + ps->pos, "True", 4) == 0) {
        ps->pos += 4;
        *value = 1;
        return 0;
    }
    if (ps->len - ps->pos >= 5 && memcmp(ps->s + ps->pos, "False", 5) == 0) {
        ps->pos += 5;
        *value = 0;
        return 0;
    }
    return parse_fail(ps, "fortran_order must be True or False");
}

/* An integer literal: optional sign, digits, optional L (Python 2). Values beyond int64 set too_large. */
static int parse_int(parser *ps, int64_t *value, int *too_large)
{
    skip_space(ps);
    int negative = 0;
    if (peek(ps) == '-' || peek(ps) == '+') {
        negative = ps->s[ps->pos] == '-';
        ps->pos++;
        skip_space(ps);
    }
    if (peek(ps) < '0' || peek(ps) > '9') return parse_fail(ps, "expected an integer in the shape");
    uint64_t v = 0;
    int big = 0;
    while (peek(ps) >= '0' && peek(ps) <= '9') {
        const unsigned d = (unsigned)(ps->s[ps->pos++] - '0');
        if (v > (UINT64_MAX - d) / 10) big = 1;
        else v = v * 10 + d;
    }
    if (peek(ps) == 'L' || peek(ps) == 'l') ps->pos++;
    if (big || v > (uint64_t)INT64_MAX) {
        *too_large = 1;
        *value = negative ? INT64_MIN : INT64_MAX;
    } else {
        *value = negative ? -(int64_t)v : (int64_t)v;
    }
    return 0;
}

/* A tuple of integers: () (5,) (3, 4) (3, 4,); "(5)" is an int in Python, not a tuple. */
static int parse_shape(parser *ps, header *h)
{
    skip_space(ps);
    const size_t start = ps->pos;
    if (expect_char(ps, '(', "a shape tuple '('")) return -1;
    h->ndim = 0;
    int commas = 0;
    for (;;) {
        skip_space(ps);
        if (peek(ps) == ')') {
            ps->pos++;
            break;
        }
        int64_t v = 0;
        if (parse_int(ps, &v, &h->dim_too_large)) return -1;
        if (h->ndim < GW_NPY_MAX_NDIM) h->shape[h->ndim] = v;
        h->ndim++;
        skip_space(ps);
        if (peek(ps) == ',') {
            ps->pos++;
            commas++;
        } else if (peek(ps) != ')') {
            return parse_fail(ps, "expected ',' or ')' in the shape tuple");
        }
    }
    if (h->ndim == 1 && commas == 0) {
        ps->pos = start;
        return parse_fail(ps, "the shape must be a tuple: a one-element tuple needs a trailing comma, as in (5,)");
    }
    size_t n = ps->pos - start;
    if (n >= sizeof h->shape_text) n = sizeof h->shape_text - 4;
    memcpy(h->shape_text, ps->s + start, n);
    h->shape_text[n] = '\0';
    if (ps->pos - start > n) strcat(h->shape_text, "...");
    return 0;
}

static int parse_header(const char *text, size_t len, const char *path, header *h, char *err, size_t err_size)
{
    parser ps = {text, len, 0, err, err_size, path};
    memset(h, 0, sizeof *h);
    int seen_descr = 0, seen_fortran = 0, seen_shape = 0;
    if (expect_char(&ps, '{', "'{'")) return -1;
    for (;;) {
        skip_space(&ps);
        if (peek(&ps) == '}') {
            ps.pos++;
            break;
        }
        char key[32];
        const size_t key_pos = ps.pos;
        if (parse_string(&ps, key, sizeof key, "a key")) return -1;
        if (expect_char(&ps, ':', "':' after the key")) return -1;
        int *seen = !strcmp(key, "descr") ? &seen_descr
                    : !strcmp(key, "fortran_order") ? &seen_fortran
                    : !strcmp(key, "shape") ? &seen_shape : NULL;
        if (!seen) {
            ps.pos = key_pos;
            return parse_fail(&ps, "unknown key '%s' (a .npy header has exactly descr, fortran_order and shape)", key);
        }
        if (*seen) {
            ps.pos = key_pos;
            return parse_fail(&ps, "duplicate key '%s'", key);
        }
        *seen = 1;
        if (seen == &seen_descr) {
            skip_space(&ps);
            if (peek(&ps) == '[')
                return parse_fail(&ps, "descr is a list (a structured dtype): only plain arrays are supported");
            if (parse_string(&ps, h->descr, sizeof h->descr, "the descr string")) return -1;
        } else if (seen == &seen_fortran) {
            if (parse_bool(&ps, &h->fortran_order)) return -1;
        } else if (parse_shape(&ps, h)) {
            return -1;
        }
        skip_space(&ps);
        if (peek(&ps) == ',') {
            ps.pos++;
        } else if (peek(&ps) != '}') {
            if (peek(&ps) < 0) return parse_fail(&ps, "unexpected end of the header, expected ',' or '}'");
            return parse_fail(&ps, "expected ',' or '}', found '%c'", ps.s[ps.pos]);
        }
    }
    skip_space(&ps);
    if (ps.pos < ps.len && text[ps.pos] != '\0')
        return parse_fail(&ps, "unexpected '%c' after the dict (only spaces and a newline may pad it)", text[ps.pos]);
    const char *missing = !seen_descr ? "descr" : !seen_fortran ? "fortran_order" : !seen_shape ? "shape" : NULL;
    if (missing) {
        set_err(err, err_size, "%s: header: missing key '%s' (a .npy header has exactly descr, fortran_order and "
                "shape)", path, missing);
        return -1;
    }
    return 0;
}

/* A readable name for any numpy descr, for the wrong-dtype message: '<f8' -> "float64". */
static void describe_descr(const char *descr, char *buf, size_t buf_size)
{
    const char order = descr[0];
    const char *p = (order == '<' || order == '>' || order == '|' || order == '=') ? descr + 1 : descr;
    const char kind = p[0];
    if (kind == 'O' && !p[1]) {
        snprintf(buf, buf_size, "Python objects");
        return;
    }
    char *end = NULL;
    long size = p[0] ? strtol(p + 1, &end, 10) : 0;
    if (!p[0] || !end || *end || size <= 0 || size > 1024) {
        snprintf(buf, buf_size, "not a dtype this tool knows");
        return;
    }
    const char *base;
    switch (kind) {
    case 'u': base = "uint"; break;
    case 'i': base = "int"; break;
    case 'f': base = "float"; break;
    case 'c': base = "complex"; break;
    case 'b': base = "bool"; break;
    case 'U': base = "unicode string"; break;
    case 'S': base = "byte string"; break;
    case 'V': base = "void"; break;
    case 'O': base = "Python objects"; break;
    case 'M': base = "datetime64"; break;
    case 'm': base = "timedelta64"; break;
    default: snprintf(buf, buf_size, "not a dtype this tool knows"); return;
    }
    if (kind == 'u' || kind == 'i' || kind == 'f' || kind == 'c')
        snprintf(buf, buf_size, "%s%ld%s", base, size * 8, order == '>' && size > 1 ? ", big-endian" : "");
    else
        snprintf(buf, buf_size, "%s", base);
}

/* The dtype of descr, and whether its bytes need swapping on this host; -1 for any other descr. */
static int dtype_of_descr(const char *descr, gw_npy_dtype *dtype, int *swap)
{
    const int little = host_is_little_endian();
    if (!strcmp(descr, "|u1") || !strcmp(descr, "<u1") || !strcmp(descr, ">u1")) {
        *dtype = GW_NPY_U1;
        *swap = 0;
        return 0;
    }
    const char *types[2][2] = {{"<u2", ">u2"}, {"<f4", ">f4"}};
    const gw_npy_dtype values[2] = {GW_NPY_U2, GW_NPY_F4};
    for (int t = 0; t < 2; t++) {
        for (int o = 0; o < 2; o++) {
            if (!strcmp(descr, types[t][o])) {
                *dtype = values[t];
                *swap = (o == 0) != little;
                return 0;
            }
        }
    }
    return -1;
}

static void swap_bytes(void *data, size_t count, size_t size)
{
    uint8_t *b = data;
    for (size_t i = 0; i < count; i++, b += size)
        for (size_t k = 0; k < size / 2; k++) {
            const uint8_t t = b[k];
            b[k] = b[size - 1 - k];
            b[size - 1 - k] = t;
        }
}

static void expected_text(gw_npy_dtype want, char *buf, size_t size)
{
    if (want == GW_NPY_ANY)
        snprintf(buf, size, "'|u1' (uint8), '<u2' (uint16) or '<f4' (float32)");
    else
        snprintf(buf, size, "'%s' (%s)", gw_npy_dtype_descr(want), gw_npy_dtype_name(want));
}

/* Everything the header says, checked against what the caller accepts. 0 or -1 (err set). */
static int check_header(const header *h, const char *path, gw_npy_dtype want, int min_ndim, int max_ndim,
                        const char *layout, gw_npy_dtype *dtype, int *swap, size_t *count, char *err, size_t err_size)
{
    char name[64], expected[96];
    if (dtype_of_descr(h->descr, dtype, swap) || (want != GW_NPY_ANY && *dtype != want)) {
        describe_descr(h->descr, name, sizeof name);
        expected_text(want, expected, sizeof expected);
        set_err(err, err_size, "%s: dtype '%s' (%s): expected %s", path, h->descr, name, expected);
        return -1;
    }
    if (h->fortran_order) {
        set_err(err, err_size, "%s: fortran_order is True: only C-order arrays are supported (save it with "
                "np.save(path, np.ascontiguousarray(a)))", path);
        return -1;
    }
    if (h->ndim < min_ndim || h->ndim > max_ndim) {
        char ranks[64];
        if (min_ndim == max_ndim) snprintf(ranks, sizeof ranks, "rank %d", min_ndim);
        else if (max_ndim == min_ndim + 1) snprintf(ranks, sizeof ranks, "rank %d or %d", min_ndim, max_ndim);
        else snprintf(ranks, sizeof ranks, "rank %d to %d", min_ndim, max_ndim);
        set_err(err, err_size, "%s: shape %s has rank %d: expected %s%s%s%s", path, h->shape_text, h->ndim, ranks,
                layout ? " (" : "", layout ? layout : "", layout ? ")" : "");
        return -1;
    }
    for (int i = 0; i < h->ndim; i++) {
        if (h->shape[i] < 1) {
            set_err(err, err_size, "%s: shape %s: dimension %d is %" PRId64 ": every dimension must be at least 1",
                    path, h->shape_text, i, h->shape[i]);
            return -1;
        }
    }
    const size_t item = gw_npy_dtype_size(*dtype);
    const uint64_t limit = (uint64_t)(SIZE_MAX < (uint64_t)INT64_MAX ? SIZE_MAX : (uint64_t)INT64_MAX);
    uint64_t bytes = item;
    int overflow = h->dim_too_large;
    for (int i = 0; i < h->ndim && !overflow; i++) {
        if (bytes > limit / (uint64_t)h->shape[i]) overflow = 1;
        else bytes *= (uint64_t)h->shape[i];
    }
    if (overflow) {
        set_err(err, err_size, "%s: shape %s: the size overflows: the element count times %zu bytes (%s) is "
                "beyond what this machine can address", path, h->shape_text, item, gw_npy_dtype_name(*dtype));
        return -1;
    }
    *count = (size_t)(bytes / item);
    return 0;
}

/* fread until done; 0 or -1. */
static int read_exact(FILE *f, void *buf, size_t n)
{
    return fread(buf, 1, n, f) == n ? 0 : -1;
}

int gw_npy_read(const char *path, gw_npy_dtype want, int min_ndim, int max_ndim, const char *layout, gw_npy_array *a,
                char *err, size_t err_size)
{
    if (!a) {
        set_err(err, err_size, "%s: gw_npy_read: the array a is NULL", path ? path : "(null)");
        return -1;
    }
    memset(a, 0, sizeof *a);
    if (!path || !*path) {
        set_err(err, err_size, "gw_npy_read: no path given%s", path ? " (the path is empty)" : "");
        return -1;
    }
    if (want < GW_NPY_ANY || want > GW_NPY_F4) {
        set_err(err, err_size, "%s: gw_npy_read: dtype %d is not GW_NPY_ANY, GW_NPY_U1, GW_NPY_U2 or GW_NPY_F4", path,
                (int)want);
        return -1;
    }
    if (min_ndim < 0 || min_ndim > max_ndim || max_ndim > GW_NPY_MAX_NDIM) {
        set_err(err, err_size, "%s: gw_npy_read: ranks %d..%d: need 0 <= min_ndim <= max_ndim <= %d", path, min_ndim,
                max_ndim, GW_NPY_MAX_NDIM);
        return -1;
    }
    /* gw_infile_open: only a regular file gets a descriptor (a FIFO, a device or a directory fails at once
     * instead of blocking), and its size comes from that descriptor, not from a second look at the path. */
    struct stat st;
    const int fd = gw_infile_open(path, &st, err, err_size);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        set_err(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    char *text = NULL;
    void *data = NULL;
    const uint64_t file_size = (uint64_t)st.st_size;
    uint8_t pre[12];
    const size_t got = fread(pre, 1, file_size < 12 ? (size_t)file_size : 12, f);
    if (got < 6 && got == file_size && memcmp(pre, npy_magic, got) == 0) {
        if (got == 0)
            set_err(err, err_size, "%s: not a .npy file: bad magic (the file is empty; a .npy file starts with "
                    "\\x93NUMPY)", path);
        else
            set_err(err, err_size, "%s: truncated: the file ends inside the .npy magic (%zu of 6 bytes)", path, got);
        goto fail;
    }
    if (got < 6 || memcmp(pre, npy_magic, 6) != 0) {
        set_err(err, err_size, "%s: not a .npy file: bad magic (a .npy file starts with \\x93NUMPY)", path);
        goto fail;
    }
    if (got < 8) {
        set_err(err, err_size, "%s: truncated: the file ends inside the .npy preamble (%zu bytes)", path, got);
        goto fail;
    }
    const unsigned major = pre[6], minor = pre[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0) {
        set_err(err, err_size, "%s: unsupported .npy format version %u.%u: supported are 1.0, 2.0 and 3.0", path,
                major, minor);
        goto fail;
    }
    const size_t pre_len = major == 1 ? 10 : 12;
    if (got < pre_len) {
        set_err(err, err_size, "%s: truncated: the file ends inside the .npy preamble (%zu of %zu bytes)", path,
                got, pre_len);
        goto fail;
    }
    const uint64_t header_len = major == 1 ? (uint64_t)pre[8] | (uint64_t)pre[9] << 8
                                           : (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 |
                                                 (uint64_t)pre[11] << 24;
    if (header_len > GW_NPY_MAX_HEADER_BYTES) {
        set_err(err, err_size, "%s: header length %" PRIu64 " is absurd (more than 1 MiB): not a real .npy file",
                path, header_len);
        goto fail;
    }
    if (pre_len + header_len > file_size) {
        set_err(err, err_size, "%s: header length %" PRIu64 " runs past the end of the file (%" PRIu64 " bytes)", path,
                header_len, file_size);
        goto fail;
    }
    text = malloc((size_t)header_len + 1);
    if (!text) {
        set_err(err, err_size, "%s: out of memory", path);
        goto fail;
    }
    if (fseek(f, (long)pre_len, SEEK_SET) != 0 || read_exact(f, text, (size_t)header_len)) {
        set_err(err, err_size, "%s: read failed in the header", path);
        goto fail;
    }
    text[header_len] = '\0';
    if (memchr(text, '\0', (size_t)header_len)) {
        set_err(err, err_size, "%s: header: contains a NUL byte: not a .npy header", path);
        goto fail;
    }
    header h;
    if (parse_header(text, (size_t)header_len, path, &h, err, err_size)) goto fail;
    gw_npy_dtype dtype;
    int swap = 0;
    size_t count = 0;
    if (check_header(&h, path, want, min_ndim, max_ndim, layout, &dtype, &swap, &count, err, err_size)) goto fail;
    const size_t item = gw_npy_dtype_size(dtype);
    const uint64_t data_bytes = (uint64_t)count * item, at = pre_len + header_len, avail = file_size - at;
    if (avail < data_bytes) {
        set_err(err, err_size, "%s: truncated: the header describes %" PRIu64 " data bytes (shape %s, %s), the file "
                "holds %" PRIu64, path, data_bytes, h.shape_text, gw_npy_dtype_name(dtype), avail);
        goto fail;
    }
    if (avail > data_bytes) {
        set_err(err, err_size, "%s: %" PRIu64 " trailing bytes after the data: the file is %" PRIu64 " bytes, the "
                "header says %" PRIu64 " + %" PRIu64 " (shape %s, %s)", path, avail - data_bytes, file_size, at,
                data_bytes, h.shape_text, gw_npy_dtype_name(dtype));
        goto fail;
    }
    data = malloc((size_t)data_bytes);
    if (!data) {
        set_err(err, err_size, "%s: out of memory for %" PRIu64 " data bytes (shape %s)", path, data_bytes,
                h.shape_text);
        goto fail;
    }
    if (read_exact(f, data, (size_t)data_bytes)) {
        set_err(err, err_size, "%s: read failed in the data: %s", path,
                ferror(f) ? strerror(errno) : "the file shrank while it was read");
        goto fail;
    }
    if (fgetc(f) != EOF) { /* the size came from fstat: a file that grew since is not the file we checked */
        set_err(err, err_size, "%s: the file grew while it was read (it was %" PRIu64 " bytes): read it again when "
                "it is complete", path, file_size);
        goto fail;
    }
    if (swap) swap_bytes(data, count, item);
    fclose(f);
    free(text);
    a->dtype = dtype;
    a->ndim = h.ndim;
    memcpy(a->shape, h.shape, sizeof a->shape);
    a->count = count;
    a->data = data;
    return 0;
fail:
    fclose(f);
    free(text);
    free(data);
    return -1;
}

void gw_npy_free(gw_npy_array *a)
{
    if (!a) return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---- writing ---- */

enum { SWAP_CHUNK = 1 << 16 };

int gw_npy_stage(gw_outfile *f, const char *path, gw_npy_dtype dtype, int ndim, const int64_t *shape,
                 const void *data, char *err, size_t err_size)
{
    const size_t item = gw_npy_dtype_size(dtype);
    /* One message per argument, each naming it and its rule. */
    const char *bad = !f                                       ? "the staged file f is NULL"
                      : !path || !*path                        ? "path is NULL or empty"
                      : !item                                  ? "dtype is not GW_NPY_U1, GW_NPY_U2, GW_NPY_F4, "
                                                                 "GW_NPY_F8 or GW_NPY_I4"
                      : ndim < 1 || ndim > GW_NPY_MAX_NDIM     ? "ndim is outside 1..GW_NPY_MAX_NDIM (8)"
                      : !shape                                 ? "shape is NULL"
                      : !data                                  ? "data is NULL"
                                                               : NULL;
    if (f) *f = (gw_outfile)GW_OUTFILE_INIT;
    if (bad) {
        set_err(err, err_size, "%s: gw_npy_write: bad arguments (dtype %d, ndim %d): %s; nothing written",
                path ? path : "(null)", (int)dtype, ndim, bad);
        return -1;
    }
    uint64_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1 || count > (uint64_t)(SIZE_MAX / item) / (uint64_t)shape[i]) {
            set_err(err, err_size, "%s: gw_npy_write: dimension %d is %" PRId64 " (must be at least 1, and the size "
                    "must fit in memory); nothing written", path, i, shape[i]);
            return -1;
        }
        count *= (uint64_t)shape[i];
    }
    char shape_text[GW_NPY_MAX_NDIM * 22 + 8];
    gw_npy_format_shape(ndim, shape, shape_text, sizeof shape_text);
    char dict[sizeof shape_text + 96];
    const int dict_len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                                  gw_npy_dtype_descr(dtype), shape_text);
    /* numpy pads with spaces so the data starts on a 64-byte boundary, and ends the header with '\n'. */
    size_t pre_len = 10;
    size_t header_len = (size_t)dict_len + 1;
    header_len += (64 - (pre_len + header_len) % 64) % 64;
    if (header_len > 65535) {
        pre_len = 12;
        header_len = (size_t)dict_len + 1;
        header_len += (64 - (pre_len + header_len) % 64) % 64;
    }
    uint8_t head[12 + sizeof dict + 64];
    memcpy(head, npy_magic, 6);
    head[6] = pre_len == 10 ? 1 : 2;
    head[7] = 0;
    for (size_t b = 0; b < pre_len - 8; b++) head[8 + b] = (uint8_t)(header_len >> (8 * b));
    memcpy(head + pre_len, dict, (size_t)dict_len);
    memset(head + pre_len + dict_len, ' ', header_len - (size_t)dict_len - 1);
    head[pre_len + header_len - 1] = '\n';

    if (gw_outfile_open(f, path, err, err_size)) return -1;
    if (gw_outfile_write(f, head, pre_len + header_len, err, err_size)) goto fail;
    const size_t bytes = (size_t)count * item;
    if (item == 1 || host_is_little_endian()) {
        if (gw_outfile_write(f, data, bytes, err, err_size)) goto fail;
    } else {
        /* a big-endian host: the file is little-endian, like the descr says */
        uint8_t chunk[SWAP_CHUNK];
        for (size_t at = 0; at < bytes; at += SWAP_CHUNK) {
            const size_t n = bytes - at < SWAP_CHUNK ? bytes - at : SWAP_CHUNK;
            memcpy(chunk, (const uint8_t *)data + at, n);
            swap_bytes(chunk, n / item, item);
            if (gw_outfile_write(f, chunk, n, err, err_size)) goto fail;
        }
    }
    if (gw_outfile_finish(f, err, err_size)) goto fail;
    return 0;
fail:
    gw_outfile_discard(f);
    return -1;
}

int gw_npy_write(const char *path, gw_npy_dtype dtype, int ndim, const int64_t *shape, const void *data, char *err,
                 size_t err_size)
{
    gw_outfile f;
    if (gw_npy_stage(&f, path, dtype, ndim, shape, data, err, err_size)) return -1;
    if (gw_outfile_commit(&f, err, err_size)) {
        gw_outfile_discard(&f);
        return -1;
    }
    return 0;
}
