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

#if defined(__SANITIZE_ADDRESS__)
#define GW_EMU_ASAN 1
#include <sanitizer/common_interface_defs.h>
#endif

/* ThreadSanitizer's fiber interface, weak: its functions exist only in a program linked with
 * -fsanitize=thread (the emu tier's TSan runs, docs/emu.md), and then every switch and every emulated
 * synchronisation is announced. This file itself is never instrumented: its bookkeeping is shared by every
 * fiber, and only the kernels' accesses are to be judged. */
void *__tsan_get_current_fiber(void) __attribute__((weak));
void *__tsan_create_fiber(unsigned flags) __attribute__((weak));
void __tsan_switch_to_fiber(void *fiber, unsigned flags) __attribute__((weak));
void __tsan_acquire(void *addr) __attribute__((weak));
void __tsan_release(void *addr) __attribute__((weak));
enum { TSAN_SWITCH_NO_SYNC = 1 }; /* __tsan_switch_to_fiber_no_sync */

/* A volatile access in device code is a relaxed atomic one on a GPU (PTX treats ld.volatile/st.volatile as
 * relaxed, system scope): lock-free code such as grid_objects' union-find reads links with volatile loads while
 * other threads move them with atomicCAS. The kernels' ThreadSanitizer twins are compiled with
 * --param tsan-distinguish-volatile=1 (gw_emu.cmake), which calls these before each volatile access; each tells
 * ThreadSanitizer of a relaxed atomic access at that address (a load, or an add of 0 for a store), so that
 * it judges them as the GPU's memory model does. The access itself follows, uninstrumented. */
enum { TSAN_RELAXED = 0 };
unsigned char __tsan_atomic8_load(const volatile unsigned char *a, int mo) __attribute__((weak));
unsigned short __tsan_atomic16_load(const volatile unsigned short *a, int mo) __attribute__((weak));
unsigned __tsan_atomic32_load(const volatile unsigned *a, int mo) __attribute__((weak));
unsigned long long __tsan_atomic64_load(const volatile unsigned long long *a, int mo) __attribute__((weak));
unsigned char __tsan_atomic8_fetch_add(volatile unsigned char *a, unsigned char v, int mo) __attribute__((weak));
unsigned short __tsan_atomic16_fetch_add(volatile unsigned short *a, unsigned short v, int mo) __attribute__((weak));
unsigned __tsan_atomic32_fetch_add(volatile unsigned *a, unsigned v, int mo) __attribute__((weak));
unsigned long long __tsan_atomic64_fetch_add(volatile unsigned long long *a, unsigned long long v, int mo)
    __attribute__((weak));
#define GW_EMU_VOLATILE(bytes, bits, type)                                                                     \
    void __tsan_volatile_read##bytes(void *a);                                                                 \
    void __tsan_volatile_write##bytes(void *a);                                                                \
    void __tsan_volatile_read##bytes(void *a)                                                                  \
    {                                                                                                          \
        if (__tsan_atomic##bits##_load) (void)__tsan_atomic##bits##_load((const volatile type *)a, TSAN_RELAXED); \
    }                                                                                                          \
    void __tsan_volatile_write##bytes(void *a)                                                                 \
    {                                                                                                          \
        if (__tsan_atomic##bits##_fetch_add) (void)__tsan_atomic##bits##_fetch_add((volatile type *)a, 0, TSAN_RELAXED); \
    }
GW_EMU_VOLATILE(1, 8, unsigned char)
GW_EMU_VOLATILE(2, 16, unsigned short)
GW_EMU_VOLATILE(4, 32, unsigned)
GW_EMU_VOLATILE(8, 64, unsigned long long)

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
    if (__tsan_create_fiber) f->tsan = __tsan_create_fiber(0);
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
    /* no_sync: a switch orders nothing; only the emulated synchronisation does (gw_emu_fiber_release/acquire) */
    if (__tsan_switch_to_fiber) __tsan_switch_to_fiber(to->tsan, TSAN_SWITCH_NO_SYNC);
    gw_emu_switch(&from->sp, to->sp);
#if defined(GW_EMU_ASAN)
    if (from == &scheduler_context) __sanitizer_finish_switch_fiber(fake_stack, NULL, NULL);
    else __sanitizer_finish_switch_fiber(fake_stack, (const void **)&scheduler_context.stack,
                                         &scheduler_context.stack_bytes);
#endif
}

void gw_emu_fiber_resume(gw_emu_fiber *f)
{
    if (__tsan_get_current_fiber && !scheduler_context.tsan) scheduler_context.tsan = __tsan_get_current_fiber();
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
    if (__tsan_release) __tsan_release((void *)sync_object);
}

void gw_emu_fiber_acquire(const void *sync_object)
{
    if (__tsan_acquire) __tsan_acquire((void *)sync_object);
}
