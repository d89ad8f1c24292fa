/*
 * crc.c -- how fast the engine's CRC-32C runs: every data block written and
 * read from a mapped file, every log record, every meta block a session checks
 * when it opens a sorted file is one.
 *
 *   make -C engine/bench run-crc
 *
 * Prints GB/s of wc_crc32c (SSE4.2 where the CPU has it: three chains of the
 * instruction at once for buffers of 768 bytes and more, crc32c.c) and of the
 * portable tables, for buffers of 64 bytes (a small log record) to 1 MiB (a
 * large sorted file's index), each the best of 5 rounds of about 256 MiB.
 * Session 33, before the three chains: 4 KiB 8.0 GB/s, 64 KiB 7.8, 1 MiB 7.2;
 * after: 17.7, 21.8, 20.0 (the 2-CPU VM of BENCHMARKS.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "crc32c.h"

static double
now_sec(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

/* GB/s of f over n-byte buffers at 8 alignments, the best of 5 rounds. */
static double
rate(uint32_t (*f) (uint32_t, const void *, size_t), const uint8_t *buf, size_t n,
	 uint32_t *sink)
{
	long		iters = (long) ((256u << 20) / n);
	double		best = 0;

	for (int round = 0; round < 5; round++)
	{
		double		t0 = now_sec(),
					t;

		for (long i = 0; i < iters; i++)
			*sink ^= f(0, buf + (i & 7), n);
		t = now_sec() - t0;
		if (t > 0 && (double) iters * (double) n / t / 1e9 > best)
			best = (double) iters * (double) n / t / 1e9;
	}
	return best;
}

int
main(void)
{
	static const size_t sizes[] = {64, 200, 1024, 4101, 65536, 1 << 20};
	uint8_t    *buf = malloc((1 << 20) + 8);
	uint32_t	sink = 0,
				probe;

	if (buf == NULL)
		return 1;
	for (size_t i = 0; i < (1 << 20) + 8; i++)
		buf[i] = (uint8_t) (i * 2654435761u >> 13);
	printf("CRC-32C, GB/s (best of 5 rounds of ~256 MiB)%s\n",
		   wc_crc32c_extend_sse42(0, buf, 1, &probe) ? "" : "  [no SSE4.2: both are the tables]");
	printf("%10s %12s %12s\n", "bytes", "wc_crc32c", "portable");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		printf("%10zu %12.2f %12.2f\n", sizes[s], rate(wc_crc32c_extend, buf, sizes[s], &sink),
			   rate(wc_crc32c_extend_portable, buf, sizes[s], &sink));
	free(buf);
	return sink == 0x12345678;	/* keeps the calls */
}
