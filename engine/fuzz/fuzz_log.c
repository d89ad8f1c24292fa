/*
 * fuzz_log.c -- libFuzzer harness for the log reader (log.c) and, through it,
 * the batch payload decoder.
 *
 * The first input byte chooses how the rest becomes a log file:
 *   0 (mod 3)  the rest is the whole file, header included;
 *   1          a valid header (as wc_log_create writes it) followed by the rest;
 *   2          a valid header, then the rest cut into records (a 2-byte little
 *              endian length and that many payload bytes each), framed with valid
 *              checksums by wc_log_append; bytes that do not make a whole record
 *              are appended raw, like a torn tail.
 * The harness checks the header, reads every record with wc_log_read until it
 * returns 0 or an error, decodes each payload as a batch (fuzz_batch_check.h),
 * and runs wc_log_repair_tail on a copy of the file at the valid end found.
 *
 * Checked beyond "no crash, no leak": after a 0 from wc_log_read, reading again
 * returns 0 at the same offset; when the header is valid and reading ended with
 * 0 (the end for now), wc_log_repair_tail must succeed and leave exactly the
 * valid part, which reads back as the same records.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "log.h"

#include "fuzz_batch_check.h"

#define LOG_NAME	"000001.log"
#define COPY_NAME	"000002.log"
#define HDR_NAME	"000003.log"

static uint8_t log_header[WC_LOG_HEADER_SIZE];
static bool have_header;

/* The header wc_log_create writes, read back once. */
static void
make_header(const char *dir)
{
	char		path[512];
	wc_err		err;
	FILE	   *fp;

	wc_err_clear(&err);
	snprintf(path, sizeof(path), "%s/%s", dir, HDR_NAME);
	(void) unlink(path);
	FUZZ_ASSERT(wc_log_create(dir, HDR_NAME, 1, &err) == WC_OK, "wc_log_create: %s", err.msg);
	fp = fopen(path, "rb");
	FUZZ_ASSERT(fp != NULL && fread(log_header, 1, sizeof(log_header), fp) == sizeof(log_header),
				"cannot read back %s", path);
	fclose(fp);
	(void) unlink(path);
	have_header = true;
}

/* Builds the file image for the input; caller frees. */
static uint8_t *
build_image(const char *dir, const uint8_t *data, size_t size, size_t *out_len)
{
	int			mode = size > 0 ? data[0] % 3 : 0;
	const uint8_t *p = size > 0 ? data + 1 : data;
	size_t		left = size > 0 ? size - 1 : 0;
	uint8_t    *img;
	size_t		len = 0;

	/* records grow by 9 bytes of framing per 2 bytes of input at most */
	img = malloc(WC_LOG_HEADER_SIZE + left * 5 + 16);
	FUZZ_ASSERT(img != NULL, "out of memory");
	if (mode == 0)
	{
		if (left)
			memcpy(img, p, left);
		*out_len = left;
		return img;
	}
	if (!have_header)
		make_header(dir);
	memcpy(img, log_header, WC_LOG_HEADER_SIZE);
	len = WC_LOG_HEADER_SIZE;
	if (mode == 1)
	{
		if (left)
			memcpy(img + len, p, left);
		*out_len = len + left;
		return img;
	}
	/* mode 2: frame records through wc_log_append into the file, then read it back */
	{
		wc_file		f;
		wc_err		err;
		uint64_t	end = WC_LOG_HEADER_SIZE;
		size_t		n;

		fuzz_write_file(dir, LOG_NAME, img, len);
		wc_err_clear(&err);
		FUZZ_ASSERT(wc_file_open(dir, LOG_NAME, WC_OPEN_RDWR, &f, &err) == WC_OK,
					"open: %s", err.msg);
		while (left >= 2 && (n = (size_t) p[0] | (size_t) p[1] << 8) <= left - 2)
		{
			FUZZ_ASSERT(wc_log_append(&f, end, p + 2, n, &end, &err) == WC_OK,
						"wc_log_append: %s", err.msg);
			p += 2 + n;
			left -= 2 + n;
		}
		FUZZ_ASSERT(end <= WC_LOG_HEADER_SIZE + (size - 1) * 5, "image too large");
		FUZZ_ASSERT(wc_file_pread(&f, img, (size_t) end, 0, &err) == WC_OK,
					"read back: %s", err.msg);
		wc_file_close(&f);
		len = (size_t) end;
		if (left)
			memcpy(img + len, p, left);
		*out_len = len + left;
		return img;
	}
}

/* Reads every record of dir/name from the first; returns the last wc_log_read
 * status and sets *valid_end, *nrec and *digest (a CRC over the payloads). */
static int
read_all(const char *dir, const char *name, bool *header_ok, uint64_t *valid_end,
		 int *nrec, uint32_t *digest)
{
	wc_file		f;
	wc_log_reader *r;
	wc_err		err;
	uint64_t	number;
	int			rc;

	wc_err_clear(&err);
	FUZZ_ASSERT(wc_file_open(dir, name, WC_OPEN_READ, &f, &err) == WC_OK, "open: %s", err.msg);
	rc = wc_log_check_header(&f, &number, &err);
	fuzz_check_err(rc, &err, "wc_log_check_header");
	*header_ok = rc == WC_OK;

	r = wc_log_reader_new(&f, WC_LOG_HEADER_SIZE);
	FUZZ_ASSERT(r != NULL, "out of memory");
	*nrec = 0;
	*digest = 0;
	for (;;)
	{
		const uint8_t *payload = NULL;
		size_t		len = 0;
		uint64_t	end = 0;
		uint64_t	before = wc_log_reader_offset(r);

		wc_err_clear(&err);
		rc = wc_log_read(r, &payload, &len, &end, &err);
		fuzz_check_err(rc, &err, "wc_log_read");
		if (rc != 1)
			break;
		FUZZ_ASSERT(end == before + 9 + len && end == wc_log_reader_offset(r),
					"record at %llu of %zu bytes ends at %llu",
					(unsigned long long) before, len, (unsigned long long) end);
		(*nrec)++;
		*digest = wc_crc32c_extend(*digest, payload, len);
		(void) fuzz_check_batch(payload, len);
	}
	*valid_end = wc_log_reader_offset(r);
	if (rc == 0)
	{
		/* the position stays: asking again gives the same answer */
		const uint8_t *payload;
		size_t		len;
		uint64_t	end;

		wc_err_clear(&err);
		FUZZ_ASSERT(wc_log_read(r, &payload, &len, &end, &err) == 0 &&
					wc_log_reader_offset(r) == *valid_end,
					"a second wc_log_read at the end does not return 0 at the same offset");
	}
	wc_log_reader_free(r);
	wc_file_close(&f);
	return rc;
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = fuzz_tmpdir(LOG_NAME);
	uint8_t    *img;
	size_t		len;
	bool		header_ok,
				header_ok2;
	uint64_t	valid_end,
				valid_end2;
	int			nrec,
				nrec2;
	uint32_t	digest,
				digest2;
	int			rc,
				rc2,
				rrc;
	wc_file		f;
	wc_err		err;

	(void) fuzz_tmpdir(COPY_NAME);
	(void) fuzz_tmpdir(HDR_NAME);
	img = build_image(dir, data, size, &len);
	fuzz_write_file(dir, LOG_NAME, img, len);
	rc = read_all(dir, LOG_NAME, &header_ok, &valid_end, &nrec, &digest);

	/* repair a copy at the valid end, as a writer would before appending */
	fuzz_write_file(dir, COPY_NAME, img, len);
	wc_err_clear(&err);
	FUZZ_ASSERT(wc_file_open(dir, COPY_NAME, WC_OPEN_RDWR, &f, &err) == WC_OK, "open: %s", err.msg);
	rrc = wc_log_repair_tail(&f, valid_end, &err);
	fuzz_check_err(rrc, &err, "wc_log_repair_tail");
	wc_file_close(&f);
	if (header_ok && rc == 0)
	{
		struct stat st;
		char		path[512];

		FUZZ_ASSERT(rrc == WC_OK, "the reader found the end for now at %llu, but repair says: %s",
					(unsigned long long) valid_end, err.msg);
		snprintf(path, sizeof(path), "%s/%s", dir, COPY_NAME);
		FUZZ_ASSERT(stat(path, &st) == 0 && (uint64_t) st.st_size == valid_end,
					"the repaired log has %lld bytes, not %llu",
					(long long) st.st_size, (unsigned long long) valid_end);
		rc2 = read_all(dir, COPY_NAME, &header_ok2, &valid_end2, &nrec2, &digest2);
		FUZZ_ASSERT(rc2 == 0 && header_ok2 && valid_end2 == valid_end && nrec2 == nrec &&
					digest2 == digest, "the repaired log reads differently");
	}
	free(img);
	return 0;
}
