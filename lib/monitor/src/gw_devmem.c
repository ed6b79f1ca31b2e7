/* SPDX-License-Identifier: MIT
 * Our own device allocations (gw_devmem.h): a table of live pointers and a ring of (time, bytes held). */
#define _POSIX_C_SOURCE 200809L
#include "gw_devmem.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOG_CAP 16384 /* points kept: allocations are few per call, so this reaches back over many calls */

typedef struct live_block {
    const void *ptr;
    size_t bytes;
} live_block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static live_block *blocks;
static size_t n_blocks, cap_blocks;
static uint64_t live, allocations;
static gw_devmem_point ring[LOG_CAP];
static unsigned char ring_is_alloc[LOG_CAP]; /* the point is an allocation (else a free) */
static size_t ring_head, ring_count;
static int ring_dropped; /* the ring has overwritten its oldest points */

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void log_point_locked(int is_alloc)
{
    ring[ring_head].t_us = now_us();
    ring[ring_head].bytes = live;
    ring_is_alloc[ring_head] = (unsigned char)is_alloc;
    ring_head = (ring_head + 1) % LOG_CAP;
    if (ring_count < LOG_CAP) ring_count++;
    else ring_dropped = 1;
}

void gw_devmem_alloc(const void *ptr, size_t bytes)
{
    if (!ptr) return;
    pthread_mutex_lock(&lock);
    if (n_blocks == cap_blocks) {
        const size_t cap = cap_blocks ? 2 * cap_blocks : 64;
        live_block *b = realloc(blocks, cap * sizeof *b);
        if (!b) { /* untracked: the figures stay a lower bound */
            pthread_mutex_unlock(&lock);
            return;
        }
        blocks = b;
        cap_blocks = cap;
    }
    blocks[n_blocks].ptr = ptr;
    blocks[n_blocks].bytes = bytes;
    n_blocks++;
    live += bytes;
    allocations++;
    log_point_locked(1);
    pthread_mutex_unlock(&lock);
}

void gw_devmem_free(const void *ptr)
{
    if (!ptr) return;
    pthread_mutex_lock(&lock);
    for (size_t i = n_blocks; i-- > 0;) {
        if (blocks[i].ptr != ptr) continue;
        live -= blocks[i].bytes;
        blocks[i] = blocks[--n_blocks];
        log_point_locked(0);
        break;
    }
    pthread_mutex_unlock(&lock);
}

uint64_t gw_devmem_live(void)
{
    pthread_mutex_lock(&lock);
    const uint64_t v = live;
    pthread_mutex_unlock(&lock);
    return v;
}

uint64_t gw_devmem_allocations(void)
{
    pthread_mutex_lock(&lock);
    const uint64_t v = allocations;
    pthread_mutex_unlock(&lock);
    return v;
}

int gw_devmem_window(uint64_t t0, uint64_t t1, uint64_t *peak_bytes, uint64_t *allocs)
{
    pthread_mutex_lock(&lock);
    const size_t first = (ring_head + LOG_CAP - ring_count) % LOG_CAP;
    /* Start from what was held at t0: the last point at or before it; with none, nothing was held unless
     * the ring has dropped older points (then the figure is a lower bound). */
    uint64_t peak = 0, n = 0;
    int before = 0;
    for (size_t i = 0; i < ring_count; i++) {
        const size_t k = (first + i) % LOG_CAP;
        if (ring[k].t_us <= t0) {
            peak = ring[k].bytes;
            before = 1;
            continue;
        }
        if (ring[k].t_us > t1) break;
        if (ring[k].bytes > peak) peak = ring[k].bytes;
        n += ring_is_alloc[k];
    }
    const int partial = ring_dropped && !before;
    pthread_mutex_unlock(&lock);
    if (peak_bytes) *peak_bytes = peak;
    if (allocs) *allocs = n;
    return partial;
}

int gw_devmem_points(uint64_t t0, uint64_t t1, gw_devmem_point **points, size_t *count)
{
    *points = NULL;
    *count = 0;
    pthread_mutex_lock(&lock);
    gw_devmem_point *p = malloc((ring_count + 1) * sizeof *p);
    if (!p) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    size_t n = 1;
    p[0].t_us = t0;
    p[0].bytes = 0;
    const size_t first = (ring_head + LOG_CAP - ring_count) % LOG_CAP;
    for (size_t i = 0; i < ring_count; i++) {
        const size_t k = (first + i) % LOG_CAP;
        if (ring[k].t_us <= t0) {
            p[0].bytes = ring[k].bytes;
            continue;
        }
        if (ring[k].t_us > t1) break;
        p[n++] = ring[k];
    }
    pthread_mutex_unlock(&lock);
    *points = p;
    *count = n;
    return 0;
}

void gw_devmem_reset(void)
{
    pthread_mutex_lock(&lock);
    free(blocks);
    blocks = NULL;
    n_blocks = cap_blocks = 0;
    live = allocations = 0;
    ring_head = ring_count = 0;
    ring_dropped = 0;
    pthread_mutex_unlock(&lock);
}
