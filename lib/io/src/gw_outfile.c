/* SPDX-License-Identifier: MIT
 * Staged output files, committed alone or as a set, and removed on the signals that end a process (contract
 * in gw_outfile.h).
 *
 * The staged files of the process are listed in `live`, which the signal handler walks to unlink them. Every
 * change of the list, and every commit, happens inside a critical section: a signal that arrives meanwhile
 * only records itself, and the section's end acts on it, so the handler never sees a half-changed list and a
 * set is never left half-renamed. The handler acts only on the thread that installed it (the one that writes;
 * other threads, such as CUDA's or CUPTI's, pass the signal on to it), and compiler fences keep the list's
 * updates inside the section.
 */
#define _POSIX_C_SOURCE 200809L
#include "gw_outfile.h"
#include "gw_io_err.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- the staged files, and the signals */

static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static char **live;                          /* the temporary files that exist now */
static size_t n_live, cap_live;
static volatile sig_atomic_t critical_depth; /* > 0: the list or a commit is being changed */
static volatile sig_atomic_t deferred;       /* a signal that arrived meanwhile, or 0 */
static pthread_t owner;                      /* the thread that installed the handlers */

/* Unlinks every staged file, then dies of sig with its default action (async-signal-safe calls only). */
static void remove_live_and_die(int sig)
{
    for (size_t i = 0; i < n_live; i++) unlink(live[i]);
    n_live = 0;
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    raise(sig); /* pending while sig is blocked (called from leave() inside another handler) ... */
    pthread_sigmask(SIG_UNBLOCK, &one, NULL); /* ... so unblock it: it is delivered here */
}

static void on_signal(int sig)
{
    if (!pthread_equal(pthread_self(), owner)) { /* the list belongs to the owner: let it act */
        pthread_kill(owner, sig);
        return;
    }
    if (critical_depth > 0)
        deferred = sig;
    else
        remove_live_and_die(sig);
}

static void enter(void)
{
    critical_depth++;
    atomic_signal_fence(memory_order_seq_cst); /* nothing of the section moves above this */
}

static void leave(void)
{
    atomic_signal_fence(memory_order_seq_cst); /* nothing of the section moves below this */
    if (--critical_depth == 0 && deferred) {
        const int sig = deferred;
        deferred = 0;
        remove_live_and_die(sig);
    }
}

/* Both inside a critical section. add: 0, or -1 when out of memory. */
static int live_add(char *name)
{
    if (n_live == cap_live) {
        const size_t cap = cap_live ? 2 * cap_live : 16;
        char **grown = realloc(live, cap * sizeof *grown);
        if (!grown) return -1;
        live = grown, cap_live = cap;
    }
    live[n_live++] = name;
    return 0;
}

static void live_remove(const char *name)
{
    for (size_t i = 0; i < n_live; i++)
        if (live[i] == name) {
            live[i] = live[--n_live];
            return;
        }
}

void gw_outfile_cleanup_on_signals(void)
{
    static int installed;
    if (installed) return;
    installed = 1;
    owner = pthread_self();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++)
        sigaddset(&sa.sa_mask, cleanup_signals[i]); /* one handler at a time */
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++) {
        struct sigaction old;
        /* a signal the caller's parent set to be ignored (nohup, a shell's background job) stays ignored */
        if (sigaction(cleanup_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(cleanup_signals[i], &sa, NULL);
    }
}

/* ---------------------------------------------------------------- names */

/* "<dir of path>/.gw-<pid>-<n>.<suffix>": short whatever the target's name (a target of 250 characters still
 * gets a temporary name the file system accepts), and never a name a previous attempt of this process used.
 * NULL when out of memory. */
static char *sibling_name(const char *path, const char *suffix)
{
    static unsigned long counter;
    const char *slash = strrchr(path, '/');
    const size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    const size_t size = dir_len + 64;
    char *name = malloc(size);
    if (!name) return NULL;
    memcpy(name, path, dir_len);
    snprintf(name + dir_len, size - dir_len, ".gw-%ld-%lu.%s", (long)getpid(), counter++, suffix);
    return name;
}

/* ---------------------------------------------------------------- one file */

int gw_outfile_open(gw_outfile *f, const char *path, char *err, size_t err_size)
{
    f->path = NULL;
    f->tmp = NULL;
    f->fd = -1;
    if (!path || !*path) {
        set_err(err, err_size, "gw_outfile_open: no path given; nothing written");
        return -1;
    }
    f->path = strdup(path);
    if (!f->path) {
        set_err(err, err_size, "%s: out of memory; nothing written", path);
        return -1;
    }
    int saved = 0;
    enter();
    for (unsigned attempt = 0; attempt < 100 && f->fd < 0; attempt++) {
        free(f->tmp);
        f->tmp = sibling_name(path, "tmp");
        if (!f->tmp) {
            saved = ENOMEM;
            break;
        }
        /* O_EXCL with mode 0666 keeps the user's umask, which mkstemp's 0600 would not. O_RDWR: libtiff reads
         * back its directories. */
        f->fd = open(f->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        saved = errno;
        if (f->fd < 0 && saved != EEXIST) break;
    }
    if (f->fd >= 0 && live_add(f->tmp) != 0) {
        unlink(f->tmp);
        close(f->fd);
        f->fd = -1;
        saved = ENOMEM;
    }
    leave();
    if (f->fd < 0) {
        set_err(err, err_size, "%s: cannot create a temporary file beside it: %s; nothing written", path,
                strerror(saved));
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

void gw_outfile_discard(gw_outfile *f)
{
    enter();
    /* fd is only ever open while tmp exists, so a zeroed struct is safe here too (no close(0)) */
    if (f->tmp && f->fd >= 0) close(f->fd);
    if (f->tmp) {
        unlink(f->tmp);
        live_remove(f->tmp);
    }
    free(f->tmp);
    free(f->path);
    f->tmp = NULL;
    f->path = NULL;
    f->fd = -1;
    leave();
}

int gw_outfile_commit(gw_outfile *f, char *err, size_t err_size) { return gw_outfile_commit_all(f, 1, err, err_size); }

/* ---------------------------------------------------------------- a set */

/* Every target absent or a regular file, every file staged and finished: 0, or -1 with err. */
static int check_set(const gw_outfile *files, size_t n, char *err, size_t err_size)
{
    for (size_t i = 0; i < n; i++) {
        const gw_outfile *f = &files[i];
        if (!f->path || !f->tmp || f->fd >= 0) {
            set_err(err, err_size, "%s: gw_outfile_commit_all: the file is not staged and finished; nothing written",
                    f->path ? f->path : "(no path)");
            return -1;
        }
        struct stat st;
        if (stat(f->path, &st) == 0) {
            if (!S_ISREG(st.st_mode)) { /* found before any rename, so nothing of the set moves */
                set_err(err, err_size, "%s: cannot replace the file: %s; nothing written", f->path,
                        S_ISDIR(st.st_mode) ? strerror(EISDIR) : "it exists and is not a regular file");
                return -1;
            }
        } else if (errno != ENOENT) {
            set_err(err, err_size, "%s: cannot replace the file: %s; nothing written", f->path, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* How a target of a set is kept until the whole set is in place. */
typedef struct kept_target {
    char *old;  /* the name it is kept under, NULL when the target did not exist */
    int linked; /* 1: old is a hard link and the target stays in place; 0: the target was renamed to old */
} kept_target;

/* Keeps the existing target of f under a fresh name: a hard link, so the target never disappears and the
 * rename over it stays one atomic step; where the file system has no hard links, the target is renamed
 * aside instead. 0 (k->old NULL when there is no target), or -1 with errno. */
static int keep_target(const gw_outfile *f, kept_target *k)
{
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        free(k->old);
        if (!(k->old = sibling_name(f->path, "old"))) return errno = ENOMEM, -1;
        k->linked = link(f->path, k->old) == 0;
        if (k->linked) return 0;
        if (errno == EEXIST) continue; /* a stale name of an earlier process with our pid: the next one */
        if (errno != ENOENT && rename(f->path, k->old) == 0) return 0;
        const int saved = errno;
        free(k->old);
        k->old = NULL;
        return saved == ENOENT ? 0 : (errno = saved, -1);
    }
    return errno = EEXIST, -1;
}

/* Puts one target back as it was before the commit: `replaced` says whether the staged file was renamed over
 * it. Each step is one rename, so the target is never missing. 0, or -1 when it could not be put back. */
static int restore_target(gw_outfile *f, kept_target *k, int replaced)
{
    if (!k->old) /* there was no target: the new file leaves, back to its name for the discard that follows */
        return !replaced || rename(f->path, f->tmp) == 0 ? 0 : -1;
    if (k->linked && !replaced) { /* the target was never touched */
        unlink(k->old);
        return 0;
    }
    return rename(k->old, f->path) == 0 ? 0 : -1; /* the old file over the new one, or back from aside */
}

int gw_outfile_commit_all(gw_outfile *files, size_t n, char *err, size_t err_size)
{
    int rc = check_set(files, n, err, err_size);
    kept_target *kept = rc == 0 ? calloc(n ? n : 1, sizeof *kept) : NULL;
    if (rc == 0 && !kept) {
        set_err(err, err_size, "%s: out of memory; nothing written", n ? files[0].path : "(no file)");
        rc = -1;
    }
    if (rc == 0) {
        enter();
        size_t done = 0;
        for (; done < n; done++) {
            gw_outfile *f = &files[done];
            kept_target *k = &kept[done];
            /* One file alone needs nothing kept: the rename replaces the target atomically, or fails. */
            const int kept_ok = n == 1 || keep_target(f, k) == 0;
            if (kept_ok && rename(f->tmp, f->path) == 0) continue;
            const int saved = errno;
            /* Back to how it was, the failed target first, then the others in reverse. */
            const char *lost = NULL, *lost_at = NULL;
            if (kept_ok && restore_target(f, k, 0) != 0) lost = f->path, lost_at = k->old;
            for (size_t i = done; i-- > 0;)
                if (restore_target(&files[i], &kept[i], 1) != 0 && !lost) lost = files[i].path, lost_at = kept[i].old;
            if (lost && lost_at)
                set_err(err, err_size, "%s: cannot replace the file: %s; then %s could not be put back: its previous "
                        "content is in %s; nothing else written", f->path, strerror(saved), lost, lost_at);
            else if (lost)
                set_err(err, err_size, "%s: cannot replace the file: %s; then %s, which did not exist before, could "
                        "not be removed; nothing else written", f->path, strerror(saved), lost);
            else
                set_err(err, err_size, "%s: cannot replace the file: %s%s; nothing written", f->path, strerror(saved),
                        n > 1 ? " (every output of the command is as it was)" : "");
            rc = -1;
            break;
        }
        for (size_t i = 0; rc == 0 && i < n; i++) { /* all in place: the kept files go, the names are spent */
            if (kept[i].old) unlink(kept[i].old);
            live_remove(files[i].tmp);
            free(files[i].tmp);
            files[i].tmp = NULL;
        }
        leave();
    }
    for (size_t i = 0; kept && i < n; i++) free(kept[i].old);
    free(kept);
    for (size_t i = 0; i < n; i++) gw_outfile_discard(&files[i]);
    return rc;
}
