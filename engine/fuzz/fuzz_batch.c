/*
 * fuzz_batch.c -- libFuzzer harness for the batch payload decoder
 * (wc_batch_reader_init / wc_batch_reader_next in batch.c).
 *
 * The input is one log record payload (FORMAT-batch.md).  It is decoded to the
 * end or the first error; a payload the reader accepts is re-added with the
 * public writer and re-encoded, and must decode to the same entries
 * (fuzz_batch_check.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_batch_check.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void) fuzz_check_batch(data, size);
	return 0;
}
