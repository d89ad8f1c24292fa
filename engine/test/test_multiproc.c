/*
 * test_multiproc.c -- several processes on one store at once, and kill -9.
 *
 * concurrent: writer processes commit 3-cell rows while readers scan (every row
 * they see must be whole: atomic batches) and a maintenance process flushes and
 * compacts; afterwards every acknowledged row is there exactly once.
 *
 * crash: a writer (sync on) and a maintenance process are killed with SIGKILL at a
 * random moment, over and over; after each kill the store opens and every row
 * whose write returned is there, whole; no row is ever partial.
 *
 * flush backlog: a store of 300 logs (every write switches), flushed one log
 * at a time by another process while this one opens new handles: every open
 * succeeds and sees every row (an open that read every live log again after
 * each flush it raced with gave up after 20 tries: "could not open file").
 *
 * owner death: a process dies holding the write lock (the shared page's robust
 * mutex) after writing half a record, while another handle keeps the store open
 * (so the shared page survives): the next writer gets the lock, cuts the torn
 * tail off and writes; nothing acknowledged is lost.
 *
 * WIDECOL_LONG=1 runs more and longer rounds.
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "testutil.h"
#include "db_internal.h"

static wc_family_opts fams[] = {
	{"a", 0, 0, WC_COMPRESS_LZ4, 0},
	{"b", 0, 0, WC_COMPRESS_LZ4, 0},
	{"c", 0, 0, WC_COMPRESS_ZSTD, 0},
};

static int
open_store(const char *dir, wc_db **db, wc_err *err)
{
	wc_open_opts o;

	memset(&o, 0, sizeof(o));
	o.families = fams;
	o.nfamilies = 3;
	o.create_if_missing = true;
	o.log_switch_bytes = 16 << 10;
	o.block_bytes = 1024;
	o.l0_compaction_trigger = 3;
	wc_err_clear(err);
	return wc_db_open(dir, &o, db, err);
}

/* One row = one cell in each family, all with value "<row>". */
static int
write_row(wc_db *db, wc_batch *b, const char *row, bool sync, wc_err *err)
{
	int			rc = WC_OK;

	wc_batch_clear(b);
	for (int f = 0; f < 3 && rc == WC_OK; f++)
		rc = wc_batch_put(b, fams[f].name, 1, row, strlen(row), "q", 1, 1, row, strlen(row), err);
	if (rc == WC_OK)
		rc = wc_db_write(db, &b, 1, 0, sync, err);
	return rc;
}

/*
 * Scans everything; checks each row is whole (3 cells, values = row) and counts
 * rows.  Marks seen[] by (writer, n) parsed from "w<writer>-<n>".  Returns the
 * number of broken rows, or -1 on a scan error.
 */
static int
verify(wc_db *db, unsigned char *seen, int writers, int per_writer, int *rows, wc_err *err)
{
	wc_scan_opts o;
	wc_scan    *s;
	wc_cell_view c;
	char		cur[64] = "";
	int			cells = 0,
				broken = 0,
				rc;

	*rows = 0;
	wc_scan_opts_init(&o);
	if (wc_db_refresh(db, err) != WC_OK || wc_scan_open(db, &o, &s, err) != WC_OK)
		return -1;
	for (;;)
	{
		rc = wc_scan_next(s, &c, err);
		if (rc != 1 || c.row_len != strlen(cur) || memcmp(c.row, cur, c.row_len) != 0)
		{
			if (cur[0])
			{
				int			w,
							n;

				(*rows)++;
				if (cells != 3)
					broken++;
				if (seen && sscanf(cur, "w%d-%d", &w, &n) == 2 && w < writers && n < per_writer)
				{
					if (seen[w * per_writer + n])
						broken++;	/* twice */
					seen[w * per_writer + n] = 1;
				}
			}
			if (rc != 1)
				break;
			snprintf(cur, sizeof(cur), "%.*s", (int) c.row_len, c.row);
			cells = 0;
		}
		cells++;
		if (c.val_len != c.row_len || memcmp(c.val, c.row, c.row_len) != 0)
			broken++;
	}
	wc_scan_close(s);
	return rc < 0 ? -1 : broken;
}

static void
test_concurrent(bool long_mode)
{
	char	   *dir = test_tmpdir("mp");
	int			writers = 4,
				per_writer = long_mode ? 3000 : 600;
	pid_t		pids[8];
	int			np = 0;
	int			pipes[4][2];
	unsigned char *acked = calloc(writers * per_writer, 1);
	unsigned char *seen = calloc(writers * per_writer, 1);
	wc_db	   *db;
	wc_err		err;
	int			rows,
				broken,
				status,
				missing = 0;

	CHECK_OK(open_store(dir, &db, &err), &err);
	wc_db_close(db);

	for (int w = 0; w < writers; w++)
	{
		if (pipe(pipes[w]) != 0)
			exit(2);
		if ((pids[np++] = fork()) == 0)
		{
			wc_batch   *b = wc_batch_new();

			close(pipes[w][0]);
			if (open_store(dir, &db, &err) != WC_OK)
				_exit(3);
			for (int n = 0; n < per_writer; n++)
			{
				char		row[32];

				snprintf(row, sizeof(row), "w%d-%d", w, n);
				if (write_row(db, b, row, n % 50 == 0, &err) != WC_OK)
				{
					fprintf(stderr, "writer %d: %s\n", w, err.msg);
					_exit(4);
				}
				if (write(pipes[w][1], &n, sizeof(n)) != sizeof(n))
					_exit(5);
			}
			wc_db_close(db);
			_exit(0);
		}
		close(pipes[w][1]);
	}
	/* two readers checking atomicity while it all happens */
	for (int r = 0; r < 2; r++)
		if ((pids[np++] = fork()) == 0)
		{
			int			bad = 0;

			if (open_store(dir, &db, &err) != WC_OK)
				_exit(3);
			for (int i = 0; i < (long_mode ? 200 : 40); i++)
			{
				broken = verify(db, NULL, writers, per_writer, &rows, &err);
				if (broken != 0)
				{
					fprintf(stderr, "reader: broken=%d %s\n", broken, err.msg);
					bad = 1;
					break;
				}
			}
			wc_db_close(db);
			_exit(bad ? 6 : 0);
		}
	/* maintenance */
	pid_t		maint = fork();

	if (maint == 0)
	{
		if (open_store(dir, &db, &err) != WC_OK)
			_exit(3);
		for (int i = 0;; i++)
		{
			int			rc = (i % 5 == 4) ? wc_db_compact(db, &err) :
				(i % 2) ? wc_db_flush(db, &err) : wc_db_maintain(db, &err);

			if (rc != WC_OK && rc != WC_BUSY)
			{
				fprintf(stderr, "maintenance: %s\n", err.msg);
				_exit(7);
			}
			wc_err_clear(&err);
			usleep(2000);
			if (getppid() == 1)
				_exit(0);
			/* stop when the parent says so */
			{
				char		stop[4200];

				snprintf(stop, sizeof(stop), "%s.stop", dir);
				if (access(stop, F_OK) == 0)
					break;
			}
		}
		wc_db_close(db);
		_exit(0);
	}

	for (int w = 0; w < writers; w++)
	{
		int			n;

		while (read(pipes[w][0], &n, sizeof(n)) == sizeof(n))
			acked[w * per_writer + n] = 1;
		close(pipes[w][0]);
	}
	for (int i = 0; i < np; i++)
	{
		waitpid(pids[i], &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d exited with %d", i,
			  WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
	}
	{
		char		stop[4200];
		FILE	   *f;

		snprintf(stop, sizeof(stop), "%s.stop", dir);
		f = fopen(stop, "w");
		if (f)
			fclose(f);
		waitpid(maint, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "maintenance exited with %d",
			  WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
		unlink(stop);
	}

	CHECK_OK(open_store(dir, &db, &err), &err);
	broken = verify(db, seen, writers, per_writer, &rows, &err);
	CHECK(broken == 0, "%d broken or duplicated rows (%s)", broken, err.msg);
	for (int i = 0; i < writers * per_writer; i++)
		if (acked[i] && !seen[i])
			missing++;
	CHECK(missing == 0, "%d acknowledged rows missing", missing);
	CHECK(rows == writers * per_writer, "rows %d, want %d", rows, writers * per_writer);
	wc_err_clear(&err);
	CHECK_OK(wc_db_compact(db, &err), &err);
	memset(seen, 0, writers * per_writer);
	broken = verify(db, seen, writers, per_writer, &rows, &err);
	CHECK(broken == 0 && rows == writers * per_writer, "after compaction: broken %d rows %d", broken, rows);
	wc_db_close(db);
	printf("concurrent: %d writers x %d rows, 2 readers, 1 maintainer: ok\n", writers, per_writer);
	free(acked);
	free(seen);
	test_rmdir(dir);
}

static void
test_crash(bool long_mode)
{
	char	   *dir = test_tmpdir("crash");
	int			cycles = long_mode ? 100 : 12;
	int			per_cycle = 100000;
	unsigned char *acked = calloc((size_t) cycles * per_cycle, 1);
	unsigned char *seen = calloc((size_t) cycles * per_cycle, 1);
	uint64_t	rng = (uint64_t) time(NULL) | 1;
	long		total_acked = 0;
	wc_db	   *db;
	wc_err		err;

	for (int cycle = 0; cycle < cycles; cycle++)
	{
		int			p[2];
		pid_t		writer,
					maint;
		int			n,
					status,
					rows,
					broken,
					missing = 0;

		if (pipe(p) != 0)
			exit(2);
		if ((writer = fork()) == 0)
		{
			wc_batch   *b = wc_batch_new();

			close(p[0]);
			if (open_store(dir, &db, &err) != WC_OK)
			{
				fprintf(stderr, "crash writer open: %s\n", err.msg);
				_exit(3);
			}
			for (n = 0; n < per_cycle; n++)
			{
				char		row[32];

				/* cycle number as the "writer" so rows never repeat */
				snprintf(row, sizeof(row), "w%d-%d", cycle, n);
				if (write_row(db, b, row, true, &err) != WC_OK)
					_exit(4);
				if (write(p[1], &n, sizeof(n)) != sizeof(n))
					_exit(5);
			}
			_exit(0);
		}
		close(p[1]);
		if ((maint = fork()) == 0)
		{
			if (open_store(dir, &db, &err) != WC_OK)
				_exit(3);
			for (int i = 0;; i++)
			{
				int			rc = (i % 3 == 2) ? wc_db_compact(db, &err) : wc_db_flush(db, &err);

				if (rc != WC_OK && rc != WC_BUSY)
				{
					fprintf(stderr, "crash maintenance: %s\n", err.msg);
					_exit(7);
				}
				wc_err_clear(&err);
			}
		}
		/* let them run 20-120 ms, then kill both at once */
		usleep((useconds_t) (20000 + test_rand(&rng) % 100000));
		kill(writer, SIGKILL);
		kill(maint, SIGKILL);
		while (read(p[0], &n, sizeof(n)) == sizeof(n))
		{
			acked[(size_t) cycle * per_cycle + n] = 1;
			total_acked++;
		}
		close(p[0]);
		waitpid(writer, &status, 0);
		CHECK(WIFSIGNALED(status), "cycle %d: writer ended before the kill (status %d)", cycle, status);
		waitpid(maint, &status, 0);
		CHECK(WIFSIGNALED(status), "cycle %d: maintenance ended before the kill (status %d)", cycle, status);

		if (open_store(dir, &db, &err) != WC_OK)
		{
			CHECK(0, "cycle %d: open after kill: %s", cycle, err.msg);
			break;
		}
		memset(seen, 0, (size_t) cycles * per_cycle);
		broken = verify(db, seen, cycles, per_cycle, &rows, &err);
		CHECK(broken == 0, "cycle %d: %d broken rows (%s)", cycle, broken, err.msg);
		for (size_t i = 0; i < (size_t) cycles * per_cycle; i++)
			if (acked[i] && !seen[i])
				missing++;
		CHECK(missing == 0, "cycle %d: %d acknowledged rows missing", cycle, missing);
		wc_db_close(db);
	}
	printf("crash: %d kill -9 cycles, %ld acknowledged rows verified after each\n", cycles, total_acked);
	free(acked);
	free(seen);
	test_rmdir(dir);
}

/* The newest log of dir (its active log), as a path. */
static void
active_log(const char *dir, char *path, size_t size)
{
	char	  **names;
	int			n;
	wc_err		err;
	const char *best = NULL;

	wc_err_clear(&err);
	if (wc_env_list(dir, &names, &n, &err) != WC_OK)
		exit(2);
	for (int i = 0; i < n; i++)
		if (strstr(names[i], ".log") && (best == NULL || strcmp(names[i], best) > 0))
			best = names[i];
	snprintf(path, size, "%s/%s", dir, best ? best : "none");
	wc_env_free_list(names, n);
}

static void
test_flush_backlog(void)
{
	char	   *dir = test_tmpdir("backlog");
	wc_open_opts o;
	wc_db	   *db;
	wc_batch   *b = wc_batch_new();
	wc_err		err;
	int			nrows = 300,
				opens = 0,
				rows,
				broken,
				status;
	pid_t		flusher;

	memset(&o, 0, sizeof(o));
	o.families = fams;
	o.nfamilies = 3;
	o.create_if_missing = true;
	o.log_switch_bytes = 1;		/* every write closes its log */
	wc_err_clear(&err);
	CHECK(wc_db_open(dir, &o, &db, &err) == WC_OK, "open: %s", err.msg);
	for (int i = 0; i < nrows; i++)
	{
		char		row[32];

		snprintf(row, sizeof(row), "w0-%d", i);
		CHECK(write_row(db, b, row, false, &err) == WC_OK, "write %d: %s", i, err.msg);
	}
	CHECK(db->nlogs >= nrows, "%d live logs, wanted %d or more", db->nlogs, nrows);
	wc_db_close(db);

	if ((flusher = fork()) == 0)
	{
		if (wc_db_open(dir, &o, &db, &err) != WC_OK || wc_db_flush(db, &err) != WC_OK)
		{
			fprintf(stderr, "flusher: %s\n", err.msg);
			_exit(1);
		}
		wc_db_close(db);
		_exit(0);
	}
	while (waitpid(flusher, &status, WNOHANG) == 0)
	{
		wc_err_clear(&err);
		CHECK(wc_db_open(dir, &o, &db, &err) == WC_OK, "open %d during the flush: %s", opens, err.msg);
		broken = verify(db, NULL, 1, nrows, &rows, &err);
		CHECK(broken == 0 && rows == nrows, "open %d during the flush: %d rows, %d broken (%s)",
			  opens, rows, broken, err.msg);
		wc_db_close(db);
		opens++;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the flusher's status %d", status);
	CHECK(opens > 0, "no open during the flush");
	printf("# flush backlog: %d opens of the store while another process flushed %d logs\n",
		   opens, nrows);
	wc_batch_free(b);
	test_rmdir(dir);
}

static void
test_owner_death(void)
{
	char	   *dir = test_tmpdir("owner");
	wc_db	   *keeper,
			   *db;
	wc_batch   *b = wc_batch_new();
	wc_err		err;
	int			rows,
				broken,
				status;
	pid_t		pid;

	CHECK(open_store(dir, &keeper, &err) == WC_OK, "open: %s", err.msg);
	CHECK(write_row(keeper, b, "w0-0", false, &err) == WC_OK, "write: %s", err.msg);
	for (int round = 0; round < 3; round++)
	{
		char		row[32];

		if ((pid = fork()) == 0)
		{
			char		path[4096];
			FILE	   *f;

			if (open_store(dir, &db, &err) != WC_OK ||
				wc_db_lock(db, WC_LOCK_WRITE, true, &err) != WC_OK)
				_exit(3);
			/* half a record: a length and some bytes, then death, lock held */
			active_log(dir, path, sizeof(path));
			if ((f = fopen(path, "ab")) == NULL)
				_exit(4);
			fwrite("\x40\x00\x00\x00garbage-of-a-torn-record", 1, 27 + round, f);
			fclose(f);
			if (round == 2)
				kill(getpid(), SIGKILL);
			_exit(0);
		}
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) ? WEXITSTATUS(status) == 0 : WTERMSIG(status) == SIGKILL,
			  "round %d: child status %d", round, status);
		/* the write lock's owner is dead: the keeper writes on */
		snprintf(row, sizeof(row), "w0-%d", round + 1);
		CHECK(write_row(keeper, b, row, false, &err) == WC_OK, "round %d: write after owner death: %s",
			  round, err.msg);
		broken = verify(keeper, NULL, 1, 10, &rows, &err);
		CHECK(broken == 0 && rows == round + 2, "round %d: keeper sees %d rows, %d broken (%s)",
			  round, rows, broken, err.msg);
		/* and another handle, opened while the keeper holds the page */
		CHECK(open_store(dir, &db, &err) == WC_OK, "round %d: open: %s", round, err.msg);
		broken = verify(db, NULL, 1, 10, &rows, &err);
		CHECK(broken == 0 && rows == round + 2, "round %d: new handle sees %d rows, %d broken (%s)",
			  round, rows, broken, err.msg);
		wc_db_close(db);
	}
	wc_db_close(keeper);
	/* alone again: the page is rebuilt, the data is all there */
	CHECK(open_store(dir, &db, &err) == WC_OK, "reopen: %s", err.msg);
	broken = verify(db, NULL, 1, 10, &rows, &err);
	CHECK(broken == 0 && rows == 4, "reopened: %d rows, %d broken (%s)", rows, broken, err.msg);
	wc_db_close(db);
	wc_batch_free(b);
	test_rmdir(dir);
}

int
main(void)
{
	bool		long_mode = getenv("WIDECOL_LONG") && strcmp(getenv("WIDECOL_LONG"), "1") == 0;

	t_name = "test_multiproc";
	test_owner_death();
	test_flush_backlog();
	test_concurrent(long_mode);
	test_crash(long_mode);
	TEST_DONE();
}
