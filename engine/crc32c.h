/*
 * crc32c.h -- CRC-32C (Castagnoli), the checksum of every on-disk record and block.
 * Uses SSE4.2 when the CPU has it, a table otherwise; both give the same values.
 * Safe to call from any thread, the first call included.
 */
#ifndef WC_CRC32C_H
#define WC_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Extends crc (0 to start) over data[0..n-1]. */
uint32_t	wc_crc32c_extend(uint32_t crc, const void *data, size_t n);

static inline uint32_t
wc_crc32c(const void *data, size_t n)
{
	return wc_crc32c_extend(0, data, n);
}

/*
 * For tests that compare the two implementations behind wc_crc32c_extend, which
 * picks one per process: the portable one (tables), always there; and SSE4.2,
 * which returns false (and leaves *out alone) when this CPU or build lacks it.
 */
uint32_t	wc_crc32c_extend_portable(uint32_t crc, const void *data, size_t n);
bool		wc_crc32c_extend_sse42(uint32_t crc, const void *data, size_t n, uint32_t *out);

#endif
