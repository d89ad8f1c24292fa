/*
 * hotrow.c -- reading a row many versions of which are waiting in the store.
 *
 * What a YCSB-style workload makes of its most popular records: their columns
 * updated again and again, so that a read of the row finds many versions of
 * each column in the memtable and the row in several sorted files, of which it
 * wants only the newest version (max_versions 1).  The store holds 10,000 rows
 * of ten 100-byte columns ("field0".."field9", family "f", compacted); then the
 * hot row's ten columns are updated and flushed --files times (a sorted file
 * each), then updated --versions times more, left in the log.  Prints the time
 * of a read of the hot row and of a row nobody updated (a scan of one row,
 * opened and closed per read; best of 5 rounds of --reads reads), with a block
 * cache of 64 MiB as in PostgreSQL, and of the hot row through a second handle
 * with a row cache of 8 MiB (wc_open_opts.row_cache_bytes: the row in two or
 * more files is read from it).  Only our engine: the scan path is ours.
 *
 *   make -C engine/bench run-hotrow
 *   engine/bench/hotrow [--files N] [--versions N] [--reads N] [--dir DIR] [--shared]
 *
 * --shared puts the logs' memtables in a shared region (64 MiB), as PostgreSQL
 * does (their values then stay in the log's pages).
 *
 * With no --files or --versions it runs the four cases 0/0, 5/0, 0/300, 5/300.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wc.h"

#define ROWS	10000
#define COLUMNS 10
#define VALUE	100

static const wc_family_opts families[] = {
	{.name = "f", .max_versions = 1, .ttl_ms = 0, .compression = WC_COMPRESS_LZ4}
};

static void
die(const char *what, const wc_err *err)
{
	fprintf(stderr, "hotrow: %s: %s\n", what, err != NULL ? err->msg : "failed");
	exit(1);
}

static double
now_sec(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

static void
row_key(char *buf, size_t len, int r)
{
	snprintf(buf, len, "user%010d", r);
}

/* Puts every column of row r at ts into b. */
static void
put_row(wc_batch *b, int r, int64_t ts, const char *val)
{
	char		row[32],
				qual[16];
	wc_err		err;

	wc_err_clear(&err);
	row_key(row, sizeof(row), r);
	for (int c = 0; c < COLUMNS; c++)
	{
		snprintf(qual, sizeof(qual), "field%d", c);
		if (wc_batch_put(b, "f", 1, row, strlen(row), qual, strlen(qual), ts, val, VALUE, &err) != WC_OK)
			die("put", &err);
	}
}

static void
write_batch(wc_db *db, wc_batch *b)
{
	wc_err		err;

	wc_err_clear(&err);
	if (wc_db_write(db, &b, 1, 0, false, &err) != WC_OK)
		die("write", &err);
	wc_batch_clear(b);
}

/* ns per read of rows r..r+nrows-1: the best of 5 rounds of nreads; *cells per read. */
static double
time_reads(wc_db *db, int r, int nrows, int nreads, long *cells)
{
	char		row[32],
				last[32];
	wc_scan_opts o;
	wc_key_range kr;
	double		best = 1e30;
	wc_err		err;

	row_key(row, sizeof(row), r);
	row_key(last, sizeof(last), r + nrows - 1);
	wc_scan_opts_init(&o);
	kr.start = (const uint8_t *) row;
	kr.start_len = strlen(row);
	kr.start_bound = WC_INCLUSIVE;
	kr.stop = (const uint8_t *) last;
	kr.stop_len = strlen(last);
	kr.stop_bound = WC_INCLUSIVE;
	o.ranges = &kr;
	o.nranges = 1;
	*cells = 0;
	for (int round = 0; round < 5; round++)
	{
		double		t0 = now_sec(),
					t;
		long		n = 0;

		for (int i = 0; i < nreads; i++)
		{
			wc_scan    *scan;
			wc_cell_view c;
			int			rc;

			wc_err_clear(&err);
			if (wc_scan_open(db, &o, &scan, &err) != WC_OK)
				die("scan open", &err);
			while ((rc = wc_scan_next(scan, &c, &err)) == 1)
				n++;
			wc_scan_close(scan);
			if (rc < 0)
				die("scan", &err);
		}
		t = (now_sec() - t0) / nreads * 1e9;
		if (t < best)
			best = t;
		*cells = n / nreads;
	}
	return best;
}

static void
run_case(const char *parent, int nfiles, int nversions, int nrows, int nreads)
{
	char		dir[4096];
	char		val[VALUE];
	wc_open_opts o;
	wc_db	   *db;
	wc_batch   *b = wc_batch_new();
	wc_err		err;
	int64_t		ts = 1;
	long		hot_cells,
				cold_cells;
	double		hot,
				cold,
				hot_cached;
	wc_db	   *db2;
	int			hot_row = 0,
				cold_row = ROWS / 2;

	if (b == NULL)
		die("batch", NULL);
	snprintf(dir, sizeof(dir), "%s/f%d-v%d", parent, nfiles, nversions);
	memset(val, 'v', sizeof(val));
	memset(&o, 0, sizeof(o));
	o.families = families;
	o.nfamilies = 1;
	o.create_if_missing = true;
	o.log_switch_bytes = 64 << 20;	/* the versions stay in the log */
	wc_err_clear(&err);
	if (wc_db_open(dir, &o, &db, &err) != WC_OK)
		die("open", &err);
	for (int r = 0; r < ROWS; r++)
		put_row(b, r, ts, val);
	write_batch(db, b);
	if (wc_db_flush(db, &err) != WC_OK || wc_db_compact(db, &err) != WC_OK)
		die("load", &err);
	for (int f = 0; f < nfiles; f++)
	{
		++ts;
		for (int r = hot_row; r < hot_row + nrows; r++)
			put_row(b, r, ts, val);
		write_batch(db, b);
		if (wc_db_flush(db, &err) != WC_OK)
			die("flush", &err);
	}
	for (int v = 0; v < nversions; v++)
	{
		++ts;
		for (int r = hot_row; r < hot_row + nrows; r++)
			put_row(b, r, ts, val);
		write_batch(db, b);
	}
	if (wc_db_refresh(db, &err) != WC_OK)
		die("refresh", &err);
	hot = time_reads(db, hot_row, nrows, nreads, &hot_cells);
	cold = time_reads(db, cold_row, nrows, nreads, &cold_cells);
	if (hot_cells != COLUMNS * nrows || cold_cells != COLUMNS * nrows)
		die("a read did not return the rows' ten cells", NULL);
	o.row_cache_bytes = 8 << 20;
	if (wc_db_open(dir, &o, &db2, &err) != WC_OK)
		die("open", &err);
	hot_cached = time_reads(db2, hot_row, nrows, nreads, &hot_cells);
	if (hot_cells != COLUMNS * nrows)
		die("a read did not return the rows' ten cells", NULL);
	wc_db_close(db2);
	printf("%5d %8d %12.0f %12.0f %8.2fx %12.0f\n", nfiles, nversions, hot, cold, hot / cold,
		   hot_cached);
	wc_db_close(db);
	wc_batch_free(b);
}

int
main(int argc, char **argv)
{
	int			nfiles = -1,
				nversions = -1,
				nrows = 1,
				nreads = 100000;
	bool		shared = false;
	char		tmpl[] = "/tmp/wchotrow.XXXXXX";
	const char *dir = NULL;
	char		cmd[4200];
	size_t		region;
	void	   *mem;
	wc_err		err;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--files") == 0 && i + 1 < argc)
			nfiles = atoi(argv[++i]);
		else if (strcmp(argv[i], "--versions") == 0 && i + 1 < argc)
			nversions = atoi(argv[++i]);
		else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc)
			nrows = atoi(argv[++i]);
		else if (strcmp(argv[i], "--reads") == 0 && i + 1 < argc)
			nreads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--shared") == 0)
			shared = true;
		else
		{
			fprintf(stderr, "usage: hotrow [--files N] [--versions N] [--rows N] [--reads N] [--dir DIR] [--shared]\n");
			return 2;
		}
	}
	if (nreads < 1 || nrows < 1 || nrows > ROWS / 2 ||
		(nfiles != -1 && nfiles < 0) || (nversions != -1 && nversions < 0))
	{
		fprintf(stderr, "hotrow: counts must be positive\n");
		return 2;
	}
	if (dir == NULL && (dir = mkdtemp(tmpl)) == NULL)
	{
		perror("hotrow: mkdtemp");
		return 1;
	}
	region = wc_block_cache_region_size((size_t) 64 << 20);
	if ((mem = aligned_alloc(64, (region + 63) & ~(size_t) 63)) == NULL)
		die("block cache", NULL);
	wc_err_clear(&err);
	if (wc_block_cache_create(mem, region, &err) != WC_OK)
		die("block cache", &err);
	if (shared)
	{
		size_t		size = wc_shared_memtable_region_size((size_t) 64 << 20);
		void	   *r = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (r == MAP_FAILED || wc_shared_memtable_create(r, size, &err) != WC_OK)
			die("shared memtables", r == MAP_FAILED ? NULL : &err);
	}

	printf("%d row(s) of %d columns read %d times a round (best of 5), ns per read\n", nrows, COLUMNS, nreads);
	printf("files versions     hot row     cold row    ratio  hot, cached\n");
	if (nfiles >= 0 || nversions >= 0)
		run_case(dir, nfiles < 0 ? 0 : nfiles, nversions < 0 ? 0 : nversions, nrows, nreads);
	else
	{
		run_case(dir, 0, 0, nrows, nreads);
		run_case(dir, 5, 0, nrows, nreads);
		run_case(dir, 0, 300, nrows, nreads);
		run_case(dir, 5, 300, nrows, nreads);
	}
	if (dir == tmpl)
	{
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
		if (system(cmd) != 0)
			fprintf(stderr, "hotrow: could not remove %s\n", tmpl);
	}
	return 0;
}
