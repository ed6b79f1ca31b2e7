/* SPDX-License-Identifier: MIT
 * gw_arc_parse on arbitrary bytes (gw_arc_read is fopen + this). The input buffer is passed as is, not
 * NUL-terminated, so a read past json_len is an ASan report. Beyond "no crash, no leak": an accepted task
 * obeys every ARC rule the header promises, a rejected one is zeroed with a message naming the input,
 * and a tiny error buffer stays terminated.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "gw_arc.h"

static void check_grid(const gw_arc_grid *g, const char *where)
{
    FUZZ_REQUIRE(g->height >= 1 && g->height <= GW_ARC_MAX_DIM && g->width >= 1 && g->width <= GW_ARC_MAX_DIM,
                 "%s: shape %ux%u", where, (unsigned)g->height, (unsigned)g->width);
    FUZZ_REQUIRE(g->cells != NULL, "%s: no cells", where);
    for (size_t k = 0; k < (size_t)g->height * g->width; k++)
        FUZZ_REQUIRE(g->cells[k] <= 9, "%s: cell %zu is %u", where, k, (unsigned)g->cells[k]);
}

static void check_task(gw_arc_task *t)
{
    FUZZ_REQUIRE(t->n_train >= 1 && t->n_test >= 1 && t->train && t->test, "lists %zu/%zu", t->n_train, t->n_test);
    size_t grids = 0;
    for (size_t i = 0; i < t->n_train; i++) {
        FUZZ_REQUIRE(t->train[i].has_output, "train[%zu] accepted without an output", i);
        check_grid(&t->train[i].input, "train input");
        check_grid(&t->train[i].output, "train output");
        grids += 2;
    }
    for (size_t i = 0; i < t->n_test; i++) {
        check_grid(&t->test[i].input, "test input");
        if (t->test[i].has_output) check_grid(&t->test[i].output, "test output");
        grids += 1 + (t->test[i].has_output != 0);
    }
    FUZZ_REQUIRE(gw_arc_grid_count(t) == grids, "grid count %zu, expected %zu", gw_arc_grid_count(t), grids);
    for (size_t i = 0; i < grids; i++) FUZZ_REQUIRE(gw_arc_grid_at(t, i) != NULL, "grid %zu missing", i);
    FUZZ_REQUIRE(gw_arc_grid_at(t, grids) == NULL, "a grid past the end");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gw_arc_task task;
    char err[512] = "";
    const int rc = gw_arc_parse((const char *)data, size, "fuzz.json", &task, err, sizeof err);
    if (rc == 0) {
        check_task(&task);
        gw_arc_free(&task);
        return 0;
    }
    FUZZ_REQUIRE(rc == -1, "rc %d", rc);
    FUZZ_REQUIRE(task.n_train == 0 && task.n_test == 0 && !task.train && !task.test, "task not zeroed on error");
    FUZZ_REQUIRE(strncmp(err, "fuzz.json: ", 11) == 0, "the message does not name the input: '%s'", err);
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    FUZZ_REQUIRE(gw_arc_parse((const char *)data, size, "fuzz.json", &task, tiny, sizeof tiny) == -1,
                 "second parse of the same bytes accepted them");
    FUZZ_REQUIRE(memchr(tiny, '\0', sizeof tiny) != NULL, "a short error buffer is not terminated");
    return 0;
}
