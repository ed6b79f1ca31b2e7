/* SPDX-License-Identifier: MIT
 * Input files that cannot hang a reader: gw_infile_open opens a path only when it is a regular file. A path
 * that is something else is refused before any open (stat). The open itself is non-blocking (O_NONBLOCK: a
 * FIFO put in the file's place in between would otherwise block in open(2) or in the first read), the kind
 * that decides is the open descriptor's (fstat: no window between that check and the open), and only a
 * regular file gets its descriptor back, switched to blocking reads. (A regular file under another
 * process's lease makes the non-blocking open fail with "Resource temporarily unavailable" instead of
 * waiting for the lease to break; this reader prefers an error to a wait.)
 *
 *     struct stat st;
 *     int fd = gw_infile_open(path, &st, err, sizeof err);   // -1: err says "<path>: ..."
 *     FILE *f = fdopen(fd, "rb");                              // or read(2), or TIFFFdOpen
 */
#ifndef GW_INFILE_H
#define GW_INFILE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A read-only descriptor of the regular file at path, and its stat in *st (may be NULL); -1 with err
 * "<path>: cannot open: <cause>" or "<path>: not a regular file (<kind>)", and nothing left open. */
int gw_infile_open(const char *path, struct stat *st, char *err, size_t err_size);

/* What a file of this mode is, in the words of the messages: "a directory", "a FIFO", "a character device",
 * "a block device", "a socket"; "a regular file". */
const char *gw_file_kind(mode_t mode);

#ifdef __cplusplus
}
#endif

#endif /* GW_INFILE_H */
