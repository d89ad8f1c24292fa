/*
 * first-touch.c -- what the first touch of fresh memory costs on this machine
 * (BENCHMARKS.md, "Latest results", session 15).
 *
 *   cc -O2 -o /tmp/first-touch bench/first-touch.c && /tmp/first-touch && /tmp/first-touch huge
 *
 * Maps 256 MiB of anonymous memory five times in a row, touches one byte per
 * 4 KiB page (the kernel zeroes each page at its first touch), then writes the
 * whole mapping again, and unmaps it.  With "huge" the mapping is advised to use
 * transparent huge pages first, as wc_big_buf_grow does for a bulk write's
 * batch.  On a virtual machine the first touch of a page the guest has not used
 * lately also costs the hypervisor a fault: the touch is then far slower than
 * the second pass, which writes memory already mapped.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	const size_t n = (size_t) 256 << 20;
	int			huge = argc > 1 && strcmp(argv[1], "huge") == 0;

	for (int round = 1; round <= 5; round++)
	{
		char	   *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		double		t0,
					t1,
					t2;

		if (p == MAP_FAILED)
		{
			perror("mmap");
			return 1;
		}
#ifdef MADV_HUGEPAGE
		if (huge)
			(void) madvise(p, n, MADV_HUGEPAGE);
#endif
		t0 = now();
		for (size_t i = 0; i < n; i += 4096)
			p[i] = 1;
		t1 = now();
		memset(p, 2, n);
		t2 = now();
		printf("%s pages, round %d: first touch %.1f ms (%.2f GB/s), writing it all again %.1f ms\n",
			   huge ? "huge" : "4 KiB", round, (t1 - t0) * 1e3, (double) n / (t1 - t0) / 1e9,
			   (t2 - t1) * 1e3);
		munmap(p, n);
	}
	return 0;
}
