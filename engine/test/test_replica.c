/*
 * test_replica.c -- every change a handle makes to its store, reported (on_change)
 * and made again in another directory (wc_replica), gives the same files and the
 * same cells (DESIGN.md, "Replication"):
 *
 *  - a replica fed every change of a random workload (puts, deletes, truncates,
 *    bulk writes, log switches, flushes, compactions, orphan removal) holds the
 *    original's files byte for byte, and a read-only handle of it reads what the
 *    original read at each point of the workload;
 *  - the changes applied twice change nothing;
 *  - a copy of the files taken while the workload runs (one file at a time, as
 *    pg_basebackup copies), brought forward by the changes made since the copy
 *    began, converges to the original;
 *  - a read-only handle changes nothing: writes, flush, compact and maintain are
 *    refused, and a store that does not exist yet reads as empty, creating nothing,
 *    until it appears;
 *  - a change the callback refuses is not made, and fails the operation;
 *  - a record appended but never reported as made is cut by a replica brought
 *    forward over the store's own directory (crash recovery), and only it.
 */
#include <dirent.h>
#include <fcntl.h>

#include "testutil.h"

typedef struct change
{
	int			kind;
	char		file[64];
	uint64_t	offset;
	uint8_t    *bytes;
	size_t		len;
} change;

static change *changes;
static size_t nchanges,
			maxchanges;
static int	refuse_after = -1;	/* refuse the change of this index (-1: none) */
static bool change_open;		/* a change was reported and is not done yet */
static size_t ndone;			/* on_change_done calls */

static int
record(void *arg, const wc_change *c, wc_err *err)
{
	change	   *r;

	(void) arg;
	CHECK(!change_open, "change %zu (%s) reported before change %zu was done", nchanges,
		  c->file, nchanges - 1);
	if (refuse_after >= 0 && nchanges == (size_t) refuse_after)
	{
		snprintf(err->msg, sizeof(err->msg), "refused by the test");
		err->code = WC_CALLBACK;
		return WC_CALLBACK;
	}
	if (nchanges == maxchanges)
	{
		maxchanges = maxchanges ? maxchanges * 2 : 1024;
		changes = realloc(changes, maxchanges * sizeof(change));
	}
	r = &changes[nchanges++];
	r->kind = c->kind;
	snprintf(r->file, sizeof(r->file), "%s", c->file);
	r->offset = c->offset;
	r->len = 0;
	for (int i = 0; i < c->nparts; i++)
		r->len += c->parts[i].len;
	r->bytes = malloc(r->len ? r->len : 1);
	for (size_t i = 0, at = 0; i < (size_t) c->nparts; i++)
	{
		memcpy(r->bytes + at, c->parts[i].data, c->parts[i].len);
		at += c->parts[i].len;
	}
	change_open = true;
	return WC_OK;
}

/* on_change_done: once after each change whose report succeeded, before the next report */
static void
record_done(void *arg)
{
	(void) arg;
	CHECK(change_open, "a change done (%zu) that was not reported, or done twice", ndone);
	change_open = false;
	ndone++;
}

static int
apply(wc_replica *r, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
	{
		wc_slice	s = {changes[i].bytes, changes[i].len};
		wc_change	c = {changes[i].kind, changes[i].file, changes[i].offset, &s, 1};
		wc_err		err;
		int			rc;

		wc_err_clear(&err);
		if ((rc = wc_replica_apply(r, &c, &err)) != WC_OK)
		{
			CHECK_OK(rc, &err);
			return rc;
		}
	}
	return WC_OK;
}

static wc_family_opts fams[] = {
	{"a", 2, 0, WC_COMPRESS_LZ4, 0},
	{"b", 0, 0, WC_COMPRESS_NONE, 0},
};

/* Every visible cell of the store, as text, in order. */
static char *
dump(wc_db *db)
{
	wc_scan_opts so;
	wc_scan    *scan;
	wc_cell_view c;
	wc_err		err;
	size_t		cap = 4096,
				len = 0;
	char	   *out = malloc(cap);
	int			rc;

	out[0] = '\0';
	wc_err_clear(&err);
	rc = wc_db_refresh(db, &err);
	CHECK_OK(rc, &err);
	wc_scan_opts_init(&so);
	if (wc_scan_open(db, &so, &scan, &err) != WC_OK)
	{
		CHECK(0, "scan: %s", err.msg);
		return out;
	}
	while ((rc = wc_scan_next(scan, &c, &err)) == 1)
	{
		size_t		need = len + c.row_len + c.family_len + c.qual_len + c.val_len + 64;

		if (need > cap)
		{
			while (cap < need)
				cap *= 2;
			out = realloc(out, cap);
		}
		len += (size_t) snprintf(out + len, cap - len, "%.*s|%.*s|%.*s|%lld|%.*s\n",
								 (int) c.row_len, (const char *) c.row, (int) c.family_len,
								 c.family, (int) c.qual_len, (const char *) c.qual,
								 (long long) c.ts, (int) c.val_len, (const char *) c.val);
	}
	CHECK(rc == 0, "scan ended with %d: %s", rc, err.msg);
	wc_scan_close(scan);
	return out;
}

static uint8_t *
slurp(const char *dir, const char *name, size_t *len)
{
	char		path[4200];
	FILE	   *f;
	uint8_t    *buf;
	long		n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t) n : 1);
	*len = fread(buf, 1, (size_t) n, f);
	fclose(f);
	return buf;
}

static bool
copy_file(const char *from, const char *to, const char *name)
{
	size_t		len;
	uint8_t    *buf = slurp(from, name, &len);
	char		path[4200];
	FILE	   *f;

	if (buf == NULL)
		return false;			/* removed meanwhile: a copy skips it */
	snprintf(path, sizeof(path), "%s/%s", to, name);
	f = fopen(path, "wb");
	fwrite(buf, 1, len, f);
	fclose(f);
	free(buf);
	return true;
}

/* The names of dir's files but LOCK and MANIFEST.tmp, sorted; count in *n. */
static char **
names_of(const char *dir, int *n)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;
	char	  **names = NULL;

	*n = 0;
	if (d == NULL)
		return NULL;
	while ((e = readdir(d)) != NULL)
	{
		if (e->d_name[0] == '.' || strcmp(e->d_name, "LOCK") == 0 ||
			strcmp(e->d_name, "MANIFEST.tmp") == 0)
			continue;
		names = realloc(names, sizeof(char *) * (*n + 1));
		names[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	for (int i = 0; i < *n; i++)
		for (int j = i + 1; j < *n; j++)
			if (strcmp(names[i], names[j]) > 0)
			{
				char	   *t = names[i];

				names[i] = names[j];
				names[j] = t;
			}
	return names;
}

static void
free_names(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Same file names, same bytes. */
static void
check_same_files(const char *a, const char *b, const char *what)
{
	int			na,
				nb;
	char	  **A = names_of(a, &na),
			  **B = names_of(b, &nb);
	int			differ = 0;

	CHECK(na == nb, "%s: %d files against %d", what, na, nb);
	for (int i = 0; i < na && i < nb; i++)
	{
		size_t		la,
					lb;
		uint8_t    *x,
				   *y;

		if (strcmp(A[i], B[i]) != 0)
		{
			differ++;
			fprintf(stderr, "%s: file %s against %s\n", what, A[i], B[i]);
			continue;
		}
		x = slurp(a, A[i], &la);
		y = slurp(b, B[i], &lb);
		if (x == NULL || y == NULL || la != lb || memcmp(x, y, la) != 0)
		{
			differ++;
			fprintf(stderr, "%s: %s differs (%zu bytes against %zu)\n", what, A[i], la, lb);
		}
		free(x);
		free(y);
	}
	CHECK(differ == 0, "%s: %d files differ", what, differ);
	free_names(A, na);
	free_names(B, nb);
}

static wc_db *
open_store(const char *dir, bool read_only, bool report)
{
	wc_open_opts oo;
	wc_db	   *db = NULL;
	wc_err		err;
	int			rc;

	memset(&oo, 0, sizeof(oo));
	oo.families = fams;
	oo.nfamilies = 2;
	oo.create_if_missing = true;
	oo.read_only = read_only;
	oo.log_switch_bytes = 4096;
	oo.ingest_bytes = 3000;
	oo.l0_compaction_trigger = 3;
	if (report)
	{
		oo.on_change = record;
		oo.on_change_done = record_done;
	}
	wc_err_clear(&err);
	rc = wc_db_open(dir, &oo, &db, &err);
	CHECK_OK(rc, &err);
	return db;
}

/* One random step of the workload on db. */
static void
step(wc_db *db, uint64_t *rnd, int i)
{
	wc_batch   *b = wc_batch_new();
	wc_err		err;
	int			rc = WC_OK;
	int			what = (int) (test_rand(rnd) % 100);
	char		row[32],
				qual[16],
				val[64];

	wc_err_clear(&err);
	if (what < 3)
		rc = wc_db_flush(db, &err);
	else if (what < 5)
		rc = wc_db_compact(db, &err);
	else if (what < 8)
		rc = wc_db_maintain(db, &err);
	else if (what < 9)
		rc = wc_db_rotate_log(db, &err);	/* PostgreSQL: the first write after a start */
	else
	{
		int			n = what < 12 ? 60 : 1 + (int) (test_rand(rnd) % 12);

		for (int k = 0; k < n && rc == WC_OK; k++)
		{
			const char *f = (test_rand(rnd) & 1) ? "a" : "b";
			int			op = (int) (test_rand(rnd) % 20);

			snprintf(row, sizeof(row), "row%03d", (int) (test_rand(rnd) % 150));
			snprintf(qual, sizeof(qual), "q%d", (int) (test_rand(rnd) % 4));
			snprintf(val, sizeof(val), "v%d-%d-%d", i, k, (int) (test_rand(rnd) % 1000));
			if (op == 0)
				rc = wc_batch_delete_column(b, f, 1, row, strlen(row), qual, strlen(qual), &err);
			else if (op == 1)
				rc = wc_batch_delete_row(b, fams, 2, row, strlen(row), &err);
			else if (op == 2)
				rc = wc_batch_delete_version(b, f, 1, row, strlen(row), qual, strlen(qual),
											 (int64_t) (test_rand(rnd) % 5), &err);
			else
				rc = wc_batch_put(b, f, 1, row, strlen(row), qual, strlen(qual),
								  (int64_t) (test_rand(rnd) % 5), val, strlen(val), &err);
		}
		if (rc == WC_OK && i % 97 == 50)
			rc = wc_batch_truncate(b, &err);
		/* tagged writes of 60 cells are bulk writes (ingest_bytes 3000) */
		/* a third of the writes made durable afterwards (PostgreSQL's checkpoint syncer) */
		if (rc == WC_OK && i % 3 == 0)
		{
			size_t		before = nchanges;

			rc = wc_db_write(db, &b, 1, (uint64_t) (what < 12 ? i + 1 : 0), false, &err);
			if (rc == WC_OK)
				rc = wc_db_sync_logs(db, &err);
			for (size_t k = before; rc == WC_OK && k < nchanges; k++)
				if (changes[k].kind == WC_CHANGE_SYNC && strstr(changes[k].file, ".log"))
					before = SIZE_MAX;
			CHECK(rc != WC_OK || before == SIZE_MAX, "wc_db_sync_logs reported a SYNC of a log");
		}
		else if (rc == WC_OK)
			rc = wc_db_write(db, &b, 1, (uint64_t) (what < 12 ? i + 1 : 0), true, &err);
	}
	CHECK(rc == WC_OK || rc == WC_BUSY, "step %d (%d): %s", i, what, err.msg);
	wc_batch_free(b);
}

#define NSTEPS		600
#define NPOINTS		12

int
main(void)
{
	const char *a = test_tmpdir("replica-a");
	const char *b = test_tmpdir("replica-b");
	const char *c = test_tmpdir("replica-c");
	const char *d = test_tmpdir("replica-d");
	char		absent[4200];
	uint64_t	rnd = 42;
	size_t		point_changes[NPOINTS];
	char	   *point_dump[NPOINTS];
	int			npoints = 0;
	size_t		backup_from = 0;
	char	  **tocopy = NULL;
	int			ntocopy = 0,
				copied = 0;
	wc_db	   *db,
			   *ro;
	wc_replica *r;
	wc_err		err;
	int			rc;

	t_name = "test_replica";
	snprintf(absent, sizeof(absent), "%s/not-yet", b);

	/* the workload, every change recorded; a copy of the files is taken during it */
	db = open_store(a, false, true);
	for (int i = 0; i < NSTEPS; i++)
	{
		step(db, &rnd, i);
		if (i % (NSTEPS / NPOINTS) == NSTEPS / NPOINTS - 1 && npoints < NPOINTS)
		{
			point_changes[npoints] = nchanges;
			point_dump[npoints++] = dump(db);
		}
		if (i == NSTEPS / 3)
		{
			/* pg_basebackup begins: the changes from here on are replayed */
			backup_from = nchanges;
			tocopy = names_of(a, &ntocopy);
			tocopy = realloc(tocopy, sizeof(char *) * (ntocopy + 1));
			tocopy[ntocopy++] = strdup("LOCK");
		}
		/* ... and copies a file now and then while the workload goes on */
		if (tocopy && copied < ntocopy && i % 7 == 0)
			copy_file(a, c, tocopy[copied++]);
	}
	while (tocopy && copied < ntocopy)
		copy_file(a, c, tocopy[copied++]);
	CHECK(nchanges > 1000, "the workload made %zu changes", nchanges);
	{
		wc_batch   *bt = wc_batch_new();
		size_t		before;
		bool		manifest = false;

		/* rotating a log that holds a record: a new log, named by a new MANIFEST */
		wc_err_clear(&err);
		rc = wc_batch_put(bt, "a", 1, "rot", 3, "q", 1, 1, "v", 1, &err);
		CHECK_OK(rc, &err);
		rc = wc_db_write(db, &bt, 1, 0, true, &err);
		CHECK_OK(rc, &err);
		before = nchanges;
		rc = wc_db_rotate_log(db, &err);
		CHECK_OK(rc, &err);
		for (size_t k = before; k < nchanges; k++)
			manifest |= changes[k].kind == WC_CHANGE_MANIFEST;
		CHECK(manifest, "rotating a log with a record writes a MANIFEST");
		before = nchanges;
		rc = wc_db_rotate_log(db, &err);
		CHECK_OK(rc, &err);
		CHECK(nchanges == before, "rotating an empty log changes nothing (%zu changes)",
			  nchanges - before);
		wc_batch_free(bt);
	}
	CHECK(ndone == nchanges && !change_open, "each of the %zu changes done once (%zu)", nchanges,
		  ndone);
	{
		int			kinds[6] = {0};

		for (size_t i = 0; i < nchanges; i++)
			kinds[changes[i].kind]++;
		CHECK(kinds[WC_CHANGE_WRITE] > 0 && kinds[WC_CHANGE_SYNC] > 0 &&
			  kinds[WC_CHANGE_REMOVE] > 0 && kinds[WC_CHANGE_MANIFEST] > 0,
			  "every kind of change: write %d, sync %d, remove %d, manifest %d",
			  kinds[WC_CHANGE_WRITE], kinds[WC_CHANGE_SYNC], kinds[WC_CHANGE_REMOVE],
			  kinds[WC_CHANGE_MANIFEST]);
	}

	/* a replica, read while it is brought forward, reads what the original read */
	ro = open_store(b, true, false);
	{
		char	   *d = dump(ro);

		CHECK(strcmp(d, "") == 0, "a replica not made yet reads as empty");
		free(d);
	}
	wc_err_clear(&err);
	rc = wc_replica_open(b, &r, &err);
	CHECK_OK(rc, &err);
	for (int p = 0, from = 0; p < npoints; p++)
	{
		char	   *d;

		apply(r, (size_t) from, point_changes[p]);
		from = (int) point_changes[p];
		d = dump(ro);
		CHECK(strcmp(d, point_dump[p]) == 0, "the replica reads as the original at point %d", p);
		free(d);
	}
	apply(r, point_changes[npoints - 1], nchanges);
	check_same_files(a, b, "replica");
	{
		char	   *da = dump(db),
				   *dr = dump(ro);

		CHECK(strcmp(da, dr) == 0, "the replica reads as the original at the end");
		CHECK(strlen(da) > 1000, "the store is not empty (%zu bytes of cells)", strlen(da));
		free(da);
		free(dr);
	}

	/* applied twice: nothing changes */
	apply(r, 0, nchanges);
	check_same_files(a, b, "replica, changes applied twice");
	wc_replica_close(r);

	/* the copy taken during the workload, brought forward, converges */
	wc_err_clear(&err);
	rc = wc_replica_open(c, &r, &err);
	CHECK_OK(rc, &err);
	apply(r, backup_from, nchanges);
	wc_replica_close(r);
	check_same_files(a, c, "copy taken during the workload");
	{
		wc_db	   *cdb = open_store(c, true, false);
		char	   *da = dump(db),
				   *dc = dump(cdb);

		CHECK(strcmp(da, dc) == 0, "the copy reads as the original");
		free(da);
		free(dc);
		wc_db_close(cdb);
	}

	/* a read-only handle changes nothing */
	{
		wc_batch   *bt = wc_batch_new();
		char	   *d;
		struct stat st;

		wc_err_clear(&err);
		wc_batch_put(bt, "a", 1, "x", 1, "q", 1, 1, "v", 1, &err);
		wc_err_clear(&err);
		CHECK(wc_db_write(ro, &bt, 1, 0, true, &err) == WC_INVALID, "read only: write refused");
		wc_err_clear(&err);
		CHECK(wc_db_flush(ro, &err) == WC_INVALID, "read only: flush refused");
		wc_err_clear(&err);
		CHECK(wc_db_compact(ro, &err) == WC_INVALID, "read only: compact refused");
		wc_err_clear(&err);
		CHECK(wc_db_maintain(ro, &err) == WC_INVALID, "read only: maintain refused");
		check_same_files(a, b, "replica after refused changes");
		wc_db_close(ro);

		ro = open_store(absent, true, false);
		d = dump(ro);
		CHECK(ro != NULL && strcmp(d, "") == 0, "a store that does not exist reads as empty");
		free(d);
		CHECK(stat(absent, &st) != 0, "... and its directory is not created");
		wc_db_close(ro);
		wc_batch_free(bt);
	}

	/* a refused change is not made, and fails the operation */
	{
		size_t		before;
		wc_batch   *bt = wc_batch_new();
		char	   *d1,
				   *d2;

		d1 = dump(db);
		before = nchanges;
		refuse_after = (int) before;
		wc_err_clear(&err);
		wc_batch_put(bt, "a", 1, "zz", 2, "q", 1, 1, "refused", 7, &err);
		wc_err_clear(&err);
		rc = wc_db_write(db, &bt, 1, 0, true, &err);
		CHECK(rc == WC_CALLBACK, "a refused change fails the write: %d %s", rc, err.msg);
		refuse_after = -1;
		wc_db_close(db);
		db = open_store(a, false, true);
		d2 = dump(db);
		CHECK(strcmp(d1, d2) == 0, "a refused write leaves no cell behind");
		free(d1);
		free(d2);
		wc_batch_free(bt);
	}

	/*
	 * A record written but never reported as made (PostgreSQL: a commit's log record
	 * whose WAL a crash lost): a replica brought forward over the store's own
	 * directory, as crash recovery does, cuts it, and the store is the copy taken
	 * before it.
	 */
	{
		wc_batch   *bt = wc_batch_new();
		size_t		from,
					mark;
		uint64_t	cut = 0,
					lost = 0;
		char	  **names;
		int			nnames;
		char	   *before,
				   *after;
		bool		only_log_write = true;

		wc_err_clear(&err);
		rc = wc_db_rotate_log(db, &err);	/* both records in one log */
		CHECK_OK(rc, &err);
		from = nchanges;
		rc = wc_batch_put(bt, "a", 1, "orphan-1", 8, "q", 1, 1, "kept", 4, &err);
		CHECK_OK(rc, &err);
		rc = wc_db_write(db, &bt, 1, 0, true, &err);
		CHECK_OK(rc, &err);
		names = names_of(a, &nnames);
		for (int i = 0; i < nnames; i++)
			copy_file(a, d, names[i]);
		free_names(names, nnames);
		before = dump(db);

		mark = nchanges;
		wc_batch_free(bt);
		bt = wc_batch_new();
		rc = wc_batch_put(bt, "a", 1, "orphan-2", 8, "q", 1, 1, "lost", 4, &err);
		CHECK_OK(rc, &err);
		rc = wc_db_write(db, &bt, 1, 0, false, &err);
		CHECK_OK(rc, &err);
		for (size_t k = mark; k < nchanges; k++)
		{
			only_log_write &= changes[k].kind == WC_CHANGE_WRITE &&
				strstr(changes[k].file, ".log") != NULL && changes[k].offset > 0;
			lost += changes[k].len;
		}
		CHECK(nchanges > mark && only_log_write,
			  "the lost write is one append to the log (%zu changes)", nchanges - mark);
		wc_db_close(db);		/* the crash */

		wc_err_clear(&err);
		rc = wc_replica_open(a, &r, &err);
		CHECK_OK(rc, &err);
		apply(r, from, mark);
		rc = wc_replica_cut(r, &cut, &err);
		CHECK_OK(rc, &err);
		CHECK(cut == lost, "the cut removes the lost record: %llu bytes of %llu",
			  (unsigned long long) cut, (unsigned long long) lost);
		rc = wc_replica_cut(r, &cut, &err);
		CHECK(rc == WC_OK && cut == 0, "a second cut removes nothing (%llu)",
			  (unsigned long long) cut);
		wc_replica_close(r);
		check_same_files(a, d, "a store cut after a lost record");

		db = open_store(a, false, true);
		after = dump(db);
		CHECK(strcmp(before, after) == 0 && strstr(after, "orphan-1") != NULL &&
			  strstr(after, "orphan-2") == NULL,
			  "the store reads as before the lost record");
		free(before);
		free(after);

		/* a replica that applied no change to a log cuts nothing */
		wc_err_clear(&err);
		rc = wc_replica_open(a, &r, &err);
		CHECK_OK(rc, &err);
		rc = wc_replica_cut(r, &cut, &err);
		CHECK(rc == WC_OK && cut == 0, "nothing applied, nothing cut (%llu)",
			  (unsigned long long) cut);
		wc_replica_close(r);
		wc_batch_free(bt);
	}

	wc_db_close(db);
	for (int p = 0; p < npoints; p++)
		free(point_dump[p]);
	for (size_t i = 0; i < nchanges; i++)
		free(changes[i].bytes);
	free(changes);
	free_names(tocopy, ntocopy);
	test_rmdir(a);
	test_rmdir(b);
	test_rmdir(c);
	test_rmdir(d);
	TEST_DONE();
}
