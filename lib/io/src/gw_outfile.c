/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "gw_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void set_err(char *err, size_t err_size, const char *fmt, ...)
{
    if (!err || err_size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
}

int gw_outfile_open(gw_outfile *f, const char *path, char *err, size_t err_size)
{
    f->path = NULL;
    f->tmp = NULL;
    f->fd = -1;
    if (!path || !*path) {
        set_err(err, err_size, "gw_outfile_open: no path given");
        return -1;
    }
    const size_t tmp_size = strlen(path) + 48;
    f->path = strdup(path);
    f->tmp = malloc(tmp_size);
    if (!f->path || !f->tmp) {
        set_err(err, err_size, "%s: out of memory; nothing written", path);
        free(f->tmp);
        f->tmp = NULL; /* no file was created */
        gw_outfile_discard(f);
        return -1;
    }
    /* O_EXCL with mode 0666 keeps the user's umask, which mkstemp's 0600 would not. */
    for (unsigned attempt = 0; attempt < 100 && f->fd < 0; attempt++) {
        snprintf(f->tmp, tmp_size, "%s.tmp.%ld.%u", path, (long)getpid(), attempt);
        f->fd = open(f->tmp, O_RDWR | O_CREAT | O_EXCL, 0666); /* libtiff reads back its directories */
        if (f->fd < 0 && errno != EEXIST) break;
    }
    if (f->fd < 0) {
        set_err(err, err_size, "%s: cannot create a temporary file beside it: %s; nothing written", path,
                strerror(errno));
        free(f->tmp);
        f->tmp = NULL; /* nothing was created: discard must not unlink someone else's file */
        gw_outfile_discard(f);
        return -1;
    }
    return 0;
}

int gw_outfile_write(gw_outfile *f, const void *data, size_t len, char *err, size_t err_size)
{
    const char *p = data;
    while (len) {
        /* write(2) until done: short writes happen on full disks and signals. */
        ssize_t w = write(f->fd, p, len > ((size_t)1 << 30) ? ((size_t)1 << 30) : len);
        if (w < 0) {
            if (errno == EINTR) continue;
            set_err(err, err_size, "%s: write failed: %s; nothing written", f->path, strerror(errno));
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int gw_outfile_finish(gw_outfile *f, char *err, size_t err_size)
{
    if (fsync(f->fd) != 0) {
        set_err(err, err_size, "%s: write failed (fsync): %s; nothing written", f->path, strerror(errno));
        return -1;
    }
    const int fd = f->fd;
    f->fd = -1;
    if (close(fd) != 0) {
        set_err(err, err_size, "%s: write failed on close: %s; nothing written", f->path, strerror(errno));
        return -1;
    }
    return 0;
}

int gw_outfile_commit(gw_outfile *f, char *err, size_t err_size)
{
    if (rename(f->tmp, f->path) != 0) {
        set_err(err, err_size, "%s: cannot replace the file: %s; nothing written", f->path, strerror(errno));
        return -1;
    }
    free(f->tmp);
    f->tmp = NULL;
    gw_outfile_discard(f);
    return 0;
}

void gw_outfile_discard(gw_outfile *f)
{
    /* fd is only ever open while tmp exists, so a zeroed struct is safe here too (no close(0)) */
    if (f->tmp && f->fd >= 0) close(f->fd);
    if (f->tmp) unlink(f->tmp);
    free(f->tmp);
    free(f->path);
    f->tmp = NULL;
    f->path = NULL;
    f->fd = -1;
}
