/* SPDX-License-Identifier: MIT
 * The cycle check's canary: calls cycle_canary_b, which calls back.
 */
#include "cycle_canary_a.h"

int cycle_canary_a(int n) { return n <= 0 ? 0 : cycle_canary_b(n - 1); }
