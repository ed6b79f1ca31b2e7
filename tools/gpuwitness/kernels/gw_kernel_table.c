/* SPDX-License-Identifier: MIT
 * The kernel table (gw_kernel.h), expanded from gw_kernel_table.h.
 */
#include "gw_kernel.h"

#include <stdio.h>
#include <string.h>

const gw_kernel gw_kernels[] = {
#define GW_KERNEL(k) {&gw_##k##_info, gw_##k##_run, gw_##k##_check, gw_##k##_doctor, gw_##k##_bench, gw_##k##_trace},
#include "gw_kernel_table.h"
#undef GW_KERNEL
};
const size_t gw_kernel_count = sizeof gw_kernels / sizeof gw_kernels[0];

/* word equals name when each '-' in word is read as '_'. */
static int same_name(const char *word, const char *name)
{
    for (; *word && *name; word++, name++)
        if (*word != *name && !(*word == '-' && *name == '_')) return 0;
    return *word == *name;
}

const gw_kernel *gw_kernel_find(const char *word)
{
    if (!word) return NULL;
    for (size_t i = 0; i < gw_kernel_count; i++) {
        const gw_kernel_info *info = gw_kernels[i].info;
        if (same_name(word, info->name)) return &gw_kernels[i];
        for (const char *const *a = info->aliases; a && *a; a++)
            if (!strcmp(word, *a)) return &gw_kernels[i];
    }
    return NULL;
}

const char *gw_kernel_names(void)
{
    static char names[256];
    if (!names[0]) {
        size_t used = 0;
        for (size_t i = 0; i < gw_kernel_count && used < sizeof names; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", gw_kernels[i].info->name);
    }
    return names;
}

void gw_kernel_print_paragraph(FILE *out, const char *name, const char *text)
{
    fprintf(out, "  %-12s ", name);
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        const int len = end ? (int)(end - line) : (int)strlen(line);
        fprintf(out, "%s%.*s\n", line == text ? "" : "               ", len, line);
        line += len + (end ? 1 : 0);
    }
}
