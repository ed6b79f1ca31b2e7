/* SPDX-License-Identifier: MIT
 * Fibers of the emulated device (private to lib/emu): each emulated CUDA thread of a block runs on a fiber
 * of its own, and one OS thread (the scheduler) resumes them one at a time. A fiber runs until it yields
 * (at a barrier, a warp rendezvous, an atomic) or returns; then the scheduler picks the next.
 *
 *     gw_emu_fiber f;
 *     gw_emu_fiber_init(&f, 256 << 10);        // stack, once: fibers are reused from block to block
 *     gw_emu_fiber_start(&f, body, arg);       // then, per thread: the scheduler resumes it until finished
 *     while (!f.finished) gw_emu_fiber_resume(&f);
 */
#ifndef GW_EMU_FIBER_H
#define GW_EMU_FIBER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gw_emu_fiber {
    void *sp;                  /* saved stack pointer while the fiber is not running */
    unsigned char *stack;      /* lowest address of the stack */
    size_t stack_bytes;
    void (*entry)(void *);
    void *arg;
    int finished;              /* entry returned */
    void *tsan;                /* ThreadSanitizer's fiber, when built with it */
} gw_emu_fiber;

/* A stack of stack_bytes (rounded up to pages) with a guard page below it, kept for the process's life (the
 * executor reuses its fibers from block to block). 0, or -1 (mmap failed). */
int gw_emu_fiber_init(gw_emu_fiber *f, size_t stack_bytes);
/* Makes f run entry(arg) from the top of its stack at its next resume. */
void gw_emu_fiber_start(gw_emu_fiber *f, void (*entry)(void *), void *arg);
/* On the scheduler: runs f until it yields or finishes. */
void gw_emu_fiber_resume(gw_emu_fiber *f);
/* On a fiber: back to the scheduler (returns when resumed). Off a fiber: nothing. */
void gw_emu_fiber_yield(void);
/* Happens-before for ThreadSanitizer: what a fiber did before release(x) is ordered before what another
 * does after acquire(x). Without ThreadSanitizer they do nothing. */
void gw_emu_fiber_release(const void *sync_object);
void gw_emu_fiber_acquire(const void *sync_object);

#ifdef __cplusplus
}
#endif

#endif /* GW_EMU_FIBER_H */
