/*
 * test_db.c -- the store as a whole, in one process: the webtable example, delete
 * and retention rules, ranges and filters, pending overlays, truncate, and a
 * model-based random test that compares every scan with a brute-force reference
 * of DESIGN.md's visibility rules across flushes, compactions and reopens.
 */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "golden.h"
#include "../cell.h"
#include "../coding.h"
#include "../db_internal.h"
#include "../env.h"
#include "../sst.h"

/* ---------------------------------------------------------------- helpers */

static wc_family_opts fams3[] = {
	{"anchor", 3, 0, WC_COMPRESS_LZ4, 0},
	{"contents", 3, 0, WC_COMPRESS_LZ4, 0},
	{"people", 3, 0, WC_COMPRESS_NONE, 0},
};

/* Transaction states for the resolver: tag t is tag_state[t] (0 = committed). */
static wc_txn_state tag_state[256];
static uint64_t resolve_fails_for;	/* the resolver fails for this tag (0: never) */

static int
resolve_tag(void *arg, uint64_t tag, wc_txn_state *state, wc_err *err)
{
	(void) arg;
	if (tag == resolve_fails_for)
	{
		snprintf(err->msg, sizeof(err->msg), "the commit log could not be read");
		err->code = WC_CALLBACK;
		return WC_CALLBACK;
	}
	*state = tag < 256 ? tag_state[tag] : WC_TXN_COMMITTED;
	return WC_OK;
}

/* With ingest_bytes nonzero, tagged writes of that size are bulk writes (ingest.h). */
static size_t open_ingest_bytes;
/* Stores opened with a horizon (test_snapshots): the test's horizon_now, at most
 * open_recent_max records remembered (0 = default). */
static bool open_with_horizon;
static uint32_t open_recent_max;
static uint64_t horizon_now(void *arg);

static wc_db *
open_db(const char *dir, wc_family_opts *fams, int n, size_t switch_bytes)
{
	wc_open_opts o;
	wc_db	   *db = NULL;
	wc_err		err;
	int			rc;

	memset(&o, 0, sizeof(o));
	o.families = fams;
	o.nfamilies = n;
	o.create_if_missing = true;
	o.log_switch_bytes = switch_bytes;
	o.block_bytes = 512;
	o.resolve = resolve_tag;
	o.ingest_bytes = open_ingest_bytes ? open_ingest_bytes : SIZE_MAX;
	if (open_with_horizon)
	{
		o.horizon = horizon_now;
		o.recent_max = open_recent_max;
	}
	wc_err_clear(&err);
	rc = wc_db_open(dir, &o, &db, &err);
	CHECK_OK(rc, &err);
	if (rc != WC_OK)
		exit(1);
	return db;
}

static void
put(wc_batch *b, const char *fam, const char *row, const char *qual, int64_t ts, const char *val)
{
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_batch_put(b, fam, strlen(fam), row, strlen(row), qual, strlen(qual), ts,
						  val, strlen(val), &err), &err);
}

static void
write_batch(wc_db *db, wc_batch *b)
{
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_db_write(db, &b, 1, 0, false, &err), &err);
	wc_batch_clear(b);
	CHECK_OK(wc_db_refresh(db, &err), &err);
}

typedef struct test_snap
{
	uint64_t	xmax;
	uint64_t	running[4];
	int			nrunning;
	int			told_in_progress;	/* tags reported as still in progress */
	int			asked;			/* about committed tags */
} test_snap;

static int
snap_visible(void *arg, uint64_t tag, bool committed, bool *visible, wc_err *err)
{
	test_snap  *s = arg;

	(void) err;
	if (!committed)
	{
		s->told_in_progress++;
		return WC_OK;
	}
	s->asked++;
	*visible = tag < s->xmax;
	for (int i = 0; i < s->nrunning; i++)
		if (s->running[i] == tag)
			*visible = false;
	return WC_OK;
}

/* o, whose tag_visible is snap_visible, with the same snapshot as sets (wc.h);
 * running must have room for s's */
static void
snap_as_sets(wc_scan_opts *o, const test_snap *s, uint64_t *running, bool ask_unseen)
{
	int			n = s->nrunning;

	memcpy(running, s->running, sizeof(uint64_t) * (size_t) n);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && running[j - 1] > running[j]; j--)
		{
			uint64_t	t = running[j];

			running[j] = running[j - 1];
			running[j - 1] = t;
		}
	o->snapshot_sets = true;
	o->snapshot_max = s->xmax;
	o->running = running;
	o->nrunning = n;
	o->ask_unseen = ask_unseen;
}

static void render_one(wc_db *db, const wc_scan_opts *opts, char *out, size_t size);

/*
 * Scans with opts and renders every cell as "row/fam:qual@ts=val;" into out.
 * A scan with test_snap's snapshot reads again with the snapshot as sets,
 * which must give the same cells.
 */
static void
render(wc_db *db, const wc_scan_opts *opts, char *out, size_t size)
{
	render_one(db, opts, out, size);
	if (opts->tag_visible == snap_visible && !opts->snapshot_sets)
	{
		test_snap  *s = opts->tag_visible_arg;
		int			told = s->told_in_progress;
		uint64_t	running[4];
		wc_scan_opts sets = *opts;
		char	   *again = malloc(size);

		snap_as_sets(&sets, s, running, true);
		render_one(db, &sets, again, size);
		CHECK(strcmp(out, again) == 0, "the snapshot as sets reads otherwise:\n  %s\n  %s",
			  again, out);
		s->told_in_progress = told;
		free(again);
	}
}

/* Scans with opts and renders every cell as "row/fam:qual@ts=val;" into out. */
static void
render_one(wc_db *db, const wc_scan_opts *opts, char *out, size_t size)
{
	wc_scan    *s = NULL;
	wc_cell_view c;
	wc_err		err;
	size_t		used = 0;
	int			rc;

	out[0] = '\0';
	wc_err_clear(&err);
	rc = wc_scan_open(db, opts, &s, &err);
	CHECK_OK(rc, &err);
	if (rc != WC_OK)
		return;
	while ((rc = wc_scan_next(s, &c, &err)) == 1)
		used += snprintf(out + used, size > used ? size - used : 0, "%.*s/%.*s:%.*s@%" PRId64 "=%.*s;",
						 (int) c.row_len, c.row, (int) c.family_len, c.family,
						 (int) c.qual_len, c.qual, c.ts, (int) c.val_len, c.val);
	CHECK(rc == 0, "scan ended with %d: %s", rc, err.msg);
	wc_scan_close(s);
}

#define EXPECT_SCAN(db, opts, want) do { \
	char got_[8192]; render((db), (opts), got_, sizeof(got_)); \
	CHECK(strcmp(got_, (want)) == 0, "\n  got:  %s\n  want: %s", got_, (want)); \
} while (0)

/* ---------------------------------------------------------------- log end */

/*
 * A store opened anew (its shared page rebuilt) does not know where the active
 * log ends, so a refresh looks at the file; once one has read it to its end and
 * published that, refreshes make no fstat until a write, and a write by another
 * handle is still seen.
 */
static void
test_published_end(void)
{
	char	   *dir = test_tmpdir("logend");
	wc_family_opts f1[] = {{.name = "f", .max_versions = 0}};
	wc_db	   *db = open_db(dir, f1, 1, 0);
	wc_db	   *other;
	wc_batch   *b = wc_batch_new();
	wc_scan_opts all;
	wc_err		err;
	long		before;

	wc_scan_opts_init(&all);

	put(b, "f", "r1", "q", 1, "v1");
	write_batch(db, b);
	wc_db_close(db);

	db = open_db(dir, f1, 1, 0);	/* alone: the shared page is rebuilt */
	wc_err_clear(&err);
	CHECK_OK(wc_db_refresh(db, &err), &err);
	before = wc_file_size_calls();
	for (int i = 0; i < 5; i++)
		CHECK_OK(wc_db_refresh(db, &err), &err);
	CHECK(wc_file_size_calls() == before, "%ld fstat calls in 5 refreshes after the end was published",
		  wc_file_size_calls() - before);

	other = open_db(dir, f1, 1, 0);
	put(b, "f", "r2", "q", 2, "v2");
	write_batch(other, b);
	CHECK_OK(wc_db_refresh(db, &err), &err);
	EXPECT_SCAN(db, &all, "r1/f:q@1=v1;r2/f:q@2=v2;");
	before = wc_file_size_calls();
	CHECK_OK(wc_db_refresh(db, &err), &err);
	CHECK_OK(wc_db_refresh(other, &err), &err);
	CHECK(wc_file_size_calls() == before, "fstat after a write published its end");

	wc_db_close(other);
	wc_db_close(db);
	wc_batch_free(b);
	test_rmdir(dir);
}

/* ---------------------------------------------------------------- webtable */

static void
test_webtable(void)
{
	char	   *dir = test_tmpdir("webtable");
	wc_db	   *db = open_db(dir, fams3, 3, 0);
	wc_batch   *b = wc_batch_new();
	wc_scan_opts o;
	wc_slice	fam_contents = {(const uint8_t *) "contents", 8};
	wc_slice	html = {(const uint8_t *) "html", 4};
	wc_key_range r;
	wc_err		err;
	const char *all =
		"com.cnn.www/anchor:cnnsi.com@9=CNN;com.cnn.www/anchor:my.look.ca@8=CNN.com;"
		"com.cnn.www/contents:html@6=<html>6;com.cnn.www/contents:html@5=<html>5;"
		"com.cnn.www/contents:html@3=<html>3;"
		"com.example.www/contents:html@5=<p>ex;com.example.www/people:author@5=John Doe;";

	put(b, "contents", "com.cnn.www", "html", 3, "<html>3");
	put(b, "contents", "com.cnn.www", "html", 5, "<html>5");
	put(b, "contents", "com.cnn.www", "html", 6, "<html>6");
	put(b, "anchor", "com.cnn.www", "cnnsi.com", 9, "CNN");
	put(b, "anchor", "com.cnn.www", "my.look.ca", 8, "CNN.com");
	put(b, "contents", "com.example.www", "html", 5, "<p>ex");
	put(b, "people", "com.example.www", "author", 5, "John Doe");
	write_batch(db, b);

	wc_scan_opts_init(&o);
	EXPECT_SCAN(db, &o, all);

	/* contents:html at exactly t8: nothing */
	o.families = &fam_contents;
	o.nfamilies = 1;
	o.quals = &html;
	o.nquals = 1;
	o.ts_min = 8;
	o.ts_max = 8;
	EXPECT_SCAN(db, &o, "");

	/* the row with no timestamp, newest version of each column: max 1 via range */
	wc_scan_opts_init(&o);
	memset(&r, 0, sizeof(r));
	r.start = (const uint8_t *) "com.cnn.www";
	r.start_len = 11;
	r.start_bound = WC_INCLUSIVE;
	r.stop = r.start;
	r.stop_len = r.start_len;
	r.stop_bound = WC_INCLUSIVE;
	o.ranges = &r;
	o.nranges = 1;
	o.ts_min = 5;
	EXPECT_SCAN(db, &o, "com.cnn.www/anchor:cnnsi.com@9=CNN;com.cnn.www/anchor:my.look.ca@8=CNN.com;"
				"com.cnn.www/contents:html@6=<html>6;com.cnn.www/contents:html@5=<html>5;");

	/* prefix scan [com.e, com.f) */
	r.start = (const uint8_t *) "com.e";
	r.start_len = 5;
	r.stop = (const uint8_t *) "com.f";
	r.stop_len = 5;
	r.stop_bound = WC_EXCLUSIVE;
	o.ts_min = INT64_MIN;
	EXPECT_SCAN(db, &o, "com.example.www/contents:html@5=<p>ex;com.example.www/people:author@5=John Doe;");

	/* the same after a flush, after a compaction, after reopening */
	wc_err_clear(&err);
	CHECK_OK(wc_db_flush(db, &err), &err);
	wc_scan_opts_init(&o);
	EXPECT_SCAN(db, &o, all);
	CHECK_OK(wc_db_compact(db, &err), &err);
	EXPECT_SCAN(db, &o, all);
	wc_db_close(db);
	db = open_db(dir, fams3, 3, 0);
	EXPECT_SCAN(db, &o, all);
	{
		wc_file_info *files;
		int			n;

		CHECK_OK(wc_db_files(db, &files, &n, &err), &err);
		CHECK(n == 3, "one file per family after compaction, got %d", n);
		for (int i = 0; i < n; i++)
			CHECK(files[i].level == 1 && files[i].cells > 0, "file %s level %d", files[i].name, files[i].level);
		wc_file_info_free(files, n);
	}
	wc_batch_free(b);
	wc_db_close(db);
	test_rmdir(dir);
}

/* ---------------------------------------------------------------- deletes, retention */

static void
test_deletes_and_retention(void)
{
	char	   *dir = test_tmpdir("deletes");
	wc_family_opts f2[] = {{"f", 2, 0, WC_COMPRESS_LZ4, 0}, {"g", 0, 0, WC_COMPRESS_LZ4, 0}};
	wc_db	   *db = open_db(dir, f2, 2, 0);
	wc_batch   *b = wc_batch_new();
	wc_scan_opts o;
	wc_err		err;

	wc_err_clear(&err);
	wc_scan_opts_init(&o);
	put(b, "f", "r", "q", 1, "v1");
	put(b, "f", "r", "q", 2, "v2");
	put(b, "f", "r", "q", 3, "v3");
	write_batch(db, b);
	EXPECT_SCAN(db, &o, "r/f:q@3=v3;r/f:q@2=v2;");

	/* every_version: a version only outnumbered (past max_versions) is there, not deleted */
	o.every_version = true;
	EXPECT_SCAN(db, &o, "r/f:q@3=v3;r/f:q@2=v2;r/f:q@1=v1;");
	o.every_version = false;

	/* deleting the newest version keeps its place: v1 does not come back */
	CHECK_OK(wc_batch_delete_version(b, "f", 1, "r", 1, "q", 1, 3, &err), &err);
	write_batch(db, b);
	EXPECT_SCAN(db, &o, "r/f:q@2=v2;");
	/* ... and every_version does not bring back the deleted one */
	o.every_version = true;
	EXPECT_SCAN(db, &o, "r/f:q@2=v2;r/f:q@1=v1;");
	o.every_version = false;
	CHECK_OK(wc_db_flush(db, &err), &err);
	EXPECT_SCAN(db, &o, "r/f:q@2=v2;");
	CHECK_OK(wc_db_compact(db, &err), &err);
	EXPECT_SCAN(db, &o, "r/f:q@2=v2;");

	/* a put after a delete is visible again (same ts) */
	put(b, "f", "r", "q", 3, "v3b");
	write_batch(db, b);
	EXPECT_SCAN(db, &o, "r/f:q@3=v3b;r/f:q@2=v2;");

	/* same (row, fam, qual, ts) twice: the later write wins */
	put(b, "f", "r", "q", 3, "x");
	put(b, "f", "r", "q", 3, "y");
	write_batch(db, b);
	EXPECT_SCAN(db, &o, "r/f:q@3=y;r/f:q@2=v2;");

	/* column delete, then an older-ts put written later is visible */
	CHECK_OK(wc_batch_delete_column(b, "f", 1, "r", 1, "q", 1, &err), &err);
	write_batch(db, b);
	EXPECT_SCAN(db, &o, "");
	put(b, "f", "r", "q", 1, "after");
	write_batch(db, b);
	EXPECT_SCAN(db, &o, "r/f:q@1=after;");

	/* family and row deletes */
	put(b, "g", "r", "a", 10, "ga");
	put(b, "g", "r", "b", 10, "gb");
	put(b, "g", "s", "a", 10, "sa");
	write_batch(db, b);
	CHECK_OK(wc_batch_delete_family(b, "g", 1, "r", 1, &err), &err);
	write_batch(db, b);
	EXPECT_SCAN(db, &o, "r/f:q@1=after;s/g:a@10=sa;");
	CHECK_OK(wc_batch_delete_row(b, f2, 2, "s", 1, &err), &err);
	write_batch(db, b);
	EXPECT_SCAN(db, &o, "r/f:q@1=after;");
	CHECK_OK(wc_db_compact(db, &err), &err);
	EXPECT_SCAN(db, &o, "r/f:q@1=after;");

	/* ttl through now_ms: family g keeps everything, ttl on f */
	{
		wc_family_opts f3[] = {{"f", 0, 100, WC_COMPRESS_LZ4, 0}, {"g", 0, 0, WC_COMPRESS_LZ4, 0}};

		CHECK_OK(wc_db_set_families(db, f3, 2, &err), &err);
		put(b, "f", "t", "q", 1000, "new");
		put(b, "f", "t", "q", 800, "old");
		write_batch(db, b);
		o.now_ms = 1050;
		EXPECT_SCAN(db, &o, "t/f:q@1000=new;");
		o.now_ms = 1200;
		EXPECT_SCAN(db, &o, "");
		o.now_ms = 0;
	}
	wc_batch_free(b);
	wc_db_close(db);
	test_rmdir(dir);
}

/* ---------------------------------------------------------------- overlay, truncate */

static void
test_pending_and_truncate(void)
{
	char	   *dir = test_tmpdir("pending");
	wc_family_opts f1[] = {{"f", 0, 0, WC_COMPRESS_LZ4, 0}};
	wc_db	   *db = open_db(dir, f1, 1, 0);
	wc_batch   *b = wc_batch_new();
	wc_batch   *mine = wc_batch_new();
	wc_scan_opts o;
	wc_scan    *s;
	wc_cell_view c;
	wc_err		err;
	int			n = 0;

	wc_err_clear(&err);
	put(b, "f", "a", "q", 1, "committed");
	write_batch(db, b);
	put(mine, "f", "b", "q", 1, "pending");
	CHECK_OK(wc_batch_delete_version(mine, "f", 1, "a", 1, "q", 1, 1, &err), &err);
	wc_scan_opts_init(&o);
	EXPECT_SCAN(db, &o, "a/f:q@1=committed;");
	o.pending = &mine;
	o.npending = 1;
	EXPECT_SCAN(db, &o, "b/f:q@1=pending;");

	/* entries added to the pending batch after the scan opened stay invisible */
	CHECK_OK(wc_scan_open(db, &o, &s, &err), &err);
	put(mine, "f", "c", "q", 1, "later");
	while (wc_scan_next(s, &c, &err) == 1)
		n++;
	wc_scan_close(s);
	CHECK(n == 1, "scan saw %d cells, want 1", n);
	EXPECT_SCAN(db, &o, "b/f:q@1=pending;c/f:q@1=later;");

	/* a pending truncate hides everything before it */
	CHECK_OK(wc_batch_truncate(mine, &err), &err);
	put(mine, "f", "d", "q", 1, "after-truncate");
	EXPECT_SCAN(db, &o, "d/f:q@1=after-truncate;");
	/* written: the same */
	CHECK_OK(wc_db_write(db, &mine, 1, 0, true, &err), &err);
	CHECK_OK(wc_db_refresh(db, &err), &err);
	wc_scan_opts_init(&o);
	EXPECT_SCAN(db, &o, "d/f:q@1=after-truncate;");
	CHECK_OK(wc_db_flush(db, &err), &err);
	EXPECT_SCAN(db, &o, "d/f:q@1=after-truncate;");
	wc_db_close(db);
	db = open_db(dir, f1, 1, 0);
	EXPECT_SCAN(db, &o, "d/f:q@1=after-truncate;");
	wc_batch_free(b);
	wc_batch_free(mine);
	wc_db_close(db);
	test_rmdir(dir);
}

/*
 * One batch written by several commands, a later command's entries hidden by
 * pending_excl (src/store.c): a put, a delete of the row before it and an
 * overwrite of a cell in the hidden range take no part (the delete masks
 * nothing), on a committed cell and on the batch's own earlier entries; two
 * ranges, given in either order; the committed cells stay visible.
 */
static void
test_pending_excluded(void)
{
	char	   *dir = test_tmpdir("pending-excl");
	wc_family_opts f1[] = {{"f", 0, 0, WC_COMPRESS_LZ4, 0}};
	wc_db	   *db = open_db(dir, f1, 1, 0);
	wc_batch   *b = wc_batch_new();
	wc_batch   *mine = wc_batch_new();
	wc_seq_range ex[2];
	wc_scan_opts o;
	wc_err		err;

	wc_err_clear(&err);
	put(b, "f", "a", "q", 1, "committed");
	write_batch(db, b);
	put(mine, "f", "b", "q", 1, "first");	/* command 1 */
	ex[0].lo = wc_batch_pending_seq_now() + 1;	/* command 2 */
	CHECK_OK(wc_batch_delete_row(mine, f1, 1, "a", 1, &err), &err);
	put(mine, "f", "b", "q", 1, "second");
	put(mine, "f", "c", "q", 1, "second");
	ex[0].hi = wc_batch_pending_seq_now();
	ex[1].lo = ex[0].hi + 1;	/* command 3 */
	put(mine, "f", "d", "q", 1, "third");
	ex[1].hi = WC_SEQ_MAX;
	wc_scan_opts_init(&o);
	o.pending = &mine;
	o.npending = 1;
	EXPECT_SCAN(db, &o, "b/f:q@1=second;c/f:q@1=second;d/f:q@1=third;");
	/* command 2's reader: command 1's writes only */
	o.pending_excl = ex;
	o.npending_excl = 2;
	EXPECT_SCAN(db, &o, "a/f:q@1=committed;b/f:q@1=first;");
	/* in the other order, and command 3's reader */
	{
		wc_seq_range rev[2] = {ex[1], ex[0]};

		o.pending_excl = rev;
		EXPECT_SCAN(db, &o, "a/f:q@1=committed;b/f:q@1=first;");
		o.pending_excl = &rev[0];
		o.npending_excl = 1;
		EXPECT_SCAN(db, &o, "b/f:q@1=second;c/f:q@1=second;");
	}
	/* pending_max: what was written after command 2, as a scan opened then sees it */
	o.pending_excl = NULL;
	o.npending_excl = 0;
	o.pending_max = ex[0].hi;
	EXPECT_SCAN(db, &o, "b/f:q@1=second;c/f:q@1=second;");
	wc_batch_free(b);
	wc_batch_free(mine);
	wc_db_close(db);
	test_rmdir(dir);
}

/*
 * A savepoint's rollback rewinds the batch (src/store.c): a scan opened after it
 * sees neither the forgotten entries nor what they masked, although the overlay
 * still holds the ones it had indexed; a scan open across the rewind keeps its
 * overlay; writes after the rewind are seen; a pending exclusion that covers a
 * dead range (a command the scan does not see) and the range both apply.
 */
static void
test_pending_rewind(void)
{
	char	   *dir = test_tmpdir("pending-rewind");
	wc_family_opts f1[] = {{"f", 0, 0, WC_COMPRESS_LZ4, 0}};
	wc_db	   *db = open_db(dir, f1, 1, 0);
	wc_batch   *b = wc_batch_new();
	wc_batch   *mine = wc_batch_new();
	wc_batch_mark m;
	wc_seq_range ex;
	wc_scan_opts o;
	wc_scan    *s;
	wc_cell_view c;
	wc_err		err;
	int			n = 0;

	wc_err_clear(&err);
	put(b, "f", "a", "q", 1, "committed");
	write_batch(db, b);
	put(mine, "f", "b", "q", 1, "outer");
	wc_scan_opts_init(&o);
	o.pending = &mine;
	o.npending = 1;
	/* the savepoint: a delete and a put, read (the overlay indexes them), rolled back */
	wc_batch_get_mark(mine, &m);
	CHECK_OK(wc_batch_delete_row(mine, f1, 1, "a", 1, &err), &err);
	put(mine, "f", "b", "q", 1, "inner");
	put(mine, "f", "c", "q", 1, "inner");
	EXPECT_SCAN(db, &o, "b/f:q@1=inner;c/f:q@1=inner;");
	CHECK_OK(wc_scan_open(db, &o, &s, &err), &err);
	wc_batch_rewind(mine, &m);
	EXPECT_SCAN(db, &o, "a/f:q@1=committed;b/f:q@1=outer;");
	/* the scan opened before the rewind reads on over the overlay it holds */
	while (wc_scan_next(s, &c, &err) == 1)
		n++;
	CHECK(n == 2, "open scan saw %d cells, want 2", n);
	wc_scan_close(s);
	/* a write after the rewind, then a command's exclusion over all of it */
	ex.lo = wc_batch_pending_seq_now() + 1;
	put(mine, "f", "d", "q", 1, "after");
	EXPECT_SCAN(db, &o, "a/f:q@1=committed;b/f:q@1=outer;d/f:q@1=after;");
	ex.lo = wc_batch_seq_at(mine, 0);
	ex.hi = WC_SEQ_MAX;
	o.pending_excl = &ex;
	o.npending_excl = 1;
	EXPECT_SCAN(db, &o, "a/f:q@1=committed;");
	/* written: only the live entries reach the store */
	CHECK_OK(wc_db_write(db, &mine, 1, 0, true, &err), &err);
	CHECK_OK(wc_db_refresh(db, &err), &err);
	wc_scan_opts_init(&o);
	EXPECT_SCAN(db, &o, "a/f:q@1=committed;b/f:q@1=outer;d/f:q@1=after;");
	wc_batch_free(b);
	wc_batch_free(mine);
	wc_db_close(db);
	test_rmdir(dir);
}

/* One write of test_rewind_model, kept to be done again on a fresh batch. */
typedef struct rw_op
{
	int			kind;			/* 0 put, 1 delete column, 2 delete row */
	char		row[8];
	char		qual[4];
	int64_t		ts;
	char		val[16];
} rw_op;

static void
rw_apply(wc_batch *b, const rw_op *op, wc_family_opts *fams)
{
	wc_err		err;

	wc_err_clear(&err);
	switch (op->kind)
	{
		case 0:
			CHECK_OK(wc_batch_put(b, "f", 1, op->row, strlen(op->row), op->qual, strlen(op->qual),
								  op->ts, op->val, strlen(op->val), &err), &err);
			break;
		case 1:
			CHECK_OK(wc_batch_delete_column(b, "f", 1, op->row, strlen(op->row), op->qual,
											strlen(op->qual), &err), &err);
			break;
		default:
			CHECK_OK(wc_batch_delete_row(b, fams, 1, op->row, strlen(op->row), &err), &err);
			break;
	}
}

/*
 * Random writes into a pending batch, with savepoints: marks taken, rewound to
 * (several levels at once) and released, scans between them (which index the
 * overlays, so that rewinds leave dead ranges behind), and a second pending
 * batch written in between (on rows of its own, so that its entries take seqs
 * among the dead ones without competing for cells).  Every scan, whole or of a
 * row range, must give what the same scan gives over a fresh batch holding only
 * the writes that were not rolled back.  (No truncates: a fresh batch's would
 * come after the other batch's entries; test_batch rewinds over one.)
 */
static void
test_rewind_model(void)
{
	char	   *dir = test_tmpdir("rewind-model");
	wc_family_opts f1[] = {{"f", 0, 0, WC_COMPRESS_LZ4, 0}};
	wc_db	   *db = open_db(dir, f1, 1, 0);
	wc_batch   *base = wc_batch_new();
	uint64_t	rng = 4242;
	enum
	{
		MAXOPS = 4000, MAXDEPTH = 10
	};
	rw_op	   *ops = calloc(MAXOPS, sizeof(rw_op));
	int			nops = 0;
	wc_batch_mark marks[MAXDEPTH];
	int			marked_nops[MAXDEPTH];
	int			depth = 0;
	int			scans = 0,
				rewinds = 0;

	for (int r = 0; r < 12; r++)
	{
		char		row[8];

		snprintf(row, sizeof(row), "r%02d", r);
		put(base, "f", row, "q0", 1, "committed");
	}
	write_batch(db, base);
	for (int round = 0; round < 20; round++)
	{
		wc_batch   *b = wc_batch_new();
		wc_batch   *other = wc_batch_new();

		nops = 0;
		depth = 0;
		for (int step = 0; step < 300 && nops < MAXOPS; step++)
		{
			int			r = (int) (test_rand(&rng) % 100);

			if (r < 45)
			{
				rw_op	   *op = &ops[nops++];
				int			k = (int) (test_rand(&rng) % 100);

				op->kind = k < 75 ? 0 : k < 88 ? 1 : 2;
				snprintf(op->row, sizeof(op->row), "r%02d", (int) (test_rand(&rng) % 12));
				snprintf(op->qual, sizeof(op->qual), "q%d", (int) (test_rand(&rng) % 3));
				op->ts = 1 + (int64_t) (test_rand(&rng) % 3);
				snprintf(op->val, sizeof(op->val), "v%d", step);
				rw_apply(b, op, f1);
			}
			else if (r < 55)
			{
				char		row[8];

				snprintf(row, sizeof(row), "x%02d", (int) (test_rand(&rng) % 5));
				put(other, "f", row, "q", 1, "other");
			}
			else if (r < 67 && depth < MAXDEPTH)
			{
				wc_batch_get_mark(b, &marks[depth]);
				marked_nops[depth++] = nops;
			}
			else if (r < 77 && depth > 0)
			{
				int			k = (int) (test_rand(&rng) % (uint64_t) depth);

				wc_batch_rewind(b, &marks[k]);
				nops = marked_nops[k];
				depth = k;
				rewinds++;
			}
			else if (r < 82 && depth > 0)
				depth--;		/* released: its writes are the level's around it */
			else
			{
				wc_batch   *ref = wc_batch_new();
				wc_batch   *mine[2] = {b, other};
				wc_batch   *theirs[2] = {ref, other};
				wc_scan_opts o,
							ro;
				wc_key_range range;
				char		got[8192],
							want[8192];
				char		lo[8],
							hi[8];

				for (int i = 0; i < nops; i++)
					rw_apply(ref, &ops[i], f1);
				wc_scan_opts_init(&o);
				o.pending = mine;
				o.npending = 2;
				ro = o;
				ro.pending = theirs;
				render(db, &o, got, sizeof(got));
				render(db, &ro, want, sizeof(want));
				CHECK(strcmp(got, want) == 0, "round %d step %d:\n  got:  %s\n  want: %s",
					  round, step, got, want);
				/* a row range: the batches' bounds decide whether they are read */
				snprintf(lo, sizeof(lo), "r%02d", (int) (test_rand(&rng) % 12));
				snprintf(hi, sizeof(hi), "r%02d", (int) (test_rand(&rng) % 12));
				memset(&range, 0, sizeof(range));
				range.start = (const uint8_t *) (strcmp(lo, hi) < 0 ? lo : hi);
				range.stop = (const uint8_t *) (strcmp(lo, hi) < 0 ? hi : lo);
				range.start_len = range.stop_len = 3;
				range.start_bound = range.stop_bound = WC_INCLUSIVE;
				o.ranges = ro.ranges = &range;
				o.nranges = ro.nranges = 1;
				render(db, &o, got, sizeof(got));
				render(db, &ro, want, sizeof(want));
				CHECK(strcmp(got, want) == 0, "round %d step %d, rows %s-%s:\n  got:  %s\n  want: %s",
					  round, step, range.start, range.stop, got, want);
				wc_batch_free(ref);
				scans++;
			}
		}
		/* written: the store gets the live writes only */
		if (round % 5 == 4)
		{
			wc_batch   *ref = wc_batch_new();
			wc_scan_opts o;
			char		before[8192],
						after[8192];
			wc_err		err;

			for (int i = 0; i < nops; i++)
				rw_apply(ref, &ops[i], f1);
			wc_scan_opts_init(&o);
			o.pending = &ref;
			o.npending = 1;
			render(db, &o, before, sizeof(before));
			wc_err_clear(&err);
			CHECK_OK(wc_db_write(db, &b, 1, 0, true, &err), &err);
			CHECK_OK(wc_db_refresh(db, &err), &err);
			wc_scan_opts_init(&o);
			render(db, &o, after, sizeof(after));
			CHECK(strcmp(before, after) == 0, "round %d written:\n  got:  %s\n  want: %s",
				  round, after, before);
			wc_batch_free(ref);
		}
		wc_batch_free(b);
		wc_batch_free(other);
	}
	CHECK(scans > 200 && rewinds > 100, "%d scans, %d rewinds", scans, rewinds);
	free(ops);
	wc_batch_free(base);
	wc_db_close(db);
	test_rmdir(dir);
}

/* A one-row range [row, row] in r (row must outlive it). */
static void
point_range(wc_key_range *r, const char *row)
{
	memset(r, 0, sizeof(*r));
	r->start = r->stop = (const uint8_t *) row;
	r->start_len = r->stop_len = strlen(row);
	r->start_bound = r->stop_bound = WC_INCLUSIVE;
}

/*
 * Many pending batches, one a statement, as a transaction of many writing
 * statements has: a scan of row ranges leaves out those whose rows lie outside
 * them (scan.c, batch_wanted), and reads the others as before, also after a
 * reset to other ranges; a batch holding a truncate (every row) and a batch
 * appended into another (its rows too) are never left out wrongly.
 */
static void
test_pending_ranges(void)
{
	char	   *dir = test_tmpdir("pending-ranges");
	wc_family_opts f1[] = {{"f", 0, 0, WC_COMPRESS_LZ4, 0}};
	wc_db	   *db = open_db(dir, f1, 1, 0);
	wc_batch   *b = wc_batch_new();
	wc_batch   *mine[200];
	wc_scan_opts o;
	wc_scan    *s;
	wc_cell_view c;
	wc_key_range r[2];
	wc_err		err;
	char		row[16];
	const uint8_t *lo,
			   *hi;
	size_t		lo_len,
				hi_len;

	wc_err_clear(&err);
	for (int i = 0; i < 200; i++)
	{
		snprintf(row, sizeof(row), "r%03d", i);
		put(b, "f", row, "q", 1, "committed");
	}
	write_batch(db, b);
	/* batch i writes row 2i (pending), batch 1 also deletes committed row r001 */
	for (int i = 0; i < 100; i++)
	{
		mine[i] = wc_batch_new();
		snprintf(row, sizeof(row), "r%03d", 2 * i);
		put(mine[i], "f", row, "q", 1, "pending");
	}
	CHECK_OK(wc_batch_delete_version(mine[1], "f", 1, "r001", 4, "q", 1, 1, &err), &err);
	CHECK(wc_batch_row_bounds(mine[1], &lo, &lo_len, &hi, &hi_len) &&
		  lo_len == 4 && memcmp(lo, "r001", 4) == 0 && hi_len == 4 && memcmp(hi, "r002", 4) == 0,
		  "batch 1's rows are r001..r002");
	wc_scan_opts_init(&o);
	o.pending = mine;
	o.npending = 100;
	o.ranges = r;
	o.nranges = 1;
	point_range(&r[0], "r010");
	EXPECT_SCAN(db, &o, "r010/f:q@1=pending;");
	point_range(&r[0], "r011");
	EXPECT_SCAN(db, &o, "r011/f:q@1=committed;");
	point_range(&r[0], "r001");
	EXPECT_SCAN(db, &o, "");
	r[0].start = (const uint8_t *) "r050";
	r[0].stop = (const uint8_t *) "r054";
	r[0].stop_bound = WC_EXCLUSIVE;
	EXPECT_SCAN(db, &o, "r050/f:q@1=pending;r051/f:q@1=committed;r052/f:q@1=pending;"
				"r053/f:q@1=committed;");

	/* a kept scan reset to other rows reads the batches it left out */
	point_range(&r[0], "r020");
	CHECK_OK(wc_scan_open(db, &o, &s, &err), &err);
	CHECK(wc_scan_next(s, &c, &err) == 1 && c.val_len == 7 && memcmp(c.val, "pending", 7) == 0,
		  "r020 is pending");
	point_range(&r[1], "r198");
	CHECK_OK(wc_scan_reset(s, &r[1], 1, &err), &err);
	CHECK(wc_scan_next(s, &c, &err) == 1 && c.row_len == 4 && memcmp(c.row, "r198", 4) == 0 &&
		  c.val_len == 7 && memcmp(c.val, "pending", 7) == 0, "after the reset, r198 is pending");
	CHECK(wc_scan_next(s, &c, &err) == 0, "and alone");
	wc_scan_close(s);

	/* a batch appended into batch 99: its row comes along */
	mine[100] = wc_batch_new();
	put(mine[100], "f", "r150x", "q", 1, "appended");
	CHECK_OK(wc_batch_append(mine[99], mine[100], &err), &err);
	wc_batch_free(mine[100]);
	point_range(&r[0], "r150x");
	EXPECT_SCAN(db, &o, "r150x/f:q@1=appended;");

	/* a truncate touches every row: its batch always takes part */
	mine[100] = wc_batch_new();
	CHECK_OK(wc_batch_truncate(mine[100], &err), &err);
	put(mine[100], "f", "r005", "q", 1, "after");
	CHECK(!wc_batch_row_bounds(mine[100], &lo, &lo_len, &hi, &hi_len), "a truncate has no row bounds");
	o.npending = 101;
	point_range(&r[0], "r010");
	EXPECT_SCAN(db, &o, "");
	point_range(&r[0], "r005");
	EXPECT_SCAN(db, &o, "r005/f:q@1=after;");

	for (int i = 0; i <= 100; i++)
		wc_batch_free(mine[i]);
	wc_batch_free(b);
	wc_db_close(db);
	test_rmdir(dir);
}

/* ---------------------------------------------------------------- the model test */

typedef struct mentry
{
	int			fam;
	char		row[8];
	char		qual[4];
	int64_t		ts;
	uint64_t	seq;
	uint8_t		type;
	char		val[12];
} mentry;

static mentry *model;
static int	nmodel,
			capmodel;
static uint64_t model_seq,
			model_trunc;

static const char *mfam[] = {"a", "b", "c"};

static void
model_add(int fam, const char *row, const char *qual, int64_t ts, uint8_t type, const char *val)
{
	mentry	   *e;

	if (nmodel == capmodel)
	{
		capmodel = capmodel ? capmodel * 2 : 1024;
		model = realloc(model, sizeof(mentry) * capmodel);
	}
	e = &model[nmodel++];
	memset(e, 0, sizeof(*e));
	e->fam = fam;
	snprintf(e->row, sizeof(e->row), "%s", row);
	snprintf(e->qual, sizeof(e->qual), "%s", qual);
	e->ts = ts;
	e->seq = ++model_seq;
	e->type = type;
	snprintf(e->val, sizeof(e->val), "%s", val);
}

static int
cmp_out(const void *pa, const void *pb)
{
	const mentry *a = *(const mentry *const *) pa;
	const mentry *b = *(const mentry *const *) pb;
	int			r = strcmp(a->row, b->row);

	if (r)
		return r;
	if (a->fam != b->fam)
		return a->fam - b->fam;
	r = strcmp(a->qual, b->qual);
	if (r)
		return r;
	return a->ts > b->ts ? -1 : a->ts < b->ts ? 1 : 0;
}

/* The reference: visibility by brute force, straight from DESIGN.md. */
/* A qualifier range of the model: NULL bounds are open. */
typedef struct mqrange
{
	const char *lo;
	bool		lo_incl;
	const char *hi;
	bool		hi_incl;
} mqrange;

static bool
mq_contains(const mqrange *q, const char *qual)
{
	if (q == NULL)
		return true;
	if (q->lo && (q->lo_incl ? strcmp(qual, q->lo) < 0 : strcmp(qual, q->lo) <= 0))
		return false;
	if (q->hi && (q->hi_incl ? strcmp(qual, q->hi) > 0 : strcmp(qual, q->hi) >= 0))
		return false;
	return true;
}

/* Row ranges [lo[i], hi[i]) of the model; nr = 0: every row. */
static bool
mr_contains(int nr, char (*lo)[16], char (*hi)[16], const char *row)
{
	if (nr == 0)
		return true;
	for (int i = 0; i < nr; i++)
		if (strcmp(row, lo[i]) >= 0 && strcmp(row, hi[i]) < 0)
			return true;
	return false;
}

static void
model_render(const uint32_t *maxv, int fam_mask, int nr, char (*lo)[16], char (*hi)[16],
			 int64_t ts_min, int64_t ts_max, const char *qual_only, const mqrange *qr,
			 char *out, size_t size)
{
	mentry	  **vis = malloc(sizeof(mentry *) * (nmodel + 1));
	int			nvis = 0;
	size_t		used = 0;

	out[0] = '\0';
	for (int i = 0; i < nmodel; i++)
	{
		mentry	   *e = &model[i];
		uint64_t	mask = model_trunc;
		int			newer_slots = 0;
		bool		newest_for_ts = true;

		if (e->type != WC_TYPE_PUT || e->seq < model_trunc || !(fam_mask & (1 << e->fam)))
			continue;
		if (!mr_contains(nr, lo, hi, e->row))
			continue;
		if (qual_only && strcmp(e->qual, qual_only) != 0)
			continue;
		if (!mq_contains(qr, e->qual))
			continue;
		for (int j = 0; j < nmodel; j++)
		{
			mentry	   *t = &model[j];

			if (t->fam != e->fam || strcmp(t->row, e->row) != 0 || t->seq < model_trunc)
				continue;
			if (t->type == WC_TYPE_DEL_FAMILY && t->seq > mask)
				mask = t->seq;
			if (t->type == WC_TYPE_DEL_COLUMN && strcmp(t->qual, e->qual) == 0 && t->seq > mask)
				mask = t->seq;
		}
		if (e->seq <= mask)
			continue;
		/* slots: distinct ts of unmasked PUT/DEL_VERSION entries newer than e->ts */
		for (int j = 0; j < nmodel; j++)
		{
			mentry	   *t = &model[j];
			bool		dup = false;

			if (t->fam != e->fam || strcmp(t->row, e->row) != 0 || strcmp(t->qual, e->qual) != 0 ||
				(t->type != WC_TYPE_PUT && t->type != WC_TYPE_DEL_VERSION) || t->seq <= mask)
				continue;
			if (t->ts == e->ts && t->seq > e->seq)
				newest_for_ts = false;
			if (t->ts <= e->ts)
				continue;
			for (int k = 0; k < j; k++)
			{
				mentry	   *u = &model[k];

				if (u->fam == t->fam && strcmp(u->row, t->row) == 0 && strcmp(u->qual, t->qual) == 0 &&
					(u->type == WC_TYPE_PUT || u->type == WC_TYPE_DEL_VERSION) && u->seq > mask &&
					u->ts == t->ts)
					dup = true;
			}
			if (!dup)
				newer_slots++;
		}
		if (!newest_for_ts)
			continue;
		if (maxv[e->fam] != 0 && (uint32_t) newer_slots >= maxv[e->fam])
			continue;
		if (e->ts < ts_min || e->ts > ts_max)
			continue;
		vis[nvis++] = e;
	}
	qsort(vis, nvis, sizeof(mentry *), cmp_out);
	for (int i = 0; i < nvis; i++)
		used += snprintf(out + used, size > used ? size - used : 0, "%s/%s:%s@%" PRId64 "=%s;",
						 vis[i]->row, mfam[vis[i]->fam], vis[i]->qual, vis[i]->ts, vis[i]->val);
	free(vis);
}

/*
 * With bulk, every write but the truncate is tagged and goes through ingest
 * (sorted files named by a log record) instead of the log's batch records.
 */
static void
test_model(bool bulk)
{
	char	   *dir = test_tmpdir(bulk ? "model-bulk" : "model");
	wc_family_opts fo[] = {{"a", 2, 0, WC_COMPRESS_LZ4, 0}, {"b", 0, 0, WC_COMPRESS_NONE, 0},
	{"c", 1, 0, WC_COMPRESS_ZSTD, 9}};
	uint32_t	maxv[] = {2, 0, 1};
	wc_db	   *db = open_db(dir, fo, 3, 4096);
	wc_batch   *b = wc_batch_new();
	uint64_t	rng = 12345;
	size_t		bufsize = 1 << 20;
	char	   *got = malloc(bufsize),
			   *want = malloc(bufsize);
	int			mismatches = 0,
				compared = 0;
	wc_err		err;

	wc_err_clear(&err);
	nmodel = 0;
	model_seq = model_trunc = 0;
	for (int round = 0; round < 120; round++)
	{
		int			nops = 1 + (int) (test_rand(&rng) % 40);

		if (round == 60)
		{
			CHECK_OK(wc_batch_truncate(b, &err), &err);
			model_trunc = ++model_seq;
		}

		for (int i = 0; i < nops; i++)
		{
			int			fam = (int) (test_rand(&rng) % 3);
			char		row[8],
						qual[4],
						val[12];
			int64_t		ts = (int64_t) (test_rand(&rng) % 6);
			int			kind = (int) (test_rand(&rng) % 100);

			/* rounds 40-79 anywhere; the others in a window that moves, so that
			 * flushed files overlap in chains or not at all (partial compactions) */
			if (round >= 40 && round < 80)
				snprintf(row, sizeof(row), "r%02d", (int) (test_rand(&rng) % 25));
			else
				snprintf(row, sizeof(row), "s%03d",
						 (round < 40 ? round * 2 : (round * 7) % 40 * 2) + (int) (test_rand(&rng) % 3));
			snprintf(qual, sizeof(qual), "q%d", (int) (test_rand(&rng) % 4));
			snprintf(val, sizeof(val), "v%d_%d", round, i);
			if (kind < 70)
			{
				CHECK_OK(wc_batch_put(b, mfam[fam], 1, row, strlen(row), qual, strlen(qual), ts,
									  val, strlen(val), &err), &err);
				model_add(fam, row, qual, ts, WC_TYPE_PUT, val);
			}
			else if (kind < 85)
			{
				CHECK_OK(wc_batch_delete_version(b, mfam[fam], 1, row, strlen(row), qual,
												 strlen(qual), ts, &err), &err);
				model_add(fam, row, qual, ts, WC_TYPE_DEL_VERSION, "");
			}
			else if (kind < 93)
			{
				CHECK_OK(wc_batch_delete_column(b, mfam[fam], 1, row, strlen(row), qual,
												strlen(qual), &err), &err);
				model_add(fam, row, qual, INT64_MAX, WC_TYPE_DEL_COLUMN, "");
			}
			else if (kind < 99)
			{
				CHECK_OK(wc_batch_delete_family(b, mfam[fam], 1, row, strlen(row), &err), &err);
				model_add(fam, row, "", INT64_MAX, WC_TYPE_DEL_FAMILY, "");
			}
		}
		CHECK_OK(wc_db_write(db, &b, 1, bulk ? 1 : 0, false, &err), &err);
		wc_batch_clear(b);
		CHECK_OK(wc_db_refresh(db, &err), &err);

		/* files do not straddle the phases */
		if (round == 39 || round == 79)
			CHECK_OK(wc_db_flush(db, &err), &err);
		switch (test_rand(&rng) % 8)
		{
			case 0:
			case 4:
				CHECK_OK(wc_db_flush(db, &err), &err);
				CHECK_OK(wc_db_maintain(db, &err), &err);
				break;
			case 1:
				/* a full compaction makes one file that overlaps all later ones */
				if (round >= 40 && round < 80)
					CHECK_OK(wc_db_compact(db, &err), &err);
				break;
			case 2:
				CHECK_OK(wc_db_maintain(db, &err), &err);
				break;
			case 3:
				wc_db_close(db);
				db = open_db(dir, fo, 3, 4096);
				break;
			default:
				break;
		}

		for (int q = 0; q < 8; q++)
		{
			wc_scan_opts o;
			wc_key_range r[3],
						qkr;
			wc_slice	famsl[3],
						qsl;
			char		lo[3][16],
						hi[3][16],
						qual[4],
						qlo[4],
						qhi[4];
			int			fam_mask = 7;
			int64_t		ts_min = INT64_MIN,
						ts_max = INT64_MAX;
			const char *qual_only = NULL;
			mqrange		mq,
					   *mqp = NULL;
			int			nr = (int) (test_rand(&rng) % 4);	/* 0: every row */
			int			at = 0;

			wc_scan_opts_init(&o);
			/* up to three sorted, disjoint row ranges (touching ones too) */
			for (int k = 0; k < nr; k++)
			{
				int			a = at + (int) (test_rand(&rng) % 12),
							z = a + (int) (test_rand(&rng) % 10);

				snprintf(lo[k], sizeof(lo[k]), "%c%02d", k == 0 && nr == 1 ? 'r' : 's',
						 k == 0 && nr == 1 ? a % 26 : a);
				snprintf(hi[k], sizeof(hi[k]), "%c%02d", k == 0 && nr == 1 ? 'r' : 's',
						 k == 0 && nr == 1 ? a % 26 + (z - a) : z);
				at = z;
				memset(&r[k], 0, sizeof(r[k]));
				r[k].start = (const uint8_t *) lo[k];
				r[k].start_len = strlen(lo[k]);
				r[k].start_bound = WC_INCLUSIVE;
				r[k].stop = (const uint8_t *) hi[k];
				r[k].stop_len = strlen(hi[k]);
				r[k].stop_bound = WC_EXCLUSIVE;
			}
			o.ranges = r;
			o.nranges = nr;
			if (test_rand(&rng) % 3 == 0)
			{
				/* a qualifier range: either end open, inclusive or exclusive */
				int			a = (int) (test_rand(&rng) % 5),
							z = a + (int) (test_rand(&rng) % 3);

				memset(&qkr, 0, sizeof(qkr));
				mq.lo = mq.hi = NULL;
				snprintf(qlo, sizeof(qlo), "q%d", a);
				snprintf(qhi, sizeof(qhi), "q%d", z);
				if (test_rand(&rng) % 4 != 0)
				{
					mq.lo = qlo;
					mq.lo_incl = test_rand(&rng) % 2;
					qkr.start = (const uint8_t *) qlo;
					qkr.start_len = strlen(qlo);
					qkr.start_bound = mq.lo_incl ? WC_INCLUSIVE : WC_EXCLUSIVE;
				}
				if (test_rand(&rng) % 4 != 0)
				{
					mq.hi = qhi;
					mq.hi_incl = test_rand(&rng) % 2;
					qkr.stop = (const uint8_t *) qhi;
					qkr.stop_len = strlen(qhi);
					qkr.stop_bound = mq.hi_incl ? WC_INCLUSIVE : WC_EXCLUSIVE;
				}
				o.qual_range = &qkr;
				mqp = &mq;
			}
			if (test_rand(&rng) % 3 == 0)
			{
				int			f = (int) (test_rand(&rng) % 3);

				fam_mask = 1 << f;
				famsl[0].data = (const uint8_t *) mfam[f];
				famsl[0].len = 1;
				o.families = famsl;
				o.nfamilies = 1;
			}
			if (test_rand(&rng) % 3 == 0)
			{
				ts_min = (int64_t) (test_rand(&rng) % 4);
				ts_max = ts_min + (int64_t) (test_rand(&rng) % 3);
				o.ts_min = ts_min;
				o.ts_max = ts_max;
			}
			if (test_rand(&rng) % 4 == 0)
			{
				snprintf(qual, sizeof(qual), "q%d", (int) (test_rand(&rng) % 4));
				qsl.data = (const uint8_t *) qual;
				qsl.len = strlen(qual);
				o.quals = &qsl;
				o.nquals = 1;
				qual_only = qual;
			}
			render(db, &o, got, bufsize);
			model_render(maxv, fam_mask, nr, lo, hi, ts_min, ts_max, qual_only, mqp,
						 want, bufsize);
			compared++;
			if (strcmp(got, want) != 0)
			{
				if (mismatches++ < 3)
				{
					size_t		d = 0;

					while (got[d] && got[d] == want[d])
						d++;
					d = d > 60 ? d - 60 : 0;
					fprintf(stderr, "model mismatch in round %d query %d (%d row ranges%s%s)\n  got:  %.300s\n  want: %.300s\n",
							round, q, nr, nr ? ", from " : "", nr ? lo[0] : "",
							got + d, want + d);
					if (mqp)
						fprintf(stderr, "  qualifier range %s%s, %s%s\n",
								mq.lo_incl ? "[" : "(", mq.lo ? mq.lo : "-",
								mq.hi ? mq.hi : "-", mq.hi_incl ? "]" : ")");
				}
			}
		}
	}
	CHECK(mismatches == 0, "%d of %d scans differ from the model%s", mismatches, compared,
		  bulk ? " (bulk writes)" : "");
	free(got);
	free(want);
	free(model);
	model = NULL;
	capmodel = 0;
	wc_batch_free(b);
	wc_db_close(db);
	test_rmdir(dir);
}

/* ---------------------------------------------------------------- sampling, qualifier seeks */

/* Counts the cells a scan returns and its stats. */
static uint64_t
count_cells(wc_db *db, const wc_scan_opts *o, wc_scan_stats *st)
{
	wc_scan    *s = NULL;
	wc_cell_view c;
	wc_err		err;
	uint64_t	n = 0;
	int			rc;

	wc_err_clear(&err);
	rc = wc_scan_open(db, o, &s, &err);
	CHECK_OK(rc, &err);
	if (rc != WC_OK)
		return 0;
	while ((rc = wc_scan_next(s, &c, &err)) == 1)
		n++;
	CHECK(rc == 0, "scan ended with %d: %s", rc, err.msg);
	if (st)
		wc_scan_get_stats(s, st);
	wc_scan_close(s);
	return n;
}

/*
 * wc_db_block_bounds: the pieces between consecutive bounds tile the key space
 * (scanned together, every cell once), hold about a block of each file, and a
 * scan of a few of them reads a few blocks.  A qualifier range seeks: a narrow
 * one scans far fewer entries than the cells it skips.
 */
static void
test_block_bounds(void)
{
	char	   *dir = test_tmpdir("bounds");
	wc_family_opts fo[] = {{"a", 0, 0, WC_COMPRESS_LZ4, 0}, {"b", 0, 0, WC_COMPRESS_NONE, 0}};
	wc_db	   *db = open_db(dir, fo, 2, 0);
	wc_batch   *b = wc_batch_new();
	wc_slice   *bounds = NULL;
	wc_slice	fa = {(const uint8_t *) "a", 1};
	wc_key_range *ranges;
	wc_scan_opts o;
	wc_scan_stats st;
	wc_err		err;
	int			n = 0,
				na = 0,
				sorted = 1;
	uint64_t	all,
				sum;

	wc_err_clear(&err);
	/* 2,000 rows of 10 qualifiers in a, every other row in b; two flushes so
	 * that files overlap */
	for (int half = 0; half < 2; half++)
	{
		for (int r = half; r < 2000; r += 2)
		{
			char		row[16],
						qual[8];

			snprintf(row, sizeof(row), "row%05d", r);
			for (int q = 0; q < 10; q++)
			{
				snprintf(qual, sizeof(qual), "q%d", q);
				put(b, "a", row, qual, 1, "value");
			}
			if (r % 2 == 0)
				put(b, "b", row, "x", 1, "v");
		}
		write_batch(db, b);
		CHECK_OK(wc_db_flush(db, &err), &err);
	}
	wc_scan_opts_init(&o);
	all = count_cells(db, &o, NULL);
	CHECK(all == 21000, "cells: %llu", (unsigned long long) all);

	CHECK_OK(wc_db_block_bounds(db, NULL, 0, &bounds, &n, &err), &err);
	free(bounds);
	CHECK_OK(wc_db_block_bounds(db, &fa, 1, &bounds, &na, &err), &err);
	CHECK(na > 50 && na < n, "bounds of a: %d, of all: %d", na, n);
	for (int i = 1; i < na; i++)
		if (wc_row_cmp(bounds[i - 1].data, bounds[i - 1].len, bounds[i].data, bounds[i].len) >= 0)
			sorted = 0;
	CHECK(sorted, "bounds sorted and unique");

	/* every piece (b[i-1], b[i]], with the open ends, read piece by piece */
	ranges = calloc(na + 1, sizeof(wc_key_range));
	for (int i = 0; i <= na; i++)
	{
		if (i > 0)
		{
			ranges[i].start = bounds[i - 1].data;
			ranges[i].start_len = bounds[i - 1].len;
			ranges[i].start_bound = WC_EXCLUSIVE;
		}
		if (i < na)
		{
			ranges[i].stop = bounds[i].data;
			ranges[i].stop_len = bounds[i].len;
			ranges[i].stop_bound = WC_INCLUSIVE;
		}
	}
	sum = 0;
	for (int i = 0; i <= na; i++)
	{
		wc_scan_opts_init(&o);
		o.ranges = &ranges[i];
		o.nranges = 1;
		sum += count_cells(db, &o, NULL);
	}
	CHECK(sum == all, "pieces one by one: %llu cells of %llu", (unsigned long long) sum,
		  (unsigned long long) all);
	/* all pieces in one scan (touching ranges are allowed) */
	wc_scan_opts_init(&o);
	o.ranges = ranges;
	o.nranges = na + 1;
	CHECK(count_cells(db, &o, NULL) == all, "pieces in one scan");
	/* one piece in ten reads about a tenth of the blocks */
	{
		wc_key_range *some = calloc(na / 10 + 1, sizeof(wc_key_range));
		int			k = 0;
		uint64_t	got;
		wc_scan_stats full;

		for (int i = 5; i <= na; i += 10)
			some[k++] = ranges[i];
		wc_scan_opts_init(&o);
		o.ranges = some;
		o.nranges = k;
		got = count_cells(db, &o, &st);
		wc_scan_opts_init(&o);
		count_cells(db, &o, &full);
		CHECK(got > all / 20 && got < all / 5, "a tenth of the pieces: %llu cells of %llu",
			  (unsigned long long) got, (unsigned long long) all);
		CHECK(st.blocks_read < full.blocks_read / 3, "blocks read: %llu of %llu",
			  (unsigned long long) st.blocks_read, (unsigned long long) full.blocks_read);
		free(some);
	}
	free(ranges);
	free(bounds);

	/* a qualifier range [q3, q4]: seeks instead of stepping through q0..q2, q5..q9 */
	{
		wc_key_range qr;
		wc_scan_stats filt;
		uint64_t	got;

		memset(&qr, 0, sizeof(qr));
		qr.start = (const uint8_t *) "q3";
		qr.start_len = 2;
		qr.start_bound = WC_INCLUSIVE;
		qr.stop = (const uint8_t *) "q4";
		qr.stop_len = 2;
		qr.stop_bound = WC_INCLUSIVE;
		wc_scan_opts_init(&o);
		o.families = &fa;
		o.nfamilies = 1;
		o.qual_range = &qr;
		got = count_cells(db, &o, &st);
		CHECK(got == 4000, "cells with q3 <= qualifier <= q4: %llu", (unsigned long long) got);
		CHECK(st.cells_scanned < 20000 / 2, "cells scanned with the range: %llu",
			  (unsigned long long) st.cells_scanned);
		/* the same by a prefix filter (no seek) scans every column */
		{
			wc_slice	qs[2] = {{(const uint8_t *) "q3", 2}, {(const uint8_t *) "q4", 2}};

			wc_scan_opts_init(&o);
			o.families = &fa;
			o.nfamilies = 1;
			o.quals = qs;
			o.nquals = 2;
			CHECK(count_cells(db, &o, &filt) == 4000, "the same cells by quals");
			CHECK(st.cells_scanned < filt.cells_scanned, "range scanned %llu, quals %llu",
				  (unsigned long long) st.cells_scanned, (unsigned long long) filt.cells_scanned);
		}
		/* an empty-stop range past every qualifier, and an exclusive start */
		qr.start = (const uint8_t *) "q9";
		qr.start_bound = WC_EXCLUSIVE;
		qr.stop_bound = WC_UNBOUNDED;
		wc_scan_opts_init(&o);
		o.qual_range = &qr;
		CHECK(count_cells(db, &o, NULL) == 1000, "qualifier > q9: only b's x");
	}

	wc_batch_free(b);
	wc_db_close(db);
	test_rmdir(dir);
}

/* wc_store_inspect: families of the files, unflushed log bytes, a missing store */
static void
test_inspect(void)
{
	char	   *dir = test_tmpdir("inspect");
	wc_family_opts fo[] = {{"zeta", 0, 0, WC_COMPRESS_LZ4, 0}, {"alpha", 0, 0, WC_COMPRESS_LZ4, 0},
	{"empty", 0, 0, WC_COMPRESS_LZ4, 0}};
	wc_db	   *db = open_db(dir, fo, 3, 0);
	wc_batch   *b = wc_batch_new();
	wc_store_info info;
	wc_err		err;

	wc_err_clear(&err);
	put(b, "zeta", "r1", "q", 1, "v");
	put(b, "alpha", "r1", "q", 1, "v");
	put(b, "alpha", "r2", "q", 1, "v");
	write_batch(db, b);
	CHECK_OK(wc_store_inspect(dir, &info, &err), &err);
	CHECK(info.nfamilies == 0 && info.files == 0 && info.log_bytes > 0,
		  "before a flush: %d families, %llu log bytes", info.nfamilies,
		  (unsigned long long) info.log_bytes);
	wc_store_info_free(&info);
	CHECK_OK(wc_db_flush(db, &err), &err);
	CHECK_OK(wc_store_inspect(dir, &info, &err), &err);
	CHECK(info.nfamilies == 2 && strcmp(info.families[0], "alpha") == 0 &&
		  strcmp(info.families[1], "zeta") == 0, "families after a flush: %d", info.nfamilies);
	CHECK(info.files == 2 && info.cells == 3 && info.log_bytes == 0 && info.recent == 0,
		  "files %llu cells %llu log bytes %llu", (unsigned long long) info.files,
		  (unsigned long long) info.cells, (unsigned long long) info.log_bytes);
	wc_store_info_free(&info);
	CHECK(wc_store_inspect("/nonexistent/widecol", &info, &err) == WC_NOT_FOUND,
		  "no store: %s", err.msg);
	wc_batch_free(b);
	wc_db_close(db);
	test_rmdir(dir);
}

/* ---------------------------------------------------------------- bulk writes */

/* Number of NNNNNN.sst files in dir. */
static int
count_ssts(const char *dir)
{
	char		cmd[4200];
	FILE	   *f;
	int			n = -1;

	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -c '\\.sst$'", dir);
	if ((f = popen(cmd, "r")) != NULL)
	{
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		pclose(f);
	}
	return n;
}

static void
bulk_put(wc_db *db, uint64_t tag, const char *row, const char *val, int rc_want)
{
	wc_batch   *b = wc_batch_new();
	wc_err		err;
	int			rc;

	put(b, "anchor", row, "a", 1, val);
	put(b, "contents", row, "html", 2, val);
	put(b, "contents", row, "html", 1, val);
	wc_err_clear(&err);
	rc = wc_db_write(db, &b, 1, tag, true, &err);
	CHECK(rc == rc_want, "bulk write of %s: rc=%d (%s), wanted %d", row, rc, err.msg, rc_want);
	wc_batch_free(b);
}

/* A cell of test_bulk_order: rowkey bytes (0x00 and 0xff among them), qualifier, ts. */
typedef struct order_cell
{
	uint8_t		row[32];
	size_t		row_len;
	char		qual[4];
	int64_t		ts;
} order_cell;

static int
order_cell_cmp(const void *a, const void *b)
{
	const order_cell *x = a;
	const order_cell *y = b;
	size_t		n = x->row_len < y->row_len ? x->row_len : y->row_len;
	int			c = n ? memcmp(x->row, y->row, n) : 0;

	if (c != 0)
		return c;
	if (x->row_len != y->row_len)
		return x->row_len < y->row_len ? -1 : 1;
	if ((c = strcmp(x->qual, y->qual)) != 0)
		return c;
	return x->ts > y->ts ? -1 : x->ts < y->ts;
}

/*
 * A bulk write whose cells come in random order (a load in hashed key order) is
 * sorted by an 8-byte key after the prefix its rowkeys share, and wc_cell_cmp
 * where those are equal (bulk.c, sort_by_keys): rowkeys sharing a long prefix,
 * ending inside the 8 bytes, prefixes of one another, holding 0x00 and 0xff,
 * read back in memcmp order, every cell once.
 *
 * Mode 0 writes them in random order to one family.  The others write them in
 * order, qualifier q0 to family anchor and q1 to contents (so the scan's order is
 * still the cells' order): mode 1 as they are (bulk.c writes both files in one
 * pass, with nothing to sort), mode 2 with the last cell first and mode 3 with
 * one cell written twice, the second time with another value, right after the
 * first (both found out of order after the scan began: sorted after all).
 *
 * Modes 4-6 write whole rows in random order, each row's cells in order (runs,
 * which bulk.c sorts instead of the cells: sort_runs): mode 4 to one family;
 * mode 5 too, but every seventh row's q1 cells come after all the rest (two
 * runs of one row: the cells are sorted after all); mode 6 with q0 to anchor
 * and q1 to contents (runs of both families, one after the other).
 */
static void
test_bulk_order(int mode)
{
	static const char *const dirs[] = {"bulk-order", "bulk-in-order", "bulk-last-first",
	"bulk-twice", "bulk-rows", "bulk-rows-split", "bulk-rows-fams"};
	char	   *dir = test_tmpdir(dirs[mode]);
	wc_db	   *db = open_db(dir, fams3, 3, 0);
	enum
	{
		NROWS = 700, NCELLS = NROWS * 6
	};
	order_cell *cells = malloc(sizeof(order_cell) * NCELLS);
	wc_batch   *b = wc_batch_new();
	wc_scan_opts o;
	wc_scan    *s = NULL;
	wc_cell_view c;
	uint64_t	rng = 4242;
	int			n = 0,
				bad = 0,
				read = 0,
				twice,
				rc;
	wc_err		err;

	wc_err_clear(&err);
	for (int r = 0; r < NROWS; r++)
	{
		order_cell row;
		/* the shared prefix, then 0 to 12 bytes from a small alphabet */
		static const uint8_t tail[] = {0x00, 0x01, '0', '9', 'a', 0x7f, 0x80, 0xff};
		size_t		extra = (size_t) (test_rand(&rng) % 13);

		memcpy(row.row, "tenant-0042/", 12);
		for (size_t k = 0; k < extra; k++)
			row.row[12 + k] = tail[test_rand(&rng) % sizeof(tail)];
		row.row_len = 12 + extra;
		for (int q = 0; q < 2; q++)
			for (int t = 1; t <= 3; t++)
			{
				cells[n] = row;
				snprintf(cells[n].qual, sizeof(cells[n].qual), "q%d", q);
				cells[n].ts = t;
				n++;
			}
	}
	/* the same rowkey twice makes the same cells twice: keep one of each */
	qsort(cells, n, sizeof(order_cell), order_cell_cmp);
	{
		int			m = 0;

		for (int i = 0; i < n; i++)
			if (m == 0 || order_cell_cmp(&cells[m - 1], &cells[i]) != 0)
				cells[m++] = cells[i];
		n = m;
	}
	twice = n / 2;
	if (mode == 0)
	{
		/* written in a random order */
		for (int i = n - 1; i > 0; i--)
		{
			int			j = (int) (test_rand(&rng) % (uint64_t) (i + 1));
			order_cell	t = cells[i];

			cells[i] = cells[j];
			cells[j] = t;
		}
	}
	if (mode >= 4)
	{
		/* whole rows in random order: the rows' first cells, shuffled */
		int		   *starts = malloc(sizeof(int) * (n + 1));
		int		   *put_order = malloc(sizeof(int) * n);
		int			nrows = 0,
					m = 0;

		for (int i = 0; i < n; i++)
			if (i == 0 || cells[i].row_len != cells[i - 1].row_len ||
				memcmp(cells[i].row, cells[i - 1].row, cells[i].row_len) != 0)
				starts[nrows++] = i;
		starts[nrows] = n;
		for (int i = nrows - 1; i > 0; i--)
		{
			int			j = (int) (test_rand(&rng) % (uint64_t) (i + 1));
			int			t = starts[i];

			starts[i] = starts[j];
			starts[j] = t;
		}
		for (int pass = 0; pass < 2; pass++)
			for (int r = 0; r < nrows; r++)
			{
				bool		split = mode == 5 && r % 7 == 0;
				const order_cell *first = &cells[starts[r]];

				/* a row's cells follow each other in cells */
				for (int i = starts[r]; i < n && cells[i].row_len == first->row_len &&
					 memcmp(cells[i].row, first->row, first->row_len) == 0; i++)
				{
					if ((pass == 1) != (split && cells[i].qual[1] == '1'))
						continue;
					put_order[m++] = i;
				}
			}
		CHECK(m == n, "mode %d: every cell put once: %d of %d", mode, m, n);
		for (int k = 0; k < m; k++)
		{
			int			i = put_order[k];
			const char *fam = mode != 6 || cells[i].qual[1] == '0' ? "anchor" : "contents";

			CHECK_OK(wc_batch_put(b, fam, strlen(fam), cells[i].row, cells[i].row_len, cells[i].qual,
								  strlen(cells[i].qual), cells[i].ts, "v", 1, &err), &err);
		}
		free(starts);
		free(put_order);
	}
	for (int k = 0; k < n && mode < 4; k++)
	{
		/* mode 2: the last cell first, then the others in order */
		int			i = mode == 2 ? (k + n - 1) % n : k;
		const char *fam = mode == 0 || cells[i].qual[1] == '0' ? "anchor" : "contents";

		CHECK_OK(wc_batch_put(b, fam, strlen(fam), cells[i].row, cells[i].row_len, cells[i].qual,
							  strlen(cells[i].qual), cells[i].ts, "v", 1, &err), &err);
		if (mode == 3 && i == twice)
			CHECK_OK(wc_batch_put(b, fam, strlen(fam), cells[i].row, cells[i].row_len,
								  cells[i].qual, strlen(cells[i].qual), cells[i].ts, "w", 1, &err),
					 &err);
	}
	tag_state[9] = WC_TXN_COMMITTED;
	CHECK_OK(wc_db_write(db, &b, 1, 9, false, &err), &err);
	CHECK(count_ssts(dir) == (mode == 0 || mode == 4 || mode == 5 ? 1 : 2),
		  "mode %d: the write was a bulk write: %d files", mode, count_ssts(dir));
	CHECK_OK(wc_db_refresh(db, &err), &err);

	if (mode == 0)
		qsort(cells, n, sizeof(order_cell), order_cell_cmp);	/* (modes 4-6 kept them sorted) */
	wc_scan_opts_init(&o);
	CHECK_OK(wc_scan_open(db, &o, &s, &err), &err);
	for (int i = 0; (rc = wc_scan_next(s, &c, &err)) == 1; i++)
	{
		if (i >= n || c.row_len != cells[i].row_len || memcmp(c.row, cells[i].row, c.row_len) != 0 ||
			c.qual_len != strlen(cells[i].qual) || memcmp(c.qual, cells[i].qual, c.qual_len) != 0 ||
			c.ts != cells[i].ts ||
			c.val_len != 1 || c.val[0] != (mode == 3 && i == twice ? 'w' : 'v'))
			bad++;
		read++;
	}
	CHECK(rc == 0, "scan: %s", err.msg);
	wc_scan_close(s);
	CHECK(bad == 0 && read == n, "bulk write, mode %d: %d of %d cells read back wrong or out of place; %d read",
		  mode, bad, n, read);
	wc_batch_free(b);
	wc_db_close(db);
	free(cells);
}

/*
 * A truncate and then a load in one transaction (TRUNCATE; COPY): the batches
 * up to the truncate go as one log record, the load after it as a bulk write,
 * both of the tag: nothing of either until the tag commits, then the load
 * alone (the truncate hides what came before it, also the same tag's
 * earlier writes); an aborted tag changes nothing.
 */
static void
test_ingest_after_truncate(void)
{
	char	   *dir = test_tmpdir("ingest-truncate");
	wc_db	   *w = open_db(dir, fams3, 3, 0);
	wc_db	   *r = open_db(dir, fams3, 3, 0);
	wc_batch   *b[3];
	wc_scan_opts o;
	wc_err		err;
	int			before;

	wc_err_clear(&err);
	wc_scan_opts_init(&o);
	memset(tag_state, 0, sizeof(tag_state));
	for (int i = 0; i < 3; i++)
		b[i] = wc_batch_new();
	put(b[0], "anchor", "old", "a", 1, "o");
	CHECK_OK(wc_db_write(w, b, 1, 0, false, &err), &err);
	wc_batch_clear(b[0]);

	for (int round = 0; round < 2; round++)
	{
		uint64_t	tag = 10 + round;

		put(b[0], "anchor", "before", "a", 1, "b");
		CHECK_OK(wc_batch_truncate(b[1], &err), &err);
		put(b[2], "anchor", "new1", "a", 1, "n");
		put(b[2], "contents", "new2", "html", 2, "n");
		tag_state[tag] = WC_TXN_IN_PROGRESS;
		before = count_ssts(dir);
		CHECK_OK(wc_db_write(w, b, 3, tag, false, &err), &err);
		CHECK(count_ssts(dir) == before + 2, "round %d: the load after the truncate is a bulk write: %d files, %d before",
			  round, count_ssts(dir), before);
		CHECK_OK(wc_db_refresh(r, &err), &err);
		EXPECT_SCAN(r, &o, "old/anchor:a@1=o;");
		tag_state[tag] = round == 0 ? WC_TXN_ABORTED : WC_TXN_COMMITTED;
		CHECK_OK(wc_db_refresh(r, &err), &err);
		EXPECT_SCAN(r, &o, round == 0 ? "old/anchor:a@1=o;" : "new1/anchor:a@1=n;new2/contents:html@2=n;");
		for (int i = 0; i < 3; i++)
			wc_batch_clear(b[i]);
	}
	wc_db_close(r);
	r = open_db(dir, fams3, 3, 0);
	EXPECT_SCAN(r, &o, "new1/anchor:a@1=n;new2/contents:html@2=n;");
	CHECK_OK(wc_db_flush(r, &err), &err);
	CHECK_OK(wc_db_compact(r, &err), &err);
	EXPECT_SCAN(r, &o, "new1/anchor:a@1=n;new2/contents:html@2=n;");
	for (int i = 0; i < 3; i++)
		wc_batch_free(b[i]);
	wc_db_close(r);
	wc_db_close(w);
}

static void
test_ingest(void)
{
	char	   *dir = test_tmpdir("ingest");
	wc_db	   *w = open_db(dir, fams3, 3, 0);
	wc_db	   *r = open_db(dir, fams3, 3, 0);
	wc_scan_opts o;
	wc_file_info *files;
	int			nfiles;
	wc_err		err;
	char		path[4200];

	wc_err_clear(&err);
	wc_scan_opts_init(&o);
	memset(tag_state, 0, sizeof(tag_state));

	/* in progress: nothing visible, the files exist; committed: all of it at once */
	tag_state[5] = WC_TXN_IN_PROGRESS;
	bulk_put(w, 5, "com.cnn.www", "v5", WC_OK);
	CHECK(count_ssts(dir) == 2, "two files (one per family) for the bulk write: %d", count_ssts(dir));
	CHECK_OK(wc_db_refresh(r, &err), &err);
	EXPECT_SCAN(r, &o, "");
	/* a compaction meanwhile (orphan removal included) keeps the files */
	CHECK_OK(wc_db_compact(r, &err), &err);
	CHECK(count_ssts(dir) == 2, "the in-progress write's files survive a compaction: %d", count_ssts(dir));
	CHECK_OK(wc_db_files(r, &files, &nfiles, &err), &err);
	CHECK(nfiles == 0, "an in-progress bulk write's files are not listed: %d", nfiles);
	wc_file_info_free(files, nfiles);
	tag_state[5] = WC_TXN_COMMITTED;
	CHECK_OK(wc_db_refresh(r, &err), &err);
	EXPECT_SCAN(r, &o, "com.cnn.www/anchor:a@1=v5;com.cnn.www/contents:html@2=v5;"
				"com.cnn.www/contents:html@1=v5;");
	CHECK_OK(wc_db_files(r, &files, &nfiles, &err), &err);
	CHECK(nfiles == 2 && files[0].level == 0 && files[1].level == 0,
		  "a committed bulk write's 2 files are listed before any flush: %d", nfiles);
	wc_file_info_free(files, nfiles);

	/* aborted: never visible, its files are orphans that a compaction removes */
	tag_state[6] = WC_TXN_ABORTED;
	bulk_put(w, 6, "com.example.www", "v6", WC_OK);
	CHECK_OK(wc_db_refresh(r, &err), &err);
	EXPECT_SCAN(r, &o, "com.cnn.www/anchor:a@1=v5;com.cnn.www/contents:html@2=v5;"
				"com.cnn.www/contents:html@1=v5;");

	/* a reopened handle replays the log: the committed files again, not the aborted */
	wc_db_close(r);
	r = open_db(dir, fams3, 3, 0);
	EXPECT_SCAN(r, &o, "com.cnn.www/anchor:a@1=v5;com.cnn.www/contents:html@2=v5;"
				"com.cnn.www/contents:html@1=v5;");

	/* a flush moves the committed files into the manifest as they are; a
	 * compaction merges them and removes the aborted write's files */
	CHECK_OK(wc_db_flush(r, &err), &err);
	CHECK_OK(wc_db_files(r, &files, &nfiles, &err), &err);
	CHECK(nfiles == 2, "the flush lists the 2 ingested files: %d", nfiles);
	for (int i = 0; i < nfiles; i++)
		CHECK(files[i].level == 0 && files[i].cells >= 1, "ingested file %d: level %d, %llu cells",
			  i, files[i].level, (unsigned long long) files[i].cells);
	wc_file_info_free(files, nfiles);
	CHECK(count_ssts(dir) == 4, "2 live + 2 orphan files before the compaction: %d", count_ssts(dir));
	CHECK_OK(wc_db_compact(r, &err), &err);
	CHECK(count_ssts(dir) == 2, "one file per family after the compaction: %d", count_ssts(dir));
	EXPECT_SCAN(r, &o, "com.cnn.www/anchor:a@1=v5;com.cnn.www/contents:html@2=v5;"
				"com.cnn.www/contents:html@1=v5;");
	CHECK_OK(wc_db_refresh(w, &err), &err);
	EXPECT_SCAN(w, &o, "com.cnn.www/anchor:a@1=v5;com.cnn.www/contents:html@2=v5;"
				"com.cnn.www/contents:html@1=v5;");

	/* a later ordinary write of the same cell wins; a later bulk write wins too */
	{
		wc_batch   *b = wc_batch_new();

		put(b, "contents", "com.cnn.www", "html", 2, "small");
		CHECK_OK(wc_db_write(w, &b, 1, 0, false, &err), &err);
		wc_batch_free(b);
	}
	CHECK_OK(wc_db_refresh(r, &err), &err);
	EXPECT_SCAN(r, &o, "com.cnn.www/anchor:a@1=v5;com.cnn.www/contents:html@2=small;"
				"com.cnn.www/contents:html@1=v5;");
	bulk_put(w, 7, "com.cnn.www", "v7", WC_OK);
	CHECK_OK(wc_db_refresh(r, &err), &err);
	EXPECT_SCAN(r, &o, "com.cnn.www/anchor:a@1=v7;com.cnn.www/contents:html@2=v7;"
				"com.cnn.www/contents:html@1=v7;");

	/* a committed record whose file is gone while its log is live: corruption,
	 * named, in a process that reads the log afresh */
	bulk_put(w, 8, "org.lost.www", "v8", WC_OK);
	wc_db_close(r);
	snprintf(path, sizeof(path), "ls -t '%s'/*.sst | head -n 1 | xargs rm -f", dir);
	CHECK(system(path) == 0, "removing the newest sorted file");
	{
		wc_open_opts oo;
		wc_db	   *x = NULL;
		int			rc;

		memset(&oo, 0, sizeof(oo));
		oo.families = fams3;
		oo.nfamilies = 3;
		oo.resolve = resolve_tag;
		wc_err_clear(&err);
		rc = wc_db_open(dir, &oo, &x, &err);
		CHECK(rc == WC_CORRUPT && strstr(err.msg, "ingest record") != NULL && strstr(err.msg, ".sst") != NULL,
			  "open with an ingested file missing: rc=%d: %s", rc, err.msg);
		if (x)
			wc_db_close(x);
	}
	wc_db_close(w);
	test_rmdir(dir);
}

/*
 * Many small bulk writes, each closing its log, then a truncate and more: a flush
 * takes the run of their logs in one manifest write (flush.c, flush_ingest_run),
 * moving every committed write's files, none of the aborted ones', and applying
 * the truncate to what it covers; a second handle and a reopened one read the
 * same.
 */
static void
test_ingest_run(void)
{
	char	   *dir = test_tmpdir("ingest-run");
	wc_db	   *w = open_db(dir, fams3, 3, 0);
	wc_db	   *r = open_db(dir, fams3, 3, 0);
	wc_scan_opts o;
	wc_file_info *files;
	wc_manifest m;
	uint64_t	before;
	int			nfiles,
				committed = 0;
	wc_err		err;
	char		want[8192] = "",
				row[32],
				val[32];

	wc_err_clear(&err);
	wc_scan_opts_init(&o);
	memset(tag_state, 0, sizeof(tag_state));
	for (int i = 0; i < 40; i++)
	{
		uint64_t	tag = 100 + (uint64_t) i;

		tag_state[tag] = i % 7 == 3 ? WC_TXN_ABORTED : WC_TXN_COMMITTED;
		snprintf(row, sizeof(row), "r%02d", i);
		snprintf(val, sizeof(val), "v%d", i);
		bulk_put(w, tag, row, val, WC_OK);
		if (tag_state[tag] == WC_TXN_COMMITTED)
		{
			size_t		len = strlen(want);

			snprintf(want + len, sizeof(want) - len, "%s/anchor:a@1=%s;%s/contents:html@2=%s;%s/contents:html@1=%s;",
					 row, val, row, val, row, val);
			committed++;
		}
	}
	CHECK_OK(wc_db_refresh(r, &err), &err);
	CHECK(r->nlogs >= 40, "each bulk write closed its log: %d live logs", r->nlogs);
	EXPECT_SCAN(r, &o, want);

	memset(&m, 0, sizeof(m));
	CHECK_OK(wc_db_read_manifest(r, &m, &err), &err);
	before = m.version;
	wc_manifest_clear(&m);
	CHECK_OK(wc_db_flush(r, &err), &err);
	CHECK_OK(wc_db_read_manifest(r, &m, &err), &err);
	/* the flush's own switch of the (empty) active log, then the run */
	CHECK(m.version - before <= 3 && m.nlogs == 1, "%llu manifest writes for the flush of %d logs, %d left",
		  (unsigned long long) (m.version - before), 40, m.nlogs);
	wc_manifest_clear(&m);
	CHECK_OK(wc_db_files(r, &files, &nfiles, &err), &err);
	CHECK(nfiles == 2 * committed, "the flush lists the %d committed writes' 2 files each: %d files",
		  committed, nfiles);
	wc_file_info_free(files, nfiles);
	EXPECT_SCAN(r, &o, want);
	CHECK_OK(wc_db_refresh(w, &err), &err);
	EXPECT_SCAN(w, &o, want);
	wc_db_close(r);
	r = open_db(dir, fams3, 3, 0);
	EXPECT_SCAN(r, &o, want);

	/* a truncate among bulk writes: the run's flush drops what it covers */
	{
		wc_batch   *b = wc_batch_new();

		CHECK_OK(wc_batch_truncate(b, &err), &err);
		CHECK_OK(wc_db_write(w, &b, 1, 0, false, &err), &err);
		wc_batch_free(b);
	}
	tag_state[200] = tag_state[201] = WC_TXN_COMMITTED;
	bulk_put(w, 200, "after1", "x", WC_OK);	/* in the truncate's log */
	bulk_put(w, 201, "after2", "y", WC_OK);
	CHECK_OK(wc_db_flush(r, &err), &err);
	EXPECT_SCAN(r, &o, "after1/anchor:a@1=x;after1/contents:html@2=x;after1/contents:html@1=x;"
				"after2/anchor:a@1=y;after2/contents:html@2=y;after2/contents:html@1=y;");
	CHECK_OK(wc_db_files(r, &files, &nfiles, &err), &err);
	CHECK(nfiles == 4, "after the truncate, only the last two writes' 2 files each are listed: %d", nfiles);
	wc_file_info_free(files, nfiles);
	wc_db_close(r);
	wc_db_close(w);
	test_rmdir(dir);
}

/* The value of cell i of test_ingest_helpers: 300 bytes, compressible, its own. */
static void
helper_value(int i, char *v, size_t len)
{
	for (size_t k = 0; k < len; k++)
		v[k] = (char) ('a' + (i * 7 + (int) k / 13) % 26);
	snprintf(v, 12, "%010d", i);
	v[10] = '-';
}

/*
 * A bulk write large enough for the helper threads: each lz4 family gets 3 MB of
 * blocks (sst_builder.c's jobs of 512 KiB), the batch 9 MB (batch.c's pages made
 * resident ahead past 4 MiB); the third family is stored plain, without one.  It
 * reads back whole; a try whose Nth write fails (N = 1..24) fails cleanly,
 * leaving no file, whichever job the fault met.
 */
static void
test_ingest_helpers(void)
{
	char	   *dir = test_tmpdir("ingest-helpers");
	wc_db	   *db = open_db(dir, fams3, 3, 0);
	wc_batch   *b = wc_batch_new();
	enum
	{
		N = 30000, VLEN = 300
	};
	char		row[16],
				val[VLEN];
	int			failures = 0,
				sst_failures = 0,
				successes = 0;
	wc_err		err;

	wc_err_clear(&err);
	for (int i = 0; i < N; i++)
	{
		snprintf(row, sizeof(row), "r%06d", i / 3);
		helper_value(i, val, VLEN);
		if (wc_batch_put(b, fams3[i % 3].name, strlen(fams3[i % 3].name), row, strlen(row),
						 "q", 1, 1, val, VLEN, &err) != WC_OK)
			failures++;
	}
	CHECK(failures == 0, "%d puts failed: %s", failures, err.msg);
	CHECK(wc_batch_bytes(b) > 8 * 1024 * 1024, "a batch of %zu bytes", wc_batch_bytes(b));
	for (int n = 1; n <= 24; n++)
	{
		int			before = count_ssts(dir),
					rc;

		tag_state[100 + n] = WC_TXN_IN_PROGRESS;
		wc_fault_set(WC_FAULT_WRITE, n, ENOSPC);
		wc_err_clear(&err);
		rc = wc_db_write(db, &b, 1, (uint64_t) (100 + n), true, &err);
		wc_fault_set(WC_FAULT_WRITE, 0, 0);
		if (rc == WC_OK)
		{
			tag_state[100 + n] = WC_TXN_COMMITTED;
			successes++;
			continue;
		}
		failures++;
		if (strstr(err.msg, ".sst") != NULL)
			sst_failures++;
		CHECK(rc == WC_NOSPACE && strstr(err.msg, "No space") != NULL, "write fault %d: rc=%d %s",
			  n, rc, err.msg);
		CHECK(count_ssts(dir) == before, "write fault %d: %d sorted files, %d before", n,
			  count_ssts(dir), before);
		tag_state[100 + n] = WC_TXN_ABORTED;
		wc_db_close(db);
		db = open_db(dir, fams3, 3, 0);
	}
	/* the same cells each time: a success writes them again, as new versions of themselves */
	CHECK(sst_failures >= 8 && successes >= 1, "the sweep: %d writes failed (%d of a sorted file), %d succeeded",
		  failures, sst_failures, successes);
	{
		wc_scan_opts o;
		wc_scan    *s = NULL;
		wc_cell_view c;
		int			read = 0,
					bad = 0,
					rc;

		CHECK_OK(wc_db_refresh(db, &err), &err);
		wc_scan_opts_init(&o);
		CHECK_OK(wc_scan_open(db, &o, &s, &err), &err);
		while (s != NULL && (rc = wc_scan_next(s, &c, &err)) == 1)
		{
			int			i = atoi((const char *) c.val);

			helper_value(i, val, VLEN);
			snprintf(row, sizeof(row), "r%06d", i / 3);
			if (i < 0 || i >= N || c.val_len != VLEN || memcmp(c.val, val, VLEN) != 0 ||
				c.row_len != strlen(row) || memcmp(c.row, row, c.row_len) != 0 ||
				c.family_len != strlen(fams3[i % 3].name) ||
				memcmp(c.family, fams3[i % 3].name, c.family_len) != 0)
				bad++;
			read++;
		}
		CHECK(s != NULL && rc == 0, "scan: %s", err.msg);
		wc_scan_close(s);
		CHECK(read == N && bad == 0, "read back %d of %d cells, %d wrong", read, N, bad);
	}
	wc_batch_free(b);
	wc_db_close(db);
	test_rmdir(dir);
}

/*
 * A bulk write whose Nth write fails, for N = 1..40: a write that fails does so
 * cleanly (no space) and leaves no sorted file behind, whichever of its files
 * the fault hit; the committed ones stay readable throughout, through
 * compactions and a reopen.
 */
static void
test_ingest_faults(void)
{
	char	   *dir = test_tmpdir("ingest-faults");
	wc_db	   *db = open_db(dir, fams3, 3, 0);
	wc_scan_opts o;
	wc_batch   *b = wc_batch_new();
	int			failures = 0,
				successes = 0,
				n;
	wc_err		err;

	wc_scan_opts_init(&o);
	memset(tag_state, 0, sizeof(tag_state));
	/* enough cells for several blocks in each of the three files */
	for (int i = 0; i < 3000; i++)
	{
		char		row[16];

		snprintf(row, sizeof(row), "r%05d", i);
		put(b, fams3[i % 3].name, row, "q", 1, "a value of a few bytes, repeated, repeated");
	}
	/* one tag per try, as PostgreSQL gives every transaction its own id; the
	 * faults past the calls a bulk write makes hit nothing */
	for (n = 1; n <= 40; n++)
	{
		int			before = count_ssts(dir),
					rc;
		char	   *got = malloc(1 << 20);

		tag_state[10 + n] = WC_TXN_IN_PROGRESS;
		wc_fault_set(WC_FAULT_WRITE, n, ENOSPC);
		wc_err_clear(&err);
		rc = wc_db_write(db, &b, 1, (uint64_t) (10 + n), true, &err);
		wc_fault_set(WC_FAULT_WRITE, 0, 0);
		if (rc == WC_OK)
		{
			tag_state[10 + n] = WC_TXN_COMMITTED;
			successes++;
		}
		else
		{
			failures++;
			CHECK(rc == WC_NOSPACE && strstr(err.msg, "No space") != NULL,
				  "write fault %d: rc=%d %s", n, rc, err.msg);
			CHECK(count_ssts(dir) == before, "write fault %d: %d sorted files, %d before", n,
				  count_ssts(dir), before);
			/* the caller does not commit a failed write, and reopens the handle (a
			 * failed manifest write makes it refuse writes), as the FDW does */
			tag_state[10 + n] = WC_TXN_ABORTED;
			wc_db_close(db);
			db = open_db(dir, fams3, 3, 0);
		}
		CHECK_OK(wc_db_refresh(db, &err), &err);
		render(db, &o, got, 1 << 20);
		if (successes == 0)
			CHECK(got[0] == '\0', "write fault %d: nothing visible: %.40s", n, got);
		else
			CHECK(strncmp(got, "r00000/anchor:q@1=", 18) == 0 && strstr(got, "r02999/people:q@1=") != NULL,
				  "write fault %d: the committed writes visible: %.60s", n, got);
		free(got);
		if (n % 8 == 0)
			CHECK_OK(wc_db_compact(db, &err), &err);
	}
	/* failing: the numbers' reservation, the log append and each of the three files */
	CHECK(failures >= 5 && successes >= 30, "the sweep: %d writes failed, %d succeeded", failures,
		  successes);
	/* a reopened handle replays the log: the aborted tries are skipped */
	wc_db_close(db);
	db = open_db(dir, fams3, 3, 0);
	{
		char	   *got = malloc(1 << 20);

		render(db, &o, got, 1 << 20);
		CHECK(strncmp(got, "r00000/anchor:q@1=", 18) == 0 && strstr(got, "r02999/people:q@1=") != NULL,
			  "after a reopen: %.60s", got);
		free(got);
	}
	CHECK_OK(wc_db_compact(db, &err), &err);
	CHECK(count_ssts(dir) == 3, "three files after a compaction: %d", count_ssts(dir));
	wc_batch_free(b);
	wc_db_close(db);
	test_rmdir(dir);
}

/*
 * A refresh whose resolve callback fails reports the error and, at the next
 * refresh, reads the record again: the committed write is not lost to that
 * handle (it once skipped the record for good).
 */
static void
test_resolve_failure(void)
{
	char	   *dir = test_tmpdir("resolvefail");
	wc_family_opts fams[] = {{"f", 0, 0, WC_COMPRESS_NONE, 0}};
	wc_db	   *w = open_db(dir, fams, 1, 0);
	wc_db	   *r = open_db(dir, fams, 1, 0);
	wc_batch   *b = wc_batch_new();
	wc_scan_opts all;
	wc_err		err;

	/* in progress as written, so that no handle indexes it before r reads it (with
	 * shared memtables a record another handle indexed is not resolved again) */
	tag_state[7] = WC_TXN_IN_PROGRESS;
	put(b, "f", "a", "q", 1, "tagged");
	wc_err_clear(&err);
	CHECK_OK(wc_db_write(w, &b, 1, 7, false, &err), &err);
	wc_batch_clear(b);
	put(b, "f", "b", "q", 1, "untagged");
	write_batch(w, b);
	tag_state[7] = WC_TXN_COMMITTED;

	resolve_fails_for = 7;
	wc_err_clear(&err);
	CHECK(wc_db_refresh(r, &err) == WC_CALLBACK, "the failed resolve is reported: %s", err.msg);
	resolve_fails_for = 0;
	wc_err_clear(&err);
	CHECK_OK(wc_db_refresh(r, &err), &err);
	wc_scan_opts_init(&all);
	EXPECT_SCAN(r, &all, "a/f:q@1=tagged;b/f:q@1=untagged;");

	wc_batch_free(b);
	wc_db_close(r);
	wc_db_close(w);
	test_rmdir(dir);
}

/*
 * A prepared transaction's record (WC_TXN_PREPARED) is read as in progress, and a
 * flush does not wait for it: WC_HELD at once (a prepared transaction may stay for
 * days), while maintenance and compaction go on around it.  Its fate, once
 * set, applies as for any tag: committed, visible and flushed; aborted, gone.
 */
/*
 * wc_db_flush_nowait: a transaction in the logs still in progress makes it return
 * WC_BUSY at once (wc_db_flush would wait for the outcome), and so does another
 * handle holding the flush lock; once the outcome is known, it flushes everything.
 */
static void
test_flush_nowait(void)
{
	char	   *dir = test_tmpdir("flush-nowait");
	wc_family_opts fams[] = {{"f", 0, 0, WC_COMPRESS_NONE, 0}};
	wc_db	   *w = open_db(dir, fams, 1, 0);
	wc_db	   *r = open_db(dir, fams, 1, 0);
	wc_batch   *b = wc_batch_new();
	wc_scan_opts all;
	wc_file_info *files = NULL;
	int			nfiles = 0;
	wc_err		err;
	struct timespec t0,
				t1;
	int			rc;

	wc_scan_opts_init(&all);
	put(b, "f", "a", "q", 1, "committed");
	write_batch(w, b);
	tag_state[42] = WC_TXN_IN_PROGRESS;
	put(b, "f", "b", "q", 1, "in flight");
	wc_err_clear(&err);
	CHECK_OK(wc_db_write(w, &b, 1, 42, false, &err), &err);
	wc_batch_clear(b);

	CHECK_OK(wc_db_refresh(r, &err), &err);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = wc_db_flush_nowait(r, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(rc == WC_BUSY, "a record in progress: %d %s", rc, err.msg);
	CHECK(t1.tv_sec - t0.tv_sec < 2, "returned at once: %ld s", (long) (t1.tv_sec - t0.tv_sec));
	EXPECT_SCAN(r, &all, "a/f:q@1=committed;");

	/* another handle flushing: WC_BUSY too */
	wc_err_clear(&err);
	CHECK_OK(wc_db_lock(w, WC_LOCK_FLUSH, true, &err), &err);
	tag_state[42] = WC_TXN_COMMITTED;
	rc = wc_db_flush_nowait(r, &err);
	CHECK(rc == WC_BUSY, "another flusher: %d %s", rc, err.msg);
	wc_db_unlock(w, WC_LOCK_FLUSH);

	wc_err_clear(&err);
	CHECK_OK(wc_db_flush_nowait(r, &err), &err);
	EXPECT_SCAN(r, &all, "a/f:q@1=committed;b/f:q@1=in flight;");
	CHECK_OK(wc_db_files(r, &files, &nfiles, &err), &err);
	CHECK(nfiles == 1 && files[0].cells == 2, "everything in one sorted file: %d files", nfiles);
	wc_file_info_free(files, nfiles);
	wc_batch_free(b);
	wc_db_close(r);
	wc_db_close(w);
	tag_state[42] = WC_TXN_COMMITTED;
	test_rmdir(dir);
}

static void
test_prepared(void)
{
	char	   *dir = test_tmpdir("prepared");
	wc_family_opts fams[] = {{"f", 0, 0, WC_COMPRESS_NONE, 0}};
	wc_db	   *w = open_db(dir, fams, 1, 0);
	wc_db	   *r = open_db(dir, fams, 1, 0);
	wc_batch   *b = wc_batch_new();
	wc_scan_opts all;
	wc_err		err;
	struct timespec t0,
				t1;

	wc_scan_opts_init(&all);
	tag_state[40] = WC_TXN_PREPARED;
	tag_state[41] = WC_TXN_PREPARED;
	put(b, "f", "p", "q", 1, "prepared");
	wc_err_clear(&err);
	CHECK_OK(wc_db_write(w, &b, 1, 40, false, &err), &err);
	wc_batch_clear(b);
	put(b, "f", "x", "q", 1, "other");
	write_batch(w, b);
	wc_batch_clear(b);
	put(b, "f", "y", "q", 1, "rolled back");
	CHECK_OK(wc_db_write(w, &b, 1, 41, false, &err), &err);

	CHECK_OK(wc_db_refresh(r, &err), &err);
	EXPECT_SCAN(r, &all, "x/f:q@1=other;");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(wc_db_flush(r, &err) == WC_HELD, "a flush meets the prepared record: %d %s",
		  err.code, err.msg);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(t1.tv_sec - t0.tv_sec < 5, "and does not wait for it: %ld s",
		  (long) (t1.tv_sec - t0.tv_sec));
	CHECK(strstr(err.msg, "prepared transaction") != NULL, "the message says why: %s", err.msg);
	wc_err_clear(&err);
	CHECK_OK(wc_db_maintain(r, &err), &err);
	CHECK_OK(wc_db_compact(r, &err), &err);
	/* writes go on meanwhile */
	wc_batch_clear(b);
	put(b, "f", "z", "q", 2, "later");
	write_batch(w, b);
	CHECK_OK(wc_db_refresh(r, &err), &err);
	EXPECT_SCAN(r, &all, "x/f:q@1=other;z/f:q@2=later;");

	/* COMMIT PREPARED of one, ROLLBACK PREPARED of the other */
	tag_state[40] = WC_TXN_COMMITTED;
	tag_state[41] = WC_TXN_ABORTED;
	CHECK_OK(wc_db_refresh(r, &err), &err);
	EXPECT_SCAN(r, &all, "p/f:q@1=prepared;x/f:q@1=other;z/f:q@2=later;");
	CHECK_OK(wc_db_flush(r, &err), &err);
	CHECK_OK(wc_db_refresh(w, &err), &err);
	EXPECT_SCAN(w, &all, "p/f:q@1=prepared;x/f:q@1=other;z/f:q@2=later;");
	wc_db_close(r);
	r = open_db(dir, fams, 1, 0);
	EXPECT_SCAN(r, &all, "p/f:q@1=prepared;x/f:q@1=other;z/f:q@2=later;");

	tag_state[40] = tag_state[41] = WC_TXN_COMMITTED;
	wc_batch_free(b);
	wc_db_close(r);
	wc_db_close(w);
	test_rmdir(dir);
}

/* ---------------------------------------------------------------- snapshots */

/*
 * Snapshots (DESIGN.md, "Snapshots").  A snapshot here is PostgreSQL's shape: it
 * sees every committed tag below xmax except those in its running list.  The
 * horizon is a variable the test moves.
 */
static uint64_t test_horizon;

static uint64_t
horizon_now(void *arg)
{
	(void) arg;
	return test_horizon;
}

/* A store of fams3, opened with the horizon callback (and open_recent_max). */
static wc_db *
open_db_horizon(const char *dir)
{
	wc_db	   *db;

	open_with_horizon = true;
	db = open_db(dir, fams3, 3, 0);
	open_with_horizon = false;
	return db;
}

static void
write_tagged(wc_db *db, uint64_t tag, const char *row, const char *qual, int64_t ts,
			 const char *val, bool del_column)
{
	wc_batch   *b = wc_batch_new();
	wc_err		err;

	wc_err_clear(&err);
	if (del_column)
		CHECK_OK(wc_batch_delete_column(b, "anchor", 6, row, strlen(row), qual, strlen(qual),
										&err), &err);
	else
		put(b, "anchor", row, qual, ts, val);
	CHECK_OK(wc_db_write(db, &b, 1, tag, false, &err), &err);
	wc_batch_free(b);
	CHECK_OK(wc_db_refresh(db, &err), &err);
}

/*
 * The snapshot as sets (wc.h, snapshot_sets) decides as the callback does,
 * without asking it about what the snapshot sees: a write of a transaction
 * that ran when the snapshot began, one after its xmax, one below its xmin;
 * and thousands of remembered writes, as a long transaction leaves.
 */
static void
test_snapshot_sets(void)
{
	char	   *dir = test_tmpdir("snapsets");
	wc_db	   *db;
	wc_scan_opts cb,
				sets;
	test_snap	s = {.xmax = 53};
	uint64_t	running[4];
	char		row[16];

	test_horizon = 1;
	db = open_db_horizon(dir);
	wc_scan_opts_init(&cb);
	cb.tag_visible = snap_visible;
	cb.tag_visible_arg = &s;
	write_tagged(db, 50, "a", "q", 1, "v1", false);
	write_tagged(db, 51, "b", "q", 1, "v1", false);
	write_tagged(db, 52, "c", "q", 1, "v1", false);
	write_tagged(db, 53, "a", "q", 2, "v2", false);
	s.running[s.nrunning++] = 51;

	/* the callback alone: asked about each of the four */
	s.asked = 0;
	EXPECT_SCAN(db, &cb, "a/anchor:q@1=v1;c/anchor:q@1=v1;");
	CHECK(s.asked >= 4, "the callback was asked %d times", s.asked);

	/* sets: asked about none, or (ask_unseen) about the two it does not see */
	sets = cb;
	snap_as_sets(&sets, &s, running, false);
	s.asked = 0;
	EXPECT_SCAN(db, &sets, "a/anchor:q@1=v1;c/anchor:q@1=v1;");
	CHECK(s.asked == 0, "sets asked %d times, want 0", s.asked);
	sets.ask_unseen = true;
	s.asked = 0;
	EXPECT_SCAN(db, &sets, "a/anchor:q@1=v1;c/anchor:q@1=v1;");
	CHECK(s.asked == 2, "sets with ask_unseen asked %d times, want 2", s.asked);
	/* below snapshot_min, seen whatever running says */
	sets.ask_unseen = false;
	sets.snapshot_min = 52;
	running[0] = 50;
	EXPECT_SCAN(db, &sets, "a/anchor:q@1=v1;b/anchor:q@1=v1;c/anchor:q@1=v1;");
	sets.snapshot_min = 0;
	EXPECT_SCAN(db, &sets, "b/anchor:q@1=v1;c/anchor:q@1=v1;");

	/* 2,000 remembered writes after the four: two of them still running */
	for (int i = 0; i < 2000; i++)
	{
		snprintf(row, sizeof(row), "m%04d", i);
		write_tagged(db, 1000 + (uint64_t) i, row, "q", 1, "w", false);
	}
	s.xmax = 2990;
	s.nrunning = 0;
	s.running[s.nrunning++] = 2500;
	s.running[s.nrunning++] = 1010;
	s.running[s.nrunning++] = 51;
	sets = cb;
	snap_as_sets(&sets, &s, running, false);
	s.asked = 0;
	{
		wc_key_range r = {(const uint8_t *) "m0009", 5, WC_INCLUSIVE,
		(const uint8_t *) "m0011", 5, WC_INCLUSIVE};

		cb.ranges = sets.ranges = &r;
		cb.nranges = sets.nranges = 1;
		EXPECT_SCAN(db, &sets, "m0009/anchor:q@1=w;m0011/anchor:q@1=w;");
		CHECK(s.asked == 0, "sets asked %d times about 2,004 writes, want 0", s.asked);
		EXPECT_SCAN(db, &cb, "m0009/anchor:q@1=w;m0011/anchor:q@1=w;");
		CHECK(s.asked >= 2004, "the callback was asked %d times", s.asked);
		cb.nranges = sets.nranges = 0;
		cb.ranges = sets.ranges = NULL;
	}

	/* commits out of tag order (a transaction with an older xid commits later) */
	write_tagged(db, 3100, "o1", "q", 1, "late tag first", false);
	write_tagged(db, 3050, "o2", "q", 1, "early tag later", false);
	write_tagged(db, 3075, "o3", "q", 1, "between", false);
	s.xmax = 3090;
	s.nrunning = 0;
	s.running[s.nrunning++] = 3050;
	{
		wc_key_range r = {(const uint8_t *) "o", 1, WC_INCLUSIVE,
		(const uint8_t *) "o9", 2, WC_INCLUSIVE};

		cb.ranges = &r;
		cb.nranges = 1;
		/* render() reads it again through the sets and compares */
		EXPECT_SCAN(db, &cb, "o3/anchor:q@1=between;");
		cb.nranges = 0;
		cb.ranges = NULL;
	}
	wc_db_close(db);
	test_rmdir(dir);
}

/*
 * An old snapshot keeps seeing what it saw through a flush, a compaction and a
 * reopen (the MANIFEST remembers), newer ones see the newest; once the horizon
 * passes, a compaction may drop what only the old one saw.  Writes still in
 * progress are seen by nobody, also by a scan opened before they commit.
 */
static void
test_snapshots(void)
{
	char	   *dir = test_tmpdir("snapshots");
	wc_db	   *db,
			   *db2;
	wc_scan_opts old,
				now,
				latest;
	test_snap	s_old = {.xmax = 21},
				s_now = {.xmax = 100};
	wc_err		err;
	wc_scan    *early = NULL;
	wc_cell_view c;
	int			n;

	wc_err_clear(&err);
	test_horizon = 1;
	db = open_db_horizon(dir);
	wc_scan_opts_init(&old);
	old.tag_visible = snap_visible;
	old.tag_visible_arg = &s_old;
	now = old;
	now.tag_visible_arg = &s_now;
	wc_scan_opts_init(&latest);

	write_tagged(db, 20, "r1", "q", 1, "v1", false);	/* seen by both */
	write_tagged(db, 22, "r1", "q", 1, "v2", false);	/* after s_old */
	write_tagged(db, 23, "r2", "q", 1, "x", false);
	write_tagged(db, 24, "r2", "q", 0, "", true);		/* r2 deleted after s_old */
	s_now.running[s_now.nrunning++] = 23;				/* 23 ran when s_now began */
	EXPECT_SCAN(db, &old, "r1/anchor:q@1=v1;");
	EXPECT_SCAN(db, &now, "r1/anchor:q@1=v2;");
	EXPECT_SCAN(db, &latest, "r1/anchor:q@1=v2;");

	/* a writer's cheap question: would the newest state read differently? */
	{
		wc_scan    *a = NULL,
				   *b = NULL;

		CHECK_OK(wc_scan_open(db, &now, &a, &err), &err);
		CHECK_OK(wc_scan_open(db, &latest, &b, &err), &err);
		CHECK(!wc_scan_sees_latest(a), "a snapshot that hides a commit sees the latest");
		CHECK(wc_scan_sees_latest(b), "a scan of the newest state does not see the latest");
		write_tagged(db, 25, "r9", "q", 1, "later", false);
		CHECK(!wc_scan_sees_latest(b), "a scan opened before a commit sees the latest");
		wc_scan_close(a);
		wc_scan_close(b);
		write_tagged(db, 26, "r9", "q", 0, "", true);
	}

	CHECK_OK(wc_db_flush(db, &err), &err);
	EXPECT_SCAN(db, &old, "r1/anchor:q@1=v1;");
	EXPECT_SCAN(db, &now, "r1/anchor:q@1=v2;");
	CHECK_OK(wc_db_compact(db, &err), &err);
	EXPECT_SCAN(db, &old, "r1/anchor:q@1=v1;");
	EXPECT_SCAN(db, &now, "r1/anchor:q@1=v2;");
	EXPECT_SCAN(db, &latest, "r1/anchor:q@1=v2;");

	/* another handle learns it from MANIFEST */
	db2 = open_db_horizon(dir);
	EXPECT_SCAN(db2, &old, "r1/anchor:q@1=v1;");
	EXPECT_SCAN(db2, &now, "r1/anchor:q@1=v2;");
	wc_db_close(db2);

	/* in progress: seen by nobody, the snapshot is told of it */
	tag_state[30] = WC_TXN_IN_PROGRESS;
	write_tagged(db, 30, "r3", "q", 1, "pending", false);
	s_now.told_in_progress = 0;
	EXPECT_SCAN(db, &now, "r1/anchor:q@1=v2;");
	CHECK(s_now.told_in_progress == 1, "told of %d writes in progress, want 1",
		  s_now.told_in_progress);
	EXPECT_SCAN(db, &latest, "r1/anchor:q@1=v2;");
	/* a scan opened before it commits does not see it after */
	CHECK_OK(wc_scan_open(db, &latest, &early, &err), &err);
	tag_state[30] = WC_TXN_COMMITTED;
	CHECK_OK(wc_db_refresh(db, &err), &err);
	for (n = 0; wc_scan_next(early, &c, &err) == 1; n++)
		CHECK(c.row_len == 2 && memcmp(c.row, "r1", 2) == 0, "an early scan saw row %.*s",
			  (int) c.row_len, c.row);
	CHECK(n == 1, "the early scan saw %d cells, want 1", n);
	wc_scan_close(early);
	EXPECT_SCAN(db, &latest, "r1/anchor:q@1=v2;r3/anchor:q@1=pending;");
	EXPECT_SCAN(db, &old, "r1/anchor:q@1=v1;");

	/* the horizon passes them all: a compaction may now drop v1 and r2's cell */
	test_horizon = 100;
	CHECK_OK(wc_db_flush(db, &err), &err);
	CHECK_OK(wc_db_compact(db, &err), &err);
	{
		wc_file_info *files = NULL;
		int			nf = 0;
		uint64_t	cells = 0;

		CHECK_OK(wc_db_files(db, &files, &nf, &err), &err);
		for (int i = 0; i < nf; i++)
			cells += files[i].cells;
		CHECK(cells == 2, "%llu cells kept after the horizon passed, want 2 (v2 and r3)",
			  (unsigned long long) cells);
		wc_file_info_free(files, nf);
	}
	EXPECT_SCAN(db, &latest, "r1/anchor:q@1=v2;r3/anchor:q@1=pending;");
	wc_db_close(db);
	tag_state[30] = WC_TXN_COMMITTED;
	test_horizon = 0;
	test_rmdir(dir);
}

/*
 * The lists are bounded: past recent_max the oldest records are forgotten, and
 * a scan whose snapshot might not have seen one fails with WC_TOO_OLD, in this
 * process and in another that reads MANIFEST, until the horizon passes them.
 */
static void
test_snapshot_too_old(void)
{
	char	   *dir = test_tmpdir("tooold");
	wc_db	   *db,
			   *db2;
	wc_scan_opts old,
				now;
	test_snap	s_old = {.xmax = 100},
				s_now = {.xmax = 1000};
	wc_scan    *scan = NULL;
	wc_err		err;
	char		row[16];

	wc_err_clear(&err);
	test_horizon = 1;
	open_recent_max = 8;
	db = open_db_horizon(dir);
	wc_scan_opts_init(&old);
	old.tag_visible = snap_visible;
	old.tag_visible_arg = &s_old;
	old.snapshot_min = 99;
	now = old;
	now.tag_visible_arg = &s_now;
	now.snapshot_min = 1000;

	for (int i = 0; i < 20; i++)
	{
		snprintf(row, sizeof(row), "r%02d", i);
		write_tagged(db, 100 + (uint64_t) i, row, "q", 1, "v", false);
	}
	/* 20 records, 8 kept at most: the oldest, which s_old does not see, forgotten */
	CHECK(wc_scan_open(db, &old, &scan, &err) == WC_TOO_OLD, "an old snapshot scanned: %s",
		  err.msg);
	wc_err_clear(&err);
	CHECK_OK(wc_scan_open(db, &now, &scan, &err), &err);
	wc_scan_close(scan);

	/*
	 * A long transaction (tag 90, no write of its own yet) holds every
	 * snapshot's xmin: given as sets, a snapshot that sees everything else
	 * reads on, since no forgotten record can be the long transaction's.
	 * One whose running set holds a committed transaction at or below the
	 * forgotten tags might not have seen its record: too old, as a snapshot
	 * given only as a callback always is.
	 */
	{
		test_snap	s_long = {.xmax = 1000};
		wc_scan_opts lng = old;
		uint64_t	running[4];

		s_long.running[s_long.nrunning++] = 90;
		tag_state[90] = WC_TXN_IN_PROGRESS;
		lng.tag_visible_arg = &s_long;
		lng.snapshot_min = 90;
		CHECK(wc_scan_open(db, &lng, &scan, &err) == WC_TOO_OLD,
			  "the callback alone read on: %s", err.msg);
		wc_err_clear(&err);
		snap_as_sets(&lng, &s_long, running, false);
		CHECK_OK(wc_scan_open(db, &lng, &scan, &err), &err);
		wc_scan_close(scan);
		s_long.running[s_long.nrunning++] = 105;	/* committed, forgotten */
		snap_as_sets(&lng, &s_long, running, false);
		CHECK(wc_scan_open(db, &lng, &scan, &err) == WC_TOO_OLD,
			  "a running set with a forgotten commit read on: %s", err.msg);
		wc_err_clear(&err);
		s_long.nrunning = 1;
		tag_state[90] = WC_TXN_COMMITTED;
		snap_as_sets(&lng, &s_long, running, false);
		CHECK(wc_scan_open(db, &lng, &scan, &err) == WC_TOO_OLD,
			  "a running set with a committed transaction read on: %s", err.msg);
		wc_err_clear(&err);
		tag_state[90] = WC_TXN_COMMITTED;
	}
	CHECK_OK(wc_db_flush(db, &err), &err);
	db2 = open_db_horizon(dir);
	CHECK(wc_scan_open(db2, &old, &scan, &err) == WC_TOO_OLD,
		  "an old snapshot scanned after a flush: %s", err.msg);
	wc_err_clear(&err);
	/* the horizon passes the forgotten ones: nothing is too old any more */
	test_horizon = 200;
	CHECK_OK(wc_db_refresh(db2, &err), &err);
	CHECK_OK(wc_scan_open(db2, &old, &scan, &err), &err);
	wc_scan_close(scan);
	wc_db_close(db2);
	wc_db_close(db);
	open_recent_max = 0;
	test_horizon = 0;
	test_rmdir(dir);
}

/* ---------------------------------------------------------------- compression */

/* The format version in the footer of dir/name (3 when written with zstd), or 0. */
static uint32_t
sst_version(const char *dir, const char *name)
{
	char		path[4200];
	uint8_t		foot[WC_SST_FOOTER_SIZE];
	FILE	   *f;
	size_t		got = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "rb")) == NULL)
		return 0;
	if (fseek(f, -(long) sizeof(foot), SEEK_END) == 0)
		got = fread(foot, 1, sizeof(foot), f);
	fclose(f);
	return got == sizeof(foot) ? wc_get_fixed32(foot + 48) : 0;
}

/* The store's one sorted file: its version and size (CHECKs there is one). */
static uint32_t
only_file(wc_db *db, const char *dir, uint64_t *bytes)
{
	wc_file_info *files = NULL;
	wc_err		err;
	int			n = 0;
	uint32_t	v = 0;

	wc_err_clear(&err);
	CHECK_OK(wc_db_files(db, &files, &n, &err), &err);
	CHECK(n == 1, "%d sorted files", n);
	if (n >= 1)
	{
		v = sst_version(dir, files[0].name);
		*bytes = files[0].file_bytes;
	}
	wc_file_info_free(files, n);
	return v;
}

/*
 * A family's compression changed: files keep how they were written and read
 * alike, and a compaction rewrites them in the family's current setting
 * (version 3 files for zstd, version 2 again for lz4).  Page bodies, HTML-like
 * text, come out markedly smaller with zstd than with lz4.  Bad settings are
 * refused.
 */
static void
test_recompress(void)
{
	char	   *dir = test_tmpdir("recompress");
	wc_family_opts lz4[] = {{"pages", 0, 0, WC_COMPRESS_LZ4, 0}};
	wc_family_opts zstd[] = {{"pages", 0, 0, WC_COMPRESS_ZSTD, 19}};
	wc_family_opts bad[] = {{"pages", 0, 0, WC_COMPRESS_ZSTD, WC_ZSTD_LEVEL_MAX + 1}};
	wc_family_opts unknown[] = {{"pages", 0, 0, 7, 0}};
	wc_db	   *db = open_db(dir, lz4, 1, 0);
	wc_batch   *b = wc_batch_new();
	wc_scan_opts o;
	wc_err		err;
	size_t		size = 1 << 20;
	char	   *before = malloc(size),
			   *after = malloc(size);
	char	   *page = malloc(4096);
	uint64_t	lz4_bytes = 0,
				zstd_bytes = 0,
				again = 0;
	uint64_t	rng = 42;

	for (int i = 0; i < 100; i++)
	{
		char		row[32];
		size_t		used = 0;

		/* a page: markup, repeated phrases, numbers that differ */
		used += snprintf(page + used, 4096 - used, "<html><head><title>Page %d</title></head><body>", i);
		while (used < 2000)
			used += snprintf(page + used, 4096 - used,
							 "<div class=\"item\"><a href=\"/item/%u\">Item %u</a> <span>%s</span></div>\n",
							 (unsigned) (test_rand(&rng) % 100000), (unsigned) (test_rand(&rng) % 1000),
							 test_rand(&rng) % 2 ? "in stock" : "sold out");
		snprintf(row, sizeof(row), "com.example/%04d", i);
		put(b, "pages", row, "body", 1000 + i, page);
	}
	write_batch(db, b);
	wc_err_clear(&err);
	CHECK_OK(wc_db_flush(db, &err), &err);
	wc_scan_opts_init(&o);
	render(db, &o, before, size);
	CHECK(only_file(db, dir, &lz4_bytes) == WC_SST_VERSION_NO_ZSTD, "lz4 file not version 2");

	CHECK_OK(wc_db_set_families(db, zstd, 1, &err), &err);
	render(db, &o, after, size);
	CHECK(strcmp(before, after) == 0, "data changed with the setting");
	CHECK_OK(wc_db_compact(db, &err), &err);
	CHECK_OK(wc_db_refresh(db, &err), &err);
	CHECK(only_file(db, dir, &zstd_bytes) == WC_SST_VERSION, "zstd file not version 3");
	render(db, &o, after, size);
	CHECK(strcmp(before, after) == 0, "data changed by the zstd compaction");
	printf("pages: %llu bytes with lz4, %llu with zstd level 19\n",
		   (unsigned long long) lz4_bytes, (unsigned long long) zstd_bytes);
	CHECK(zstd_bytes < lz4_bytes - lz4_bytes / 5, "zstd %llu bytes, lz4 %llu",
		  (unsigned long long) zstd_bytes, (unsigned long long) lz4_bytes);

	/* reopened with lz4: the zstd file reads, and compaction makes it lz4 again */
	wc_db_close(db);
	db = open_db(dir, lz4, 1, 0);
	render(db, &o, after, size);
	CHECK(strcmp(before, after) == 0, "zstd file read differently after reopening");
	CHECK_OK(wc_db_compact(db, &err), &err);
	CHECK_OK(wc_db_refresh(db, &err), &err);
	CHECK(only_file(db, dir, &again) == WC_SST_VERSION_NO_ZSTD && again == lz4_bytes,
		  "lz4 again: %llu bytes", (unsigned long long) again);
	render(db, &o, after, size);
	CHECK(strcmp(before, after) == 0, "data changed by the lz4 compaction");

	CHECK(wc_db_set_families(db, bad, 1, &err) == WC_INVALID && strstr(err.msg, "level"),
		  "level %d accepted: %s", bad[0].compression_level, err.msg);
	wc_err_clear(&err);
	CHECK(wc_db_set_families(db, unknown, 1, &err) == WC_INVALID, "compression 7 accepted");

	wc_batch_free(b);
	wc_db_close(db);
	free(before);
	free(after);
	free(page);
	test_rmdir(dir);
}

/* A golden entry with its sequence number (the store's reference below). */
typedef struct golden_entry
{
	const golden_cell *g;
	uint64_t	seq;
} golden_entry;

static bool
same_bytes(const char *a, uint32_t alen, const char *b, uint32_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

/* Is PUT e hidden by another entry (every version kept: max_versions 0)? */
static bool
golden_masked(const golden_entry *e, const golden_entry *all, int n)
{
	const golden_cell *p = e->g;

	for (int i = 0; i < n; i++)
	{
		const golden_cell *d = all[i].g;

		if (all[i].seq <= e->seq || !same_bytes(d->row, d->row_len, p->row, p->row_len))
			continue;
		if (d->type == WC_TYPE_DEL_FAMILY)
			return true;
		if (!same_bytes(d->qual, d->qual_len, p->qual, p->qual_len))
			continue;
		if (d->type == WC_TYPE_DEL_COLUMN ||
			((d->type == WC_TYPE_DEL_VERSION || d->type == WC_TYPE_PUT) && d->ts == p->ts))
			return true;
	}
	return false;
}

static int
golden_entry_cmp(const void *a, const void *b)
{
	const golden_cell *x = ((const golden_entry *) a)->g;
	const golden_cell *y = ((const golden_entry *) b)->g;
	int			c = wc_row_cmp((const uint8_t *) x->row, x->row_len, (const uint8_t *) y->row, y->row_len);

	if (c == 0)
		c = wc_row_cmp((const uint8_t *) x->qual, x->qual_len, (const uint8_t *) y->qual, y->qual_len);
	if (c == 0)
		c = x->ts > y->ts ? -1 : x->ts < y->ts;
	return c;
}

/*
 * The golden zstd store (test/golden/store-zstd: a sorted file of format
 * version 3 with zstd blocks, an active log, a MANIFEST), copied and opened as
 * a store: a scan returns exactly the versions its entries leave visible, worked
 * out here from golden.h; a compaction into lz4 keeps them.  The golden files
 * themselves are never opened for writing.
 */
static void
test_golden_store(void)
{
	char	   *dir = test_tmpdir("golden-store");
	char		cmd[8400];
	wc_family_opts fo[] = {{"data", 0, 0, WC_COMPRESS_ZSTD, 0}};
	golden_entry all[GOLDEN_NELEM(golden_sst_v2) + GOLDEN_NELEM(golden_batch_store)];
	golden_entry want[GOLDEN_NELEM(all)];
	int			n = 0,
				nwant = 0;

	for (size_t i = 0; i < GOLDEN_NELEM(golden_sst_v2); i++)
		all[n++] = (golden_entry) {&golden_sst_v2[i], golden_sst_v2[i].seq};
	for (size_t i = 0; i < GOLDEN_NELEM(golden_batch_store); i++)
		all[n++] = (golden_entry) {&golden_batch_store[i], golden_log_store[0].seq_base + i};
	for (int i = 0; i < n; i++)
		if (all[i].g->type == WC_TYPE_PUT && !golden_masked(&all[i], all, n))
			want[nwant++] = all[i];
	qsort(want, nwant, sizeof(golden_entry), golden_entry_cmp);
	/* the file's 39 PUTs, less user:0002's name (its DEL_FAMILY) and attr-00 (the
	 * log's DEL_COLUMN), and the log's two PUTs */
	CHECK(nwant == 39, "%d versions expected", nwant);

	snprintf(cmd, sizeof(cmd), "cp '%s'/store-zstd/* '%s'/", WC_GOLDEN_DIR, dir);
	CHECK(system(cmd) == 0, "%s", cmd);
	for (int round = 0; round < 2; round++)
	{
		wc_db	   *db = open_db(dir, fo, 1, 0);
		wc_scan_opts o;
		wc_scan    *s = NULL;
		wc_cell_view c;
		wc_err		err;
		uint8_t		buf[1024];
		int			i = 0,
					bad = 0,
					rc;

		wc_err_clear(&err);
		wc_scan_opts_init(&o);
		CHECK_OK(wc_scan_open(db, &o, &s, &err), &err);
		while (s != NULL && (rc = wc_scan_next(s, &c, &err)) == 1)
		{
			const golden_cell *g = i < nwant ? want[i].g : NULL;

			if (g == NULL ||
				!same_bytes((const char *) c.row, (uint32_t) c.row_len, g->row, g->row_len) ||
				!same_bytes((const char *) c.qual, (uint32_t) c.qual_len, g->qual, g->qual_len) ||
				c.ts != g->ts || c.seq != want[i].seq ||
				!same_bytes((const char *) c.val, (uint32_t) c.val_len,
							(const char *) golden_value(g, buf), g->val_len))
				bad++;
			i++;
		}
		CHECK(s != NULL && rc == 0 && i == nwant && bad == 0,
			  "golden store, round %d: %d cells read, %d expected, %d differ (%s)",
			  round, i, nwant, bad, err.msg);
		if (s != NULL)
			wc_scan_close(s);
		/* then compacted into lz4 (a copy, so the golden files stay as they are) */
		fo[0].compression = WC_COMPRESS_LZ4;
		if (round == 0)
		{
			CHECK_OK(wc_db_set_families(db, fo, 1, &err), &err);
			CHECK_OK(wc_db_compact(db, &err), &err);
		}
		wc_db_close(db);
	}
	test_rmdir(dir);
}

/* ---------------------------------------------------------------- size tiers */

/* The numbers of db's sorted files, in the order wc_db_files lists them (*n of them). */
static int
file_numbers(wc_db *db, uint64_t *out, int max)
{
	wc_file_info *files = NULL;
	int			n = 0;
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_db_files(db, &files, &n, &err), &err);
	for (int i = 0; i < n && i < max; i++)
		out[i] = strtoull(files[i].name, NULL, 10);
	wc_file_info_free(files, n);
	return n;
}

/*
 * A partial compaction (the newest files of their rows only) keeps the tombstones,
 * which mask what the older files left out hold (a full one drops them); and
 * wc_db_maintain merges the newest size tier of a group of overlapping files, not
 * the big file below it, until the tier is as big as half of it.
 */
static void
test_partial_compaction(void)
{
	char	   *dir = test_tmpdir("tiers");
	wc_family_opts fams[] = {{"f", 1, 0, WC_COMPRESS_LZ4, 0}};
	wc_db	   *db = open_db(dir, fams, 1, 0);
	wc_batch   *b = wc_batch_new();
	wc_scan_opts all;
	uint64_t	nums[64];
	char		row[32];
	wc_err		err;
	int			n;

	wc_scan_opts_init(&all);
	wc_err_clear(&err);
	put(b, "f", "r1", "c", 5, "old");
	put(b, "f", "r2", "c", 7, "x");
	write_batch(db, b);
	CHECK_OK(wc_db_flush(db, &err), &err);
	CHECK_OK(wc_batch_delete_column(b, "f", 1, "r1", 2, "c", 1, &err), &err);
	CHECK_OK(wc_batch_delete_version(b, "f", 1, "r2", 2, "c", 1, 7, &err), &err);
	write_batch(db, b);
	CHECK_OK(wc_db_flush(db, &err), &err);
	put(b, "f", "r1", "d", 1, "new");
	write_batch(db, b);
	CHECK_OK(wc_db_flush(db, &err), &err);
	n = file_numbers(db, nums, 64);
	CHECK(n == 3, "three files: %d", n);
	EXPECT_SCAN(db, &all, "r1/f:d@1=new;");

	/* the two newest, without the oldest */
	CHECK_OK(wc_db_lock(db, WC_LOCK_COMPACT, true, &err), &err);
	CHECK_OK(wc_db_compact_family(db, "f", nums + 1, 2, true, &err), &err);
	wc_db_unlock(db, WC_LOCK_COMPACT);
	CHECK(file_numbers(db, nums, 64) == 2, "two files after the partial compaction");
	EXPECT_SCAN(db, &all, "r1/f:d@1=new;");
	db = (wc_db_close(db), open_db(dir, fams, 1, 0));
	EXPECT_SCAN(db, &all, "r1/f:d@1=new;");
	CHECK_OK(wc_db_compact(db, &err), &err);
	CHECK(file_numbers(db, nums, 64) == 1, "one file after the full compaction");
	EXPECT_SCAN(db, &all, "r1/f:d@1=new;");

	/* a big file, then small overlapping ones: the small ones are merged apart */
	for (int i = 0; i < 3000; i++)
	{
		snprintf(row, sizeof(row), "row%05d", i);
		put(b, "f", row, "q", 1, "a value of the big file, long enough to weigh");
	}
	write_batch(db, b);
	CHECK_OK(wc_db_compact(db, &err), &err);
	for (int k = 0; k < 4; k++)
	{
		/* the last one flushed by another handle: the manifest it writes is new */
		wc_db	   *w = k == 3 ? open_db(dir, fams, 1, 0) : db;

		for (int i = k; i < 3000; i += 300)
		{
			snprintf(row, sizeof(row), "row%05d", i);
			put(b, "f", row, "q", 2 + k, "v");
		}
		write_batch(w, b);
		CHECK_OK(wc_db_flush(w, &err), &err);
		if (w != db)
		{
			wc_db_close(w);
			CHECK_OK(wc_db_refresh(db, &err), &err);
			break;
		}
		/* too few files yet; asked again, the same manifest gives the same answer */
		CHECK_OK(wc_db_maintain(db, &err), &err);
		CHECK_OK(wc_db_maintain(db, &err), &err);
		CHECK(file_numbers(db, nums, 64) == k + 2, "%d small files are left alone", k + 1);
	}
	CHECK(file_numbers(db, nums, 64) == 5, "a big file and 4 small ones");
	CHECK_OK(wc_db_maintain(db, &err), &err);
	n = file_numbers(db, nums, 64);
	CHECK(n == 2, "maintain merged the 4 small files only: %d files", n);
	{
		wc_scan_opts one;
		wc_key_range r = {(const uint8_t *) "row00300", 8, WC_INCLUSIVE,
		(const uint8_t *) "row00300", 8, WC_INCLUSIVE};

		wc_scan_opts_init(&one);
		one.ranges = &r;
		one.nranges = 1;
		EXPECT_SCAN(db, &one, "row00300/f:q@2=v;");
	}
	wc_batch_free(b);
	wc_db_close(db);
	test_rmdir(dir);
}

/* ---------------------------------------------------------------- values in the log */

/* Renders every cell of db with a scan, as "row=val;" into out. */
static void
render_values(wc_db *db, char *out, size_t size)
{
	wc_scan_opts all;

	wc_scan_opts_init(&all);
	render(db, &all, out, size);
}

/* The value of cell i: long ones (kept in the log by readers) and short ones (copied). */
static void
value_of(int i, char *buf, size_t size)
{
	if (i % 5 == 0)
		snprintf(buf, size, "v%d", i);
	else
		snprintf(buf, size, "value %04d %s", i,
				 "of a cell that a reader keeps in the log's pages, not in its own memory");
}

/*
 * A process that replays a log keeps long values where they are, in the log's
 * mapping (DESIGN.md, "Values stay in the log"), and copies rowkeys, qualifiers and
 * short values: its memtables are much smaller than a writer's own copies, and read
 * the same.  Also for a record whose transaction was in progress when it was read
 * (held, then applied from the log), after the log is flushed under an open scan
 * (the scan's memtables keep the mapping), and for records past the mapped bytes
 * (copied).
 */
static void
test_values_in_log(void)
{
	char	   *dir = test_tmpdir("valuesinlog");
	wc_family_opts fams[] = {{"f", 0, 0, WC_COMPRESS_NONE, 0}};
	wc_db	   *w = open_db(dir, fams, 1, 0);
	wc_db	   *r = open_db(dir, fams, 1, 0);
	wc_db	   *r2;
	wc_batch   *b = wc_batch_new();
	wc_scan_opts all;
	wc_scan    *s = NULL;
	wc_cell_view c;
	static char want[65536],
				got[65536];
	size_t		used = 0;
	char		row[32],
				val[160];
	uint64_t	wbytes,
				rbytes,
				r2bytes;
	wc_err		err;
	int			n,
				rc;

	for (int i = 0; i < 300; i++)
	{
		snprintf(row, sizeof(row), "row%04d", i);
		value_of(i, val, sizeof(val));
		put(b, "f", row, "q", 1, val);
		used += snprintf(want + used, sizeof(want) - used, "%s/f:q@1=%s;", row, val);
		if (i % 50 == 49 && i < 250)
			write_batch(w, b);
	}
	/* the last 50 in a transaction, in progress when r reads them */
	tag_state[9] = WC_TXN_IN_PROGRESS;
	wc_err_clear(&err);
	CHECK_OK(wc_db_write(w, &b, 1, 9, false, &err), &err);
	wc_batch_clear(b);
	CHECK_OK(wc_db_refresh(r, &err), &err);
	tag_state[9] = WC_TXN_COMMITTED;
	CHECK_OK(wc_db_refresh(r, &err), &err);
	CHECK_OK(wc_db_refresh(w, &err), &err);

	render_values(w, got, sizeof(got));
	CHECK(strcmp(got, want) == 0, "the writer reads what it wrote");
	render_values(r, got, sizeof(got));
	CHECK(strcmp(got, want) == 0, "the reader reads the same:\n  got:  %.200s\n  want: %.200s", got,
		  want);
	wbytes = wc_db_mem_bytes(w);
	rbytes = wc_db_mem_bytes(r);
	/* with shared memtables neither keeps any of its own (test_shmt) */
	CHECK(rbytes * 2 < wbytes || (rbytes == 0 && getenv("WIDECOL_TEST_SHARED_MEMTABLE")),
		  "the reader's memtables are small: %llu bytes, the writer's %llu",
		  (unsigned long long) rbytes, (unsigned long long) wbytes);

	/* a mapping that ends inside the log: records past it are copied */
	wc_log_map_bytes = 4096;
	r2 = open_db(dir, fams, 1, 0);
	wc_log_map_bytes = 0;
	render_values(r2, got, sizeof(got));
	CHECK(strcmp(got, want) == 0, "a partly mapped log reads the same");
	r2bytes = wc_db_mem_bytes(r2);
	CHECK(r2bytes > rbytes && r2bytes * 4 > wbytes * 3,
		  "past the mapped bytes values are copied: %llu bytes (fully mapped %llu, copies %llu)",
		  (unsigned long long) r2bytes, (unsigned long long) rbytes, (unsigned long long) wbytes);
	wc_db_close(r2);

	/* a scan open while the log is flushed and dropped from r's view */
	wc_scan_opts_init(&all);
	wc_err_clear(&err);
	CHECK_OK(wc_scan_open(r, &all, &s, &err), &err);
	used = 0;
	for (n = 0; n < 10 && (rc = wc_scan_next(s, &c, &err)) == 1; n++)
		used += snprintf(got + used, sizeof(got) - used, "%.*s/f:q@%lld=%.*s;", (int) c.row_len,
						 c.row, (long long) c.ts, (int) c.val_len, c.val);
	CHECK_OK(wc_db_flush(w, &err), &err);
	CHECK_OK(wc_db_refresh_full(r, &err), &err);
	CHECK(r->nlogs == 1 && r->logs[0]->nmem == 0, "the flushed log left r's view: %d logs",
		  r->nlogs);
	while ((rc = wc_scan_next(s, &c, &err)) == 1)
		used += snprintf(got + used, sizeof(got) - used, "%.*s/f:q@%lld=%.*s;", (int) c.row_len,
						 c.row, (long long) c.ts, (int) c.val_len, c.val);
	CHECK(rc == 0, "scan ended with %d: %s", rc, err.msg);
	CHECK(strcmp(got, want) == 0, "the open scan reads its values after the flush");
	wc_scan_close(s);
	render_values(r, got, sizeof(got));
	CHECK(strcmp(got, want) == 0, "and from the sorted file");

	wc_batch_free(b);
	wc_db_close(r);
	wc_db_close(w);
	test_rmdir(dir);
}

/* The cells of the store's sorted files of family fam. */
static uint64_t
family_cells(wc_db *db, const char *fam)
{
	wc_file_info *files = NULL;
	int			nf = 0;
	uint64_t	cells = 0;
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_db_files(db, &files, &nf, &err), &err);
	for (int i = 0; i < nf; i++)
		if (strcmp(files[i].family, fam) == 0)
			cells += files[i].cells;
	wc_file_info_free(files, nf);
	return cells;
}

/*
 * A flush writes what a partial compaction of the log would keep: a cell updated
 * 300 times leaves its newest version (max_versions 1), a deleted newest version
 * its DEL_VERSION (it holds the place), expired versions nothing, and a DEL_COLUMN
 * stays to mask an older file.  What a snapshot may not have seen yet is written
 * as it is, until the horizon passes it.
 */
static void
test_flush_retention(void)
{
	char	   *dir = test_tmpdir("flushret");
	wc_family_opts fo[] = {{"one", 1, 0, WC_COMPRESS_LZ4, 0}, {"ttl", 0, 60000, WC_COMPRESS_LZ4, 0}};
	wc_db	   *db;
	wc_batch   *b = wc_batch_new();
	wc_scan_opts all,
				old;
	test_snap	s_old = {.xmax = 12};
	wc_err		err;
	char		val[16];
	int64_t		now = wc_env_now_ms();

	wc_err_clear(&err);
	open_with_horizon = true;
	test_horizon = 1000;
	db = open_db(dir, fo, 2, 0);
	open_with_horizon = false;
	wc_scan_opts_init(&all);

	/* a hot cell, another whose newest version is deleted, expired versions */
	for (int i = 1; i <= 300; i++)
	{
		snprintf(val, sizeof(val), "v%d", i);
		put(b, "one", "r", "hot", i, val);
		write_batch(db, b);
	}
	put(b, "one", "r", "del", 1, "d1");
	put(b, "one", "r", "del", 2, "d2");
	write_batch(db, b);
	CHECK_OK(wc_batch_delete_version(b, "one", 3, "r", 1, "del", 3, 2, &err), &err);
	write_batch(db, b);
	put(b, "ttl", "r", "old", now - 120000, "expired");
	put(b, "ttl", "r", "new", now, "fresh");
	put(b, "one", "s", "gone", 1, "soon masked");
	write_batch(db, b);
	CHECK_OK(wc_db_flush(db, &err), &err);
	CHECK(family_cells(db, "one") == 3, "family one after the flush: %llu cells, want 3 "
		  "(r:hot@300, r:del's DEL_VERSION@2, s:gone@1)", (unsigned long long) family_cells(db, "one"));
	CHECK(family_cells(db, "ttl") == 1, "family ttl after the flush: %llu cells, want 1",
		  (unsigned long long) family_cells(db, "ttl"));
	{
		char		want[256];

		snprintf(want, sizeof(want), "r/one:hot@300=v300;r/ttl:new@%lld=fresh;s/one:gone@1=soon masked;",
				 (long long) now);
		EXPECT_SCAN(db, &all, want);
	}

	/* the DEL_COLUMN is written out: it masks the older file's cell */
	CHECK_OK(wc_batch_delete_column(b, "one", 3, "s", 1, "gone", 4, &err), &err);
	write_batch(db, b);
	CHECK_OK(wc_db_flush(db, &err), &err);
	CHECK(family_cells(db, "one") == 4, "family one after the second flush: %llu cells, want 4",
		  (unsigned long long) family_cells(db, "one"));
	{
		char		want[256];

		snprintf(want, sizeof(want), "r/one:hot@300=v300;r/ttl:new@%lld=fresh;", (long long) now);
		EXPECT_SCAN(db, &all, want);
	}

	/* tags 10..14 above the horizon: remembered, so written as they are */
	test_horizon = 1;
	for (int t = 10; t <= 14; t++)
	{
		snprintf(val, sizeof(val), "t%d", t);
		put(b, "one", "q", "c", 1, val);
		CHECK_OK(wc_db_write(db, &b, 1, (uint64_t) t, false, &err), &err);
		wc_batch_clear(b);
	}
	CHECK_OK(wc_db_refresh(db, &err), &err);
	old = all;
	old.tag_visible = snap_visible;
	old.tag_visible_arg = &s_old;
	CHECK_OK(wc_db_flush(db, &err), &err);
	CHECK(family_cells(db, "one") == 4 + 5, "with remembered writes: %llu cells, want 9",
		  (unsigned long long) family_cells(db, "one"));
	{
		char		want[256];

		/* the old snapshot sees tags below 12: t11 */
		snprintf(want, sizeof(want), "q/one:c@1=t11;r/one:hot@300=v300;r/ttl:new@%lld=fresh;",
				 (long long) now);
		EXPECT_SCAN(db, &old, want);
	}
	/* once the horizon passes them, the next flush's log alone decides nothing
	 * about them, but a compaction drops the surplus */
	test_horizon = 100;
	CHECK_OK(wc_db_compact(db, &err), &err);
	CHECK(family_cells(db, "one") == 3, "after the compaction: %llu cells, want 3",
		  (unsigned long long) family_cells(db, "one"));
	wc_db_close(db);
	wc_batch_free(b);
	test_horizon = 0;
	test_rmdir(dir);
}

int
main(void)
{
	t_name = "test_db";
	test_flush_retention();
	test_values_in_log();
	test_partial_compaction();
	test_resolve_failure();
	test_prepared();
	test_flush_nowait();
	test_snapshots();
	test_snapshot_sets();
	test_snapshot_too_old();
	test_published_end();
	test_webtable();
	test_deletes_and_retention();
	test_pending_and_truncate();
	test_pending_ranges();
	test_pending_excluded();
	test_pending_rewind();
	test_rewind_model();
	test_block_bounds();
	test_inspect();
	test_recompress();
	test_golden_store();
	test_model(false);
	open_ingest_bytes = 1;
	test_model(true);
	test_ingest();
	test_ingest_after_truncate();
	test_ingest_run();
	test_ingest_faults();
	test_ingest_helpers();
	for (int mode = 0; mode < 7; mode++)
		test_bulk_order(mode);
	open_ingest_bytes = 0;
	TEST_DONE();
}
