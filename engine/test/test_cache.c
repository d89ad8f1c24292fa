/*
 * test_cache.c -- the block cache (cache.h; DESIGN.md, "The block cache").
 *
 * - The slots one process sees: a block put is found again with its bytes, only
 *   under its whole key (another checksum or length of the same place is a miss);
 *   a second put of the same key returns the first slot; pinned slots are never
 *   taken, and once every slot is pinned there is nothing to take; unpinned ones
 *   are reused, the least recently used first.
 * - Processes at once: four forked processes put, look up and hold blocks of 300
 *   keys in 48 slots of one shared mapping; every block read, and read again
 *   before its unpin, holds the bytes of its key.
 * - Scans: a store read through the cache returns what it returns without one,
 *   with compressed and plain families; a second range scan (in another process)
 *   finds the blocks the first one read, only the first 16 of a long run; a
 *   scan of every row, and a bulk scan of ranges, neither read nor leave any.
 */
#include <fcntl.h>
#include <lz4.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "cache.h"
#include "cell.h"
#include "coding.h"
#include "crc32c.h"
#include "sst.h"
#include "testutil.h"

static uint64_t rng = 0x9e3779b97f4a7c15;

static wc_cache_key
key_of(uint64_t n)
{
	wc_cache_key k;

	memset(&k, 0, sizeof(k));
	k.file1 = 1 + n % 7;
	k.file2 = 0xabcdef;
	k.off = n * 4096;
	k.crc = n % 3 == 0 ? 0 : (uint32_t) (n * 2654435761u);
	return k;
}

static uint32_t
len_of(uint64_t n)
{
	return 100 + (uint32_t) (n % 4000);
}

/* The bytes of key n's block. */
static void
fill(uint8_t *p, uint64_t n)
{
	for (uint32_t i = 0; i < len_of(n); i++)
		p[i] = (uint8_t) (n * 31 + i * 7);
}

static bool
holds(const uint8_t *p, uint64_t n)
{
	for (uint32_t i = 0; i < len_of(n); i++)
		if (p[i] != (uint8_t) (n * 31 + i * 7))
			return false;
	return true;
}

/* Puts key n (taking a slot); returns the pinned slot, or -1 if none was free. */
static int32_t
put_key(uint64_t n, const uint8_t **out)
{
	wc_cache_key k = key_of(n);
	int32_t		slot;
	uint8_t    *p = wc_cache_take(&slot);

	if (p == NULL)
		return -1;
	fill(p, n);
	*out = wc_cache_put(&k, len_of(n), &slot);
	return slot;
}

static void
test_one_process(void)
{
	size_t		size = wc_block_cache_region_size(16 * WC_CACHE_SLOT_BYTES);
	void	   *region = t_shared_map(size);
	wc_err		err;
	wc_cache_key k;
	wc_block_cache_stats st;
	const uint8_t *p,
			   *q;
	int32_t		s1,
				s2,
				pins[16];
	int			rc,
				found;
	uint32_t	len;

	CHECK(wc_block_cache_region_size(15 * WC_CACHE_SLOT_BYTES) == 0, "15 slots are too few");
	wc_err_clear(&err);
	rc = wc_block_cache_create(region, 100, &err);
	CHECK(rc == WC_INVALID, "a region of 100 bytes: %d", rc);
	wc_err_clear(&err);
	rc = wc_block_cache_create((uint8_t *) region + 8, size - 8, &err);
	CHECK(rc == WC_INVALID, "an unaligned region: %d", rc);
	wc_err_clear(&err);
	rc = wc_block_cache_create(region, size, &err);
	CHECK_OK(rc, &err);
	wc_block_cache_get_stats(&st);
	CHECK(st.slots == 16 && st.used == 0, "16 slots, none used: %llu, %llu",
		  (unsigned long long) st.slots, (unsigned long long) st.used);

	/* put, get, only the whole key */
	k = key_of(5);
	CHECK(wc_cache_get(&k, &s1, &len) == NULL, "a miss before the put");
	s1 = put_key(5, &p);
	CHECK(s1 >= 0 && holds(p, 5), "put");
	wc_cache_unpin(s1);
	q = wc_cache_get(&k, &s2, &len);
	CHECK(q != NULL && s2 == s1 && holds(q, 5) && len == len_of(5), "found again, %u bytes", len);
	wc_cache_unpin(s2);
	k.crc ^= 1;
	CHECK(wc_cache_get(&k, &s2, &len) == NULL, "another checksum at the same place is a miss");
	k = key_of(5);
	k.off++;
	CHECK(wc_cache_get(&k, &s2, &len) == NULL, "another offset is a miss");
	k = key_of(5);
	k.file2++;
	CHECK(wc_cache_get(&k, &s2, &len) == NULL, "another file is a miss");

	/* a second put of the same key: the first slot, the second given back */
	{
		int32_t		again;
		const uint8_t *r;

		k = key_of(5);
		r = wc_cache_take(&again);
		CHECK(r != NULL && again != s1, "a second slot for the same key");
		fill((uint8_t *) r, 5);
		r = wc_cache_put(&k, len_of(5), &again);
		CHECK(again == s1 && holds(r, 5), "the first slot is returned: %d, %d", again, s1);
		wc_cache_unpin(again);
		wc_block_cache_get_stats(&st);
		CHECK(st.used == 1 && st.pinned == 0, "one slot used, none pinned: %llu, %llu",
			  (unsigned long long) st.used, (unsigned long long) st.pinned);
	}

	/* every slot pinned: nothing to take; pinned blocks stay */
	for (int i = 0; i < 16; i++)
	{
		k = key_of(100 + i);
		pins[i] = put_key(100 + i, &p);
		CHECK(pins[i] >= 0, "slot %d", i);
	}
	{
		int32_t		none;

		CHECK(wc_cache_take(&none) == NULL && none == -1, "no slot while all are pinned");
	}
	found = 0;
	for (int i = 0; i < 16; i++)
	{
		k = key_of(100 + i);
		if ((q = wc_cache_get(&k, &s2, &len)) != NULL && holds(q, 100 + i))
		{
			found++;
			wc_cache_unpin(s2);
		}
	}
	CHECK(found == 16, "the 16 pinned blocks are all there: %d", found);
	k = key_of(5);
	CHECK(wc_cache_get(&k, &s2, &len) == NULL, "the unpinned block was taken");

	/* unpinned: reused; the blocks used since stay longest */
	for (int i = 0; i < 16; i++)
		wc_cache_unpin(pins[i]);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 4; i++)
		{
			k = key_of(100 + i);
			if ((q = wc_cache_get(&k, &s2, &len)) != NULL)
				wc_cache_unpin(s2);
		}
	for (int i = 0; i < 8; i++)
	{
		s1 = put_key(200 + i, &p);
		CHECK(s1 >= 0 && holds(p, 200 + i), "a new block in a reused slot");
		if (s1 >= 0)
			wc_cache_unpin(s1);
	}
	found = 0;
	for (int i = 0; i < 4; i++)
	{
		k = key_of(100 + i);
		if ((q = wc_cache_get(&k, &s2, &len)) != NULL)
		{
			found += holds(q, 100 + i);
			wc_cache_unpin(s2);
		}
	}
	CHECK(found == 4, "the four blocks used again are kept: %d", found);

	/* an abandoned slot is free again */
	s1 = -1;
	CHECK(wc_cache_take(&s1) != NULL, "take");
	wc_cache_abandon(s1);
	wc_block_cache_get_stats(&st);
	CHECK(st.pinned == 0 && st.used <= 16, "nothing pinned at the end: %llu",
		  (unsigned long long) st.pinned);
	wc_block_cache_detach();
	munmap(region, size);
}

/* One of the forked processes: nops random operations; exits 0 if all held. */
static int
worker(int id, int nops)
{
	uint64_t	r = 0x1234567 + (uint64_t) id * 7919;
	int32_t		held[4] = {-1, -1, -1, -1};
	uint64_t	held_key[4] = {0};
	uint32_t	len;
	int			bad = 0;

	for (int op = 0; op < nops; op++)
	{
		uint64_t	n = test_rand(&r) % 300;
		wc_cache_key k = key_of(n);
		const uint8_t *p;
		int32_t		slot;
		int			h = (int) (test_rand(&r) % 4);

		if ((p = wc_cache_get(&k, &slot, &len)) == NULL)
		{
			slot = put_key(n, &p);
			if (slot < 0)
				continue;
		}
		if (!holds(p, n))
			bad++;
		/* sometimes keep it pinned a while, and look again before letting go */
		if (held[h] >= 0)
		{
			const uint8_t *hp = NULL;

			/* the held slot's bytes must not have changed */
			{
				wc_cache_key hk = key_of(held_key[h]);
				int32_t		s2;

				if ((hp = wc_cache_get(&hk, &s2, &len)) != NULL)
				{
					if (s2 != held[h] || !holds(hp, held_key[h]))
						bad++;
					wc_cache_unpin(s2);
				}
				else
					bad++;		/* a pinned block was evicted */
			}
			wc_cache_unpin(held[h]);
			held[h] = -1;
		}
		if (test_rand(&r) % 3 == 0)
		{
			held[h] = slot;
			held_key[h] = n;
		}
		else
			wc_cache_unpin(slot);
	}
	for (int h = 0; h < 4; h++)
		if (held[h] >= 0)
			wc_cache_unpin(held[h]);
	if (bad)
		fprintf(stderr, "worker %d: %d bad reads\n", id, bad);
	return bad ? 1 : 0;
}

static void
test_processes(void)
{
	size_t		size = wc_block_cache_region_size(48 * WC_CACHE_SLOT_BYTES);
	void	   *region = t_shared_map(size);
	wc_err		err;
	pid_t		pids[4];
	int			ok = 0;
	wc_block_cache_stats st;

	wc_err_clear(&err);
	CHECK_OK(wc_block_cache_create(region, size, &err), &err);
	for (int i = 0; i < 4; i++)
		if ((pids[i] = fork()) == 0)
			_exit(worker(i, 40000));
	for (int i = 0; i < 4; i++)
	{
		int			status;

		if (waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			ok++;
	}
	CHECK(ok == 4, "four processes read only the right bytes: %d", ok);
	wc_block_cache_get_stats(&st);
	CHECK(st.pinned == 0 && st.used > 40, "after them: %llu used, %llu pinned",
		  (unsigned long long) st.used, (unsigned long long) st.pinned);
	wc_block_cache_detach();
	munmap(region, size);
}

/* ---------------------------------------------------------------- scans */

static wc_db *
open_store(const char *dir)
{
	wc_family_opts fams[] = {{"a", 0, 0, WC_COMPRESS_LZ4, 0}, {"b", 0, 0, WC_COMPRESS_NONE, 0},
	{"c", 0, 0, WC_COMPRESS_ZSTD, 0}};
	wc_open_opts o;
	wc_db	   *db = NULL;
	wc_err		err;
	int			rc;

	memset(&o, 0, sizeof(o));
	o.families = fams;
	o.nfamilies = 3;
	o.create_if_missing = true;
	o.block_bytes = 1024;
	wc_err_clear(&err);
	rc = wc_db_open(dir, &o, &db, &err);
	CHECK_OK(rc, &err);
	if (rc != WC_OK)
		exit(1);
	return db;
}

/* A hash of what the scan (bulk: wc_scan_opts.bulk) returns, and its stats. */
static uint64_t
scan_hash(wc_db *db, const wc_key_range *ranges, int nranges, bool bulk, wc_scan_stats *st,
		  uint64_t *n)
{
	wc_scan_opts o;
	wc_scan    *s = NULL;
	wc_cell_view c;
	wc_err		err;
	uint64_t	h = 1469598103934665603ull;
	int			rc;

	*n = 0;
	wc_scan_opts_init(&o);
	o.ranges = ranges;
	o.nranges = nranges;
	o.bulk = bulk;
	wc_err_clear(&err);
	rc = wc_scan_open(db, &o, &s, &err);
	CHECK_OK(rc, &err);
	if (rc != WC_OK)
		return 0;
	while ((rc = wc_scan_next(s, &c, &err)) == 1)
	{
		const uint8_t *parts[4] = {c.row, (const uint8_t *) c.family, c.qual, c.val};
		size_t		lens[4] = {c.row_len, c.family_len, c.qual_len, c.val_len};

		for (int p = 0; p < 4; p++)
			for (size_t i = 0; i < lens[p]; i++)
				h = (h ^ parts[p][i]) * 1099511628211ull;
		h = (h ^ (uint64_t) c.ts) * 1099511628211ull;
		(*n)++;
	}
	CHECK(rc == 0, "scan ended with %d: %s", rc, err.msg);
	wc_scan_get_stats(s, st);
	wc_scan_close(s);
	return h;
}

static void
test_scans(void)
{
	char	   *dir = test_tmpdir("cache");
	size_t		size = wc_block_cache_region_size(4096 * WC_CACHE_SLOT_BYTES);
	void	   *region = t_shared_map(size);
	wc_db	   *db = open_store(dir);
	wc_batch   *b = wc_batch_new();
	wc_err		err;
	char		row[32],
				val[200];
	wc_key_range rg[2];
	wc_scan_stats st,
				st2;
	uint64_t	h_plain,
				h_range,
				h,
				n,
				n_all,
				n_range;
	int			rc;

	/* 3 families x 2,000 rows x 3 cells, flushed into sorted files of 1 KiB blocks */
	wc_err_clear(&err);
	for (int r = 0; r < 2000; r++)
	{
		snprintf(row, sizeof(row), "row%06d", r);
		for (int f = 0; f < 3; f++)
			for (int q = 0; q < 3; q++)
			{
				for (int i = 0; i < 60; i++)
					val[i] = (char) ('a' + (test_rand(&rng) % (q == 0 ? 26 : 2)));
				rc = wc_batch_put(b, f == 0 ? "a" : f == 1 ? "b" : "c", 1, row, strlen(row),
								  q == 0 ? "x" : q == 1 ? "y" : "z", 1, 1000 + r, val, 60, &err);
			}
	}
	rc = wc_db_write(db, &b, 1, 0, false, &err);
	CHECK_OK(rc, &err);
	CHECK_OK(wc_db_flush(db, &err), &err);

	/* the answers without a cache */
	rg[0].start = (const uint8_t *) "row000500";
	rg[0].start_len = 9;
	rg[0].start_bound = WC_INCLUSIVE;
	rg[0].stop = (const uint8_t *) "row000700";
	rg[0].stop_len = 9;
	rg[0].stop_bound = WC_EXCLUSIVE;
	rg[1] = rg[0];
	rg[1].start = (const uint8_t *) "row001500";
	rg[1].stop = (const uint8_t *) "row001510";
	h_plain = scan_hash(db, NULL, 0, false, &st, &n_all);
	h_range = scan_hash(db, rg, 2, false, &st, &n_range);
	CHECK(n_all == 18000 && n_range == 210 * 9, "cells: %llu, %llu", (unsigned long long) n_all,
		  (unsigned long long) n_range);
	wc_db_close(db);

	/* with one: files opened now have an identity in it */
	wc_err_clear(&err);
	CHECK_OK(wc_block_cache_create(region, size, &err), &err);
	db = open_store(dir);
	h = scan_hash(db, rg, 2, false, &st, &n);
	CHECK(h == h_range && n == n_range, "a range scan through the cache");
	CHECK(st.blocks_read > 10 && st.blocks_cached == 0, "first range scan: %llu blocks, %llu cached",
		  (unsigned long long) st.blocks_read, (unsigned long long) st.blocks_cached);
	h = scan_hash(db, rg, 2, false, &st2, &n);
	CHECK(h == h_range && n == n_range, "the range scan again");
	/* family b is stored plain and read in place: never cached */
	CHECK(st2.blocks_cached > 0 && st2.blocks_cached < st2.blocks_read &&
		  st2.blocks_read == st.blocks_read,
		  "second range scan: %llu blocks, %llu cached", (unsigned long long) st2.blocks_read,
		  (unsigned long long) st2.blocks_cached);

	{
		wc_block_cache_stats cs;

		/* two compressed families, two ranges: a run of 16 blocks filled each */
		wc_block_cache_get_stats(&cs);
		CHECK(cs.used <= 2 * 2 * (WC_CACHE_FILL_RUN + 1) && st.blocks_read > cs.used,
			  "long runs fill the cache only at their start: %llu slots for %llu blocks",
			  (unsigned long long) cs.used, (unsigned long long) st.blocks_read);
	}

	/* another process finds them */
	{
		pid_t		pid = fork();
		int			status;

		if (pid == 0)
		{
			wc_db	   *db2 = open_store(dir);
			wc_scan_stats s3;
			uint64_t	n3,
						h3 = scan_hash(db2, rg, 2, false, &s3, &n3);

			wc_db_close(db2);
			_exit(h3 == h_range && s3.blocks_cached == st2.blocks_cached ? 0 : 1);
		}
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
			  "another process reads the blocks this one cached");
	}

	/* a scan of every row neither reads them nor adds any */
	{
		wc_block_cache_stats before,
					after;

		wc_block_cache_get_stats(&before);
		h = scan_hash(db, NULL, 0, false, &st, &n);
		wc_block_cache_get_stats(&after);
		CHECK(h == h_plain && n == n_all, "a full scan with a cache");
		CHECK(st.blocks_cached == 0, "the full scan reads no block from the cache: %llu",
			  (unsigned long long) st.blocks_cached);
		CHECK(after.used == before.used && after.pinned == 0,
			  "the full scan added nothing: %llu -> %llu slots", (unsigned long long) before.used,
			  (unsigned long long) after.used);
	}
	/* a bulk scan of ranges (a parallel scan's chunks) adds nothing either */
	{
		wc_block_cache_stats before,
					after;
		wc_key_range far = rg[0];

		far.start = (const uint8_t *) "row001000";
		far.stop = (const uint8_t *) "row001100";
		wc_block_cache_get_stats(&before);
		(void) scan_hash(db, &far, 1, true, &st, &n);
		wc_block_cache_get_stats(&after);
		CHECK(n == 900 && after.used == before.used, "a bulk scan: %llu cells, %llu -> %llu slots",
			  (unsigned long long) n, (unsigned long long) before.used, (unsigned long long) after.used);
	}
	/* every block of the range scans, cached, still reads right */
	h = scan_hash(db, rg, 2, false, &st, &n);
	CHECK(h == h_range && n == n_range, "range scan a third time");

	wc_db_close(db);
	wc_batch_free(b);
	wc_block_cache_detach();
	munmap(region, size);
	test_rmdir(dir);
}

/*
 * A store removed and made again at the same place, with the same keys,
 * timestamps and sequence numbers and values of the same length: the new sorted
 * files' footers and meta blocks are those of the old ones, and the file system
 * may give them the old inode numbers.  Reads must return the new values, never
 * cached old ones.  A value is 64 times one byte, never 0 and never the byte of a
 * row near it, so lz4 compresses each block to the same size in every round.
 */
static int
same_place_byte(int round, int r)
{
	return 1 + (r + round * 7) % 250;
}

static void
test_same_place(void)
{
	char	   *dir = test_tmpdir("cache-again");
	size_t		size = wc_block_cache_region_size(1024 * WC_CACHE_SLOT_BYTES);
	void	   *region = t_shared_map(size);
	wc_err		err;
	wc_key_range rg;
	int			reused = 0,
				wrong = 0;
	uint64_t	prev_ino = 0;
	char		cmd[4200];

	wc_err_clear(&err);
	CHECK_OK(wc_block_cache_create(region, size, &err), &err);
	rg.start = (const uint8_t *) "row000100";
	rg.start_len = 9;
	rg.start_bound = WC_INCLUSIVE;
	rg.stop = (const uint8_t *) "row000400";
	rg.stop_len = 9;
	rg.stop_bound = WC_EXCLUSIVE;
	for (int round = 0; round < 6; round++)
	{
		wc_db	   *db;
		wc_batch   *b = wc_batch_new();
		char		row[32];
		uint8_t		val[64];
		wc_scan_opts o;
		wc_scan    *s = NULL;
		wc_cell_view c;
		struct stat st;
		char		path[4200];
		int			rc,
					n = 0;

		snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir '%s'", dir, dir);
		if (system(cmd) != 0)
			exit(2);
		db = open_store(dir);
		for (int r = 0; r < 500; r++)
		{
			snprintf(row, sizeof(row), "row%06d", r);
			memset(val, same_place_byte(round, r), 64);
			wc_batch_put(b, "a", 1, row, strlen(row), "q", 1, 1000, val, 64, &err);
		}
		CHECK_OK(wc_db_write(db, &b, 1, 0, false, &err), &err);
		CHECK_OK(wc_db_flush(db, &err), &err);
		for (int pass = 0; pass < 2; pass++)
		{
			wc_scan_opts_init(&o);
			o.ranges = &rg;
			o.nranges = 1;
			rc = wc_scan_open(db, &o, &s, &err);
			CHECK_OK(rc, &err);
			while ((rc = wc_scan_next(s, &c, &err)) == 1)
			{
				memset(val, same_place_byte(round, atoi((const char *) c.row + 3)), 64);
				if (c.val_len != 64 || memcmp(c.val, val, 64) != 0)
					wrong++;
				n++;
			}
			wc_scan_close(s);
			CHECK(rc == 0 && n == 300 * (pass + 1), "round %d pass %d: %d cells", round, pass, n);
		}
		/* the one sorted file of family a: its inode */
		{
			wc_file_info *files = NULL;
			int			nfiles = 0;

			CHECK_OK(wc_db_files(db, &files, &nfiles, &err), &err);
			if (nfiles == 1)
			{
				snprintf(path, sizeof(path), "%s/%s", dir, files[0].name);
				if (stat(path, &st) == 0)
				{
					reused += round > 0 && (uint64_t) st.st_ino == prev_ino;
					prev_ino = (uint64_t) st.st_ino;
				}
			}
			wc_file_info_free(files, nfiles);
		}
		wc_db_close(db);
		wc_batch_free(b);
	}
	CHECK(wrong == 0, "every value read is the new store's: %d wrong", wrong);
	printf("test_cache: inode numbers used again in %d of 5 new stores%s\n", reused,
		   wc_cache_verify_forced ? " (block checksums in the keys)" : "");
	wc_block_cache_detach();
	munmap(region, size);
	test_rmdir(dir);
}

/* All of a file, in *len bytes of malloc'd memory. */
static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	uint8_t    *buf;
	long		n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0)
		exit(2);
	rewind(f);
	buf = malloc((size_t) n);
	if (buf == NULL || fread(buf, 1, (size_t) n, f) != (size_t) n)
		exit(2);
	fclose(f);
	*len = (size_t) n;
	return buf;
}

/* The value of row "r10" read from dir/000001.sst through a filling iterator. */
static bool
read_r10(const char *dir, uint8_t *val, uint64_t *ino, wc_scan_stats *st)
{
	wc_sst	   *sst = NULL;
	wc_iter    *it;
	wc_cell		target;
	wc_err		err;
	struct stat sb;
	char		path[4200];
	bool		ok = false;

	wc_err_clear(&err);
	if (wc_sst_open(dir, "000001.sst", &sst, &err) != WC_OK)
		return false;
	snprintf(path, sizeof(path), "%s/000001.sst", dir);
	*ino = stat(path, &sb) == 0 ? (uint64_t) sb.st_ino : 0;
	memset(st, 0, sizeof(*st));
	it = wc_sst_iter_new_cached(sst, st, WC_SST_CACHE_FILL);
	memset(&target, 0, sizeof(target));
	target.row = (const uint8_t *) "r10";
	target.row_len = 3;
	target.ts = INT64_MAX;
	target.seq = UINT64_MAX;
	wc_iter_seek(it, &target);
	if (wc_iter_valid(it) && wc_iter_cell(it)->row_len == 3 &&
		memcmp(wc_iter_cell(it)->row, "r10", 3) == 0 && wc_iter_cell(it)->val_len == 64)
	{
		memcpy(val, wc_iter_cell(it)->val, 64);
		ok = true;
	}
	wc_iter_close(it);
	wc_sst_unref(sst);
	return ok;
}

/*
 * The worst case of an inode used again, made on purpose: a sorted file of one
 * block is read (and cached), removed, and written again under the same name
 * with one byte of a value changed, its block recompressed to the same size
 * with a new checksum.  Every meta block and the footer are the same; the new
 * file likely has the old one's inode number.  It must read the new byte.
 */
static void
test_changed_block(void)
{
	char	   *dir = test_tmpdir("cache-block");
	size_t		size = wc_block_cache_region_size(64 * WC_CACHE_SLOT_BYTES);
	void	   *region = t_shared_map(size);
	wc_sst_build_opts bo;
	wc_sst_builder *b;
	wc_sst_props props;
	wc_err		err;
	char		path[4200];
	uint8_t		vals[20][64],
				got[64],
				raw[8192],
				comp[8192],
			   *file;
	size_t		flen;
	uint64_t	filter_off,
				blen,
				ino1,
				ino2;
	uint32_t	raw_len;
	wc_scan_stats st;
	int			clen = -1,
				fd;
	uint8_t    *at;

	wc_err_clear(&err);
	CHECK_OK(wc_block_cache_create(region, size, &err), &err);
	memset(&bo, 0, sizeof(bo));
	bo.family = "a";
	bo.compression = WC_COMPRESS_LZ4;
	bo.block_bytes = 4096;
	b = wc_sst_builder_new(dir, "000001.sst", &bo, &err);
	CHECK(b != NULL, "builder: %s", err.msg);
	for (int r = 0; r < 20; r++)
	{
		wc_cell		c;
		char		row[8];
		uint64_t	seed = 77 + (uint64_t) r;

		snprintf(row, sizeof(row), "r%02d", r);
		/* half random, half 'x': the block compresses (else it is stored plain) */
		for (int i = 0; i < 64; i++)
			vals[r][i] = i < 32 ? (uint8_t) test_rand(&seed) : 'x';
		memset(&c, 0, sizeof(c));
		c.row = (const uint8_t *) row;
		c.row_len = 3;
		c.qual = (const uint8_t *) "q";
		c.qual_len = 1;
		c.ts = 1000;
		c.seq = 1 + (uint64_t) r;
		c.type = WC_TYPE_PUT;
		c.val = vals[r];
		c.val_len = 64;
		wc_sst_builder_add(b, &c);
	}
	memset(&props, 0, sizeof(props));
	CHECK_OK(wc_sst_builder_finish(b, &props, &err), &err);
	CHECK(props.blocks == 1, "one block: %llu", (unsigned long long) props.blocks);
	wc_sst_props_clear(&props);

	CHECK(read_r10(dir, got, &ino1, &st) && memcmp(got, vals[10], 64) == 0 && st.blocks_cached == 0,
		  "the first file reads its value");
	CHECK(read_r10(dir, got, &ino1, &st) && st.blocks_cached == 1, "then from the cache");

	/* the block, a byte of r10's value changed, recompressed to the same size */
	snprintf(path, sizeof(path), "%s/000001.sst", dir);
	file = slurp(path, &flen);
	filter_off = wc_get_fixed64(file + flen - WC_SST_FOOTER_SIZE);
	blen = filter_off - WC_SST_TRAILER_SIZE;
	raw_len = wc_get_fixed32(file + blen + 1);
	CHECK(file[blen] == WC_COMPRESS_LZ4 && raw_len <= sizeof(raw) &&
		  LZ4_decompress_safe((const char *) file, (char *) raw, (int) blen, (int) raw_len) == (int) raw_len,
		  "the block decompresses");
	at = memmem(raw, raw_len, vals[10], 64);
	CHECK(at != NULL, "r10's value is in the block");
	for (int v = 1; at != NULL && v < 256 && clen != (int) blen; v++)
	{
		at[30] = (uint8_t) (vals[10][30] ^ v);
		clen = LZ4_compress_default((const char *) raw, (char *) comp, (int) raw_len, (int) sizeof(comp));
	}
	CHECK(clen == (int) blen, "a change that compresses to the same size: %d, %llu", clen,
		  (unsigned long long) blen);
	if (at != NULL && clen == (int) blen)
	{
		memcpy(file, comp, blen);
		wc_put_fixed32(file + blen + 5, wc_crc32c(file, blen + 5));
		unlink(path);
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
		CHECK(fd >= 0 && write(fd, file, flen) == (ssize_t) flen && close(fd) == 0, "rewritten");
		CHECK(read_r10(dir, got, &ino2, &st) && memcmp(got, at, 64) == 0,
			  "the new file reads its own value (%s)", st.blocks_cached ? "from the cache!" : "not cached");
		printf("test_cache: the rewritten file %s the old inode number%s\n",
			   ino1 == ino2 ? "has" : "does not have",
			   wc_cache_verify_forced ? " (block checksums in the keys)" : "");
	}
	free(file);
	wc_block_cache_detach();
	munmap(region, size);
	test_rmdir(dir);
}

int
main(void)
{
	t_name = "test_cache";
	test_one_process();
	test_processes();
	test_scans();
	test_same_place();
	test_changed_block();
	/* the keys of a file system that does not tell inode generations */
	wc_cache_verify_forced = true;
	test_scans();
	test_same_place();
	test_changed_block();
	TEST_DONE();
}
