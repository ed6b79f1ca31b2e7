/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz_memfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

const char *fuzz_memfile(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz_input", 0);
        if (fd < 0) {
            perror("fuzz_memfile: memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0) {
        perror("fuzz_memfile: ftruncate");
        abort();
    }
    for (size_t at = 0; at < size;) {
        const ssize_t w = pwrite(fd, data + at, size - at, (off_t)at);
        if (w <= 0) {
            perror("fuzz_memfile: pwrite");
            abort();
        }
        at += (size_t)w;
    }
    return path;
}
