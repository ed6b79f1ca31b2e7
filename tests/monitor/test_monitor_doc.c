/* SPDX-License-Identifier: MIT
 * The "monitor" object of a bench row (gw_bench_monitor_json) has exactly the keys that docs/monitor.md's
 * key table lists, in the table's order: the doc is the contract that scripts read the JSON by.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gw_bench.h"

/* The keys of the table under "## JSON keys": the first cell of each row, in backticks. */
static int doc_keys(char keys[][64], int max)
{
    FILE *f = fopen(GW_MONITOR_DOC, "r");
    cr_assert(f, "cannot open %s", GW_MONITOR_DOC);
    char line[1024];
    int in_section = 0, n = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "## ", 3)) in_section = !strncmp(line, "## JSON keys", 12);
        if (!in_section || strncmp(line, "| `", 3)) continue;
        const char *start = line + 3, *end = strchr(start, '`');
        if (!end || end - start >= 64 || n >= max) continue;
        memcpy(keys[n], start, (size_t)(end - start));
        keys[n][end - start] = '\0';
        n++;
    }
    fclose(f);
    return n;
}

Test(monitor_doc, the_json_object_has_exactly_the_keys_of_the_doc_table)
{
    char keys[64][64];
    const int n = doc_keys(keys, 64);
    cr_assert_geq(n, 10, "docs/monitor.md: no key table under \"## JSON keys\" (%d rows)", n);
    cJSON *o = gw_bench_monitor_json(NULL, 1000, 2000, NULL, 0);
    cr_assert(o);
    int i = 0;
    for (const cJSON *item = o->child; item; item = item->next, i++) {
        cr_expect_lt(i, n, "key %s is in the JSON but not in docs/monitor.md", item->string);
        if (i < n) cr_expect_str_eq(item->string, keys[i], "key %d: JSON %s, doc %s", i, item->string, keys[i]);
    }
    cr_expect_eq(i, n, "the doc lists %d keys, the JSON has %d", n, i);
    cr_expect_str_eq(cJSON_GetObjectItem(o, "status")->valuestring, "off");
    cr_expect_eq(cJSON_GetObjectItem(o, "window_ms")->valuedouble, 1.0);
    cJSON_Delete(o);
}
