/*
 * fuzz_batch.c -- libFuzzer harness for the payload decoders of log records:
 * batches (wc_batch_reader_init / wc_batch_reader_next in batch.c) and ingest
 * records (wc_ingest_decode in ingest.c), told apart by bit 63 of the first field.
 *
 * The input is one log record payload (FORMAT.md, "Batch records" and "Ingest
 * records").  A batch is decoded to the end or the first error; a payload the
 * reader accepts is re-added with the public writer and re-encoded, and must
 * decode to the same entries (fuzz_batch_check.h).  An ingest record the decoder
 * accepts must satisfy FORMAT.md's rules and re-encode to a payload that decodes
 * to the same record; a refused one must come with a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_batch_check.h"
#include "ingest.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_ingest(const uint8_t *data, size_t size)
{
	wc_ingest_record r,
				again;
	uint8_t    *buf = NULL;
	size_t		len = 0;
	wc_err		err;
	int			rc;

	wc_err_clear(&err);
	rc = wc_ingest_decode(data, size, &r, &err);
	if (rc != WC_OK)
	{
		FUZZ_ASSERT(rc == WC_CORRUPT || rc == WC_NOMEM, "ingest decode returned %d", rc);
		FUZZ_ASSERT(err.msg[0] != '\0', "ingest decode failed without a message");
		FUZZ_ASSERT(r.files == NULL && r.nfiles == 0, "a failed decode left files behind");
		return;
	}
	FUZZ_ASSERT(r.seq_base >= 1 && r.count >= 1 &&
				r.seq_base + r.count <= WC_SEQ_PENDING_BASE, "sequence range %llu+%u",
				(unsigned long long) r.seq_base, r.count);
	FUZZ_ASSERT(r.nfiles >= 1 && r.nfiles <= WC_MAX_FAMILIES && (uint32_t) r.nfiles <= r.count,
				"%d files for %u entries", r.nfiles, r.count);
	for (int i = 0; i < r.nfiles; i++)
	{
		size_t		flen = strlen(r.files[i].family);

		FUZZ_ASSERT(flen >= 1 && flen <= WC_MAX_FAMILY, "family %d of %zu bytes", i, flen);
		for (int j = 0; j < i; j++)
			FUZZ_ASSERT(r.files[j].number != r.files[i].number &&
						strcmp(r.files[j].family, r.files[i].family) != 0,
						"files %d and %d share a number or family", j, i);
	}
	FUZZ_ASSERT(wc_ingest_encode(&r, &buf, &len, &err) == WC_OK, "re-encode: %s", err.msg);
	FUZZ_ASSERT(wc_ingest_is_record(buf, len), "the re-encoded payload is not an ingest record");
	FUZZ_ASSERT(wc_ingest_decode(buf, len, &again, &err) == WC_OK, "re-decode: %s", err.msg);
	FUZZ_ASSERT(again.seq_base == r.seq_base && again.tag == r.tag && again.count == r.count &&
				again.nfiles == r.nfiles, "the re-decoded header differs");
	for (int i = 0; i < r.nfiles; i++)
		FUZZ_ASSERT(again.files[i].number == r.files[i].number &&
					strcmp(again.files[i].family, r.files[i].family) == 0,
					"re-decoded file %d differs", i);
	/* the encoder writes minimal varints, so it is never longer than its input */
	FUZZ_ASSERT(len <= size, "re-encoded %zu bytes from %zu", len, size);
	free(buf);
	wc_ingest_record_clear(&again);
	wc_ingest_record_clear(&r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (wc_ingest_is_record(data, size))
		check_ingest(data, size);
	else
		(void) fuzz_check_batch(data, size);
	return 0;
}
