/* SPDX-License-Identifier: MIT
 * The cycle check's canary: calls cycle_canary_a, which called this.
 */
#include "cycle_canary_b.h"

int cycle_canary_b(int n) { return n <= 0 ? 1 : cycle_canary_a(n - 1); }
