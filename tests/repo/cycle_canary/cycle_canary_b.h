/* SPDX-License-Identifier: MIT
 * The cycle check's canary: includes cycle_canary_a.h, which includes this file.
 */
#ifndef CYCLE_CANARY_B_H
#define CYCLE_CANARY_B_H

#include "cycle_canary_a.h"

int cycle_canary_b(int n);

#endif
