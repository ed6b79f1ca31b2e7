/* SPDX-License-Identifier: MIT
 * An LD_PRELOAD shim for the hostile-input suite: the process stops itself (SIGSTOP) at the first call of
 * the function named by GW_STOP_AT, so that the suite can send a signal at exactly that point of a command
 * and then let it continue:
 *   GW_STOP_AT=fsync    a staged output is being written (lib/io gw_outfile_finish)
 *   GW_STOP_AT=rename   the outputs are being committed (gw_outfile_commit_all)
 * Without GW_STOP_AT it changes nothing. Test code only; nothing of the project links it.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void stop_if_asked(const char *name)
{
    static int stopped;
    const char *at = getenv("GW_STOP_AT");
    if (stopped || !at || strcmp(at, name) != 0) return;
    stopped = 1;
    raise(SIGSTOP);
}

int fsync(int fd)
{
    stop_if_asked("fsync");
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    return real(fd);
}

int rename(const char *from, const char *to)
{
    stop_if_asked("rename");
    int (*real)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    return real(from, to);
}
