/* SPDX-License-Identifier: MIT
 * gpuwitness bench --html FILE: the HTML report, made by bench/report.py from the run's JSON (docs/benchmarks.md,
 * "The HTML report"). The C side only finds python3 and the script, checks their imports before any work, and
 * feeds the JSON on the script's stdin with its stdout going to the staged output file, which the caller renames
 * over FILE once the script exited 0 (gw_outfile.h); so a page is either complete or absent.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gw_bench.h"

#ifndef GW_REPORT_RELPATH
#define GW_REPORT_RELPATH "../share/gpuwitness/report.py"
#endif

extern char **environ;

#define HTML_NEEDS "--html needs python3 with matplotlib and jinja2 (Debian packages python3, python3-matplotlib, " \
                   "python3-jinja2; ci/setup installs them)"

static int find_script(char *script, size_t size, char *err, size_t err_size)
{
    const char *env = getenv("GW_BENCH_REPORT");
    if (env && *env) {
        if ((size_t)snprintf(script, size, "%s", env) >= size) {
            snprintf(err, err_size, "GW_BENCH_REPORT is too long");
            return -1;
        }
    } else {
        char exe[4096];
        const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) {
            snprintf(err, err_size, "--html: cannot find this executable (/proc/self/exe: %s) to find report.py "
                     "beside it: set GW_BENCH_REPORT to bench/report.py", strerror(errno));
            return -1;
        }
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        if ((size_t)snprintf(script, size, "%s/%s", exe, GW_REPORT_RELPATH) >= size) {
            snprintf(err, err_size, "--html: the path of report.py is too long");
            return -1;
        }
    }
    if (access(script, R_OK) != 0) {
        snprintf(err, err_size, "--html: report.py not found at %s (%s): reinstall, or set GW_BENCH_REPORT to "
                 "bench/report.py", script, strerror(errno));
        return -1;
    }
    return 0;
}

/* Spawns python with args, stdin from in_fd (or inherited when < 0), stdout to out_fd. 0 and *pid, or errno. */
static int spawn(const gw_bench_html *h, char *const argv[], int in_fd, int close_fd, int out_fd, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc) return rc;
    if (in_fd >= 0) rc = posix_spawn_file_actions_adddup2(&fa, in_fd, STDIN_FILENO);
    if (!rc && close_fd >= 0) rc = posix_spawn_file_actions_addclose(&fa, close_fd);
    if (!rc) rc = posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    if (!rc) rc = strchr(h->python, '/') ? posix_spawn(pid, h->python, &fa, NULL, argv, environ)
                                          : posix_spawnp(pid, h->python, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

/* The child's exit status, or -1 when it did not exit normally. */
static int wait_for(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int gw_bench_html_prepare(gw_bench_html *h, char *err, size_t err_size)
{
    const char *py = getenv("GW_PYTHON");
    if (py && *py) snprintf(h->python, sizeof h->python, "%s", py);
    else snprintf(h->python, sizeof h->python, "%s", access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3"
                                                                                           : "python3");
    if (find_script(h->script, sizeof h->script, err, err_size)) return -1;
    int out[2];
    if (pipe(out) != 0) {
        snprintf(err, err_size, "--html: pipe: %s", strerror(errno));
        return -1;
    }
    char *argv[] = {h->python, h->script, "--check-deps", NULL};
    pid_t pid;
    const int rc = spawn(h, argv, -1, out[0], out[1], &pid);
    close(out[1]);
    if (rc) {
        close(out[0]);
        snprintf(err, err_size, "%s: cannot run %s: %s%s", HTML_NEEDS, h->python, strerror(rc),
                 getenv("GW_PYTHON") ? " (GW_PYTHON)" : "");
        return -1;
    }
    /* --check-deps prints one line per missing module: "jinja2 (Debian package python3-jinja2: <why>)". */
    char missing[1024] = "";
    size_t len = 0;
    ssize_t n;
    while ((n = read(out[0], missing + len, sizeof missing - 1 - len)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0) len += (size_t)n;
    missing[len] = '\0';
    char sink[256]; /* the rest, if any: the child must not block on a full pipe */
    while ((n = read(out[0], sink, sizeof sink)) > 0 || (n < 0 && errno == EINTR)) {}
    close(out[0]);
    const int status = wait_for(pid);
    if (status == 0) return 0;
    for (char *p = missing; (p = strchr(p, '\n'));) *p = (p[1] ? ';' : '\0');
    if (status == 1 && missing[0])
        snprintf(err, err_size, "%s: missing: %s", HTML_NEEDS, missing);
    else
        snprintf(err, err_size, "%s: %s %s --check-deps failed (exit status %d; its message is above)", HTML_NEEDS,
                 h->python, h->script, status);
    return -1;
}

int gw_bench_html_check(const gw_bench_html *h, const char *json_path, char *err, size_t err_size)
{
    char *argv[] = {(char *)h->python, (char *)h->script, "--check", (char *)json_path, NULL};
    pid_t pid;
    const int rc = spawn(h, argv, -1, -1, STDOUT_FILENO, &pid);
    if (rc) {
        snprintf(err, err_size, "cannot run %s: %s", h->python, strerror(rc));
        return -1;
    }
    const int status = wait_for(pid);
    if (status == 0) return 0;
    snprintf(err, err_size, "%s refused it (exit status %d; its message is above)", h->script, status);
    return -1;
}

int gw_bench_html_render(const gw_bench_html *h, const char *json_text, const char *baseline, int out_fd, char *err,
                         size_t err_size)
{
    int in[2];
    if (pipe(in) != 0) {
        snprintf(err, err_size, "pipe: %s", strerror(errno));
        return -1;
    }
    char *argv[] = {(char *)h->python, (char *)h->script, "-", "-o", "-", baseline ? "--baseline" : NULL,
                    (char *)baseline, NULL};
    pid_t pid;
    const int rc = spawn(h, argv, in[0], in[1], out_fd, &pid);
    close(in[0]);
    if (rc) {
        close(in[1]);
        snprintf(err, err_size, "cannot run %s: %s", h->python, strerror(rc));
        return -1;
    }
    /* A script that dies early closes its stdin: that must be an error here, not a SIGPIPE. */
    struct sigaction ignore, old;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old);
    size_t len = strlen(json_text), done = 0;
    int write_errno = 0;
    while (done < len) {
        const ssize_t n = write(in[1], json_text + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            write_errno = errno;
            break;
        }
        done += (size_t)n;
    }
    close(in[1]);
    sigaction(SIGPIPE, &old, NULL);
    const int status = wait_for(pid);
    if (status != 0) {
        snprintf(err, err_size, "%s failed (exit status %d; its message is above)", h->script, status);
        return -1;
    }
    if (write_errno) {
        snprintf(err, err_size, "feeding the JSON to %s: %s", h->script, strerror(write_errno));
        return -1;
    }
    return 0;
}
