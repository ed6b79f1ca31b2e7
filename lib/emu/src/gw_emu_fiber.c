/* SPDX-License-Identifier: MIT
 * Fibers: one stack and one saved stack pointer per emulated CUDA thread, switched by hand (gw_emu_fiber.h).
 * A switch saves the callee-saved registers on the old stack and restores them from the new one: no system
 * call (swapcontext saves the signal mask with one), which matters because a block of 256 threads switches
 * at every barrier. The sanitizers are told about every switch, so that AddressSanitizer knows which stack is
 * live and ThreadSanitizer sees each fiber as a thread of its own whose accesses race unless a barrier, a warp
 * rendezvous or an atomic orders them (docs/emu.md, "Races and memory errors").
 */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, MAP_STACK */
#include "gw_emu_fiber.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* GW_EMU_TSAN: the build runs the kernels under ThreadSanitizer. This file itself is compiled without it (its
 * bookkeeping is shared by every fiber, and only the kernels' accesses are to be judged), so the build says so
 * with this define instead of -fsanitize=thread. AddressSanitizer instruments this file like any other. */
#if defined(__SANITIZE_ADDRESS__)
#define GW_EMU_ASAN 1
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(GW_EMU_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

#if !defined(__x86_64__)
#error "gw_emu's fibers switch stacks with x86-64 code; add the switch for this architecture"
#endif

/* gw_emu_switch(void **save_sp, void *load_sp): pushes the System V callee-saved registers, stores the stack
 * pointer in *save_sp, loads load_sp and pops the registers that were pushed there; ret continues where that
 * fiber called gw_emu_switch, or, for a new fiber, in gw_emu_fiber_trampoline. */
void gw_emu_switch(void **save_sp, void *load_sp);
void gw_emu_fiber_trampoline(void);
__asm__(".text\n"
        ".globl gw_emu_switch\n"
        ".type gw_emu_switch, @function\n"
        "gw_emu_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size gw_emu_switch, .-gw_emu_switch\n"
        /* A new fiber's first switch returns here with the fiber in %rbx: align the stack as a call wants it
         * and run it; its entry never returns (it switches away for the last time). */
        ".globl gw_emu_fiber_trampoline\n"
        ".type gw_emu_fiber_trampoline, @function\n"
        "gw_emu_fiber_trampoline:\n"
        "    movq %rbx, %rdi\n"
        "    andq $-16, %rsp\n"
        "    call gw_emu_fiber_entry\n"
        "    ud2\n"
        ".size gw_emu_fiber_trampoline, .-gw_emu_fiber_trampoline\n");

/* The context that started the fibers (the scheduler's), one per OS thread that runs blocks. */
static _Thread_local gw_emu_fiber scheduler_context;
static _Thread_local gw_emu_fiber *running;

void gw_emu_fiber_entry(gw_emu_fiber *f);
void gw_emu_fiber_entry(gw_emu_fiber *f)
{
#if defined(GW_EMU_ASAN)
    /* the stack this fiber came from is the scheduler's: AddressSanitizer needs its bounds to switch back */
    __sanitizer_finish_switch_fiber(NULL, (const void **)&scheduler_context.stack, &scheduler_context.stack_bytes);
#endif
    f->entry(f->arg);
    f->finished = 1;
    gw_emu_fiber_yield(); /* never resumed */
    abort();
}

int gw_emu_fiber_init(gw_emu_fiber *f, size_t stack_bytes)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    stack_bytes = (stack_bytes + page - 1) / page * page;
    /* one guard page below the stack: an overflow faults at once instead of writing into a neighbour */
    uint8_t *base = mmap(NULL, stack_bytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
                         MAP_NORESERVE | MAP_STACK, -1, 0);
    if (base == MAP_FAILED) return -1;
    if (mprotect(base, page, PROT_NONE) != 0) {
        munmap(base, stack_bytes + page);
        return -1;
    }
    *f = (gw_emu_fiber){.stack = base + page, .stack_bytes = stack_bytes};
#if defined(GW_EMU_TSAN)
    f->tsan = __tsan_create_fiber(0);
#endif
    return 0;
}

void gw_emu_fiber_start(gw_emu_fiber *f, void (*entry)(void *), void *arg)
{
    /* The stack as gw_emu_switch leaves one: six saved registers (%rbx = the fiber), then the return address. */
    void **top = (void **)(((uintptr_t)(f->stack + f->stack_bytes)) & ~(uintptr_t)15);
    void **sp = top - 8;
    sp[0] = sp[1] = sp[2] = sp[3] = NULL; /* r15, r14, r13, r12 */
    sp[4] = f;                            /* rbx */
    sp[5] = NULL;                         /* rbp */
    sp[6] = (void *)gw_emu_fiber_trampoline;
    sp[7] = NULL;
    f->sp = sp;
    f->entry = entry, f->arg = arg, f->finished = 0;
}

static void switch_to(gw_emu_fiber *from, gw_emu_fiber *to)
{
#if defined(GW_EMU_ASAN)
    void *fake_stack = NULL;
    __sanitizer_start_switch_fiber(from->finished ? NULL : &fake_stack, to->stack, to->stack_bytes);
#endif
#if defined(GW_EMU_TSAN)
    /* no_sync: a switch orders nothing; only the emulated synchronisation does (gw_emu_fiber_release/acquire) */
    __tsan_switch_to_fiber(to->tsan, __tsan_switch_to_fiber_no_sync);
#endif
    gw_emu_switch(&from->sp, to->sp);
#if defined(GW_EMU_ASAN)
    if (from == &scheduler_context) __sanitizer_finish_switch_fiber(fake_stack, NULL, NULL);
    else __sanitizer_finish_switch_fiber(fake_stack, (const void **)&scheduler_context.stack,
                                         &scheduler_context.stack_bytes);
#endif
}

void gw_emu_fiber_resume(gw_emu_fiber *f)
{
#if defined(GW_EMU_TSAN)
    if (!scheduler_context.tsan) scheduler_context.tsan = __tsan_get_current_fiber();
#endif
    running = f;
    switch_to(&scheduler_context, f);
    running = NULL;
}

void gw_emu_fiber_yield(void)
{
    gw_emu_fiber *f = running;
    if (!f) return; /* not on a fiber: host code calling a device function directly */
    switch_to(f, &scheduler_context);
}

void gw_emu_fiber_release(const void *sync_object)
{
#if defined(GW_EMU_TSAN)
    __tsan_release((void *)sync_object);
#else
    (void)sync_object;
#endif
}

void gw_emu_fiber_acquire(const void *sync_object)
{
#if defined(GW_EMU_TSAN)
    __tsan_acquire((void *)sync_object);
#else
    (void)sync_object;
#endif
}
