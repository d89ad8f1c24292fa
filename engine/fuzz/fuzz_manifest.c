/*
 * fuzz_manifest.c -- libFuzzer harness for the manifest decoder (manifest.c).
 *
 * The input is a MANIFEST image, given to wc_manifest_decode as it is, and a
 * second time with body_len and the checksum made to match its size and bytes
 * (when that changes anything), so that the fuzzer reaches the body parser.
 * Whatever decodes is encoded again with wc_manifest_encode; that image must
 * decode to an equal manifest.  FORMAT-manifest.md says the decoder accepts
 * exactly the images the encoder writes: an accepted image that re-encodes to
 * different bytes is reported once on stderr (not an abort; see README.md).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coding.h"
#include "crc32c.h"
#include "manifest.h"

#include "fuzz_common.h"

static bool
bytes_equal(const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

static bool
props_equal(const wc_sst_props *a, const wc_sst_props *b)
{
	return strcmp(a->family, b->family) == 0 && a->level == b->level &&
		a->cells == b->cells && a->tombstones == b->tombstones &&
		a->range_tombstones == b->range_tombstones &&
		a->distinct_rows == b->distinct_rows && a->raw_bytes == b->raw_bytes &&
		a->file_bytes == b->file_bytes && a->blocks == b->blocks &&
		a->ts_min == b->ts_min && a->ts_max == b->ts_max &&
		a->seq_min == b->seq_min && a->seq_max == b->seq_max &&
		bytes_equal(a->row_min, a->row_min_len, b->row_min, b->row_min_len) &&
		bytes_equal(a->row_max, a->row_max_len, b->row_max, b->row_max_len);
}

static bool
manifest_equal(const wc_manifest *a, const wc_manifest *b)
{
	if (a->version != b->version || a->next_file != b->next_file ||
		a->last_seq != b->last_seq || a->truncate_seq != b->truncate_seq ||
		a->nlogs != b->nlogs || a->nfiles != b->nfiles)
		return false;
	for (int i = 0; i < a->nlogs; i++)
		if (a->logs[i] != b->logs[i])
			return false;
	for (int i = 0; i < a->nfiles; i++)
		if (a->files[i].number != b->files[i].number ||
			!props_equal(&a->files[i].props, &b->files[i].props))
			return false;
	return true;
}

static void
check_image(const uint8_t *data, size_t size)
{
	wc_manifest m,
				m2,
				copy;
	wc_err		err;
	uint8_t    *buf = NULL;
	size_t		len = 0;
	int			rc;
	static bool reported;

	memset(&m, 0, sizeof(m));
	wc_err_clear(&err);
	rc = wc_manifest_decode(data, size, &m, &err);
	fuzz_check_err(rc, &err, "wc_manifest_decode");
	if (rc != WC_OK)
	{
		wc_manifest_clear(&m);	/* must be harmless after a failure */
		return;
	}
	FUZZ_ASSERT(m.nlogs >= 0 && m.nfiles >= 0, "negative counts");
	for (int i = 0; i < m.nfiles; i++)
	{
		const wc_sst_props *p = &m.files[i].props;

		FUZZ_ASSERT(strlen(p->family) <= WC_MAX_FAMILY, "family too long");
		FUZZ_ASSERT(p->row_min_len <= WC_MAX_ROWKEY && p->row_max_len <= WC_MAX_ROWKEY,
					"rowkey bound too long");
	}

	rc = wc_manifest_encode(&m, &buf, &len, &err);
	FUZZ_ASSERT(rc == WC_OK, "a decoded manifest does not encode: %s", err.msg);
	if (!reported && (len != size || memcmp(buf, data, size) != 0))
	{
		reported = true;
		fprintf(stderr, "fuzz_manifest: note: an accepted image of %zu bytes re-encodes to %zu different bytes\n",
				size, len);
	}
	memset(&m2, 0, sizeof(m2));
	rc = wc_manifest_decode(buf, len, &m2, &err);
	FUZZ_ASSERT(rc == WC_OK, "a re-encoded manifest does not decode: %s", err.msg);
	FUZZ_ASSERT(manifest_equal(&m, &m2), "the manifest changes in a round trip");

	memset(&copy, 0, sizeof(copy));
	rc = wc_manifest_copy(&copy, &m, &err);
	FUZZ_ASSERT(rc == WC_OK && manifest_equal(&m, &copy), "wc_manifest_copy differs: %s", err.msg);
	if (copy.nfiles > 0)
	{
		uint64_t	number = copy.files[0].number;
		int			before = copy.nfiles;
		int			same = 0;

		for (int i = 0; i < before; i++)
			same += copy.files[i].number == number;
		wc_manifest_remove_file(&copy, number);
		FUZZ_ASSERT(copy.nfiles <= before - 1 && copy.nfiles >= before - same,
					"wc_manifest_remove_file left %d of %d", copy.nfiles, before);
	}
	wc_manifest_clear(&copy);
	wc_manifest_clear(&m2);
	wc_manifest_clear(&m);
	free(buf);
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t    *fixed;

	check_image(data, size);

	/* again with a matching body_len and checksum */
	if (size >= 20 && size - 20 <= UINT32_MAX && (fixed = malloc(size)) != NULL)
	{
		memcpy(fixed, data, size);
		wc_put_fixed32(fixed + 12, (uint32_t) (size - 20));
		wc_put_fixed32(fixed + size - 4, wc_crc32c(fixed, size - 4));
		if (memcmp(fixed, data, size) != 0)
			check_image(fixed, size);
		free(fixed);
	}
	return 0;
}
