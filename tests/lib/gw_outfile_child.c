/* SPDX-License-Identifier: MIT
 * The child process of test_gw_outfile's signal tests (a separate program, so that a child that dies of a
 * signal under the Valgrind gate reports only its own small heap, not the test framework's).
 *   gw_outfile_child DIR term      stage DIR/a and DIR/b, then raise SIGTERM (the handler must remove both)
 *   gw_outfile_child DIR thread    the same, with SIGTERM sent to another thread (as a process-directed
 *                                  signal may be, to a CUDA or CUPTI thread): it must still remove both
 *   gw_outfile_child DIR ignored   ignore SIGTERM first, install the handlers, raise SIGTERM, exit 0
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gw_outfile.h"

static int stage(gw_outfile *f, const char *dir, const char *name)
{
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (gw_outfile_open(f, path, err, sizeof err) || gw_outfile_write(f, "new", 3, err, sizeof err) ||
        gw_outfile_finish(f, err, sizeof err)) {
        fprintf(stderr, "gw_outfile_child: %s\n", err);
        return -1;
    }
    return 0;
}

static void *wait_forever(void *unused)
{
    (void)unused;
    for (;;) pause();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    if (strcmp(argv[2], "ignored") == 0) {
        signal(SIGTERM, SIG_IGN);
        gw_outfile_cleanup_on_signals();
        raise(SIGTERM);
        return 0;
    }
    gw_outfile_cleanup_on_signals();
    gw_outfile f[2] = {GW_OUTFILE_INIT, GW_OUTFILE_INIT};
    if (stage(&f[0], argv[1], "a") || stage(&f[1], argv[1], "b")) return 1;
    if (strcmp(argv[2], "thread") == 0) {
        pthread_t other;
        if (pthread_create(&other, NULL, wait_forever, NULL) != 0) return 1;
        pthread_kill(other, SIGTERM);
        for (;;) pause(); /* the handler, run on the other thread, passes the signal to this one */
    }
    raise(SIGTERM);
    return 3; /* not reached when the handler works */
}
