/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "gw_infile.h"
#include "gw_io_err.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

const char *gw_file_kind(mode_t mode)
{
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a file";
}

int gw_infile_open(const char *path, struct stat *st, char *err, size_t err_size)
{
    if (!path || !*path) {
        set_err(err, err_size, "gw_infile_open: no path given");
        return -1;
    }
    /* A path that is not a regular file now is refused without being opened (opening a device can act on
     * it); the descriptor's own fstat below decides, because the path can change in between, and O_NONBLOCK
     * keeps the open itself from waiting on a FIFO that took its place. */
    struct stat named;
    if (stat(path, &named) == 0 && !S_ISREG(named.st_mode)) {
        set_err(err, err_size, "%s: not a regular file (%s)", path, gw_file_kind(named.st_mode));
        return -1;
    }
    int fd;
    do
        fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        set_err(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat local;
    struct stat *s = st ? st : &local;
    if (fstat(fd, s) != 0) {
        set_err(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(s->st_mode)) {
        set_err(err, err_size, "%s: not a regular file (%s)", path, gw_file_kind(s->st_mode));
        close(fd);
        return -1;
    }
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
        set_err(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}
