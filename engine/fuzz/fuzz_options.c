/*
 * fuzz_options.c -- libFuzzer harness for the table option parser of the FDW
 * (src/optparse.c: what option.c checks in an option's name and value, without
 * PostgreSQL).
 *
 * Input: name NUL value NUL ttl, each part optional (a missing part is empty).
 * name and value are NUL-free strings, as PostgreSQL passes option names and
 * values; ttl is up to 16 bytes, zero-padded: month (int32), day (int32) and
 * time in microseconds (int64), little-endian, the fields of an Interval.
 *
 *   name   wcfdw_optparse_family_option; "<family>.<option>" is looked up among
 *          the families parsed from value, as the validator does
 *   value  wcfdw_optparse_families, _max_versions, _compression, _compression_level
 *   ttl    wcfdw_optparse_ttl_ms
 *
 * Asserted: each result agrees with a reference written here independently
 * (the families list tokenised without modifying it, the ttl in 128-bit
 * arithmetic); an accepted families list has 1..WC_MAX_FAMILIES non-empty,
 * trimmed, distinct names of at most WC_MAX_FAMILY bytes, in list order,
 * inside the caller's buffer, and joined with ", " it parses to the same
 * names; an accepted max_versions printed with %u, and an accepted
 * compression by its name, parse to the same value; a split "<family>.<option>"
 * rebuilt from its parts splits the same way.  Every buffer is the harness's
 * and freed (LeakSanitizer is on).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "../../src/optparse.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *
dup_bytes(const uint8_t *p, size_t len)
{
	char	   *s = malloc(len + 1);

	FUZZ_ASSERT(s != NULL, "malloc %zu", len + 1);
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* One name of a families list: value[start..start+len-1], trimmed. */
typedef struct ref_name
{
	size_t		start;
	size_t		len;
} ref_name;

/*
 * The reference: tokenises value at commas (value itself untouched) and
 * applies the checks in list order, then the count.  Returns the expected
 * result; *bad_index is the failing name's index.  names has room for
 * wcfdw_optparse_families_capacity(value) entries.
 */
static WcFdwOptResult
ref_families(const char *value, ref_name *names, int *n, int *bad_index)
{
	size_t		pos = 0;
	size_t		total = strlen(value);

	*n = 0;
	*bad_index = -1;
	for (;;)
	{
		const char *comma = memchr(value + pos, ',', total - pos);
		size_t		seg_end = comma ? (size_t) (comma - value) : total;
		size_t		s = pos;
		size_t		e = seg_end;

		while (s < e && is_space(value[s]))
			s++;
		while (e > s && is_space(value[e - 1]))
			e--;
		names[*n].start = s;
		names[*n].len = e - s;
		if (e == s)
		{
			*bad_index = *n;
			return WCFDW_OPT_FAMILY_EMPTY;
		}
		if (e - s > WC_MAX_FAMILY)
		{
			*bad_index = *n;
			return WCFDW_OPT_FAMILY_TOO_LONG;
		}
		for (int i = 0; i < *n; i++)
		{
			if (names[i].len == e - s &&
				memcmp(value + names[i].start, value + s, e - s) == 0)
			{
				*bad_index = *n;
				return WCFDW_OPT_FAMILY_TWICE;
			}
		}
		(*n)++;
		if (!comma)
			break;
		pos = seg_end + 1;
	}
	return *n > WC_MAX_FAMILIES ? WCFDW_OPT_TOO_MANY_FAMILIES : WCFDW_OPT_OK;
}

/* Parses a copy of list; the names are copied into *out (a NULL-free array of
 * malloc'd strings, freed by free_names).  Returns the result. */
static WcFdwOptResult
parse_families_copy(const char *list, char ***out, int *n, char **bad_copy)
{
	size_t		len = strlen(list);
	char	   *buf = dup_bytes((const uint8_t *) list, len);
	int			cap = wcfdw_optparse_families_capacity(list);
	char	  **names;
	const char *bad = (const char *) 1;
	WcFdwOptResult rc;

	FUZZ_ASSERT(cap >= 1 && (size_t) cap <= len + 1, "capacity %d for %zu bytes", cap, len);
	names = calloc((size_t) cap, sizeof(char *));
	FUZZ_ASSERT(names != NULL, "calloc");
	*n = -1;
	rc = wcfdw_optparse_families(buf, names, n, &bad);
	*out = NULL;
	*bad_copy = NULL;
	if (rc == WCFDW_OPT_OK)
	{
		FUZZ_ASSERT(bad == NULL, "bad set on success");
		FUZZ_ASSERT(*n >= 1 && *n <= WC_MAX_FAMILIES && *n <= cap,
					"nnames %d (capacity %d)", *n, cap);
		*out = calloc((size_t) *n, sizeof(char *));
		FUZZ_ASSERT(*out != NULL, "calloc");
		for (int i = 0; i < *n; i++)
		{
			/* inside the caller's buffer, in list order */
			FUZZ_ASSERT(names[i] >= buf && names[i] < buf + len, "name %d outside the buffer", i);
			FUZZ_ASSERT(i == 0 || names[i] > names[i - 1], "name %d before name %d", i, i - 1);
			(*out)[i] = strdup(names[i]);
			FUZZ_ASSERT((*out)[i] != NULL, "strdup");
		}
	}
	else
	{
		FUZZ_ASSERT(*n == 0, "nnames %d on failure %d", *n, rc);
		if (rc == WCFDW_OPT_TOO_MANY_FAMILIES)
			FUZZ_ASSERT(bad == NULL, "bad set for too many families");
		else
		{
			FUZZ_ASSERT(rc == WCFDW_OPT_FAMILY_EMPTY || rc == WCFDW_OPT_FAMILY_TOO_LONG ||
						rc == WCFDW_OPT_FAMILY_TWICE, "unexpected result %d", rc);
			FUZZ_ASSERT(bad != NULL && bad >= buf && bad <= buf + len, "bad outside the buffer");
			*bad_copy = strdup(bad);
			FUZZ_ASSERT(*bad_copy != NULL, "strdup");
		}
	}
	free(names);
	free(buf);
	return rc;
}

static void
free_names(char **names, int n)
{
	for (int i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

static void
check_families(const char *value, char ***names_out, int *n_out)
{
	char	  **names;
	char	   *bad;
	int			n;
	WcFdwOptResult rc = parse_families_copy(value, &names, &n, &bad);
	int			cap = wcfdw_optparse_families_capacity(value);
	ref_name   *ref = calloc((size_t) cap, sizeof(ref_name));
	int			ref_n;
	int			bad_index;
	WcFdwOptResult ref_rc;

	FUZZ_ASSERT(ref != NULL, "calloc");
	ref_rc = ref_families(value, ref, &ref_n, &bad_index);
	FUZZ_ASSERT(rc == ref_rc, "families result %d, reference %d", rc, ref_rc);
	if (rc == WCFDW_OPT_OK)
	{
		FUZZ_ASSERT(n == ref_n, "%d names, reference %d", n, ref_n);
		for (int i = 0; i < n; i++)
		{
			size_t		len = strlen(names[i]);

			FUZZ_ASSERT(len > 0 && len <= WC_MAX_FAMILY, "name %d has %zu bytes", i, len);
			FUZZ_ASSERT(!is_space(names[i][0]) && !is_space(names[i][len - 1]),
						"name %d not trimmed", i);
			FUZZ_ASSERT(strchr(names[i], ',') == NULL, "name %d holds a comma", i);
			FUZZ_ASSERT(len == ref[i].len && memcmp(names[i], value + ref[i].start, len) == 0,
						"name %d differs from the reference", i);
			for (int j = 0; j < i; j++)
				FUZZ_ASSERT(strcmp(names[i], names[j]) != 0, "names %d and %d equal", j, i);
		}

		/* round trip: joined with ", " the names parse to the same names */
		{
			size_t		total = 1;
			char	   *joined;
			char	  **again;
			char	   *bad2;
			int			n2;

			for (int i = 0; i < n; i++)
				total += strlen(names[i]) + 2;
			joined = malloc(total);
			FUZZ_ASSERT(joined != NULL, "malloc");
			joined[0] = '\0';
			for (int i = 0; i < n; i++)
			{
				if (i > 0)
					strcat(joined, ", ");
				strcat(joined, names[i]);
			}
			FUZZ_ASSERT(parse_families_copy(joined, &again, &n2, &bad2) == WCFDW_OPT_OK,
						"joined names rejected");
			FUZZ_ASSERT(n2 == n, "joined names: %d, not %d", n2, n);
			for (int i = 0; i < n; i++)
				FUZZ_ASSERT(strcmp(again[i], names[i]) == 0, "joined name %d differs", i);
			free_names(again, n2);
			free(joined);
		}
	}
	else if (rc != WCFDW_OPT_TOO_MANY_FAMILIES)
	{
		const ref_name *r = &ref[bad_index];

		FUZZ_ASSERT(strlen(bad) == r->len && memcmp(bad, value + r->start, r->len) == 0,
					"offending name \"%s\" is not name %d of the reference", bad, bad_index);
		if (rc == WCFDW_OPT_FAMILY_EMPTY)
			FUZZ_ASSERT(bad[0] == '\0', "empty name \"%s\"", bad);
		else if (rc == WCFDW_OPT_FAMILY_TOO_LONG)
			FUZZ_ASSERT(strlen(bad) > WC_MAX_FAMILY, "long name of %zu bytes", strlen(bad));
	}
	else
		FUZZ_ASSERT(ref_n > WC_MAX_FAMILIES, "too many families with %d", ref_n);

	free(ref);
	free(bad);
	*names_out = names;
	*n_out = n;
}

static void
check_max_versions(const char *value)
{
	uint32_t	n = 0xdeadbeef;
	WcFdwOptResult rc = wcfdw_optparse_max_versions(value, &n);

	if (rc == WCFDW_OPT_OK)
	{
		char		text[16];
		uint32_t	n2 = 0xdeadbeef;

		FUZZ_ASSERT(n <= INT32_MAX, "max_versions %u", n);
		FUZZ_ASSERT(strpbrk(value, "0123456789") != NULL, "no digit in \"%s\"", value);
		snprintf(text, sizeof(text), "%u", n);
		FUZZ_ASSERT(wcfdw_optparse_max_versions(text, &n2) == WCFDW_OPT_OK && n2 == n,
					"%s does not parse back to %u", text, n);
	}
	else
	{
		FUZZ_ASSERT(rc == WCFDW_OPT_BAD_VALUE, "max_versions result %d", rc);
		FUZZ_ASSERT(n == 0xdeadbeef, "output set on failure");
	}
}

static void
check_compression(const char *value)
{
	int			c = -1;
	WcFdwOptResult rc = wcfdw_optparse_compression(value, &c);
	/* for a letter, (x | 0x20) == 'l' holds for 'l' and 'L' only */
	bool		lz4 = strlen(value) == 3 && (value[0] | 0x20) == 'l' &&
		(value[1] | 0x20) == 'z' && value[2] == '4';
	bool		none = strlen(value) == 4 && (value[0] | 0x20) == 'n' &&
		(value[1] | 0x20) == 'o' && (value[2] | 0x20) == 'n' && (value[3] | 0x20) == 'e';
	bool		zstd = strlen(value) == 4 && (value[0] | 0x20) == 'z' &&
		(value[1] | 0x20) == 's' && (value[2] | 0x20) == 't' && (value[3] | 0x20) == 'd';

	if (rc == WCFDW_OPT_OK)
	{
		int			c2 = -1;
		const char *canonical = c == WC_COMPRESS_LZ4 ? "lz4" : c == WC_COMPRESS_ZSTD ? "zstd" : "none";

		FUZZ_ASSERT(c == (lz4 ? WC_COMPRESS_LZ4 : zstd ? WC_COMPRESS_ZSTD : WC_COMPRESS_NONE) &&
					(lz4 || none || zstd), "\"%s\" accepted as %d", value, c);
		FUZZ_ASSERT(wcfdw_optparse_compression(canonical, &c2) == WCFDW_OPT_OK && c2 == c,
					"the name of %d does not parse back", c);
	}
	else
	{
		FUZZ_ASSERT(rc == WCFDW_OPT_BAD_VALUE && c == -1, "compression result %d", rc);
		FUZZ_ASSERT(!lz4 && !none && !zstd, "\"%s\" refused", value);
	}
}

/* A zstd level: accepted exactly when max_versions reads a number of 1..19. */
static void
check_compression_level(const char *value)
{
	int			level = -1;
	uint32_t	n = 0;
	WcFdwOptResult rc = wcfdw_optparse_compression_level(value, &level);
	bool		number = wcfdw_optparse_max_versions(value, &n) == WCFDW_OPT_OK;

	if (rc == WCFDW_OPT_OK)
		FUZZ_ASSERT(number && level == (int) n && level >= WC_ZSTD_LEVEL_MIN &&
					level <= WC_ZSTD_LEVEL_MAX, "\"%s\" accepted as level %d", value, level);
	else
	{
		FUZZ_ASSERT(rc == WCFDW_OPT_BAD_VALUE && level == -1, "level result %d", rc);
		FUZZ_ASSERT(!number || n < WC_ZSTD_LEVEL_MIN || n > WC_ZSTD_LEVEL_MAX,
					"\"%s\" refused as a level", value);
	}
}

static void
check_family_option(const char *name, char **families, int nfamilies)
{
	size_t		len = (size_t) -1;
	const char *opt = NULL;
	const char *dot = strrchr(name, '.');
	bool		ok = wcfdw_optparse_family_option(name, &len, &opt);

	if (ok)
	{
		char	   *rebuilt;
		size_t		len2 = 0;
		const char *opt2 = NULL;

		FUZZ_ASSERT(opt != NULL && (strcmp(opt, "max_versions") == 0 || strcmp(opt, "ttl") == 0 ||
									strcmp(opt, "compression") == 0 ||
									strcmp(opt, "compression_level") == 0),
					"option \"%s\"", opt ? opt : "(null)");
		FUZZ_ASSERT(len >= 1 && dot == name + len && strcmp(dot + 1, opt) == 0,
					"family length %zu of \"%s\"", len, name);

		/* "<family>.<option>" from the parts splits the same way */
		rebuilt = malloc(len + 1 + strlen(opt) + 1);
		FUZZ_ASSERT(rebuilt != NULL, "malloc");
		memcpy(rebuilt, name, len);
		rebuilt[len] = '.';
		strcpy(rebuilt + len + 1, opt);
		FUZZ_ASSERT(strcmp(rebuilt, name) == 0, "rebuilt \"%s\" differs", rebuilt);
		FUZZ_ASSERT(wcfdw_optparse_family_option(rebuilt, &len2, &opt2) && len2 == len &&
					strcmp(opt2, opt) == 0, "rebuilt name splits differently");
		free(rebuilt);

		/* the validator's lookup of the family among the table's */
		for (int i = 0; i < nfamilies; i++)
			if (strlen(families[i]) == len && memcmp(families[i], name, len) == 0)
				FUZZ_ASSERT(memchr(name, ',', len) == NULL, "a family with a comma matched");
	}
	else
	{
		FUZZ_ASSERT(len == (size_t) -1 && opt == NULL, "outputs set on failure");
		FUZZ_ASSERT(dot == NULL || dot == name ||
					(strcmp(dot + 1, "max_versions") != 0 && strcmp(dot + 1, "ttl") != 0 &&
					 strcmp(dot + 1, "compression") != 0 &&
					 strcmp(dot + 1, "compression_level") != 0), "\"%s\" not split", name);
	}
}

static void
check_ttl(const uint8_t *p, size_t len)
{
	uint8_t		raw[16] = {0};
	uint32_t	um = 0;
	uint32_t	ud = 0;
	uint64_t	ut = 0;
	int32_t		month;
	int32_t		day;
	int64_t		time_us;
	int64_t		ms = -12345;
	__int128	want;
	WcFdwOptResult rc;
	WcFdwOptResult ref;

	memcpy(raw, p, len < sizeof(raw) ? len : sizeof(raw));
	for (int i = 3; i >= 0; i--)
		um = (um << 8) | raw[i];
	for (int i = 7; i >= 4; i--)
		ud = (ud << 8) | raw[i];
	for (int i = 15; i >= 8; i--)
		ut = (ut << 8) | raw[i];
	memcpy(&month, &um, 4);
	memcpy(&day, &ud, 4);
	memcpy(&time_us, &ut, 8);

	want = (__int128) day * 86400000 + time_us / 1000;
	if (month != 0)
		ref = WCFDW_OPT_TTL_MONTHS;
	else if (want > INT64_MAX || want < INT64_MIN)
		ref = WCFDW_OPT_TTL_RANGE;
	else if (want < 0 || day < 0 || (want == 0 && (day != 0 || time_us != 0)))
		ref = WCFDW_OPT_TTL_TOO_SMALL;
	else
		ref = WCFDW_OPT_OK;

	rc = wcfdw_optparse_ttl_ms(month, day, time_us, &ms);
	FUZZ_ASSERT(rc == ref, "ttl (%d, %d, %lld): result %d, reference %d",
				month, day, (long long) time_us, rc, ref);
	if (rc == WCFDW_OPT_OK)
		FUZZ_ASSERT(ms >= 0 && ms == (int64_t) want, "ttl %lld ms", (long long) ms);
	else
		FUZZ_ASSERT(ms == -12345, "ms set on failure");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *end = data + size;
	const uint8_t *nul1 = memchr(data, 0, size);
	const uint8_t *vstart = nul1 ? nul1 + 1 : end;
	const uint8_t *nul2 = memchr(vstart, 0, (size_t) (end - vstart));
	const uint8_t *tstart = nul2 ? nul2 + 1 : end;
	char	   *name = dup_bytes(data, (size_t) ((nul1 ? nul1 : end) - data));
	char	   *value = dup_bytes(vstart, (size_t) ((nul2 ? nul2 : end) - vstart));
	char	  **families;
	int			nfamilies;

	check_families(value, &families, &nfamilies);
	check_max_versions(value);
	check_compression(value);
	check_compression_level(value);
	check_family_option(name, families, nfamilies);
	check_ttl(tstart, (size_t) (end - tstart));

	free_names(families, nfamilies);
	free(value);
	free(name);
	return 0;
}
