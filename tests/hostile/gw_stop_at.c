/* SPDX-License-Identifier: MIT
 * An LD_PRELOAD shim for the hostile-input suite: the process stops itself (SIGSTOP) at the first call of
 * the function named by GW_STOP_AT, so that the suite can send a signal at exactly that point of a command
 * and then let it continue:
 *   GW_STOP_AT=fsync    a staged output is being written (lib/io gw_outfile_finish)
 *   GW_STOP_AT=rename   the outputs are being committed (gw_outfile_commit_all)
 * and, with GW_COUNT_STAT=FILE, counts each process's stat() calls and appends the count to FILE at its exit
 * (the cost of a command's checks, measured in calls instead of seconds that a busy disk makes noisy; a
 * wrapper such as timeout(1) appends its own line, so the reader takes the largest).
 * Without either variable it changes nothing. Test code only; nothing of the project links it.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static unsigned long stat_calls;

int stat(const char *restrict path, struct stat *restrict st)
{
    stat_calls++;
    int (*real)(const char *restrict, struct stat *restrict) =
        (int (*)(const char *restrict, struct stat *restrict))dlsym(RTLD_NEXT, "stat");
    return real(path, st);
}

__attribute__((destructor)) static void write_stat_count(void)
{
    const char *to = getenv("GW_COUNT_STAT");
    FILE *f = to ? fopen(to, "a") : NULL;
    if (!f) return;
    fprintf(f, "%lu\n", stat_calls);
    fclose(f);
}
