/* SPDX-License-Identifier: MIT
 * Output files that are never half-written: the bytes go to a temporary file beside the target
 * ("<path>.tmp.<pid>.<n>", same directory, so rename() is atomic), which is flushed to disk and only
 * then renamed over the target. A writer that fails discards the temporary file, so the target is
 * either absent, the old file, or the complete new one.
 *
 * Two-phase use lets a caller with several outputs stage them all and rename only when every one of
 * them was written (gpuwitness run focus-stack):
 *     gw_outfile f;
 *     gw_outfile_open(&f, path, ...); gw_outfile_write(&f, ...); ...; gw_outfile_finish(&f, ...);
 *     gw_outfile_commit(&f, ...);            // or gw_outfile_discard(&f) on any error
 * Every function leaves f safe to pass to gw_outfile_discard, which is a no-op after a commit and on a
 * zeroed or GW_OUTFILE_INIT struct.
 */
#ifndef GW_OUTFILE_H
#define GW_OUTFILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gw_outfile {
    char *path; /* the target */
    char *tmp;  /* the temporary file, NULL once renamed or removed */
    int fd;     /* open descriptor of tmp, -1 after finish */
} gw_outfile;

#define GW_OUTFILE_INIT {NULL, NULL, -1}

/* Creates the temporary file (mode 0666 less the umask). 0, or -1 with err naming path and the cause;
 * on error nothing exists and f needs no discard (but allows it). */
int gw_outfile_open(gw_outfile *f, const char *path, char *err, size_t err_size);
/* Appends len bytes. 0, or -1 with err (the file stays staged: discard it). */
int gw_outfile_write(gw_outfile *f, const void *data, size_t len, char *err, size_t err_size);
/* fsync and close. 0, or -1 with err. */
int gw_outfile_finish(gw_outfile *f, char *err, size_t err_size);
/* Renames the finished temporary file over the target. 0, or -1 with err (then discard). */
int gw_outfile_commit(gw_outfile *f, char *err, size_t err_size);
/* Closes and removes the temporary file if there is one, frees everything. */
void gw_outfile_discard(gw_outfile *f);

#ifdef __cplusplus
}
#endif

#endif /* GW_OUTFILE_H */
