/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "bad_input_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

void bi_expect_words(const char *row, const char *msg, const char *words)
{
    const char *w = words;
    while (*w) {
        const char *bar = strchr(w, '|');
        const size_t n = bar ? (size_t)(bar - w) : strlen(w);
        char word[256];
        cr_assert(n > 0 && n < sizeof word, "%s: empty or over-long word in \"%s\"", row, words);
        memcpy(word, w, n);
        word[n] = '\0';
        cr_expect(msg && strstr(msg, word), "%s: the message does not say \"%s\":\n  message: %s", row, word,
                  msg ? msg : "(none)");
        w += bar ? n + 1 : n;
    }
}

void bi_bytes_take(bi_bytes *s, const void *mem, size_t size)
{
    s->mem = mem;
    s->size = size;
    s->copy = malloc(size ? size : 1);
    cr_assert(s->copy, "out of memory for a %zu-byte snapshot", size);
    memcpy(s->copy, mem, size);
}

void bi_bytes_expect_unchanged(bi_bytes *s, const char *row, const char *what)
{
    const unsigned char *now = s->mem;
    size_t first = s->size, changed = 0;
    for (size_t i = 0; i < s->size; i++) {
        if (now[i] != s->copy[i]) {
            if (first == s->size) first = i;
            changed++;
        }
    }
    cr_expect(changed == 0, "%s: %s changed: %zu of %zu bytes, the first at byte %zu (0x%02x, was 0x%02x)", row,
              what, changed, s->size, first, first < s->size ? now[first] : 0, first < s->size ? s->copy[first] : 0);
    free(s->copy);
    s->copy = NULL;
}

/* FNV-1a over a file's bytes: a content fingerprint for the directory snapshot. */
static uint64_t file_hash(const char *path)
{
    uint64_t h = 1469598103934665603ull;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    for (int c; (c = fgetc(f)) != EOF;) h = (h ^ (uint64_t)(unsigned char)c) * 1099511628211ull;
    fclose(f);
    return h;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void bi_dir_take(bi_dir *d, const char *dir)
{
    DIR *dp = opendir(dir);
    cr_assert(dp, "cannot open %s: %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        cr_assert(grown, "out of memory");
        names = grown;
        names[n] = strdup(e->d_name);
        cr_assert(names[n], "out of memory");
        n++;
    }
    closedir(dp);
    if (n) qsort(names, n, sizeof *names, name_cmp);
    d->text = NULL;
    d->len = 0;
    FILE *out = open_memstream(&d->text, &d->len);
    cr_assert(out, "open_memstream failed");
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (lstat(path, &st) != 0) st.st_size = -1;
        /* contents of small files; a large one (a sparse test file) is known by its size and mtime */
        const int hashed = S_ISREG(st.st_mode) && st.st_size <= (1 << 20);
        fprintf(out, "%s size=%lld mtime=%lld.%09ld hash=%016llx\n", names[i], (long long)st.st_size,
                (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec, hashed ? (unsigned long long)file_hash(path) : 0ull);
        free(names[i]);
    }
    free(names);
    fclose(out);
}

void bi_dir_expect_unchanged(bi_dir *d, const char *dir, const char *row)
{
    bi_dir now;
    bi_dir_take(&now, dir);
    cr_expect(strcmp(now.text, d->text) == 0, "%s: %s changed:\n--- before:\n%s--- after:\n%s", row, dir, d->text,
              now.text);
    free(now.text);
    free(d->text);
    d->text = NULL;
}

char *bi_make_dir(const char *prefix)
{
    char *path = malloc(strlen(prefix) + 8);
    cr_assert(path, "out of memory");
    sprintf(path, "%s.XXXXXX", prefix);
    cr_assert(mkdtemp(path), "mkdtemp %s: %s", path, strerror(errno));
    return path;
}

void bi_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f, "cannot create %s: %s", path, strerror(errno));
    const size_t written = fwrite(data, 1, len, f);
    const int closed = fclose(f);
    cr_assert(written == len && closed == 0, "cannot write %s", path);
}
