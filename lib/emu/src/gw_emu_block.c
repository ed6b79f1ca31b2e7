/* SPDX-License-Identifier: MIT
 * Running a launch on the emulated device (gw_emu.h): its blocks one at a time in an order drawn from the
 * seed, each block's threads as fibers that the scheduler switches at every barrier, warp rendezvous and
 * atomic, again in an order drawn from the seed. A block that cannot go on (every live thread waits, and no
 * wait can end) or breaks a rule of the warp protocol is a device error: its message names the kernel, the
 * block, the warp and the call, and the launch fails.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw_emu.h"
#include "gw_emu_fiber.h"
#include "gw_emu_internal.h"

enum { RUNNABLE, AT_BARRIER, AT_WARP, DONE };

typedef struct thread_state {
    gw_emu_self self;
    gw_emu_fiber fiber;
    int state;
    int requeue;             /* it yielded at an atomic and stays runnable */
    const char *call, *file; /* what it waits in, for messages */
    int line;
    uint64_t result;         /* a warp operation's result, set when its rendezvous completes */
} thread_state;

/* A warp's rendezvous in progress: the first lane to arrive sets the call and the mask. */
typedef struct warp_state {
    int kind; /* -1: none in progress */
    unsigned mask, arrived, live;
    const char *call, *file;
    int line, width;
    uint64_t value[GW_EMU_WARP];
    int arg[GW_EMU_WARP];
} warp_state;

typedef struct block_state {
    const gw_emu_launch_desc *launch;
    unsigned idx[3], sm;
    unsigned nthreads, live, runnable_count;
    unsigned *runnable; /* thread ids that may run */
    thread_state *threads;
    warp_state *warps;
    /* __syncthreads in progress */
    unsigned bar_arrived;
    int bar_kind, bar_line, bar_value;
    const char *bar_call, *bar_file;
    uint64_t rng;
    void *dynamic_shared;
    int failed;
    char *why;
    size_t why_size;
} block_state;

/* The block and thread running on this OS thread. Blocks run one at a time in the whole process
 * (gw_emu_internal.h): static __shared__ variables are one copy. */
static _Thread_local block_state *cur_block;
static _Thread_local thread_state *cur_thread;

/* Fibers and their stacks are kept between blocks and launches: making 256 of them per block would cost more
 * than running most blocks. */
static thread_state *pool;
static unsigned pool_size;
static unsigned long long launch_count;

static uint64_t next_random(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t seed(void)
{
    const char *v = getenv("GW_EMU_SEED");
    return v && *v ? strtoull(v, NULL, 10) : 1;
}

void gw_emu_reset_launches(void) { launch_count = 0; }

const gw_emu_self *gw_emu_current(void) { return cur_thread ? &cur_thread->self : NULL; }

void *gw_emu_dynamic_shared(void) { return cur_block ? cur_block->dynamic_shared : NULL; }

unsigned long long gw_emu_globaltimer(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

unsigned gw_emu_smid(void) { return cur_block ? cur_block->sm : 0; }

/* "kernel K block (x,y,z) thread (x,y,z) (warp W lane L)" into buf. */
static void where(char *buf, size_t size)
{
    const block_state *b = cur_block;
    const thread_state *t = cur_thread;
    int n = snprintf(buf, size, "kernel %s block (%u,%u,%u)", b->launch->kernel, b->idx[0], b->idx[1], b->idx[2]);
    if (t && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " thread (%u,%u,%u) (warp %u lane %u)", t->self.thread_idx[0],
                 t->self.thread_idx[1], t->self.thread_idx[2], t->self.warp, t->self.lane);
}

/* Ends the block: the message in why, and back to the scheduler for good. */
void gw_emu_fail(const char *fmt, ...)
{
    block_state *b = cur_block;
    if (!b) {
        va_list ap;
        va_start(ap, fmt);
        fputs("gw_emu: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputs(" (outside a kernel)\n", stderr);
        va_end(ap);
        abort();
    }
    char at[256], rule[768];
    where(at, sizeof at);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rule, sizeof rule, fmt, ap);
    va_end(ap);
    if (!b->failed) snprintf(b->why, b->why_size, "%s: %s", at, rule);
    b->failed = 1;
    for (;;) gw_emu_fiber_yield(); /* the scheduler sees failed and never resumes this fiber */
}

/* ---- the scheduler ---- */

static void make_runnable(block_state *b, thread_state *t)
{
    t->state = RUNNABLE;
    b->runnable[b->runnable_count++] = t->self.tid;
}

/* The current thread is about to wait in call: marked first, so that a rendezvous it completes itself
 * releases it with the others. */
static void mark_waiting(int state, const char *call, const char *file, int line)
{
    thread_state *t = cur_thread;
    t->state = state, t->call = call, t->file = file, t->line = line;
}

/* ThreadSanitizer's order around a block (gw_emu_fiber_acquire/release): what the host did before the block
 * happens before every thread's first step, and every thread's last step before what the host does after.
 * Two objects, so that a thread that ends early orders nothing before a thread that starts late. The blocks
 * of a launch run one after the other through the host, so races between blocks are not seen (static
 * __shared__ variables are one copy here, and a block must find them as a fresh block would). */
static void thread_body(void *arg)
{
    (void)arg;
    gw_emu_fiber_acquire(&cur_block->idx);
    cur_block->launch->body(cur_block->launch->closure);
    gw_emu_fiber_release(&cur_block->sm);
}

static void thread_exits(block_state *b, thread_state *t);

/* Every runnable thread, in an order drawn from the block's seed, until all are done or none can run. */
static void schedule(block_state *b)
{
    while (!b->failed && b->live) {
        if (!b->runnable_count) {
            /* every live thread waits and nothing can release it: say who waits where */
            char at[256], list[1024] = "";
            size_t used = 0;
            cur_thread = NULL;
            where(at, sizeof at);
            for (unsigned i = 0; i < b->nthreads && used + 160 < sizeof list; i++) {
                const thread_state *t = &b->threads[i];
                if (t->state == DONE || (i && t->state == b->threads[i - 1].state && t->line == b->threads[i - 1].line))
                    continue;
                used += (size_t)snprintf(list + used, sizeof list - used, "%sthread %u (warp %u) in %s at %s:%d",
                                         used ? ", " : "", i, t->self.warp, t->call, t->file, t->line);
            }
            snprintf(b->why, b->why_size, "%s: deadlock: every live thread waits and none can go on (%s)", at, list);
            b->failed = 1;
            break;
        }
        const unsigned pick = (unsigned)(next_random(&b->rng) % b->runnable_count);
        thread_state *t = &b->threads[b->runnable[pick]];
        b->runnable[pick] = b->runnable[--b->runnable_count];
        cur_thread = t;
        gw_emu_fiber_resume(&t->fiber);
        cur_thread = NULL;
        if (b->failed) break;
        if (t->fiber.finished) {
            thread_exits(b, t);
        } else if (t->requeue) { /* it yielded at an atomic: still runnable */
            t->requeue = 0;
            b->runnable[b->runnable_count++] = t->self.tid;
        }
    }
}

/* ---- __syncthreads ---- */

static void release_barrier(block_state *b)
{
    int value = b->bar_kind == GW_EMU_BAR_AND ? 1 : 0;
    for (unsigned i = 0; i < b->nthreads; i++) {
        thread_state *t = &b->threads[i];
        if (t->state != AT_BARRIER) continue;
        const int p = (int)t->result;
        if (b->bar_kind == GW_EMU_BAR_OR) value |= p != 0;
        else if (b->bar_kind == GW_EMU_BAR_AND) value &= p != 0;
        else if (b->bar_kind == GW_EMU_BAR_COUNT) value += p != 0;
    }
    for (unsigned i = 0; i < b->nthreads; i++)
        if (b->threads[i].state == AT_BARRIER) {
            b->threads[i].result = (uint64_t)value;
            make_runnable(b, &b->threads[i]);
        }
    b->bar_arrived = 0, b->bar_call = NULL;
}

int gw_emu_barrier(int kind, int predicate, const char *call, const char *file, int line)
{
    block_state *b = cur_block;
    thread_state *t = cur_thread;
    if (!b || !t) gw_emu_fail("%s called outside a kernel", call);
    if (b->bar_call && (b->bar_line != line || b->bar_kind != kind || (b->bar_file != file && strcmp(b->bar_file, file))))
        gw_emu_fail("%s at %s:%d while other threads of the block wait in %s at %s:%d: every thread must reach the "
                    "same barrier", call, file, line, b->bar_call, b->bar_file, b->bar_line);
    if (!b->bar_call) b->bar_call = call, b->bar_file = file, b->bar_line = line, b->bar_kind = kind;
    t->result = (uint64_t)(predicate != 0);
    b->bar_arrived++;
    gw_emu_fiber_release(b); /* what this thread did before the barrier happens before what any does after */
    mark_waiting(AT_BARRIER, call, file, line);
    if (b->bar_arrived == b->live) release_barrier(b);
    gw_emu_fiber_yield();
    gw_emu_fiber_acquire(b);
    return (int)t->result;
}

/* ---- warp rendezvous ---- */

static void complete_warp(block_state *b, warp_state *w, unsigned warp)
{
    for (unsigned lane = 0; lane < GW_EMU_WARP; lane++) {
        if (!(w->mask >> lane & 1u)) continue;
        thread_state *t = &b->threads[warp * GW_EMU_WARP + lane];
        uint64_t r = 0;
        const int seg = w->width, base = (int)lane & ~(seg - 1);
        int src = -1;
        switch (w->kind) {
        case GW_EMU_WARP_SYNC: break;
        case GW_EMU_WARP_BALLOT:
            for (unsigned l = 0; l < GW_EMU_WARP; l++)
                if ((w->mask >> l & 1u) && w->value[l]) r |= 1u << l;
            break;
        case GW_EMU_WARP_SHFL: src = base + (w->arg[lane] & (seg - 1)); break;
        case GW_EMU_WARP_SHFL_UP: src = (int)lane - w->arg[lane] >= base ? (int)lane - w->arg[lane] : (int)lane; break;
        case GW_EMU_WARP_SHFL_DOWN:
            src = (int)lane + w->arg[lane] < base + seg ? (int)lane + w->arg[lane] : (int)lane;
            break;
        case GW_EMU_WARP_SHFL_XOR: src = ((int)lane ^ w->arg[lane]) < base + seg ? (int)lane ^ w->arg[lane] : (int)lane;
            break;
        }
        if (src >= 0) {
            /* a source lane outside the mask gives an undefined value on a GPU: here a recognisable poison */
            r = (w->mask >> src & 1u) ? w->value[src] : 0xDEADBEEFDEADBEEFull;
        }
        t->result = r;
        make_runnable(b, t);
    }
    w->kind = -1, w->arrived = 0;
}

uint64_t gw_emu_warp(int kind, unsigned mask, uint64_t value, int arg, int width, const char *call, const char *file,
                     int line)
{
    block_state *b = cur_block;
    thread_state *t = cur_thread;
    if (!b || !t) gw_emu_fail("%s called outside a kernel", call);
    const unsigned lane = t->self.lane, warp = t->self.warp;
    warp_state *w = &b->warps[warp];
    if (!(mask >> lane & 1u))
        gw_emu_fail("%s at %s:%d with mask 0x%08x, which does not name the calling lane %u", call, file, line, mask, lane);
    if (mask & ~w->live)
        gw_emu_fail("%s at %s:%d with mask 0x%08x names lanes that do not exist or have returned (live: 0x%08x)", call,
                    file, line, mask, w->live);
    if (width < 1 || width > GW_EMU_WARP || (width & (width - 1)))
        gw_emu_fail("%s at %s:%d with width %d: a power of two from 1 to 32", call, file, line, width);
    if (w->kind >= 0 && (w->kind != kind || w->mask != mask || w->line != line || (w->file != file && strcmp(w->file, file))))
        gw_emu_fail("%s at %s:%d with mask 0x%08x while lanes 0x%08x of the warp wait in %s at %s:%d with mask "
                    "0x%08x: the lanes of a mask must make the same call", call, file, line, mask, w->arrived, w->call,
                    w->file, w->line, w->mask);
    if (w->kind < 0) w->kind = kind, w->mask = mask, w->call = call, w->file = file, w->line = line, w->width = width;
    w->value[lane] = value, w->arg[lane] = arg;
    w->arrived |= 1u << lane;
    /* __syncwarp orders the memory accesses of its lanes (CUDA guarantees it); a shuffle or a ballot exchanges
     * values only, so under ThreadSanitizer it orders nothing, as on a GPU */
    const int orders = kind == GW_EMU_WARP_SYNC;
    if (orders) gw_emu_fiber_release(w);
    mark_waiting(AT_WARP, call, file, line);
    if (w->arrived == w->mask) complete_warp(b, w, warp);
    gw_emu_fiber_yield();
    if (orders) gw_emu_fiber_acquire(w);
    return t->result;
}

unsigned gw_emu_active_mask(void)
{
    if (!cur_block || !cur_thread) gw_emu_fail("__activemask called outside a kernel");
    return cur_block->warps[cur_thread->self.warp].live;
}

unsigned gw_emu_block_thread(unsigned block_threads, const char *who)
{
    if (!cur_block || !cur_thread) gw_emu_fail("%s called outside a kernel", who);
    if (cur_block->nthreads != block_threads)
        gw_emu_fail("%s for %u threads in a block of %u threads: the template's size must be the block's", who,
                    block_threads, cur_block->nthreads);
    return cur_thread->self.tid;
}

void gw_emu_atomic_point(void)
{
    block_state *b = cur_block;
    if (!b || !cur_thread) return; /* host code */
    if (next_random(&b->rng) & 1u) {
        cur_thread->requeue = 1;
        gw_emu_fiber_yield();
    }
}

/* A thread returned: it leaves every rendezvous; a barrier that waited only for it completes, and a warp
 * operation that names it can never complete. */
static void thread_exits(block_state *b, thread_state *t)
{
    t->state = DONE;
    b->live--;
    warp_state *w = &b->warps[t->self.warp];
    w->live &= ~(1u << t->self.lane);
    if (w->kind >= 0 && (w->mask >> t->self.lane & 1u)) {
        cur_thread = t;
        char at[256];
        where(at, sizeof at);
        snprintf(b->why, b->why_size, "%s: returned without joining %s at %s:%d, whose mask 0x%08x names it (lanes "
                 "0x%08x wait there forever)", at, w->call, w->file, w->line, w->mask, w->arrived);
        cur_thread = NULL;
        b->failed = 1;
        return;
    }
    if (b->bar_arrived && b->bar_arrived == b->live) release_barrier(b);
}

/* ---- a launch ---- */

static int ensure_pool(unsigned n)
{
    if (n <= pool_size) return 0;
    thread_state *grown = realloc(pool, n * sizeof *pool);
    if (!grown) return -1;
    pool = grown;
    for (; pool_size < n; pool_size++) {
        memset(&pool[pool_size], 0, sizeof pool[pool_size]);
#if defined(__SANITIZE_ADDRESS__)
        const size_t stack = 1u << 20; /* instrumented frames are several times larger */
#else
        const size_t stack = 256u << 10;
#endif
        if (gw_emu_fiber_init(&pool[pool_size].fiber, stack)) return -1;
    }
    return 0;
}

static int run_block(block_state *b, const unsigned idx[3], unsigned sm)
{
    const gw_emu_launch_desc *d = b->launch;
    memcpy(b->idx, idx, sizeof b->idx);
    b->sm = sm;
    b->live = b->nthreads, b->runnable_count = 0, b->bar_arrived = 0, b->bar_call = NULL;
    const unsigned nwarps = (b->nthreads + GW_EMU_WARP - 1) / GW_EMU_WARP;
    for (unsigned w = 0; w < nwarps; w++) {
        const unsigned lanes = b->nthreads - w * GW_EMU_WARP;
        b->warps[w] = (warp_state){.kind = -1, .live = lanes >= GW_EMU_WARP ? ~0u : (1u << lanes) - 1u};
    }
    if (d->dynamic_shared) memset(b->dynamic_shared, 0xFF, d->dynamic_shared); /* reads before writes: NaN */
    for (unsigned i = 0; i < b->nthreads; i++) {
        thread_state *t = &b->threads[i];
        const unsigned bx = d->block[0], by = d->block[1];
        t->self = (gw_emu_self){.thread_idx = {i % bx, i / bx % by, i / (bx * by)},
                                .block_idx = {idx[0], idx[1], idx[2]},
                                .block_dim = {d->block[0], d->block[1], d->block[2]},
                                .grid_dim = {d->grid[0], d->grid[1], d->grid[2]},
                                .tid = i, .lane = i % GW_EMU_WARP, .warp = i / GW_EMU_WARP};
        gw_emu_fiber_start(&t->fiber, thread_body, NULL);
        t->requeue = 0;
        make_runnable(b, t);
    }
    gw_emu_fiber_release(&b->idx); /* see thread_body */
    schedule(b);
    gw_emu_fiber_acquire(&b->sm);
    return b->failed ? -1 : 0;
}

int gw_emu_run(const gw_emu_launch_desc *d, unsigned long long blocks, char *why, size_t why_size)
{
    const unsigned nthreads = d->block[0] * d->block[1] * d->block[2];
    const unsigned long long nblocks = (unsigned long long)d->grid[0] * d->grid[1] * d->grid[2];
    block_state b = {.launch = d, .nthreads = nthreads, .why = why, .why_size = why_size};
    why[0] = '\0';
    if (ensure_pool(nthreads)) {
        snprintf(why, why_size, "kernel %s: out of memory for %u fibers", d->kernel, nthreads);
        return -1;
    }
    b.threads = pool;
    b.runnable = malloc(nthreads * sizeof *b.runnable);
    b.warps = malloc(((nthreads + GW_EMU_WARP - 1) / GW_EMU_WARP) * sizeof *b.warps);
    b.dynamic_shared = d->dynamic_shared ? malloc(d->dynamic_shared) : NULL;
    unsigned long long *order = malloc(nblocks * sizeof *order);
    int rc = 0;
    if (!b.runnable || !b.warps || !order || (d->dynamic_shared && !b.dynamic_shared)) {
        snprintf(why, why_size, "kernel %s: out of memory for %llu blocks of %u threads", d->kernel, nblocks, nthreads);
        rc = -1;
    }
    /* the blocks in an order drawn from the seed (Fisher-Yates), each on an emulated multiprocessor */
    uint64_t rng = seed() ^ (0x5851F42D4C957F2Dull * ++launch_count);
    for (unsigned long long i = 0; !rc && i < nblocks; i++) order[i] = i;
    for (unsigned long long i = nblocks; !rc && i > 1; i--) {
        const unsigned long long j = next_random(&rng) % i, tmp = order[i - 1];
        order[i - 1] = order[j], order[j] = tmp;
    }
    cur_block = &b;
    for (unsigned long long i = 0; !rc && i < nblocks && i < blocks; i++) {
        const unsigned long long k = order[i];
        const unsigned idx[3] = {(unsigned)(k % d->grid[0]), (unsigned)(k / d->grid[0] % d->grid[1]),
                                 (unsigned)(k / ((unsigned long long)d->grid[0] * d->grid[1]))};
        b.rng = rng ^ (k * 0xD1B54A32D192ED03ull);
        rc = run_block(&b, idx, (unsigned)(i % GW_EMU_SM_COUNT));
    }
    cur_block = NULL;
    free(order);
    free(b.dynamic_shared);
    free(b.warps);
    free(b.runnable);
    return rc;
}
