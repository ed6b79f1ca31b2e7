/* SPDX-License-Identifier: MIT
 * lib/io gw_outfile: staged files committed alone or as a set, all or none, and removed on the signals that
 * end a process. Every test works in its own temporary directory and checks what is left in it, hidden
 * files included (staged files are ".gw-<pid>-<n>.tmp").
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "gw_outfile.h"
#include "gw_test_util.h"

typedef struct dir {
    char path[64];
} dir;

static void dir_make(dir *d)
{
    snprintf(d->path, sizeof d->path, "/tmp/gw_outfile_test.XXXXXX");
    cr_assert(mkdtemp(d->path), "mkdtemp: %s", strerror(errno));
}

static void join(char *out, size_t size, const dir *d, const char *name) { snprintf(out, size, "%s/%s", d->path, name); }

static void put(const dir *d, const char *name, const char *text)
{
    char path[4400];
    join(path, sizeof path, d, name);
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s: %s", path, strerror(errno));
    fputs(text, f);
    fclose(f);
}

/* The file's text ("" when it holds nothing), or NULL when it does not exist. Static buffer. */
static const char *text_of(const dir *d, const char *name)
{
    static char buf[256];
    char path[4400];
    join(path, sizeof path, d, name);
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    const size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    return buf;
}

/* Stages `text` for d/name into f (open, write, finish). */
static void stage(gw_outfile *f, const dir *d, const char *name, const char *text)
{
    char path[4400], err[512];
    join(path, sizeof path, d, name);
    cr_assert_eq(gw_outfile_open(f, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(gw_outfile_write(f, text, strlen(text), err, sizeof err), 0, "%s", err);
    cr_assert_eq(gw_outfile_finish(f, err, sizeof err), 0, "%s", err);
}

Test(gw_outfile, a_set_is_committed_whole_and_leaves_nothing_else)
{
    dir d;
    dir_make(&d);
    put(&d, "b", "old b");
    gw_outfile f[3] = {GW_OUTFILE_INIT, GW_OUTFILE_INIT, GW_OUTFILE_INIT};
    stage(&f[0], &d, "a", "new a");
    stage(&f[1], &d, "b", "new b");
    stage(&f[2], &d, "c", "new c");
    cr_expect_eq(gw_count_dir_entries(d.path), 4, "three staged files and b");
    char err[512];
    cr_assert_eq(gw_outfile_commit_all(f, 3, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(text_of(&d, "a"), "new a");
    cr_expect_str_eq(text_of(&d, "b"), "new b");
    cr_expect_str_eq(text_of(&d, "c"), "new c");
    cr_expect_eq(gw_count_dir_entries(d.path), 3, "only the three outputs remain (no staged or old file)");
    for (int i = 0; i < 3; i++) cr_expect(f[i].path == NULL && f[i].tmp == NULL && f[i].fd == -1, "f[%d] reset", i);
    gw_remove_dir(d.path);
}

/* A target that is a directory is found before anything moves: the other targets keep their old state. */
Test(gw_outfile, a_directory_among_the_targets_leaves_every_target_as_it_was)
{
    dir d;
    dir_make(&d);
    put(&d, "a", "old a");
    char sub[4400];
    join(sub, sizeof sub, &d, "c");
    cr_assert_eq(mkdir(sub, 0777), 0);
    gw_outfile f[3] = {GW_OUTFILE_INIT, GW_OUTFILE_INIT, GW_OUTFILE_INIT};
    stage(&f[0], &d, "a", "new a");
    stage(&f[1], &d, "b", "new b");
    stage(&f[2], &d, "c", "new c");
    char err[512] = "";
    cr_expect_eq(gw_outfile_commit_all(f, 3, err, sizeof err), -1);
    cr_expect(strstr(err, "/c: cannot replace the file: Is a directory; nothing written"), "%s", err);
    cr_expect_str_eq(text_of(&d, "a"), "old a", "a kept its old content");
    cr_expect_null(text_of(&d, "b"), "b was not created");
    cr_expect_eq(gw_count_dir_entries(d.path), 2, "a and the directory c, no staged file");
    rmdir(sub);
    gw_remove_dir(d.path);
}

/* A rename that fails after others succeeded (here: the last staged file vanished) rolls every target back:
 * old contents return, new targets disappear, and no staged or old file is left. */
Test(gw_outfile, a_rename_that_fails_midway_rolls_every_target_back)
{
    dir d;
    dir_make(&d);
    put(&d, "a", "old a");
    put(&d, "c", "old c");
    gw_outfile f[3] = {GW_OUTFILE_INIT, GW_OUTFILE_INIT, GW_OUTFILE_INIT};
    stage(&f[0], &d, "a", "new a");
    stage(&f[1], &d, "b", "new b");
    stage(&f[2], &d, "c", "new c");
    cr_assert_eq(unlink(f[2].tmp), 0);
    char err[512] = "";
    cr_expect_eq(gw_outfile_commit_all(f, 3, err, sizeof err), -1);
    cr_expect(strstr(err, "/c: cannot replace the file: No such file or directory (every output of the command is "
                          "as it was); nothing written"),
              "%s", err);
    cr_expect_str_eq(text_of(&d, "a"), "old a");
    cr_expect_null(text_of(&d, "b"), "b was rolled back");
    cr_expect_str_eq(text_of(&d, "c"), "old c");
    cr_expect_eq(gw_count_dir_entries(d.path), 2, "a and c only");
    gw_remove_dir(d.path);
}

/* The staged name does not grow with the target's: a 250-character name (the file system allows 255) can be
 * written, which a "<name>.tmp.<pid>.<n>" scheme could not. */
Test(gw_outfile, a_target_name_of_250_characters_can_be_written)
{
    dir d;
    dir_make(&d);
    char name[251];
    memset(name, 'n', 250);
    name[250] = '\0';
    gw_outfile f = GW_OUTFILE_INIT;
    stage(&f, &d, name, "long");
    char err[512];
    cr_assert_eq(gw_outfile_commit(&f, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(text_of(&d, name), "long");
    cr_expect_eq(gw_count_dir_entries(d.path), 1);
    gw_remove_dir(d.path);
}

/* Runs the signal tests' child program (gw_outfile_child) and returns its wait status. */
static int run_child(const dir *d, const char *mode)
{
    const pid_t child = fork();
    cr_assert(child >= 0);
    if (child == 0) {
        execl(GW_OUTFILE_CHILD, GW_OUTFILE_CHILD, d->path, mode, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    cr_assert_eq(waitpid(child, &status, 0), child);
    return status;
}

/* SIGTERM while files are staged: the process dies of the signal and no staged file is left. */
Test(gw_outfile, sigterm_removes_every_staged_file_and_ends_the_process)
{
    dir d;
    dir_make(&d);
    put(&d, "a", "old a");
    const int status = run_child(&d, "term");
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "the child must die of SIGTERM (status %#x)",
              status);
    cr_expect_str_eq(text_of(&d, "a"), "old a");
    cr_expect_null(text_of(&d, "b"));
    cr_expect_eq(gw_count_dir_entries(d.path), 1, "a only: the staged files are gone");
    gw_remove_dir(d.path);
}

/* The same SIGTERM handled on another thread than the one that staged the files. */
Test(gw_outfile, sigterm_on_another_thread_removes_every_staged_file, .timeout = 60)
{
    dir d;
    dir_make(&d);
    const int status = run_child(&d, "thread");
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "the child must die of SIGTERM (status %#x)",
              status);
    cr_expect_eq(gw_count_dir_entries(d.path), 0, "the staged files must be gone");
    gw_remove_dir(d.path);
}

/* A SIGTERM that the caller's parent set to be ignored stays ignored. */
Test(gw_outfile, an_ignored_signal_stays_ignored)
{
    dir d;
    dir_make(&d);
    const int status = run_child(&d, "ignored");
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child must survive SIGTERM (status %#x)", status);
    gw_remove_dir(d.path);
}
