/*
 * test_recovery.c -- what a store looks like after a crash cut its files short,
 * after I/O errors, and after damage.
 *
 * cut:     the log cut at every offset: the store opens, holds exactly the batches
 *          wholly before the cut, and takes new writes after the torn tail.
 * faults:  the Nth write, fsync or rename fails during writes, flushes and
 *          compactions: the operation reports it, nothing acknowledged is lost, a
 *          failed batch is all there or not at all, and the store keeps working
 *          after a reopen.
 * corrupt: bytes flipped in sorted files and the manifest: every scan returns the
 *          right rows or WC_CORRUPT naming the file; never wrong rows, never a crash.
 */
#include <fcntl.h>

#include "testutil.h"
#include "../env.h"

static wc_family_opts fams[] = {{"f", 0, 0, WC_COMPRESS_LZ4, 0}, {"g", 0, 0, WC_COMPRESS_NONE, 0}};

static int
open_store(const char *dir, wc_db **db, wc_err *err)
{
	wc_open_opts o;

	memset(&o, 0, sizeof(o));
	o.families = fams;
	o.nfamilies = 2;
	o.create_if_missing = true;
	o.block_bytes = 256;
	wc_err_clear(err);
	return wc_db_open(dir, &o, db, err);
}

static int
write_rows(wc_db *db, const char *prefix, int from, int to, bool sync, wc_err *err)
{
	wc_batch   *b = wc_batch_new();
	int			rc = WC_OK;

	for (int i = from; i < to && rc == WC_OK; i++)
	{
		char		row[32];

		snprintf(row, sizeof(row), "%s%04d", prefix, i);
		rc = wc_batch_put(b, "f", 1, row, strlen(row), "q", 1, 1, row, strlen(row), err);
		if (rc == WC_OK)
			rc = wc_batch_put(b, "g", 1, row, strlen(row), "q", 1, 1, row, strlen(row), err);
	}
	if (rc == WC_OK)
		rc = wc_db_write(db, &b, 1, 0, sync, err);
	wc_batch_free(b);
	return rc;
}

/* Renders the store; returns the scan's status (1 = ended cleanly). */
static int
dump(wc_db *db, char *out, size_t size, wc_err *err)
{
	wc_scan_opts o;
	wc_scan    *s;
	wc_cell_view c;
	size_t		used = 0;
	int			rc;

	out[0] = '\0';
	wc_scan_opts_init(&o);
	if ((rc = wc_db_refresh(db, err)) != WC_OK || (rc = wc_scan_open(db, &o, &s, err)) != WC_OK)
		return rc;
	while ((rc = wc_scan_next(s, &c, err)) == 1)
		used += snprintf(out + used, size > used ? size - used : 0, "%.*s/%.*s=%.*s;",
						 (int) c.row_len, c.row, (int) c.family_len, c.family,
						 (int) c.val_len, c.val);
	wc_scan_close(s);
	return rc == 0 ? 1 : rc;
}

static void
copy_dir(const char *from, const char *to)
{
	char		cmd[9000];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s'", to, from, to);
	if (system(cmd) != 0)
		exit(2);
}

static long
file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long) st.st_size : -1;
}

/* ---------------------------------------------------------------- cut */

static void
test_cut(void)
{
	char	   *dir = test_tmpdir("cut");
	char		work[4200],
				log[4300];
	wc_db	   *db;
	wc_err		err;
	char	   *got = malloc(1 << 16);
	int			prev_rows = -1,
				bad = 0;
	long		size;
	int			nbatches = 8;

	CHECK_OK(open_store(dir, &db, &err), &err);
	for (int i = 0; i < nbatches; i++)
		CHECK_OK(write_rows(db, "b", i * 2, i * 2 + 2, true, &err), &err);
	wc_db_close(db);
	snprintf(work, sizeof(work), "%s.work", dir);
	snprintf(log, sizeof(log), "%s/000001.log", work);
	copy_dir(dir, work);
	size = file_size(log);
	CHECK(size > 32, "log size %ld", size);

	for (long cut = 32; cut <= size; cut++)
	{
		int			rows = 0,
					rc;

		copy_dir(dir, work);
		if (truncate(log, cut) != 0)
			exit(2);
		if ((rc = open_store(work, &db, &err)) != WC_OK)
		{
			bad++;
			fprintf(stderr, "cut %ld: open: %s\n", cut, err.msg);
			continue;
		}
		rc = dump(db, got, 1 << 16, &err);
		for (const char *p = got; (p = strstr(p, "/f=")) != NULL; p++)
			rows++;
		/* a prefix of whole batches: rows even, never fewer than a shorter cut */
		if (rc != 1 || rows % 2 != 0 || rows < prev_rows || (cut == size && rows != nbatches * 2))
		{
			bad++;
			fprintf(stderr, "cut %ld: rc %d rows %d prev %d: %s\n", cut, rc, rows, prev_rows, err.msg);
		}
		prev_rows = rows;
		/* the torn tail is repaired by the next writer */
		if (write_rows(db, "after", 0, 1, true, &err) != WC_OK)
		{
			bad++;
			fprintf(stderr, "cut %ld: write after: %s\n", cut, err.msg);
		}
		wc_db_close(db);
		if (open_store(work, &db, &err) == WC_OK)
		{
			int			rows2 = 0;

			dump(db, got, 1 << 16, &err);
			for (const char *p = got; (p = strstr(p, "/f=")) != NULL; p++)
				rows2++;
			if (rows2 != rows + 1)
			{
				bad++;
				fprintf(stderr, "cut %ld: after reopen %d rows, want %d\n", cut, rows2, rows + 1);
			}
			wc_db_close(db);
		}
	}
	CHECK(bad == 0, "%d of %ld cuts went wrong", bad, size - 31);
	printf("cut: log of %ld bytes cut at every offset: ok\n", size);
	free(got);
	test_rmdir(work);
	test_rmdir(dir);
}

/* ---------------------------------------------------------------- faults */

static void
test_faults(void)
{
	static const char *kinds[] = {"write", "fsync", "rename"};
	char	   *base = test_tmpdir("faultbase");
	char		dir[4200];
	char	   *before = malloc(1 << 16),
			   *after = malloc(1 << 16);
	wc_db	   *db;
	wc_err		err;
	int			hits = 0,
				bad = 0;

	CHECK_OK(open_store(base, &db, &err), &err);
	CHECK_OK(write_rows(db, "base", 0, 10, true, &err), &err);
	CHECK_OK(wc_db_flush(db, &err), &err);
	CHECK_OK(write_rows(db, "base", 10, 20, true, &err), &err);
	wc_db_close(db);
	snprintf(dir, sizeof(dir), "%s.run", base);

	for (int kind = 0; kind < 3; kind++)
		for (long n = 1;; n++)
		{
			int			rc = WC_OK,
						step = 0;
			long		calls_before;

			copy_dir(base, dir);
			CHECK_OK(open_store(dir, &db, &err), &err);
			CHECK(dump(db, before, 1 << 16, &err) == 1, "dump: %s", err.msg);
			calls_before = wc_fault_count((wc_fault_kind) kind);
			wc_fault_set((wc_fault_kind) kind, n, kind == 0 && n % 2 ? ENOSPC : EIO);
			for (step = 0; step < 4 && rc == WC_OK; step++)
			{
				switch (step)
				{
					case 0:
						rc = write_rows(db, "new", 0, 5, true, &err);
						break;
					case 1:
						rc = wc_db_flush(db, &err);
						break;
					case 2:
						rc = write_rows(db, "new", 5, 10, true, &err);
						break;
					case 3:
						rc = wc_db_compact(db, &err);
						break;
				}
			}
			wc_fault_set((wc_fault_kind) kind, 0, 0);
			if (wc_fault_count((wc_fault_kind) kind) - calls_before < n)
			{
				/* ran out of calls to fail: every call site was covered */
				wc_db_close(db);
				break;
			}
			hits++;
			if (rc == WC_OK)
			{
				/* the failure hit a path that may ignore it (orphan removal) */
			}
			else if (rc != WC_IO && rc != WC_NOSPACE && rc != WC_FAILED)
			{
				bad++;
				fprintf(stderr, "%s fault %ld: unexpected code %d: %s\n", kinds[kind], n, rc, err.msg);
			}
			wc_db_close(db);

			/* reopen: base rows all there; each "new" batch whole or absent */
			if (open_store(dir, &db, &err) != WC_OK)
			{
				bad++;
				fprintf(stderr, "%s fault %ld: reopen: %s\n", kinds[kind], n, err.msg);
				continue;
			}
			if (dump(db, after, 1 << 16, &err) != 1)
			{
				bad++;
				fprintf(stderr, "%s fault %ld: dump: %s\n", kinds[kind], n, err.msg);
			}
			else
			{
				int			news = 0;

				for (const char *p = after; (p = strstr(p, "new")) != NULL; p++)
					news++;
				/* each new row appears twice (f and g) and in its value */
				for (int i = 0; i < 20; i++)
				{
					char		row[32];

					snprintf(row, sizeof(row), "base%04d/f=base%04d;", i, i);
					if (strstr(after, row) == NULL)
					{
						bad++;
						fprintf(stderr, "%s fault %ld: lost %s\n", kinds[kind], n, row);
						break;
					}
				}
				if (news % 20 != 0)
				{
					bad++;
					fprintf(stderr, "%s fault %ld: a partial batch (%d): %s\n", kinds[kind], n, news, after);
				}
			}
			/* and it keeps working */
			wc_err_clear(&err);
			if (write_rows(db, "later", 0, 3, true, &err) != WC_OK ||
				wc_db_compact(db, &err) != WC_OK || dump(db, after, 1 << 16, &err) != 1 ||
				strstr(after, "later0002/g=later0002;") == NULL)
			{
				bad++;
				fprintf(stderr, "%s fault %ld: store unusable after reopen: %s\n", kinds[kind], n, err.msg);
			}
			wc_db_close(db);
		}
	CHECK(hits > 10, "only %d faults were hit", hits);
	CHECK(bad == 0, "%d problems over %d injected faults", bad, hits);
	printf("faults: %d injected write/fsync/rename failures: ok\n", hits);
	free(before);
	free(after);
	test_rmdir(dir);
	test_rmdir(base);
}

/* ---------------------------------------------------------------- corruption */

static void
flip_byte(const char *path, long off)
{
	int			fd = open(path, O_RDWR);
	unsigned char c;

	if (fd < 0 || pread(fd, &c, 1, off) != 1)
		exit(2);
	c ^= 0x5a;
	if (pwrite(fd, &c, 1, off) != 1)
		exit(2);
	close(fd);
}

static void
test_corrupt(void)
{
	char	   *base = test_tmpdir("corruptbase");
	char		dir[4200];
	char	   *want = malloc(1 << 18),
			   *want_base = malloc(1 << 18),
			   *got = malloc(1 << 18);
	char	  **names;
	int			nnames;
	wc_db	   *db;
	wc_err		err;
	int			tried = 0,
				detected = 0,
				harmless = 0,
				wrong = 0;
	uint64_t	rng = 99;

	CHECK_OK(open_store(base, &db, &err), &err);
	CHECK_OK(write_rows(db, "r", 0, 300, true, &err), &err);
	CHECK_OK(wc_db_compact(db, &err), &err);
	CHECK(dump(db, want_base, 1 << 18, &err) == 1, "dump");
	CHECK_OK(write_rows(db, "s", 0, 50, true, &err), &err);
	CHECK(dump(db, want, 1 << 18, &err) == 1, "dump");
	wc_db_close(db);
	snprintf(dir, sizeof(dir), "%s.run", base);
	CHECK_OK(wc_env_list(base, &names, &nnames, &err), &err);

	for (int f = 0; f < nnames; f++)
	{
		char		path[4400];
		long		size;
		bool		is_log = strstr(names[f], ".log") != NULL;

		if (strcmp(names[f], "LOCK") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", base, names[f]);
		size = file_size(path);
		for (int k = 0; k < 150 && size > 0; k++)
		{
			long		off = (long) (test_rand(&rng) % (uint64_t) size);
			int			rc;

			copy_dir(base, dir);
			snprintf(path, sizeof(path), "%s/%s", dir, names[f]);
			flip_byte(path, off);
			tried++;
			rc = open_store(dir, &db, &err);
			if (rc == WC_OK)
			{
				rc = dump(db, got, 1 << 18, &err);
				wc_db_close(db);
			}
			if (rc == 1 && strcmp(got, want) == 0)
				harmless++;
			else if (rc == WC_CORRUPT && strstr(err.msg, names[f]) != NULL)
				detected++;
			else if (rc == WC_CORRUPT && strcmp(names[f], "MANIFEST") == 0)
				detected++;
			else if (rc == 1 && is_log && strcmp(got, want_base) == 0)
			{
				/* a damaged last record reads as a torn tail: it is dropped whole */
				harmless++;
			}
			else
			{
				wrong++;
				if (wrong < 5)
					fprintf(stderr, "flip in %s at %ld: rc %d: %s\n", names[f], off, rc, err.msg);
			}
		}
	}
	wc_env_free_list(names, nnames);
	CHECK(wrong == 0, "%d of %d flips gave wrong results", wrong, tried);
	printf("corrupt: %d flips: %d detected as corruption, %d harmless, %d wrong\n",
		   tried, detected, harmless, wrong);
	free(want);
	free(want_base);
	free(got);
	test_rmdir(dir);
	test_rmdir(base);
}

/* A lost MANIFEST next to data is corruption: never a fresh, empty store. */
static void
test_lost_manifest(void)
{
	char	   *dir = test_tmpdir("lostmanifest");
	char		path[4200];
	wc_db	   *db;
	wc_err		err;
	int			rc;

	CHECK_OK(open_store(dir, &db, &err), &err);
	CHECK_OK(write_rows(db, "m", 0, 10, true, &err), &err);
	CHECK_OK(wc_db_flush(db, &err), &err);
	CHECK_OK(write_rows(db, "m", 10, 12, true, &err), &err);
	wc_db_close(db);
	snprintf(path, sizeof(path), "%s/MANIFEST", dir);
	CHECK(unlink(path) == 0, "unlink MANIFEST");
	rc = open_store(dir, &db, &err);
	CHECK(rc == WC_CORRUPT && strstr(err.msg, "MANIFEST is missing") != NULL,
		  "open without MANIFEST: rc %d: %s", rc, err.msg);
	CHECK(!wc_env_exists(dir, "MANIFEST"), "no new MANIFEST was written");
	CHECK(wc_env_exists(dir, "000002.log"), "the data files are untouched");
	test_rmdir(dir);

	/* a crash in the very first creation leaves only an empty 000001.log: fine */
	dir = test_tmpdir("firstcreate");
	CHECK_OK(open_store(dir, &db, &err), &err);
	wc_db_close(db);
	snprintf(path, sizeof(path), "%s/MANIFEST", dir);
	CHECK(unlink(path) == 0, "unlink MANIFEST");
	CHECK_OK(open_store(dir, &db, &err), &err);
	wc_db_close(db);
	test_rmdir(dir);
}

int
main(void)
{
	t_name = "test_recovery";
	test_lost_manifest();
	test_cut();
	test_faults();
	test_corrupt();
	TEST_DONE();
}
