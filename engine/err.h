/*
 * err.h -- filling a wc_err.
 *
 * The first error recorded wins: later calls leave an already-set wc_err alone, so
 * a builder can keep going after a failure and report the original cause at finish.
 * Never allocates.
 */
#ifndef WC_ERR_H
#define WC_ERR_H

#include "wc.h"

#if defined(__GNUC__)
#define WC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define WC_PRINTF(a, b)
#endif

/* Records code and a formatted message; returns code (so `return wc_err_set(...)`). */
int			wc_err_set(wc_err *err, int code, const char *fmt,...) WC_PRINTF(3, 4);

/*
 * Records an error from a failed system call: the code follows errno (ENOSPC and
 * EDQUOT -> WC_NOSPACE, ENOENT -> WC_NOT_FOUND, else WC_IO), and ": <strerror>" is
 * appended to the message.  Reads errno itself; call right after the failure.
 */
int			wc_err_sys(wc_err *err, const char *fmt,...) WC_PRINTF(2, 3);

/*
 * Relabels the error already in err: its code becomes code and its message
 * "<formatted>: <the old message>" (an ENOENT while opening a file a manifest
 * names becomes WC_CORRUPT "MANIFEST lists a file that does not exist: ...").
 * Returns code.  With no error recorded, records code and the formatted text.
 */
int			wc_err_relabel(wc_err *err, int code, const char *fmt,...) WC_PRINTF(3, 4);

#endif
