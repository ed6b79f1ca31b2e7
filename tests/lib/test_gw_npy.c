/* SPDX-License-Identifier: MIT
 * tools/gw_npy: .npy read/write. Good files written here round-trip for every dtype and rank; headers in
 * every form numpy has written (versions 1.0/2.0/3.0, double quotes, Python 2 'L' suffixes, big-endian
 * descr, keys in any order) read; a table of malformed files each fails with its own message naming the
 * file and the rule and leaves the array zeroed; a failed write leaves nothing behind. Every prefix of
 * written and hand-made files (versions 1.0, 2.0, 3.0) fails; a FIFO, /dev/null and a directory fail at once.
 * Runs under the Valgrind gate (MEMCHECK), so every error path is checked for leaks as well.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "gw_npy.h"
#include "gw_test_util.h"

static const char *const layout = "[Z][Y][X] or [N][Z][Y][X]";



static void write_bytes(const char *path, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f, "cannot create %s", path);
    cr_assert_eq(fwrite(bytes, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

static int is_zeroed(const gw_npy_array *a)
{
    return a->data == NULL && a->ndim == 0 && a->count == 0;
}

/* A .npy file image: preamble for version major.minor, the header text padded with spaces to a multiple of
 * 64 and a newline (pad = 0: the text as given), then data_len bytes 0, 1, 2, ... */
static size_t npy_image(uint8_t *buf, size_t cap, unsigned major, unsigned minor, const char *text, int pad,
                        size_t data_len)
{
    const size_t pre = major == 1 ? 10 : 12;
    size_t hlen = strlen(text);
    if (pad) {
        hlen += 1;
        hlen += (64 - (pre + hlen) % 64) % 64;
    }
    cr_assert(pre + hlen + data_len <= cap);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (uint8_t)major;
    buf[7] = (uint8_t)minor;
    for (size_t b = 0; b < pre - 8; b++) buf[8 + b] = (uint8_t)(hlen >> (8 * b));
    memset(buf + pre, ' ', hlen);
    memcpy(buf + pre, text, strlen(text));
    if (pad) buf[pre + hlen - 1] = '\n';
    for (size_t i = 0; i < data_len; i++) buf[pre + hlen + i] = (uint8_t)i;
    return pre + hlen + data_len;
}

Test(gw_npy, round_trips_every_dtype_and_rank_through_a_file)
{
    char dir[] = "/tmp/gw_npy_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/a.npy", dir);
    const int64_t shapes[4][4] = {{7}, {3, 5}, {2, 3, 5}, {2, 1, 3, 4}};
    const gw_npy_dtype types[3] = {GW_NPY_U1, GW_NPY_U2, GW_NPY_F4};
    for (int t = 0; t < 3; t++) {
        for (int r = 1; r <= 4; r++) {
            size_t count = 1;
            for (int i = 0; i < r; i++) count *= (size_t)shapes[r - 1][i];
            const size_t item = gw_npy_dtype_size(types[t]);
            uint8_t *data = malloc(count * item);
            cr_assert(data);
            for (size_t i = 0; i < count * item; i++) data[i] = (uint8_t)(i * 37u + 11u);
            cr_assert_eq(gw_npy_write(path, types[t], r, shapes[r - 1], data, err, sizeof err), 0, "%s", err);
            gw_npy_array a;
            cr_assert_eq(gw_npy_read(path, types[t], 1, 4, NULL, &a, err, sizeof err), 0, "%s", err);
            cr_expect_eq(a.dtype, types[t]);
            cr_expect_eq(a.ndim, r);
            cr_expect_eq(a.count, count);
            for (int i = 0; i < r; i++) cr_expect_eq(a.shape[i], shapes[r - 1][i]);
            cr_expect(memcmp(a.data, data, count * item) == 0, "%s rank %d: data changed", gw_npy_dtype_name(types[t]),
                      r);
            /* numpy's layout: the data starts on a 64-byte boundary */
            struct stat st;
            cr_assert_eq(stat(path, &st), 0);
            cr_expect_eq(((size_t)st.st_size - count * item) % 64, 0);
            gw_npy_free(&a);
            cr_expect(is_zeroed(&a));
            free(data);
        }
    }
    cr_expect_eq(gw_count_dir_entries(dir), 1, "only the target may remain (no temporary files)");
    gw_remove_dir(dir);
}

Test(gw_npy, writes_the_header_numpy_writes)
{
    char dir[] = "/tmp/gw_npy_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/h.npy", dir);
    const uint16_t data[6] = {1, 2, 3, 4, 5, 0xFFFF};
    const int64_t shape[2] = {2, 3};
    cr_assert_eq(gw_npy_write(path, GW_NPY_U2, 2, shape, data, err, sizeof err), 0, "%s", err);
    uint8_t got[256];
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    const size_t n = fread(got, 1, sizeof got, f);
    fclose(f);
    /* np.save(np.zeros((2, 3), np.uint16)) gives exactly this preamble and header (118 = 128 - 10) */
    const char *dict = "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }";
    cr_assert_eq(n, 128 + 12);
    cr_expect(memcmp(got, "\x93NUMPY\x01\x00\x76\x00", 10) == 0);
    cr_expect(memcmp(got + 10, dict, strlen(dict)) == 0);
    for (size_t i = 10 + strlen(dict); i < 127; i++) cr_expect_eq(got[i], ' ', "byte %zu", i);
    cr_expect_eq(got[127], '\n');
    cr_expect_eq(got[128], 1);
    cr_expect_eq(got[129], 0);
    cr_expect(got[138] == 0xFF && got[139] == 0xFF);

    const int64_t one[1] = {5};
    const uint8_t bytes[5] = {0};
    cr_assert_eq(gw_npy_write(path, GW_NPY_U1, 1, one, bytes, err, sizeof err), 0, "%s", err);
    f = fopen(path, "rb");
    cr_assert(f);
    const size_t m = fread(got, 1, sizeof got, f);
    fclose(f);
    cr_expect_eq(m, 128 + 5);
    char head[129];
    memcpy(head, got, 128);
    head[128] = '\0';
    cr_expect(strstr(head + 10, "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }") == head + 10, "%s",
              head + 10);
    gw_remove_dir(dir);
}

/* Headers as other writers produce them, each with data 0, 1, 2, ... */
struct good_case {
    unsigned major;
    const char *text;
    int pad;
    gw_npy_dtype dtype;
    int ndim;
    int64_t shape[4];
    uint32_t first; /* the first element's value */
};

static const struct good_case good_cases[] = {
    {1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3, 4), }", 1, GW_NPY_U2, 3, {2, 3, 4}, 0x0100},
    {2, "{'descr': '<u2', 'fortran_order': False, 'shape': (1, 2, 3, 4), }", 1, GW_NPY_U2, 4, {1, 2, 3, 4}, 0x0100},
    {3, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 2, 2), }", 1, GW_NPY_U2, 3, {2, 2, 2}, 0x0100},
    /* Python 2 numpy: 'L' suffixes; keys in another order, no trailing comma, double quotes */
    {1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2L, 3L, 4L), }", 1, GW_NPY_U2, 3, {2, 3, 4}, 0x0100},
    {1, "{\"shape\": (3,2,2), \"descr\": \"<u2\", \"fortran_order\": False}", 1, GW_NPY_U2, 3, {3, 2, 2}, 0x0100},
    /* big-endian data is swapped to the host's order */
    {1, "{'descr': '>u2', 'fortran_order': False, 'shape': (1, 1, 3), }", 1, GW_NPY_U2, 3, {1, 1, 3}, 0x0001},
    /* no padding at all, and an unaligned header: numpy before 1.14 aligned to 16 */
    {1, "{'descr': '<u2', 'fortran_order': False, 'shape': (1, 1, 1)}", 0, GW_NPY_U2, 3, {1, 1, 1}, 0x0100},
};

Test(gw_npy, reads_headers_in_every_form_numpy_wrote)
{
    char dir[] = "/tmp/gw_npy_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/g.npy", dir);
    static uint8_t buf[4096];
    for (size_t c = 0; c < sizeof good_cases / sizeof good_cases[0]; c++) {
        const struct good_case *g = &good_cases[c];
        size_t count = 1;
        for (int i = 0; i < g->ndim; i++) count *= (size_t)g->shape[i];
        const size_t len = npy_image(buf, sizeof buf, g->major, 0, g->text, g->pad, count * 2);
        write_bytes(path, buf, len);
        gw_npy_array a;
        const int rc = gw_npy_read(path, GW_NPY_U2, 3, 4, layout, &a, err, sizeof err);
        cr_expect_eq(rc, 0, "case %zu (%s): %s", c, g->text, err);
        if (rc) continue;
        cr_expect_eq(a.ndim, g->ndim, "case %zu", c);
        for (int i = 0; i < g->ndim; i++) cr_expect_eq(a.shape[i], g->shape[i], "case %zu dim %d", c, i);
        cr_expect_eq(((const uint16_t *)a.data)[0], g->first, "case %zu: first value 0x%04x", c,
                     ((const uint16_t *)a.data)[0]);
        gw_npy_free(&a);
    }
    gw_remove_dir(dir);
}

Test(gw_npy, any_dtype_reads_uint8_and_float32)
{
    char dir[] = "/tmp/gw_npy_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/f.npy", dir);
    const float v[3] = {1.5f, -0.0f, 3e38f};
    const int64_t shape[1] = {3};
    cr_assert_eq(gw_npy_write(path, GW_NPY_F4, 1, shape, v, err, sizeof err), 0, "%s", err);
    gw_npy_array a;
    cr_assert_eq(gw_npy_read(path, GW_NPY_ANY, 1, 8, NULL, &a, err, sizeof err), 0, "%s", err);
    cr_expect_eq(a.dtype, GW_NPY_F4);
    cr_expect(memcmp(a.data, v, sizeof v) == 0);
    gw_npy_free(&a);
    gw_remove_dir(dir);
}

struct bad_case {
    const char *label;
    unsigned major, minor;
    const char *text; /* header text (padded), or NULL for raw */
    long data_delta;  /* data bytes relative to what the shape needs (u2) */
    const char *raw;  /* whole file when text is NULL */
    size_t raw_len;
    const char *expect;
};

#define HDR(shape) "{'descr': '<u2', 'fortran_order': False, 'shape': " shape ", }"

static const struct bad_case bad_cases[] = {
    {"empty file", 0, 0, NULL, 0, "", 0, "bad.npy: not a .npy file: bad magic"},
    {"text file", 0, 0, NULL, 0, "hello, world\n", 13, "bad.npy: not a .npy file: bad magic (a .npy file starts with"},
    {"magic cut", 0, 0, NULL, 0, "\x93NUM", 4,
     "bad.npy: truncated: the file ends inside the .npy magic (4 of 6 bytes)"},
    {"magic only", 0, 0, NULL, 0, "\x93NUMPY", 6, "bad.npy: truncated: the file ends inside the .npy preamble"},
    {"v2 preamble cut", 0, 0, NULL, 0, "\x93NUMPY\x02\x00\x10", 9, "ends inside the .npy preamble (9 of 12 bytes)"},
    {"version 4.0", 4, 0, HDR("(1, 1, 1)"), 0, NULL, 0, "bad.npy: unsupported .npy format version 4.0: supported are "
                                                        "1.0, 2.0 and 3.0"},
    {"version 1.1", 1, 1, HDR("(1, 1, 1)"), 0, NULL, 0, "unsupported .npy format version 1.1"},
    {"header past the end", 0, 0, NULL, 0, "\x93NUMPY\x01\x00\xF4\x01{'descr'", 18,
     "bad.npy: header length 500 runs past the end of the file (18 bytes)"},
    {"absurd header length", 0, 0, NULL, 0, "\x93NUMPY\x02\x00\x00\x00\x20\x00{", 13,
     "bad.npy: header length 2097152 is absurd (more than 1 MiB)"},
    {"not a dict", 1, 0, "[1, 2, 3]", 0, NULL, 0, "bad.npy: header: expected '{', found '['"},
    {"missing shape", 1, 0, "{'descr': '<u2', 'fortran_order': False}", 0, NULL, 0,
     "bad.npy: header: missing key 'shape'"},
    {"missing descr", 1, 0, "{'fortran_order': False, 'shape': (1, 1, 1)}", 0, NULL, 0, "missing key 'descr'"},
    {"unknown key", 1, 0, "{'descr': '<u2', 'fortran_order': False, 'shape': (1, 1, 1), 'foo': 1}", 0, NULL, 0,
     "bad.npy: header: unknown key 'foo' (a .npy header has exactly descr, fortran_order and shape)"},
    {"duplicate key", 1, 0, "{'descr': '<u2', 'descr': '<u2', 'fortran_order': False, 'shape': (1, 1, 1)}", 0, NULL,
     0, "header: duplicate key 'descr'"},
    {"structured dtype", 1, 0, "{'descr': [('a', '<u2')], 'fortran_order': False, 'shape': (1, 1, 1)}", 0, NULL, 0,
     "descr is a list (a structured dtype)"},
    {"float64", 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1), }", 6, NULL, 0,
     "bad.npy: dtype '<f8' (float64): expected '<u2' (uint16)"},
    {"int16", 1, 0, "{'descr': '<i2', 'fortran_order': False, 'shape': (1, 1, 1), }", 0, NULL, 0,
     "dtype '<i2' (int16): expected '<u2' (uint16)"},
    {"uint8", 1, 0, "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1, 2), }", 0, NULL, 0,
     "dtype '|u1' (uint8): expected '<u2' (uint16)"},
    {"big-endian int32", 1, 0, "{'descr': '>i4', 'fortran_order': False, 'shape': (1, 1, 1), }", 2, NULL, 0,
     "dtype '>i4' (int32, big-endian): expected '<u2' (uint16)"},
    {"object", 1, 0, "{'descr': '|O', 'fortran_order': False, 'shape': (1, 1, 1), }", 0, NULL, 0,
     "dtype '|O' (Python objects): expected"},
    {"fortran order", 1, 0, "{'descr': '<u2', 'fortran_order': True, 'shape': (2, 2, 2), }", 0, NULL, 0,
     "bad.npy: fortran_order is True: only C-order arrays are supported"},
    {"fortran order not a bool", 1, 0, "{'descr': '<u2', 'fortran_order': 0, 'shape': (2, 2, 2), }", 0, NULL, 0,
     "header: fortran_order must be True or False"},
    {"rank 2", 1, 0, HDR("(4, 4)"), 0, NULL, 0,
     "bad.npy: shape (4, 4) has rank 2: expected rank 3 or 4 ([Z][Y][X] or [N][Z][Y][X])"},
    {"rank 5", 1, 0, HDR("(1, 1, 1, 1, 1)"), 0, NULL, 0, "shape (1, 1, 1, 1, 1) has rank 5: expected rank 3 or 4"},
    {"rank 9", 1, 0, HDR("(1, 1, 1, 1, 1, 1, 1, 1, 1)"), 0, NULL, 0, "has rank 9: expected rank 3 or 4"},
    {"scalar", 1, 0, HDR("()"), 0, NULL, 0, "shape () has rank 0: expected rank 3 or 4"},
    {"zero dimension", 1, 0, HDR("(2, 0, 3)"), 0, NULL, 0,
     "bad.npy: shape (2, 0, 3): dimension 1 is 0: every dimension must be at least 1"},
    {"negative dimension", 1, 0, HDR("(2, -3, 3)"), 0, NULL, 0, "shape (2, -3, 3): dimension 1 is -3"},
    {"size overflow", 1, 0, HDR("(4294967296, 4294967296, 2)"), 0, NULL, 0,
     "bad.npy: shape (4294967296, 4294967296, 2): the size overflows"},
    {"dimension beyond int64", 1, 0, HDR("(99999999999999999999999, 1, 1)"), 0, NULL, 0,
     "shape (99999999999999999999999, 1, 1): the size overflows"},
    {"int is not a tuple", 1, 0, HDR("(5)"), 0, NULL, 0, "a one-element tuple needs a trailing comma"},
    {"truncated data", 1, 0, HDR("(1, 3, 4)"), -1, NULL, 0,
     "bad.npy: truncated: the header describes 24 data bytes (shape (1, 3, 4), uint16), the file holds 23"},
    {"no data at all", 1, 0, HDR("(2, 3, 4)"), -48, NULL, 0, "describes 48 data bytes (shape (2, 3, 4), uint16), "
                                                              "the file holds 0"},
    {"trailing bytes", 1, 0, HDR("(1, 3, 4)"), 3, NULL, 0,
     "bad.npy: 3 trailing bytes after the data: the file is 155 bytes, the header says 128 + 24"},
    {"text after the dict", 1, 0, "{'descr': '<u2', 'fortran_order': False, 'shape': (1, 1, 1)} x", 0, NULL, 0,
     "header: unexpected 'x' after the dict"},
    {"misplaced quote", 1, 0, "{'descr: '<u2'", 0, NULL, 0, "header: expected ':' after the key, found '<'"},
    {"unterminated string", 1, 0, "{'descr': '<u2", 0, NULL, 0, "header: unterminated string"},
    {"escape in a string", 1, 0, "{'descr': '<u\\x32', 'fortran_order': False, 'shape': (1, 1, 1)}", 0, NULL, 0,
     "escape sequences in strings are not supported"},
    {"cut dict", 1, 0, "{'descr': '<u2', 'fortran_order': False, 'shape': (1, 1, ", 0, NULL, 0,
     "header: expected an integer in the shape"},
    {"NUL in the header", 0, 0, NULL, 0, "\x93NUMPY\x01\x00\x04\x00{\0}\n", 14, "header: contains a NUL byte"},
};

Test(gw_npy, rejects_each_malformed_file_with_its_own_message)
{
    char dir[] = "/tmp/gw_npy_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/bad.npy", dir);
    static uint8_t buf[8192];
    for (size_t c = 0; c < sizeof bad_cases / sizeof bad_cases[0]; c++) {
        const struct bad_case *b = &bad_cases[c];
        if (b->text) {
            /* the data the shape needs, for the simple shapes used here (at most 64 elements) */
            long need = 0;
            long dims[3];
            int nd = sscanf(strstr(b->text, "'shape': (") ? strstr(b->text, "'shape': (") + 10 : "",
                            "%ld, %ld, %ld", &dims[0], &dims[1], &dims[2]);
            /* each dimension bounded first: the product of the huge ones in the table would overflow */
            if (nd == 3 && dims[0] > 0 && dims[1] > 0 && dims[2] > 0 && dims[0] <= 64 && dims[1] <= 64 &&
                dims[2] <= 64 && dims[0] * dims[1] * dims[2] <= 64)
                need = (long)(dims[0] * dims[1] * dims[2] * 2);
            const long len = need + b->data_delta;
            const size_t n = npy_image(buf, sizeof buf, b->major, b->minor, b->text, 1, len > 0 ? (size_t)len : 0);
            write_bytes(path, buf, n);
        } else {
            write_bytes(path, b->raw, b->raw_len);
        }
        gw_npy_array a;
        memset(&a, 0xA5, sizeof a); /* must come back zeroed */
        char err[1024] = "";
        const int rc = gw_npy_read(path, GW_NPY_U2, 3, 4, layout, &a, err, sizeof err);
        cr_expect_eq(rc, -1, "case %zu (%s) was accepted", c, b->label);
        if (rc == 0) {
            gw_npy_free(&a);
            continue;
        }
        cr_expect(is_zeroed(&a), "case %zu (%s): array not zeroed", c, b->label);
        char want[600];
        snprintf(want, sizeof want, "%s", b->expect);
        /* messages name the full path */
        const char *expect = b->expect;
        if (!strncmp(expect, "bad.npy", 7)) {
            snprintf(want, sizeof want, "%s%s", path, expect + 7);
            expect = want;
        }
        cr_expect(strstr(err, expect) != NULL, "case %zu (%s):\n  message:  %s\n  expected: %s", c, b->label, err,
                  expect);
        cr_log_info("%s: %s", b->label, err);
    }
    gw_remove_dir(dir);
}

Test(gw_npy, read_names_the_file_when_it_is_missing_or_not_a_file)
{
    gw_npy_array a;
    char err[512];
    cr_expect_eq(gw_npy_read("/nonexistent/dir/x.npy", GW_NPY_U2, 3, 4, layout, &a, err, sizeof err), -1);
    cr_expect(strstr(err, "/nonexistent/dir/x.npy: cannot open: No such file or directory"), "%s", err);
    cr_expect(is_zeroed(&a));
    cr_expect_eq(gw_npy_read("/tmp", GW_NPY_U2, 3, 4, layout, &a, err, sizeof err), -1);
    cr_expect(strstr(err, "/tmp: not a regular file (a directory)"), "%s", err);
}

/* The old reader fopen()ed the path before it checked what it was: on a FIFO without a writer, open(2)
 * blocked for ever (and with a writer, the reads would). Now each fails at once, naming what it is; the
 * timeout turns a hang into a failure. */
Test(gw_npy, a_fifo_dev_null_or_a_directory_fails_at_once, .timeout = 60)
{
    char dir[] = "/tmp/gw_npy_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char fifo[256], err[1024], want[400];
    snprintf(fifo, sizeof fifo, "%s/stack.npy", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    const struct {
        const char *path, *kind;
    } cases[] = {{fifo, "a FIFO"}, {"/dev/null", "a character device"}, {dir, "a directory"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gw_npy_array a;
        memset(&a, 0xA5, sizeof a);
        cr_expect_eq(gw_npy_read(cases[c].path, GW_NPY_ANY, 0, 8, NULL, &a, err, sizeof err), -1, "%s was read",
                     cases[c].path);
        cr_expect(is_zeroed(&a), "%s: array not zeroed", cases[c].kind);
        snprintf(want, sizeof want, "%s: not a regular file (%s)", cases[c].path, cases[c].kind);
        cr_expect(strstr(err, want) != NULL, "%s:\n  message:  %s\n  expected: %s", cases[c].kind, err, want);
    }
    /* a FIFO with a writer attached: the open would not block, the reads would */
    const int wfd = open(fifo, O_RDWR | O_NONBLOCK);
    cr_assert(wfd >= 0);
    gw_npy_array a;
    cr_expect_eq(gw_npy_read(fifo, GW_NPY_ANY, 0, 8, NULL, &a, err, sizeof err), -1);
    cr_expect(strstr(err, "not a regular file (a FIFO)") != NULL, "%s", err);
    close(wfd);
    gw_remove_dir(dir);
}

/* Every length from 0 to size-1 of each file: -1, the array zeroed, a message that starts with the path;
 * the whole file reads back exactly. Written files (gw_npy_write: version 1.0, uint8, uint16, float32) and
 * hand-made ones (versions 2.0 and 3.0, whose preamble is 12 bytes, big-endian data, an unpadded header). */
Test(gw_npy, every_prefix_of_a_file_fails_and_the_whole_file_reads_back)
{
    char dir[] = "/tmp/gw_npy_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], cut[256], err[1024];
    snprintf(path, sizeof path, "%s/full.npy", dir);
    snprintf(cut, sizeof cut, "%s/cut.npy", dir);
    static uint8_t buf[1024];
    static const int64_t s3[3] = {2, 3, 4}, s1[1] = {5}, s4[4] = {1, 2, 1, 3};
    const struct {
        gw_npy_dtype dtype;
        int ndim;
        const int64_t *shape;
        unsigned major;   /* 0: gw_npy_write; else hand-made with this version */
        const char *text; /* hand-made header */
        int pad;
    } files[] = {
        {GW_NPY_U2, 3, s3, 0, NULL, 0},
        {GW_NPY_U1, 1, s1, 0, NULL, 0},
        {GW_NPY_F4, 4, s4, 0, NULL, 0},
        {GW_NPY_U2, 3, s3, 2, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3, 4), }", 1},
        {GW_NPY_U2, 3, s3, 3, "{'descr': '>u2', 'fortran_order': False, 'shape': (2, 3, 4), }", 1},
        {GW_NPY_U1, 1, s1, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (5,)}", 0},
    };
    size_t total = 0;
    for (size_t c = 0; c < sizeof files / sizeof files[0]; c++) {
        size_t count = 1;
        for (int i = 0; i < files[c].ndim; i++) count *= (size_t)files[c].shape[i];
        const size_t item = gw_npy_dtype_size(files[c].dtype);
        uint8_t values[64 * 4];
        for (size_t i = 0; i < count * item; i++) values[i] = (uint8_t)(i * 29u + 3u);
        size_t len;
        if (files[c].major == 0) {
            cr_assert_eq(gw_npy_write(path, files[c].dtype, files[c].ndim, files[c].shape, values, err, sizeof err),
                         0, "%s", err);
            FILE *f = fopen(path, "rb");
            cr_assert(f);
            len = fread(buf, 1, sizeof buf, f);
            fclose(f);
            cr_assert(len > count * item && len < sizeof buf);
        } else {
            len = npy_image(buf, sizeof buf, files[c].major, 0, files[c].text, files[c].pad, count * item);
            memcpy(buf + len - count * item, values, count * item);
            write_bytes(path, buf, len);
        }
        char what[96];
        snprintf(what, sizeof what, "file %zu (version %u, %s, %zu bytes)", c, files[c].major ? files[c].major : 1,
                 gw_npy_dtype_name(files[c].dtype), len);
        size_t accepted = 0, unnamed = 0;
        gw_write_bytes(cut, buf, len);
        for (size_t k = len; k-- > 0;) { /* longest first: each prefix is the last one truncated by a byte */
            cr_assert_eq(truncate(cut, (off_t)k), 0);
            gw_npy_array a;
            memset(&a, 0xA5, sizeof a);
            err[0] = '\0';
            if (gw_npy_read(cut, GW_NPY_ANY, 0, GW_NPY_MAX_NDIM, NULL, &a, err, sizeof err) == 0) {
                if (accepted++ == 0)
                    cr_expect_fail("%s: the first %zu bytes were read (%zu elements)", what, k, a.count);
                gw_npy_free(&a);
                continue;
            }
            cr_expect(is_zeroed(&a), "%s: the first %zu bytes: array not zeroed", what, k);
            if (strncmp(err, cut, strlen(cut)) != 0 && unnamed++ == 0)
                cr_expect_fail("%s: the first %zu bytes: the message does not name the file: %s", what, k, err);
        }
        cr_expect_eq(accepted, 0, "%s: %zu prefixes were accepted", what, accepted);
        cr_expect_eq(unnamed, 0, "%s: %zu messages without the file name", what, unnamed);
        total += len;
        gw_npy_array a;
        cr_assert_eq(gw_npy_read(path, files[c].dtype, files[c].ndim, files[c].ndim, NULL, &a, err, sizeof err), 0,
                     "%s: the whole file: %s", what, err);
        cr_expect(a.count == count && a.ndim == files[c].ndim, "%s: %zu elements of rank %d", what, a.count, a.ndim);
        const int swapped = files[c].text && strstr(files[c].text, "'>u2'") != NULL;
        size_t bad = 0;
        for (size_t i = 0; i < count * item; i++)
            bad += ((const uint8_t *)a.data)[i] != values[swapped ? (i ^ 1u) : i];
        cr_expect_eq(bad, 0, "%s: %zu data bytes differ", what, bad);
        gw_npy_free(&a);
    }
    cr_log_info("%zu prefixes of %zu files rejected", total, sizeof files / sizeof files[0]);
    gw_remove_dir(dir);
}

Test(gw_npy, failed_write_leaves_no_file_and_keeps_an_existing_one)
{
    char dir[] = "/tmp/gw_npy_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], missing[300], err[512] = "";
    snprintf(path, sizeof path, "%s/keep.npy", dir);
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.npy", dir);
    const uint16_t data[4] = {1, 2, 3, 4};
    const int64_t shape[3] = {1, 2, 2};
    cr_expect_eq(gw_npy_write(missing, GW_NPY_U2, 3, shape, data, err, sizeof err), -1);
    cr_expect(strstr(err, "x.npy: cannot create a temporary file beside it: No such file or directory; nothing "
                          "written"), "%s", err);

    write_bytes(path, "old", 3);
    const int64_t bad_shape[3] = {1, 0, 2};
    cr_expect_eq(gw_npy_write(path, GW_NPY_U2, 3, bad_shape, data, err, sizeof err), -1);
    cr_expect(strstr(err, "keep.npy: gw_npy_write: dimension 1 is 0"), "%s", err);
    cr_expect_eq(gw_npy_write(path, GW_NPY_U2, 9, shape, data, err, sizeof err), -1);
    cr_expect_eq(gw_npy_write(path, GW_NPY_U2, 3, shape, NULL, err, sizeof err), -1);
    cr_expect_eq(gw_npy_write(path, GW_NPY_ANY, 3, shape, data, err, sizeof err), -1);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_size, 3, "the existing file must be kept");
    cr_expect_eq(gw_count_dir_entries(dir), 1, "a refused write must leave nothing behind");

    /* a staged file is invisible until committed, and discarding it leaves nothing */
    gw_outfile f;
    cr_assert_eq(gw_npy_stage(&f, path, GW_NPY_U2, 3, shape, data, err, sizeof err), 0, "%s", err);
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_size, 3, "staging must not touch the target");
    gw_outfile_discard(&f);
    cr_expect_eq(gw_count_dir_entries(dir), 1);
    cr_assert_eq(gw_npy_stage(&f, path, GW_NPY_U2, 3, shape, data, err, sizeof err), 0, "%s", err);
    cr_assert_eq(gw_outfile_commit(&f, err, sizeof err), 0, "%s", err);
    gw_outfile_discard(&f); /* a no-op after the commit */
    gw_npy_array a;
    cr_assert_eq(gw_npy_read(path, GW_NPY_U2, 3, 3, NULL, &a, err, sizeof err), 0, "%s", err);
    cr_expect(memcmp(a.data, data, sizeof data) == 0);
    gw_npy_free(&a);
    cr_expect_eq(gw_count_dir_entries(dir), 1);
    gw_remove_dir(dir);
}

Test(gw_npy, names_dtypes_and_formats_shapes_as_numpy_does)
{
    cr_expect_str_eq(gw_npy_dtype_descr(GW_NPY_U2), "<u2");
    cr_expect_str_eq(gw_npy_dtype_name(GW_NPY_U1), "uint8");
    cr_expect_eq(gw_npy_dtype_size(GW_NPY_F4), 4);
    char buf[64];
    const int64_t s1[1] = {5}, s3[3] = {17, 512, 512};
    gw_npy_format_shape(1, s1, buf, sizeof buf);
    cr_expect_str_eq(buf, "(5,)");
    gw_npy_format_shape(3, s3, buf, sizeof buf);
    cr_expect_str_eq(buf, "(17, 512, 512)");
}

/* float64 and int32 are written for ex2d_patch's outputs (write only): the header numpy writes, the bytes as given. */
Test(gw_npy, writes_float64_and_int32_with_numpy_headers)
{
    char dir[] = "/tmp/gw_npy_f8_XXXXXX", path[64], err[512];
    cr_assert_not_null(mkdtemp(dir));
    const double f8[6] = {1.5, -2.0, 0.0, 1e300, -1e-300, 3.25};
    const int32_t i4[4] = {0, -1, 2147483647, -2147483647 - 1};
    const int64_t f8_shape[2] = {2, 3}, i4_shape[2] = {1, 4};
    const struct {
        gw_npy_dtype dtype;
        const int64_t *shape;
        const void *data;
        size_t bytes;
        const char *dict;
    } cases[] = {
        {GW_NPY_F8, f8_shape, f8, sizeof f8, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"},
        {GW_NPY_I4, i4_shape, i4, sizeof i4, "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 4), }"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        snprintf(path, sizeof path, "%s/a%zu.npy", dir, c);
        cr_assert_eq(gw_npy_write(path, cases[c].dtype, 2, cases[c].shape, cases[c].data, err, sizeof err), 0, "%s",
                     err);
        uint8_t buf[256];
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f);
        const size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        cr_assert_eq(len, 128 + cases[c].bytes, "64-byte aligned header, then the data (%zu bytes)", len);
        cr_expect(memcmp(buf, "\x93NUMPY\x01\x00", 8) == 0);
        cr_expect(memcmp(buf + 10, cases[c].dict, strlen(cases[c].dict)) == 0, "header %.60s", (const char *)buf + 10);
        cr_expect_eq(buf[127], '\n');
        cr_expect(memcmp(buf + 128, cases[c].data, cases[c].bytes) == 0, "data bytes differ");
    }
    cr_expect_str_eq(gw_npy_dtype_name(GW_NPY_F8), "float64");
    cr_expect_eq(gw_npy_dtype_size(GW_NPY_I4), 4);
    gw_remove_dir(dir);
}
