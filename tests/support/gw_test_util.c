/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* opendir, rmdir, unlink */
#include "gw_test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

enum { EXAMPLE_MAX_LINES = 40, EXAMPLE_LINE = 200 };

/* A line without indentation, a block comment's leading "*" and trailing blanks. */
static void strip_line(const char *line, char *out, size_t out_size)
{
    const char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    if (s[0] == '*' && s[1] != '/') s++;
    while (*s == ' ' || *s == '\t') s++;
    size_t len = strcspn(s, "\r\n");
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
    snprintf(out, out_size, "%.*s", (int)len, s);
}

static size_t example_lines(const char *path, char lines[][EXAMPLE_LINE])
{
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "cannot open %s", path);
    char buf[512], line[EXAMPLE_LINE];
    size_t n = 0;
    int inside = 0, found_end = 0;
    while (fgets(buf, sizeof buf, f)) {
        strip_line(buf, line, sizeof line);
        if (strcmp(line, "example-begin") == 0 || strcmp(line, "// example-begin") == 0) {
            inside = 1;
            continue;
        }
        if (strcmp(line, "example-end") == 0 || strcmp(line, "// example-end") == 0) {
            found_end = inside;
            break;
        }
        if (!inside) continue;
        if (n == EXAMPLE_MAX_LINES) fclose(f);
        cr_assert(n < EXAMPLE_MAX_LINES, "%s: example longer than %d lines", path, EXAMPLE_MAX_LINES);
        snprintf(lines[n++], EXAMPLE_LINE, "%s", line);
    }
    fclose(f);
    cr_assert(found_end, "%s: no example-begin/example-end marker lines", path);
    return n;
}

void gw_assert_example_verbatim(const char *header_path, const char *test_path)
{
    static char header[EXAMPLE_MAX_LINES][EXAMPLE_LINE], test[EXAMPLE_MAX_LINES][EXAMPLE_LINE];
    const size_t nh = example_lines(header_path, header), nt = example_lines(test_path, test);
    cr_assert(nh > 0 && nh == nt, "%s's example has %zu lines, %s's %zu", header_path, nh, test_path, nt);
    for (size_t i = 0; i < nh; i++)
        cr_assert(strcmp(header[i], test[i]) == 0, "example line %zu differs:\n  header: %s\n  test:   %s", i + 1,
                  header[i], test[i]);
}

void gw_append_line(char *msg, size_t msg_size, const char *fmt, ...)
{
    if (!msg || msg_size == 0) return;
    size_t used = strnlen(msg, msg_size - 1);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + used, msg_size - used, fmt, ap);
    va_end(ap);
    used = strnlen(msg, msg_size - 1);
    if (used + 1 < msg_size) {
        msg[used] = '\n';
        msg[used + 1] = '\0';
    }
}

void gw_write_bytes(const char *path, const void *bytes, size_t len)
{
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert(fd >= 0, "cannot create %s", path);
    const char *b = bytes;
    for (size_t done = 0; done < len;) {
        const ssize_t w = write(fd, b + done, len - done);
        cr_assert(w > 0, "write %s", path);
        done += (size_t)w;
    }
    cr_assert_eq(close(fd), 0);
}

size_t gw_count_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return (size_t)-1;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

void gw_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    char path[4096];
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* The runs in which a data test must not skip: CI set to anything but "" or "false" (as the top CMakeLists
 * reads it), or GW_REQUIRE_GPU=1 (a run in which no test may skip). Names the reason, or NULL. */
static const char *must_not_skip(void)
{
    const char *ci = getenv("CI"), *require = getenv("GW_REQUIRE_GPU");
    if (ci && *ci && strcmp(ci, "false") != 0) return "CI is set";
    if (require && strcmp(require, "1") == 0) return "GW_REQUIRE_GPU=1";
    return NULL;
}

const char *gw_data_path(const char *relative, const char *what, char *buf, size_t size)
{
    const char *suite = criterion_current_test->category;
    const size_t len = strlen(suite);
    cr_assert(len >= 5 && strcmp(suite + len - 5, "_data") == 0,
              "suite %s reads GW_DATA_DIR: tests that need a data set belong in a suite named *_data, which CTest "
              "runs as <executable>.data (docs/testing.md, \"Data sets\")", suite);
    const char *dir = getenv("GW_DATA_DIR");
    if (!dir || !*dir) {
        const char *why = must_not_skip();
        if (why)
            cr_assert_fail("GW_DATA_DIR is not set, and %s: this test needs %s at $GW_DATA_DIR/%s "
                           "(docs/testing.md, \"Data sets\")", why, what, relative);
        cr_skip_test("GW_DATA_DIR is not set: this test needs %s at $GW_DATA_DIR/%s (docs/testing.md, \"Data "
                     "sets\")", what, relative);
    }
    const int n = snprintf(buf, size, "%s/%s", dir, relative);
    cr_assert(n > 0 && (size_t)n < size, "GW_DATA_DIR '%s' is too long", dir);
    struct stat st;
    cr_assert(stat(buf, &st) == 0, "GW_DATA_DIR is '%s', but %s is missing: it must hold %s (docs/testing.md, "
              "\"Data sets\")", dir, buf, what);
    return buf;
}
