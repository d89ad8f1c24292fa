/*
 * test_shmt.c -- shared memtables (shmt.h; DESIGN.md, "Shared memtables").
 *
 * region: the region's size checks and layout.
 * sharing: two handles and a forked process on one store index each record once
 *   (the memtables' cell counts are the records', not twice them), keep none of
 *   it in their own memory, and read the same; a family made by one process is
 *   read by the others.
 * transactions: a record in progress is indexed by nobody until it commits, by
 *   the first process that sees it commit; an aborted one never; a reader that
 *   still sees a record in progress does not read it although another process
 *   indexed it.
 * owner death: a process dies holding a log's lock in the middle of indexing
 *   (here: after taking it); the next process takes the lock over and indexes
 *   the records, each once.
 * full: a region too small for a log: the slot fails and every process goes on
 *   with its own copy; nothing is lost or doubled; unreferenced logs are evicted
 *   for others.
 * release: a process exiting with a store open gives its references back with
 *   wc_shared_memtable_release (PostgreSQL's exit callback).
 * reopened: a store every handle closed keeps its slots (its identity); a copy
 *   of it, and a log of it cut back while it was closed, do not read them.
 * asked once: records indexed as committed are not resolved again by another
 *   handle; aborted ones are (remembered up to a number, then all from there).
 * jumped: a handle opening a log that others have read takes the slot's summary
 *   of the records below its frontier instead of reading them, and ends up as a
 *   handle that read them: the same cells, seqs, truncate point and remembered
 *   records (those a snapshot may not see yet); it reads them all when the
 *   summary dropped a record the horizon has not passed, or when more than it
 *   names are ingest records (whose files a handle opens itself).
 * flush and re-creation: a flushed log's slot is freed; a store made again in the
 *   same directory never reads the old store's slot.
 */
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>

#include "db_internal.h"
#include "memtable.h"
#include "shmt.h"
#include "testutil.h"

static wc_family_opts fams[] = {
	{"a", 0, 0, WC_COMPRESS_LZ4, 0},
	{"b", 0, 0, WC_COMPRESS_LZ4, 0},
};

/* Transaction states, shared with forked processes: tag t is tags[t]. */
static volatile wc_txn_state *tags;

/* How often each tag below 64 was resolved, in every process. */
static volatile uint64_t *calls;

static int
resolve(void *arg, uint64_t tag, wc_txn_state *state, wc_err *err)
{
	if (tag < 64)
		__atomic_add_fetch(&calls[tag], 1, __ATOMIC_RELAXED);
	*state = tag < 64 ? tags[tag] : WC_TXN_COMMITTED;
	return WC_OK;
}

/* A region of mib MiB, made this process's (the previous one detached). */
static void
new_region(size_t mib)
{
	size_t		size = wc_shared_memtable_region_size(mib << 20);
	wc_err		err;

	wc_shared_memtable_detach();
	wc_err_clear(&err);
	CHECK_OK(wc_shared_memtable_create(t_shared_map(size), size, &err), &err);
}

/* The horizon of handles opened with open_store_h, shared with forked processes. */
static volatile uint64_t *horizon_now;

static uint64_t
horizon(void *arg)
{
	return *horizon_now;
}

/* A store with a resolver; with a horizon (horizon_now) when snapshots is set. */
static wc_db *
open_store_opts(const char *dir, bool snapshots, size_t ingest_bytes)
{
	wc_open_opts o;
	wc_db	   *db = NULL;
	wc_err		err;

	memset(&o, 0, sizeof(o));
	o.families = fams;
	o.nfamilies = 2;
	o.create_if_missing = true;
	o.log_switch_bytes = 64 << 20;	/* one log for everything here */
	o.resolve = resolve;
	if (snapshots)
		o.horizon = horizon;
	o.ingest_bytes = ingest_bytes;
	wc_err_clear(&err);
	CHECK_OK(wc_db_open(dir, &o, &db, &err), &err);
	return db;
}

static wc_db *
open_store(const char *dir)
{
	return open_store_opts(dir, false, 0);
}

/* Rows first..first+n-1 of family fam, one record per `per` rows, with tag. */
static void
write_rows(wc_db *db, const char *fam, int first, int n, int per, uint64_t tag)
{
	wc_batch   *b = wc_batch_new();
	wc_err		err;

	wc_err_clear(&err);
	for (int i = first; i < first + n; i++)
	{
		char		row[32],
					val[64];

		snprintf(row, sizeof(row), "r%06d", i);
		snprintf(val, sizeof(val), "value of %.8s in %.4s, long enough to stay in the log", row, fam);
		CHECK_OK(wc_batch_put(b, fam, strlen(fam), row, strlen(row), "q", 1, 1, val, strlen(val),
							  &err), &err);
		if ((i - first) % per == per - 1 || i == first + n - 1)
		{
			CHECK_OK(wc_db_write(db, &b, 1, tag, false, &err), &err);
			wc_batch_clear(b);
		}
	}
	wc_batch_free(b);
}

/* Cells a scan whose snapshot does not see tag hidden (with a tag_visible) reads. */
static volatile uint64_t hidden_tag;

static int
tag_visible(void *arg, uint64_t tag, bool committed, bool *visible, wc_err *err)
{
	*visible = committed && tag != hidden_tag;
	return WC_OK;
}

/*
 * Cells a scan reads, and a hash of them (rows, values) in *hash (if not NULL);
 * with hiding, a scan whose snapshot does not see the writes of tag hide.
 */
static int
scan_cells(wc_db *db, uint64_t *hash, bool hiding, uint64_t hide)
{
	wc_scan_opts o;
	wc_scan    *s;
	wc_cell_view c;
	wc_err		err;
	int			n = 0,
				rc;
	uint64_t	h = 14695981039346656037ull;

	wc_err_clear(&err);
	wc_scan_opts_init(&o);
	if (hiding)
	{
		hidden_tag = hide;
		o.tag_visible = tag_visible;
	}
	CHECK_OK(wc_db_refresh(db, &err), &err);
	if (wc_scan_open(db, &o, &s, &err) != WC_OK)
	{
		CHECK(false, "scan: %s", err.msg);
		return -1;
	}
	while ((rc = wc_scan_next(s, &c, &err)) == 1)
	{
		n++;
		for (size_t i = 0; i < c.row_len; i++)
			h = (h ^ ((const uint8_t *) c.row)[i]) * 1099511628211ull;
		for (size_t i = 0; i < c.val_len; i++)
			h = (h ^ ((const uint8_t *) c.val)[i]) * 1099511628211ull;
	}
	CHECK(rc == 0, "scan: %s", err.msg);
	wc_scan_close(s);
	if (hash)
		*hash = h;
	return n;
}

static int
count_cells(wc_db *db, uint64_t *hash)
{
	return scan_cells(db, hash, false, 0);
}

static uint64_t
mem_cells(wc_db *db)
{
	wc_db_stats st;
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_db_get_stats(db, NULL, &st, &err), &err);
	return st.mem_cells;
}

static void
test_region(void)
{
	wc_err		err;
	void	   *p = t_shared_map(1 << 20);
	wc_shared_memtable_stats st;

	wc_err_clear(&err);
	CHECK(wc_shared_memtable_region_size(100) == 0, "too little for a region");
	CHECK(wc_shared_memtable_create(p, 1000, &err) == WC_INVALID, "a region too small: %s", err.msg);
	wc_err_clear(&err);
	CHECK(wc_shared_memtable_create((uint8_t *) p + 8, (1 << 20) - 8, &err) == WC_INVALID,
		  "a region not aligned");
	new_region(4);
	wc_shared_memtable_get_stats(&st);
	CHECK(st.chunks >= 28 && st.chunks <= 32 && st.chunks_free == st.chunks && st.logs == 0,
		  "4 MiB: %llu chunks, %llu free", (unsigned long long) st.chunks,
		  (unsigned long long) st.chunks_free);
	CHECK(st.chunk_bytes == WC_SHMT_CHUNK, "chunk bytes");
}

static void
test_sharing(void)
{
	char	   *dir = test_tmpdir("shmt-share");
	wc_db	   *w,
			   *r;
	uint64_t	hw,
				hr;
	wc_shared_memtable_stats st;
	pid_t		pid;
	int			status;

	new_region(16);
	w = open_store(dir);
	r = open_store(dir);
	write_rows(w, "a", 0, 1000, 10, 0);
	CHECK(count_cells(r, &hr) == 1000, "the reader reads 1000 cells");
	CHECK(count_cells(w, &hw) == 1000 && hw == hr, "the writer reads the same");
	CHECK(mem_cells(w) == 1000 && mem_cells(r) == 1000,
		  "each record indexed once: %llu / %llu cells", (unsigned long long) mem_cells(w),
		  (unsigned long long) mem_cells(r));
	CHECK(wc_db_mem_bytes(w) == 0 && wc_db_mem_bytes(r) == 0,
		  "nothing in either handle's own memory: %llu / %llu",
		  (unsigned long long) wc_db_mem_bytes(w), (unsigned long long) wc_db_mem_bytes(r));
	wc_shared_memtable_get_stats(&st);
	CHECK(st.logs == 1 && st.logs_failed == 0 && st.chunks_free < st.chunks,
		  "one log shared: %llu logs", (unsigned long long) st.logs);

	/* another process reads, and writes a family of its own */
	if ((pid = fork()) == 0)
	{
		wc_db	   *c = open_store(dir);
		uint64_t	h;
		int			bad = 0;

		bad |= count_cells(c, &h) != 1000 || h != hr;
		bad |= wc_db_mem_bytes(c) != 0;
		write_rows(c, "b", 0, 500, 7, 0);
		bad |= count_cells(c, NULL) != 1500;
		wc_db_close(c);
		_exit(bad || t_failed ? 1 : 0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child read and wrote (%d)", status);
	CHECK(count_cells(r, NULL) == 1500 && count_cells(w, NULL) == 1500,
		  "both handles read the child's family");
	CHECK(mem_cells(r) == 1500 && mem_cells(w) == 1500, "still each record once: %llu",
		  (unsigned long long) mem_cells(r));

	/* concurrent writers and readers in four processes */
	for (int p = 0; p < 4; p++)
		if (fork() == 0)
		{
			wc_db	   *c = open_store(dir);
			int			bad = 0;

			for (int round = 0; round < 20; round++)
			{
				int			n;

				if (p < 2)
					write_rows(c, p == 0 ? "a" : "b", 10000 + p * 100000 + round * 50, 50, 5, 0);
				n = count_cells(c, NULL);
				bad |= n < 1500 || n > 1500 + 2000;
			}
			wc_db_close(c);
			_exit(bad || t_failed ? 1 : 0);
		}
	for (int p = 0; p < 4; p++)
	{
		wait(&status);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a concurrent process (%d)", status);
	}
	CHECK(count_cells(r, &hr) == 3500 && count_cells(w, &hw) == 3500 && hr == hw,
		  "3500 cells in both handles");
	CHECK(mem_cells(r) == 3500, "each record once after the concurrent writes: %llu",
		  (unsigned long long) mem_cells(r));

	/* a flush frees the slot */
	{
		wc_err		err;

		wc_err_clear(&err);
		CHECK_OK(wc_db_flush(w, &err), &err);
		CHECK(count_cells(r, &hr) == 3500 && count_cells(w, &hw) == 3500 && hr == hw,
			  "3500 cells after the flush");
	}
	wc_db_close(w);
	wc_db_close(r);
	wc_shared_memtable_get_stats(&st);
	CHECK(st.logs <= 1 && st.chunks_free >= st.chunks - 1,
		  "the flushed log's memory is back: %llu logs, %llu of %llu chunks free",
		  (unsigned long long) st.logs, (unsigned long long) st.chunks_free,
		  (unsigned long long) st.chunks);
}

static void
test_transactions(void)
{
	char	   *dir = test_tmpdir("shmt-txn");
	wc_db	   *w,
			   *r;
	pid_t		pid;
	int			status;
	int			sync_pipe[2];
	char		byte;

	new_region(16);
	w = open_store(dir);
	r = open_store(dir);
	tags[5] = WC_TXN_IN_PROGRESS;
	tags[6] = WC_TXN_IN_PROGRESS;
	write_rows(w, "a", 0, 100, 100, 0);
	write_rows(w, "a", 100, 50, 50, 5);
	write_rows(w, "a", 200, 30, 30, 6);
	write_rows(w, "a", 300, 10, 10, 0);
	CHECK(count_cells(r, NULL) == 110, "in progress: not read (%d)", count_cells(r, NULL));
	CHECK(mem_cells(r) == 110, "in progress: not indexed");

	/* a child sees 5 commit and indexes it; r's view still holds it aside */
	if (pipe(sync_pipe) != 0)
		exit(2);
	if ((pid = fork()) == 0)
	{
		wc_db	   *c = open_store(dir);
		int			bad;

		tags[5] = WC_TXN_COMMITTED;
		bad = count_cells(c, NULL) != 160;
		if (write(sync_pipe[1], "x", 1) != 1)
			bad = 1;
		wc_db_close(c);
		_exit(bad || t_failed ? 1 : 0);
	}
	if (read(sync_pipe[0], &byte, 1) != 1)
		exit(2);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child read 160 cells");
	{
		/* a version of r built before r learns of the commit: the entries are in
		 * the shared memtable, r's view excludes them */
		wc_version *v;
		wc_err		err;

		wc_err_clear(&err);
		v = wc_db_version(r, &err);
		CHECK(v != NULL && v->held.n == 2, "r still holds both records aside");
		wc_version_unref(v);
	}
	tags[6] = WC_TXN_ABORTED;
	CHECK(count_cells(r, NULL) == 160, "r reads 5's cells once it sees it commit, not 6's");
	CHECK(mem_cells(r) == 160 && mem_cells(w) == 160, "5 indexed once, 6 never: %llu",
		  (unsigned long long) mem_cells(r));
	close(sync_pipe[0]);
	close(sync_pipe[1]);
	wc_db_close(w);
	wc_db_close(r);
	tags[5] = tags[6] = WC_TXN_COMMITTED;
}

static void
test_owner_death(void)
{
	char	   *dir = test_tmpdir("shmt-death");
	wc_db	   *w,
			   *r;
	pid_t		pid;
	int			status;

	new_region(16);
	w = open_store(dir);
	write_rows(w, "a", 0, 100, 10, 0);
	if ((pid = fork()) == 0)
	{
		/* dies holding the log's lock */
		wc_db	   *c = open_store(dir);
		wc_err		err;

		wc_err_clear(&err);
		if (wc_db_refresh(c, &err) != WC_OK || c->nlogs == 0 || c->logs[c->nlogs - 1]->shl == NULL)
			_exit(1);
		wc_shlog_lock(c->logs[c->nlogs - 1]->shl);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child took the lock and died");
	write_rows(w, "a", 100, 100, 10, 0);
	r = open_store(dir);
	CHECK(count_cells(r, NULL) == 200 && count_cells(w, NULL) == 200, "200 cells after the death");
	CHECK(mem_cells(r) == 200, "each once: %llu", (unsigned long long) mem_cells(r));
	wc_db_close(w);
	wc_db_close(r);
}

static void
test_idempotent(void)
{
	wc_memtable *mt = wc_memtable_new();
	wc_cell		c;
	wc_err		err;

	memset(&c, 0, sizeof(c));
	c.row = (const uint8_t *) "row";
	c.row_len = 3;
	c.qual = (const uint8_t *) "q";
	c.qual_len = 1;
	c.val = (const uint8_t *) "v";
	c.val_len = 1;
	c.ts = 5;
	c.seq = 9;
	c.type = WC_TYPE_PUT;
	wc_err_clear(&err);
	CHECK_OK(wc_memtable_add(mt, &c, &err), &err);
	CHECK_OK(wc_memtable_add(mt, &c, &err), &err);
	CHECK(wc_memtable_count(mt) == 2, "a private memtable takes an entry twice");
	wc_memtable_unref(mt);
	mt = wc_memtable_new();
	wc_memtable_set_idempotent(mt);
	for (int i = 0; i < 3; i++)
		CHECK_OK(wc_memtable_add(mt, &c, &err), &err);
	c.seq = 10;
	CHECK_OK(wc_memtable_add(mt, &c, &err), &err);
	CHECK(wc_memtable_count(mt) == 2, "an idempotent one once: %llu",
		  (unsigned long long) wc_memtable_count(mt));
	wc_memtable_unref(mt);
}

static void
test_full(void)
{
	char	   *dirs[6];
	wc_db	   *w,
			   *r;
	uint64_t	hw,
				hr;
	wc_shared_memtable_stats st;

	new_region(1);				/* 7 or 8 chunks of 128 KiB */
	for (int i = 0; i < 6; i++)
		dirs[i] = test_tmpdir("shmt-full");
	w = open_store(dirs[0]);
	r = open_store(dirs[0]);
	CHECK(count_cells(r, NULL) == 0, "empty");
	write_rows(w, "a", 0, 12000, 100, 0);	/* ~1.3 MB of nodes: more than the region */
	write_rows(w, "b", 0, 100, 100, 0);
	wc_shared_memtable_get_stats(&st);
	CHECK(count_cells(r, &hr) == 12100 && count_cells(w, &hw) == 12100 && hr == hw,
		  "every cell read by both after the slot failed");
	CHECK(mem_cells(r) == 12100 && mem_cells(w) == 12100, "each once in the copies: %llu / %llu",
		  (unsigned long long) mem_cells(r), (unsigned long long) mem_cells(w));
	CHECK(wc_db_mem_bytes(r) > 0 && wc_db_mem_bytes(w) > 0, "the copies are their own memory");
	wc_shared_memtable_get_stats(&st);
	CHECK(st.logs_failed == 0 && st.chunks_free == st.chunks,
		  "the failed slot is freed once nobody uses it: %llu failed, %llu of %llu free",
		  (unsigned long long) st.logs_failed, (unsigned long long) st.chunks_free,
		  (unsigned long long) st.chunks);
	write_rows(w, "a", 20000, 10, 10, 0);
	CHECK(count_cells(r, NULL) == 12110, "and writes go on");
	wc_db_close(w);
	wc_db_close(r);

	/* small stores, each closed after use: an unused log is evicted for the next */
	for (int i = 1; i < 6; i++)
	{
		w = open_store(dirs[i]);
		write_rows(w, "a", 0, 2000, 100, 0);
		CHECK(count_cells(w, NULL) == 2000, "store %d", i);
		wc_db_close(w);
	}
	wc_shared_memtable_get_stats(&st);
	CHECK(st.evictions > 0 && st.logs_failed == 0, "unused logs evicted: %llu",
		  (unsigned long long) st.evictions);
	for (int i = 1; i < 6; i++)
	{
		w = open_store(dirs[i]);
		CHECK(count_cells(w, NULL) == 2000, "store %d again", i);
		wc_db_close(w);
	}
}

/* A process that exits with its store still open gives its references back. */
static void
test_release(void)
{
	char	   *dir = test_tmpdir("shmt-release");
	wc_db	   *w;
	wc_shared_memtable_stats st;
	pid_t		pid;
	int			status;

	new_region(16);
	w = open_store(dir);
	write_rows(w, "a", 0, 100, 10, 0);
	if ((pid = fork()) == 0)
	{
		/* inherits w's handles (not its references), opens its own, exits open */
		wc_db	   *c = open_store(dir);
		int			bad = count_cells(c, NULL) != 100;

		wc_shared_memtable_release();
		_exit(bad || t_failed ? 1 : 0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child read and released");
	wc_db_close(w);
	wc_shared_memtable_get_stats(&st);
	CHECK(st.logs == 1 && st.logs_unused == 1, "nobody references the log now: %llu of %llu",
		  (unsigned long long) st.logs_unused, (unsigned long long) st.logs);
	if ((pid = fork()) == 0)
	{
		/* the same without the release: the child's references stay */
		wc_db	   *c = open_store(dir);

		(void) count_cells(c, NULL);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	wc_shared_memtable_get_stats(&st);
	/* alone on the store, the child made its shared page again (the same store id,
	 * the same slot): its references stay */
	CHECK(st.logs == 1 && st.logs_unused == 0,
		  "without it, a process's references outlive it: %llu of %llu unused",
		  (unsigned long long) st.logs_unused, (unsigned long long) st.logs);
}

/* The path of the store's log in buf (its first: 000001.log, or 000002.log). */
static void
log_path(const char *dir, char *buf, size_t len)
{
	snprintf(buf, len, "%s/000001.log", dir);
	if (access(buf, F_OK) != 0)
		snprintf(buf, len, "%s/000002.log", dir);
}

/* The size of the store's log. */
static uint64_t
log_size(const char *dir)
{
	char		path[1024];
	struct stat st;

	log_path(dir, path, sizeof(path));
	CHECK(stat(path, &st) == 0, "the store's log %s", path);
	return (uint64_t) st.st_size;
}

/*
 * Reopened: a store that every handle closed keeps its identity, so the next
 * process finds the log indexed (one slot, each record once), also in another
 * process; a copy of the store (its LOCK file another inode) gets its own; a log
 * cut back while the store was closed (a copy of it restored) is indexed again.
 */
static void
test_reopened(void)
{
	char	   *dir = test_tmpdir("shmt-reopen");
	char	   *copy = test_tmpdir("shmt-reopen-copy");
	char		cmd[2048],
				logname[1024];
	wc_db	   *w;
	wc_shared_memtable_stats st;
	uint64_t	first_end,
				h1,
				h2;
	pid_t		pid;
	int			status;

	new_region(16);
	w = open_store(dir);
	write_rows(w, "a", 0, 400, 100, 0);
	CHECK(count_cells(w, &h1) == 400, "400 cells written");
	wc_db_close(w);
	first_end = log_size(dir);

	w = open_store(dir);
	CHECK(count_cells(w, &h2) == 400 && h2 == h1, "read again after every handle closed");
	CHECK(mem_cells(w) == 400, "each record once: %llu cells", (unsigned long long) mem_cells(w));
	wc_shared_memtable_get_stats(&st);
	CHECK(st.logs == 1, "one slot for the log, not one per opening: %llu",
		  (unsigned long long) st.logs);
	wc_db_close(w);
	if ((pid = fork()) == 0)
	{
		wc_db	   *c = open_store(dir);
		int			bad = count_cells(c, NULL) != 400 || mem_cells(c) != 400;

		wc_db_close(c);
		_exit(bad || t_failed ? 1 : 0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "another process reads it once too");
	wc_shared_memtable_get_stats(&st);
	CHECK(st.logs == 1, "still one slot: %llu", (unsigned long long) st.logs);

	/* a copy, then the original writes more to the log of the same number */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s'", copy, dir, copy);
	CHECK(system(cmd) == 0, "copied the store");
	w = open_store(dir);
	write_rows(w, "a", 1000, 100, 100, 0);
	CHECK(count_cells(w, NULL) == 500, "the original has 500 cells");
	wc_db_close(w);
	w = open_store(copy);
	CHECK(count_cells(w, &h2) == 400 && h2 == h1, "the copy reads its own 400 cells: %d",
		  count_cells(w, NULL));
	wc_db_close(w);
	wc_shared_memtable_get_stats(&st);
	CHECK(st.logs == 2, "the copy has a slot of its own: %llu", (unsigned long long) st.logs);

	/* the original's log cut back to its first 400 rows while closed */
	log_path(dir, logname, sizeof(logname));
	CHECK(truncate(logname, (off_t) first_end) == 0, "cut the log back to %llu bytes",
		  (unsigned long long) first_end);
	w = open_store(dir);
	CHECK(count_cells(w, &h2) == 400 && h2 == h1, "the cut log reads 400 cells, not 500: %d",
		  count_cells(w, NULL));
	CHECK(mem_cells(w) == 400, "indexed again: %llu cells", (unsigned long long) mem_cells(w));
	write_rows(w, "a", 2000, 10, 10, 0);
	CHECK(count_cells(w, NULL) == 410, "and written to again");
	wc_db_close(w);
}

/*
 * Asked once: a handle reading records that another indexed as committed does
 * not resolve their tags again; aborted ones it does, and all from the first
 * aborted record the slot could not remember on.
 */
static void
test_asked_once(void)
{
	char	   *dir = test_tmpdir("shmt-asked");
	wc_db	   *w,
			   *r;
	wc_batch   *b;
	wc_err		err;
	uint64_t	c10,
				c11;

	new_region(16);
	tags[10] = WC_TXN_COMMITTED;
	tags[11] = WC_TXN_ABORTED;
	wc_db_jump_disabled = true; /* read every record: count what reading asks */
	w = open_store(dir);
	write_rows(w, "a", 0, 50, 10, 10);		/* 5 committed records */
	write_rows(w, "a", 100, 30, 10, 11);	/* 3 aborted */
	b = wc_batch_new();						/* and an aborted truncate */
	wc_err_clear(&err);
	CHECK_OK(wc_batch_truncate(b, &err), &err);
	CHECK_OK(wc_db_write(w, &b, 1, 11, false, &err), &err);
	wc_batch_free(b);
	write_rows(w, "a", 200, 20, 10, 0);		/* 2 untagged */
	CHECK(count_cells(w, NULL) == 70, "the writer reads 70 cells");
	c10 = calls[10];
	c11 = calls[11];
	r = open_store(dir);
	CHECK(count_cells(r, NULL) == 70, "another handle reads the same 70 (the truncate aborted)");
	CHECK(calls[10] == c10, "the committed records indexed were not asked about again: %llu",
		  (unsigned long long) (calls[10] - c10));
	CHECK(calls[11] == c11 + 4, "the 4 aborted ones were: %llu",
		  (unsigned long long) (calls[11] - c11));
	wc_db_close(r);

	/* more aborted records than the slot remembers, then committed ones */
	write_rows(w, "a", 1000, 70, 1, 11);	/* 70 aborted */
	write_rows(w, "a", 2000, 50, 10, 10);	/* 5 committed */
	CHECK(count_cells(w, NULL) == 120, "the writer reads 120 cells");
	c10 = calls[10];
	c11 = calls[11];
	r = open_store(dir);
	CHECK(count_cells(r, NULL) == 120, "another handle reads the same 120");
	CHECK(calls[11] == c11 + 74, "every aborted record was asked about: %llu",
		  (unsigned long long) (calls[11] - c11));
	CHECK(calls[10] == c10 + 5,
		  "the committed records after the aborted ones not remembered were, not those before: %llu",
		  (unsigned long long) (calls[10] - c10));
	wc_db_close(r);
	wc_db_close(w);
	wc_db_jump_disabled = false;
}

static int
recent_cmp(const void *a, const void *b)
{
	const wc_recent *x = a,
			   *y = b;

	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->seq_lo < y->seq_lo ? -1 : x->seq_lo > y->seq_lo;
}

/* Does a, which took a summary, hold what b, which read every record, holds? */
static void
check_same(wc_db *a, wc_db *b, const char *what)
{
	CHECK(a->applied_seq == b->applied_seq, "%s: applied seq %llu, reading %llu", what,
		  (unsigned long long) a->applied_seq, (unsigned long long) b->applied_seq);
	CHECK(a->truncate_seq == b->truncate_seq, "%s: truncate seq %llu, reading %llu", what,
		  (unsigned long long) a->truncate_seq, (unsigned long long) b->truncate_seq);
	CHECK(a->nlogs == b->nlogs, "%s: logs", what);
	for (int i = 0; i < a->nlogs && i < b->nlogs; i++)
	{
		wc_logmem  *x = a->logs[i],
				   *y = b->logs[i];

		CHECK(x->valid_end == y->valid_end && x->max_seq == y->max_seq &&
			  x->trunc == y->trunc && x->nheld == y->nheld && x->ningested == y->ningested,
			  "%s: log %d: end %llu/%llu, max seq %llu/%llu, trunc %llu/%llu, held %d/%d, ingested %d/%d",
			  what, i, (unsigned long long) x->valid_end, (unsigned long long) y->valid_end,
			  (unsigned long long) x->max_seq, (unsigned long long) y->max_seq,
			  (unsigned long long) x->trunc, (unsigned long long) y->trunc, x->nheld, y->nheld,
			  x->ningested, y->ningested);
		for (int j = 0; j < x->ningested && j < y->ningested; j++)
			CHECK(x->ingested[j].number == y->ingested[j].number,
				  "%s: log %d: the same ingested files in the same order", what, i);
		CHECK(x->recent.n == y->recent.n, "%s: log %d remembers %d records, reading %d", what,
			  i, x->recent.n, y->recent.n);
		if (x->recent.n == y->recent.n && x->recent.n > 0)
		{
			qsort(x->recent.items, (size_t) x->recent.n, sizeof(wc_recent), recent_cmp);
			qsort(y->recent.items, (size_t) y->recent.n, sizeof(wc_recent), recent_cmp);
			CHECK(memcmp(x->recent.items, y->recent.items,
						 sizeof(wc_recent) * (size_t) x->recent.n) == 0,
				  "%s: log %d: the same records remembered", what, i);
		}
	}
}

/*
 * A handle opened on dir (a log read by others) and one that reads every record
 * read the same cells (all, and with hide's records unseen) and hold the same;
 * returns the bytes the first did not read.
 */
static uint64_t
open_both(const char *dir, int cells, uint64_t hide, int cells_hiding, const char *what)
{
	wc_db	   *a,
			   *b;
	uint64_t	ha,
				hb,
				jumped;
	int			na,
				nb;

	a = open_store_opts(dir, true, 0);
	wc_db_jump_disabled = true;
	b = open_store_opts(dir, true, 0);
	wc_db_jump_disabled = false;
	na = count_cells(a, &ha);
	wc_db_jump_disabled = true;
	nb = count_cells(b, &hb);
	wc_db_jump_disabled = false;
	CHECK(na == cells && nb == cells && ha == hb, "%s: %d cells, reading every record %d, %d wanted",
		  what, na, nb, cells);
	CHECK(b->jumped_bytes == 0, "%s: the reading handle read", what);
	check_same(a, b, what);
	CHECK(scan_cells(a, NULL, true, hide) == cells_hiding && scan_cells(b, NULL, true, hide) == cells_hiding,
		  "%s: a snapshot that does not see tag %llu reads %d cells", what,
		  (unsigned long long) hide, cells_hiding);
	jumped = a->jumped_bytes;
	wc_db_close(a);
	wc_db_close(b);
	return jumped;
}

static void
test_jumped(void)
{
	char	   *dir = test_tmpdir("shmt-jump");
	wc_db	   *w;
	wc_batch   *b;
	wc_err		err;
	uint64_t	c20,
				jumped;

	new_region(16);
	tags[20] = WC_TXN_COMMITTED;
	tags[21] = WC_TXN_ABORTED;
	tags[22] = WC_TXN_COMMITTED;
	tags[23] = WC_TXN_IN_PROGRESS;
	*horizon_now = 22;			/* 20 and 21 are old, 22 on are remembered */
	w = open_store_opts(dir, true, 0);
	write_rows(w, "a", 0, 100, 10, 20);		/* 10 committed records, old */
	b = wc_batch_new();						/* a committed truncate, old */
	wc_err_clear(&err);
	CHECK_OK(wc_batch_truncate(b, &err), &err);
	CHECK_OK(wc_db_write(w, &b, 1, 20, false, &err), &err);
	wc_batch_free(b);
	write_rows(w, "a", 200, 30, 10, 21);	/* 3 aborted */
	write_rows(w, "b", 300, 40, 10, 22);	/* 4 committed, remembered */
	write_rows(w, "a", 400, 20, 10, 0);		/* 2 untagged */
	CHECK(count_cells(w, NULL) == 60, "the writer reads 60 cells");
	c20 = calls[20];
	jumped = open_both(dir, 60, 22, 20, "summary");
	CHECK(jumped > 10000, "a new handle did not read the records below the frontier: %llu bytes",
		  (unsigned long long) jumped);
	CHECK(calls[20] == c20, "nor ask about them");

	/* a record in progress holds the frontier back: read from there on */
	write_rows(w, "a", 500, 10, 10, 23);
	write_rows(w, "a", 600, 10, 10, 0);
	CHECK(count_cells(w, NULL) == 70, "the writer reads 70 cells");
	jumped = open_both(dir, 70, 22, 30, "in progress");
	CHECK(jumped > 10000, "a handle still jumps to the record in progress: %llu",
		  (unsigned long long) jumped);
	tags[23] = WC_TXN_COMMITTED;
	CHECK(count_cells(w, NULL) == 80, "the writer reads 80 cells once it commits");
	open_both(dir, 80, 23, 70, "committed since");

	/* more remembered records than the summary keeps: read all while the
	 * horizon has not passed the oldest, jump once it has */
	for (int i = 0; i < WC_SHLOG_RECENT; i++)
		write_rows(w, "a", 1000 + i, 1, 1, 64 + (uint64_t) i);
	CHECK(count_cells(w, NULL) == 80 + WC_SHLOG_RECENT, "the writer reads them");
	jumped = open_both(dir, 80 + WC_SHLOG_RECENT, 64, 79 + WC_SHLOG_RECENT, "dropped");
	CHECK(jumped == 0, "a record dropped from the summary is remembered: read all (%llu)",
		  (unsigned long long) jumped);
	*horizon_now = 64;
	jumped = open_both(dir, 80 + WC_SHLOG_RECENT, 64, 79 + WC_SHLOG_RECENT, "dropped and passed");
	CHECK(jumped > 10000, "the horizon passed what was dropped: jump (%llu)",
		  (unsigned long long) jumped);
	wc_db_close(w);

	/* ingest records: every handle opens their files itself, reading only them
	 * while the summary names them all, and every record past that */
	{
		char	   *dir2 = test_tmpdir("shmt-jump-ingest");
		int			cells = 70;

		*horizon_now = 22;
		w = open_store_opts(dir2, true, 1024);
		write_rows(w, "a", 0, 50, 10, 20);
		/* 100 cells in one write each: ingested (a new log follows each) */
		write_rows(w, "a", 100, 100, 100, 22);
		write_rows(w, "b", 300, 20, 10, 0);
		write_rows(w, "b", 400, 100, 100, 20);
		write_rows(w, "a", 600, 20, 10, 22);
		CHECK(count_cells(w, NULL) == 290, "the writer reads 290 cells");
		jumped = open_both(dir2, 290, 22, 170, "ingest");
		CHECK(jumped > 5000, "logs with an ingest record below the frontier: jumped %llu",
			  (unsigned long long) jumped);
		/* a bulk write switches to a new log after its record: many logs */
		for (int i = 0; i < WC_SHLOG_INGEST + 2; i++)
		{
			write_rows(w, "a", 5000 + 20 * i, 10, 10, 22);
			write_rows(w, "a", 1000 + 200 * i, 100, 100, 20);
		}
		cells = 290 + 110 * (WC_SHLOG_INGEST + 2);
		CHECK(count_cells(w, NULL) == cells, "the writer reads %d cells", cells);
		CHECK(w->nlogs >= WC_SHLOG_INGEST, "%d logs", w->nlogs);
		jumped = open_both(dir2, cells, 22, cells - 10 * (WC_SHLOG_INGEST + 2) - 120, "many logs");
		CHECK(jumped > 5000, "many logs with an ingest record each: jumped %llu",
			  (unsigned long long) jumped);
		wc_db_close(w);
	}

	/* an ingest record's file gone: a handle that would take the summary fails as
	 * one that reads every record does (it reads them, and finds the file missing) */
	{
		char	   *dir3 = test_tmpdir("shmt-jump-lost");
		wc_file_info *files = NULL;
		int			nfiles = 0,
					rcs[2];
		char		path[4200];
		wc_db	   *r;
		wc_open_opts o;

		w = open_store_opts(dir3, true, 1024);
		write_rows(w, "a", 0, 20, 10, 20);
		write_rows(w, "a", 100, 100, 100, 22);
		CHECK(count_cells(w, NULL) == 120, "the writer reads 120 cells");
		wc_err_clear(&err);
		CHECK_OK(wc_db_files(w, &files, &nfiles, &err), &err);
		CHECK(nfiles == 1, "the bulk write's one file: %d", nfiles);
		if (nfiles == 1)
		{
			snprintf(path, sizeof(path), "%s/%s", dir3, files[0].name);
			CHECK(unlink(path) == 0, "its file removed");
		}
		wc_file_info_free(files, nfiles);
		for (int jump = 0; jump < 2; jump++)
		{
			memset(&o, 0, sizeof(o));
			o.families = fams;
			o.nfamilies = 2;
			o.log_switch_bytes = 64 << 20;
			o.resolve = resolve;
			o.horizon = horizon;
			wc_db_jump_disabled = !jump;
			wc_err_clear(&err);
			r = NULL;
			rcs[jump] = wc_db_open(dir3, &o, &r, &err);
			if (r != NULL)
				wc_db_close(r);
		}
		wc_db_jump_disabled = false;
		CHECK(rcs[0] == WC_CORRUPT && rcs[1] == WC_CORRUPT,
			  "a lost ingested file: the open fails (%d reading, %d with the summary)", rcs[0], rcs[1]);
		wc_db_close(w);
	}

	/* more ingest records in one log than a summary names (a log switch after a
	 * bulk write failed): no summary */
	{
		wc_shlog   *s = wc_shlog_get(0x5eed, 1, 1 << 20, 1 << 20);
		wc_shlog_summary *sum = malloc(sizeof(wc_shlog_summary));
		wc_shlog_facts f;
		uint64_t	at = WC_LOG_HEADER_SIZE;
		bool		ok = true;

		CHECK(s != NULL && sum != NULL, "a slot");
		memset(&f, 0, sizeof(f));
		f.known = true;
		f.ingest = true;
		f.tag = 30;
		wc_shlog_lock(s);
		for (int i = 0; i < WC_SHLOG_INGEST && ok; i++, at += 100)
		{
			f.seq_lo = f.seq_hi = (uint64_t) i + 1;
			wc_shlog_mark_done(s, at, at + 100, &f);
			ok = wc_shlog_summarise(s, sum) && sum->ningest == (uint32_t) i + 1 &&
				sum->ingest_start[i] == at && sum->ingest_end[i] == at + 100 &&
				sum->frontier == at + 100 && sum->applied_seq == (uint64_t) i + 1;
		}
		CHECK(ok, "a summary names %d ingest records where they lie", WC_SHLOG_INGEST);
		wc_shlog_mark_done(s, at, at + 100, &f);
		CHECK(!wc_shlog_summarise(s, sum), "... and no more: then it is not known");
		wc_shlog_unlock(s);
		wc_shlog_unref(s, true);
		free(sum);
	}
	tags[20] = tags[21] = tags[22] = tags[23] = WC_TXN_COMMITTED;
}

static void
test_recreated(void)
{
	char	   *dir = test_tmpdir("shmt-again");
	wc_db	   *w;
	wc_err		err;

	new_region(16);
	w = open_store(dir);
	write_rows(w, "a", 0, 300, 10, 0);
	CHECK(count_cells(w, NULL) == 300, "the first store");
	wc_db_close(w);				/* its slot stays, unused */
	wc_err_clear(&err);
	CHECK_OK(wc_db_destroy(dir, &err), &err);
	w = open_store(dir);
	write_rows(w, "a", 1000, 100, 10, 0);
	wc_db_close(w);
	w = open_store(dir);		/* a new handle: reads the log, same number as before */
	CHECK(count_cells(w, NULL) == 100, "the store made again reads its own 100 cells: %d",
		  count_cells(w, NULL));
	wc_db_close(w);
}

int
main(void)
{
	t_name = "test_shmt";
	tags = t_shared_map(64 * sizeof(wc_txn_state));
	calls = t_shared_map(64 * sizeof(uint64_t));
	horizon_now = t_shared_map(sizeof(uint64_t));
	test_idempotent();
	test_region();
	test_sharing();
	test_transactions();
	test_owner_death();
	test_full();
	test_release();
	test_reopened();
	test_asked_once();
	test_jumped();
	test_recreated();
	TEST_DONE();
}
