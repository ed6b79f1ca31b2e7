/* SPDX-License-Identifier: MIT
 * The cycle check's canary (tests/repo/CMakeLists.txt): with cycle_canary_b.h, an include cycle; with
 * cycle_canary_b.c, a call cycle. Built as objects only, never linked; the project's own check leaves it out.
 */
#ifndef CYCLE_CANARY_A_H
#define CYCLE_CANARY_A_H

#include "cycle_canary_b.h"

int cycle_canary_a(int n);

#endif
