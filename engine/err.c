/*
 * err.c -- status codes and messages.
 */
#include "err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void
wc_err_clear(wc_err *err)
{
	err->code = WC_OK;
	err->sys_errno = 0;
	err->msg[0] = '\0';
}

const char *
wc_code_name(int code)
{
	switch (code)
	{
		case WC_OK:
			return "ok";
		case WC_NOT_FOUND:
			return "not found";
		case WC_CORRUPT:
			return "corruption";
		case WC_IO:
			return "I/O error";
		case WC_NOSPACE:
			return "no space left";
		case WC_INVALID:
			return "invalid argument";
		case WC_BUSY:
			return "busy";
		case WC_ABORTED:
			return "interrupted";
		case WC_NOMEM:
			return "out of memory";
		case WC_FAILED:
			return "handle failed";
		case WC_CALLBACK:
			return "callback error";
		case WC_TOO_OLD:
			return "snapshot too old";
		case WC_HELD:
			return "held by a prepared transaction";
	}
	return "unknown error";
}

int
wc_err_set(wc_err *err, int code, const char *fmt,...)
{
	va_list		ap;

	if (err == NULL || err->code != WC_OK)
		return code;
	err->code = code;
	err->sys_errno = 0;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

int
wc_err_sys(wc_err *err, const char *fmt,...)
{
	int			saved = errno;
	int			code;
	va_list		ap;
	size_t		len;

	if (saved == ENOSPC || saved == EDQUOT)
		code = WC_NOSPACE;
	else if (saved == ENOENT)
		code = WC_NOT_FOUND;
	else if (saved == ENOMEM)
		code = WC_NOMEM;
	else
		code = WC_IO;
	if (err == NULL || err->code != WC_OK)
	{
		errno = saved;
		return code;
	}
	err->code = code;
	err->sys_errno = saved;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	len = strlen(err->msg);
	if (len < sizeof(err->msg) - 1)
		snprintf(err->msg + len, sizeof(err->msg) - len, ": %s", strerror(saved));
	errno = saved;
	return code;
}

int
wc_err_relabel(wc_err *err, int code, const char *fmt,...)
{
	char		old[sizeof(err->msg)];
	va_list		ap;
	size_t		len;
	bool		had;

	if (err == NULL)
		return code;
	had = err->code != WC_OK;
	if (!had)
		err->sys_errno = 0;
	memcpy(old, err->msg, sizeof(old));
	old[sizeof(old) - 1] = '\0';
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	len = strlen(err->msg);
	if (had && len < sizeof(err->msg) - 1)
		snprintf(err->msg + len, sizeof(err->msg) - len, ": %s", old);
	return code;
}
