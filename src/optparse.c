/*-------------------------------------------------------------------------
 *
 * optparse.c
 *		  Parsing of widecol_fdw's table option values, without PostgreSQL
 *
 * What option.c's validator and wcfdw_get_table_options check in a value,
 * apart from reading an interval's text (interval_in stays in option.c).
 * Plain C, no allocation: see optparse.h.  Fuzzed by
 * engine/fuzz/fuzz_options.c.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "optparse.h"

static const char *const family_options[] = {"max_versions", "ttl", "compression", "compression_level", NULL};

static bool
is_family_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/*
 * ascii_caseeq
 *		a equals b, folding A-Z only
 *
 * b is lower case.  Like pg_strcasecmp for the ASCII words compared here,
 * but independent of the locale.
 */
static bool
ascii_caseeq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
	{
		char		c = *a;

		if (c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		if (c != *b)
			return false;
	}
	return *a == *b;
}

/*
 * wcfdw_optparse_families_capacity
 *		One more than the commas of list
 */
int
wcfdw_optparse_families_capacity(const char *list)
{
	int			n = 1;

	for (; *list; list++)
		if (*list == ',')
			n++;
	return n;
}

/*
 * wcfdw_optparse_families
 *		Splits a families option into trimmed names, in place
 */
WcFdwOptResult
wcfdw_optparse_families(char *list, char **names, int *nnames, const char **bad)
{
	char	   *p = list;
	int			n = 0;

	*nnames = 0;
	*bad = NULL;
	for (;;)
	{
		char	   *comma = strchr(p, ',');
		char	   *end;
		int			i;

		if (comma)
			*comma = '\0';
		while (is_family_space(*p))
			p++;
		end = p + strlen(p);
		while (end > p && is_family_space(end[-1]))
			*--end = '\0';
		if (*p == '\0')
		{
			*bad = p;
			return WCFDW_OPT_FAMILY_EMPTY;
		}
		if (end - p > WC_MAX_FAMILY)
		{
			*bad = p;
			return WCFDW_OPT_FAMILY_TOO_LONG;
		}
		for (i = 0; i < n; i++)
		{
			if (strcmp(names[i], p) == 0)
			{
				*bad = p;
				return WCFDW_OPT_FAMILY_TWICE;
			}
		}
		/* n < capacity: every name but the last ends at a comma */
		names[n++] = p;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (n > WC_MAX_FAMILIES)
		return WCFDW_OPT_TOO_MANY_FAMILIES;
	*nnames = n;
	return WCFDW_OPT_OK;
}

/*
 * wcfdw_optparse_max_versions
 *		0..INT_MAX
 *
 * Without a digit strtol leaves end at value; that is checked before the
 * trailing spaces are skipped, or a value of only spaces would pass as 0
 * (keep all versions).
 */
WcFdwOptResult
wcfdw_optparse_max_versions(const char *value, uint32_t *n)
{
	char	   *end;
	long		v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (end == value)
		return WCFDW_OPT_BAD_VALUE;
	while (*end == ' ')
		end++;
	if (errno != 0 || *end != '\0' || v < 0 || v > INT_MAX)
		return WCFDW_OPT_BAD_VALUE;
	*n = (uint32_t) v;
	return WCFDW_OPT_OK;
}

/*
 * wcfdw_optparse_compression
 *		lz4, zstd or none
 */
WcFdwOptResult
wcfdw_optparse_compression(const char *value, int *compression)
{
	if (ascii_caseeq(value, "lz4"))
		*compression = WC_COMPRESS_LZ4;
	else if (ascii_caseeq(value, "zstd"))
		*compression = WC_COMPRESS_ZSTD;
	else if (ascii_caseeq(value, "none"))
		*compression = WC_COMPRESS_NONE;
	else
		return WCFDW_OPT_BAD_VALUE;
	return WCFDW_OPT_OK;
}

/*
 * wcfdw_optparse_compression_level
 *		WC_ZSTD_LEVEL_MIN..WC_ZSTD_LEVEL_MAX, read as max_versions is
 */
WcFdwOptResult
wcfdw_optparse_compression_level(const char *value, int *level)
{
	uint32_t	v;

	if (wcfdw_optparse_max_versions(value, &v) != WCFDW_OPT_OK ||
		v < WC_ZSTD_LEVEL_MIN || v > WC_ZSTD_LEVEL_MAX)
		return WCFDW_OPT_BAD_VALUE;
	*level = (int) v;
	return WCFDW_OPT_OK;
}

/*
 * wcfdw_optparse_ttl_ms
 *		Interval fields -> milliseconds
 *
 * With an int32 day and an int64 time the sum cannot overflow today; the
 * check stays so that the result never depends on that.
 */
WcFdwOptResult
wcfdw_optparse_ttl_ms(int32_t month, int32_t day, int64_t time_us, int64_t *ms)
{
	int64_t		v;

	if (month != 0)
		return WCFDW_OPT_TTL_MONTHS;
	if (__builtin_mul_overflow((int64_t) day, (int64_t) 86400000, &v) ||
		__builtin_add_overflow(v, time_us / 1000, &v))
		return WCFDW_OPT_TTL_RANGE;
	if (v < 0 || day < 0 || (v == 0 && (day != 0 || time_us != 0)))
		return WCFDW_OPT_TTL_TOO_SMALL;
	*ms = v;
	return WCFDW_OPT_OK;
}

/*
 * wcfdw_optparse_family_option
 *		"fam.opt" -> (length of fam, opt) when opt is a per-family option name
 */
bool
wcfdw_optparse_family_option(const char *name, size_t *family_len, const char **option)
{
	const char *dot = strrchr(name, '.');
	int			i;

	if (dot == NULL || dot == name)
		return false;
	for (i = 0; family_options[i]; i++)
	{
		if (strcmp(dot + 1, family_options[i]) == 0)
		{
			*family_len = (size_t) (dot - name);
			*option = family_options[i];
			return true;
		}
	}
	return false;
}
