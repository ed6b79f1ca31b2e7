/* SPDX-License-Identifier: MIT
 * Private to lib/io: the one way its readers and writers fill the caller's message buffer (err may be NULL or
 * of size 0: then nothing is written).
 */
#ifndef GW_IO_ERR_H
#define GW_IO_ERR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

__attribute__((format(printf, 3, 4))) static inline void set_err(char *err, size_t err_size, const char *fmt, ...)
{
    if (!err || err_size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
}

#endif /* GW_IO_ERR_H */
