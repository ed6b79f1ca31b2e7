/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_scratch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_check.h"

static char dir_path[256];

static void remove_entries(void)
{
    DIR *d = opendir(dir_path);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir_path, e->d_name);
        if (unlink(path) != 0) rmdir(path); /* a directory: EISDIR on Linux, EPERM elsewhere */
    }
    closedir(d);
}

static void remove_dir(void)
{
    if (!dir_path[0]) return;
    remove_entries();
    rmdir(dir_path);
}

const char *fuzz_scratch_dir(const char *prefix)
{
    if (dir_path[0]) return dir_path;
    struct stat st;
    const char *base = "/dev/shm";
    if (stat(base, &st) != 0 || !S_ISDIR(st.st_mode) || access(base, W_OK) != 0) {
        base = getenv("TMPDIR");
        if (!base || !*base) base = "/tmp";
    }
    snprintf(dir_path, sizeof dir_path, "%s/%s.XXXXXX", base, prefix);
    FUZZ_REQUIRE(mkdtemp(dir_path) != NULL, "cannot make a scratch directory %s", dir_path);
    atexit(remove_dir);
    return dir_path;
}

const char *fuzz_scratch_path(int slot, const char *name)
{
    static char paths[8][512];
    FUZZ_REQUIRE(dir_path[0] && slot >= 0 && slot < 8, "fuzz_scratch_path: slot %d before fuzz_scratch_dir", slot);
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", dir_path, name);
    return paths[slot];
}

void fuzz_scratch_expect(const char *const *names, size_t n, const char *when)
{
    enum { max_names = 16 };
    FUZZ_REQUIRE(n <= max_names, "fuzz_scratch_expect: %zu names", n);
    int seen[max_names] = {0};
    DIR *d = opendir(dir_path);
    FUZZ_REQUIRE(d != NULL, "cannot list %s", dir_path);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t i = 0;
        while (i < n && strcmp(e->d_name, names[i])) i++;
        FUZZ_REQUIRE(i < n, "%s: '%s' is left in the output directory", when, e->d_name);
        seen[i] = 1;
    }
    closedir(d);
    for (size_t i = 0; i < n; i++) FUZZ_REQUIRE(seen[i], "%s: '%s' is missing from the output directory", when, names[i]);
}

void fuzz_scratch_clear(void)
{
    remove_entries();
    fuzz_scratch_expect(NULL, 0, "after clearing the scratch directory");
}

uint8_t *fuzz_slurp(const char *path, size_t *len)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    FUZZ_REQUIRE(fd >= 0, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    FUZZ_REQUIRE(fstat(fd, &st) == 0 && S_ISREG(st.st_mode), "%s is not a regular file", path);
    const size_t size = (size_t)st.st_size;
    uint8_t *buf = malloc(size ? size : 1);
    FUZZ_REQUIRE(buf != NULL, "out of memory");
    size_t at = 0;
    while (at < size) {
        const ssize_t got = read(fd, buf + at, size - at);
        FUZZ_REQUIRE(got > 0, "cannot read %s", path);
        at += (size_t)got;
    }
    close(fd);
    *len = size;
    return buf;
}

void fuzz_put_file(const char *path, const void *data, size_t len)
{
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    FUZZ_REQUIRE(fd >= 0, "cannot create %s: %s", path, strerror(errno));
    FUZZ_REQUIRE(write(fd, data, len) == (ssize_t)len, "cannot write %s", path);
    close(fd);
}
