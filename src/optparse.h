/*-------------------------------------------------------------------------
 *
 * optparse.h
 *		  Parsing of widecol_fdw's table option values, without PostgreSQL
 *
 * Plain C (the C library only): no postgres.h, no palloc, no ereport, so that
 * engine/fuzz/fuzz_options.c can feed it arbitrary bytes.  The functions never
 * allocate and never fail but by their result; option.c turns a result into
 * the ereport the user sees (SQLSTATE, message, detail and hint are chosen
 * there, from the result code and the offending name returned here).
 *
 * Values are NUL-terminated strings, as PostgreSQL passes option values.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WCFDW_OPTPARSE_H
#define WCFDW_OPTPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../engine/wc.h"

/* Which check a value failed. */
typedef enum WcFdwOptResult
{
	WCFDW_OPT_OK = 0,
	WCFDW_OPT_FAMILY_EMPTY,		/* families: a name is empty after trimming */
	WCFDW_OPT_FAMILY_TOO_LONG,	/* families: a name is longer than WC_MAX_FAMILY */
	WCFDW_OPT_FAMILY_TWICE,		/* families: a name is listed twice */
	WCFDW_OPT_TOO_MANY_FAMILIES,	/* families: more than WC_MAX_FAMILIES names */
	WCFDW_OPT_BAD_VALUE,		/* max_versions, compression, compression_level:
								 * not a valid value */
	WCFDW_OPT_TTL_MONTHS,		/* ttl: months or years, which have no fixed length */
	WCFDW_OPT_TTL_RANGE,		/* ttl: milliseconds overflow int64 */
	WCFDW_OPT_TTL_TOO_SMALL		/* ttl: negative, or less than 1 ms but not 0 */
} WcFdwOptResult;

/*
 * wcfdw_optparse_families_capacity
 *		How many entries the names array of wcfdw_optparse_families needs for
 *		list: one more than the commas in it
 */
extern int	wcfdw_optparse_families_capacity(const char *list);

/*
 * wcfdw_optparse_families
 *		Splits a families option ("contents, anchor") into names
 *
 * list is split in place, at every comma, into names trimmed of spaces, tabs
 * and newlines; it is the caller's writable copy of the option value, and the
 * names point into it (they live as long as it does).  names has room for
 * wcfdw_optparse_families_capacity(list) entries, counted before the call.
 *
 * The names are checked one by one in list order, the first failure is
 * returned: WCFDW_OPT_FAMILY_EMPTY, WCFDW_OPT_FAMILY_TOO_LONG or
 * WCFDW_OPT_FAMILY_TWICE with *bad the offending name (empty for the first);
 * then the count: WCFDW_OPT_TOO_MANY_FAMILIES.  On WCFDW_OPT_OK *nnames is
 * 1..WC_MAX_FAMILIES and names[0..*nnames-1] are non-empty, trimmed, at most
 * WC_MAX_FAMILY bytes and distinct.  *bad is NULL unless a name failed.
 */
extern WcFdwOptResult wcfdw_optparse_families(char *list, char **names, int *nnames,
											  const char **bad);

/*
 * wcfdw_optparse_max_versions
 *		A whole number 0..INT_MAX, as strtol reads it, spaces after it allowed
 *
 * At least one digit: a value of only spaces is refused.  WCFDW_OPT_OK with
 * *n set, or WCFDW_OPT_BAD_VALUE (*n untouched).
 */
extern WcFdwOptResult wcfdw_optparse_max_versions(const char *value, uint32_t *n);

/*
 * wcfdw_optparse_compression
 *		"lz4", "zstd" or "none", ASCII letters in any case
 *
 * WCFDW_OPT_OK with *compression a wc_compression, or WCFDW_OPT_BAD_VALUE
 * (*compression untouched).
 */
extern WcFdwOptResult wcfdw_optparse_compression(const char *value, int *compression);

/*
 * wcfdw_optparse_compression_level
 *		A zstd level: a whole number WC_ZSTD_LEVEL_MIN..WC_ZSTD_LEVEL_MAX (1..19),
 *		as wcfdw_optparse_max_versions reads numbers
 *
 * WCFDW_OPT_OK with *level set, or WCFDW_OPT_BAD_VALUE (*level untouched).
 */
extern WcFdwOptResult wcfdw_optparse_compression_level(const char *value, int *level);

/*
 * wcfdw_optparse_ttl_ms
 *		An interval's fields as milliseconds; 0 means no ttl
 *
 * month, day and time_us are the fields of PostgreSQL's Interval; option.c
 * reads the text with interval_in.  Checked in this order:
 * WCFDW_OPT_TTL_MONTHS when month is not 0, WCFDW_OPT_TTL_RANGE when
 * day * 86400000 + time_us / 1000 overflows, WCFDW_OPT_TTL_TOO_SMALL when the
 * result is negative, day is negative, or the result is 0 but the interval is
 * not.  *ms is set only on WCFDW_OPT_OK.
 */
extern WcFdwOptResult wcfdw_optparse_ttl_ms(int32_t month, int32_t day, int64_t time_us,
											int64_t *ms);

/*
 * wcfdw_optparse_family_option
 *		"<family>.<option>" -> the family's length and the option
 *
 * True when name has a dot after its first byte and what follows the last dot
 * is a per-family option name (max_versions, ttl, compression,
 * compression_level): then the family is
 * name[0..*family_len-1] (at least 1 byte; it may hold dots itself) and
 * *option is a static string equal to the option name.  False (outputs
 * untouched) otherwise.
 */
extern bool wcfdw_optparse_family_option(const char *name, size_t *family_len,
										 const char **option);

#endif							/* WCFDW_OPTPARSE_H */
