/* SPDX-License-Identifier: MIT
 * Output files that are never half-written, alone or as a set. The bytes go to a temporary file in the
 * target's directory (".gw-<pid>-<n>.tmp": short, whatever the target's name, and in the same directory so
 * that rename() is atomic), which is flushed to disk and only then renamed over the target. A writer that
 * fails discards the temporary file, so the target is either absent, the old file, or the complete new one.
 *
 * A command with several outputs stages them all, then commits them as one: gw_outfile_commit_all checks
 * every target first (absent or a regular file), keeps each existing target under a hard link, renames every
 * staged file into place (each one atomic rename: a target never disappears), and on any failure puts every
 * target back as it was; either every output is new or none is. (Where the file system has no hard links,
 * an existing target is renamed aside instead, and is missing between two renames.)
 *     gw_outfile f[2] = {GW_OUTFILE_INIT, GW_OUTFILE_INIT};
 *     gw_outfile_open(&f[0], path0, ...); gw_outfile_write(&f[0], ...); gw_outfile_finish(&f[0], ...);
 *     ... the same for f[1] ...
 *     gw_outfile_commit_all(f, 2, ...);      // or gw_outfile_discard(&f[i]) on any earlier error
 * Every function leaves f safe to pass to gw_outfile_discard, which is a no-op after a commit and on a zeroed
 * or GW_OUTFILE_INIT struct.
 *
 * Signals. After gw_outfile_cleanup_on_signals(), SIGINT, SIGTERM, SIGHUP and SIGQUIT remove every staged
 * file of the process before it dies of the signal; one that arrives during a commit waits until the set is
 * complete (or rolled back). A program calls it once, at start, on the thread that writes the outputs (the
 * gpuwitness CLI does); a signal taken on another thread is passed to that one.
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
/* Renames the finished temporary file over the target: one atomic rename (gw_outfile_commit_all(f, 1, ...)). */
int gw_outfile_commit(gw_outfile *f, char *err, size_t err_size);
/* Renames n finished files over their targets, all or none (see above). 0, or -1 with err naming the target
 * and the cause, every target as it was. Every file of the set is discarded either way. */
int gw_outfile_commit_all(gw_outfile *files, size_t n, char *err, size_t err_size);
/* Closes and removes the temporary file if there is one, frees everything. */
void gw_outfile_discard(gw_outfile *f);
/* Installs the signal handlers described above (once per process; later calls do nothing). */
void gw_outfile_cleanup_on_signals(void);

#ifdef __cplusplus
}
#endif

#endif /* GW_OUTFILE_H */
