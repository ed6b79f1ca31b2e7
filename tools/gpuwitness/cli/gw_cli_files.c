/* SPDX-License-Identifier: MIT
 * The output rule (gw_cli_files.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "gw_cli_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_infile.h"

/* One file by identity: the file itself (an existing input or output), or an output's directory entry. */
typedef struct key {
    dev_t dev;
    ino_t ino;
    const char *base; /* the entry's name in directory (dev, ino); NULL for a file key */
    int is_output;
    size_t index;
} key;

static int compare_keys(const void *pa, const void *pb)
{
    const key *a = pa, *b = pb;
    if (a->dev != b->dev) return a->dev < b->dev ? -1 : 1;
    if (a->ino != b->ino) return a->ino < b->ino ? -1 : 1;
    const int names = a->base && b->base ? strcmp(a->base, b->base) : 0;
    if (names) return names;
    if (a->is_output != b->is_output) return a->is_output - b->is_output; /* inputs first */
    return a->index < b->index ? -1 : a->index > b->index;
}

/* "--out 'f.fits'", "output 'd/a.json' (of 'a.json')", "output 'x'"; an input without an option: "'a.json'". */
static void describe(const gw_cli_file *f, int is_output, char *buf, size_t size)
{
    if (f->option) snprintf(buf, size, "%s '%s'", f->option, f->path);
    else if (f->from) snprintf(buf, size, "output '%s' (of '%s')", f->path, f->from);
    else snprintf(buf, size, "%s'%s'", is_output ? "output " : "", f->path);
}

/* The directory a path names its file in ("." for a bare name, "/" for a file at the root), newly allocated
 * (NULL when out of memory), and in *base the file name. */
static char *dir_of(const char *path, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    if (!slash) return strdup(".");
    return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* The place of one output: its directory exists and can be written, the name is a file name, and what
 * exists there is a regular file. Adds its entry key and, when it exists, its file key. 0, or -1 (printed). */
static int check_place(const char *cmd, const gw_cli_file *f, size_t index, key *entry, key *file, int *exists)
{
    char which[4200];
    describe(f, 1, which, sizeof which);
    const char *base;
    char *dir = dir_of(f->path, &base);
    if (!dir) {
        fprintf(stderr, "%s: out of memory\n", cmd);
        return -1;
    }
    if (!*base) {
        fprintf(stderr, "%s: %s: not a file name (it ends in '/')\n", cmd, which);
        free(dir);
        return -1;
    }
    struct stat st;
    int rc = -1;
    if (stat(dir, &st) != 0)
        fprintf(stderr, "%s: %s: directory '%s' %s\n", cmd, which, dir,
                errno == ENOENT ? "does not exist" : strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        fprintf(stderr, "%s: %s: '%s' is not a directory (it is %s)\n", cmd, which, dir, gw_file_kind(st.st_mode));
    else if (access(dir, W_OK | X_OK) != 0)
        fprintf(stderr, "%s: %s: directory '%s' cannot be written: %s\n", cmd, which, dir, strerror(errno));
    else
        rc = 0;
    free(dir);
    if (rc) return rc;
    *entry = (key){st.st_dev, st.st_ino, base, 1, index};
    *exists = stat(f->path, &st) == 0;
    if (!*exists && errno != ENOENT) {
        fprintf(stderr, "%s: %s: cannot be checked: %s\n", cmd, which, strerror(errno));
        return -1;
    }
    if (*exists && !S_ISREG(st.st_mode)) {
        fprintf(stderr, "%s: %s: exists and is not a regular file (%s)\n", cmd, which, gw_file_kind(st.st_mode));
        return -1;
    }
    if (*exists) *file = (key){st.st_dev, st.st_ino, NULL, 1, index};
    return 0;
}

/* The directory entry of an input, when its directory exists: 1 and *k set, else 0. */
static int input_entry(const gw_cli_file *f, size_t index, key *k)
{
    const char *base;
    char *dir = dir_of(f->path, &base);
    struct stat st;
    const int found = dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
    free(dir);
    if (found) *k = (key){st.st_dev, st.st_ino, base, 0, index};
    return found;
}

static int same_file(const key *a, const key *b)
{
    return a->dev == b->dev && a->ino == b->ino && (a->base && b->base ? !strcmp(a->base, b->base) : 1);
}

/* In sorted keys, the first of the first two that name one file, at least one of them an output; or NULL. */
static const key *first_clash(const key *keys, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (keys[i].is_output && same_file(&keys[i - 1], &keys[i])) return &keys[i - 1];
    return NULL;
}

int gw_cli_check_outputs(const char *cmd, const gw_cli_file *outputs, size_t n_outputs, const gw_cli_file *inputs,
                         size_t n_inputs)
{
    /* file keys: every existing input and output; entry keys: every output, and every input whose directory
     * exists (an input that does not exist yet is still never overwritten: "a.npy" and "./a.npy" are one) */
    key *files = malloc((n_outputs + n_inputs + 1) * sizeof *files);
    key *entries = malloc((n_outputs + n_inputs + 1) * sizeof *entries);
    size_t n_files = 0, n_entries = 0;
    int rc = files && entries ? 0 : -1;
    if (rc) fprintf(stderr, "%s: out of memory\n", cmd);
    for (size_t i = 0; !rc && i < n_outputs; i++) {
        int exists = 0;
        rc = check_place(cmd, &outputs[i], i, &entries[n_entries++], &files[n_files], &exists);
        n_files += !rc && exists;
    }
    for (size_t i = 0; !rc && i < n_inputs; i++) {
        struct stat st;
        if (stat(inputs[i].path, &st) == 0) files[n_files++] = (key){st.st_dev, st.st_ino, NULL, 0, i};
        if (input_entry(&inputs[i], i, &entries[n_entries])) n_entries++;
    }
    if (!rc) {
        /* Sorted, an input sorts before the outputs that are its file, and the outputs of one file by index. */
        qsort(files, n_files, sizeof *files, compare_keys);
        qsort(entries, n_entries, sizeof *entries, compare_keys);
        const key *clash = first_clash(files, n_files);
        const key *same_entry = clash ? NULL : first_clash(entries, n_entries);
        if (clash || same_entry) {
            const key *a = clash ? clash : same_entry, *b = a + 1;
            char first[4200], second[4200];
            describe(a->is_output ? &outputs[a->index] : &inputs[a->index], a->is_output, first, sizeof first);
            describe(&outputs[b->index], 1, second, sizeof second);
            if (!a->is_output)
                fprintf(stderr, "%s: %s is the input file %s: refusing to overwrite an input\n", cmd, second, first);
            else
                fprintf(stderr, "%s: %s and %s are the same file: each output needs its own file\n", cmd, first,
                        second);
            rc = -1;
        }
    }
    free(files);
    free(entries);
    return rc;
}
