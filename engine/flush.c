/*
 * flush.c -- turning logs that are no longer active into sorted files (DESIGN.md,
 * "Flush and compaction").
 *
 * A log that is no longer active is immutable once it carries its closing marker.
 * Flushing it takes its content from this process's own view when that holds all
 * of it, else reads it from disk (wc_db_load_log) and resolves every record's
 * transaction; writes one sorted file per family with the committed entries that
 * the visibility step keeps in a partial compaction (the log is the newest data
 * of its rows: versions beyond max_versions, expired ones and what the log's own
 * tombstones mask are dropped, the tombstones kept, as HBase's flush applies a
 * family's version limit; a hot cell updated 1,000 times between two flushes
 * would otherwise leave 1,000 versions for every read to step over); and
 * replaces the log by those files, and by the files of its committed ingest
 * records, in one manifest write.  Layer 3 of the store core: it calls write.c
 * (closing and switching logs), version.c, lock.c and options.c.
 */
#include "db_internal.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "visible.h"

/*
 * Writes the memtable of one family of log lm as sorted file number;
 * *props->cells may be 0.  What an older snapshot may need (the log's remembered
 * records and the sorted files'; newer logs hold only higher seqs) is written as
 * it is (DESIGN.md, "Snapshots").
 */
static int
write_family(wc_db *db, wc_logmem *lm, const wc_fammem *fm, uint64_t number, uint64_t trunc,
			 wc_sst_props *props, wc_err *err)
{
	wc_sst_build_opts o;
	wc_sst_builder *b;
	wc_iter    *it;
	wc_vis_rules rules;
	wc_vis		vis;
	char		name[32];
	int			rc = WC_OK;

	wc_db_compact_rules(db, fm->family, true, trunc, &lm->recent, &rules);
	wc_vis_init(&vis, &rules);
	wc_file_name(name, sizeof(name), number, "sst");
	wc_db_build_opts(db, fm->family, 0, &o);
	if ((b = wc_sst_builder_new(db->dir, name, &o, err)) == NULL)
	{
		wc_vis_free(&vis);
		return err->code;
	}
	if ((it = wc_memtable_iter_new(fm->mt)) == NULL)
	{
		wc_vis_free(&vis);
		wc_sst_builder_abandon(b);
		return wc_err_set(err, WC_NOMEM, "out of memory");
	}
	for (wc_iter_seek_first(it); wc_iter_valid(it) && rc == WC_OK; wc_iter_next(it))
	{
		const wc_cell *c = wc_iter_cell(it);
		int			verdict = wc_vis_step(&vis, c);

		if (verdict < 0)
		{
			wc_iter_close(it);
			wc_vis_free(&vis);
			wc_sst_builder_abandon(b);
			return wc_err_set(err, verdict, "out of memory");
		}
		if (verdict == WC_VIS_EMIT)
			rc = wc_sst_builder_add(b, c);
	}
	wc_iter_close(it);
	wc_vis_free(&vis);
	/* after a failed add, finish reports the builder's first error (with its
	 * cause, e.g. no space left) and removes the file */
	return wc_sst_builder_finish(b, props, err);
}

static bool
has_log(const wc_manifest *m, uint64_t number)
{
	for (int i = 0; i < m->nlogs; i++)
		if (m->logs[i] == number)
			return true;
	return false;
}

/*
 * The content of log number: this process's own view of it when that holds all of
 * it (the log is closed and no record waits for its transaction), the common case,
 * which saves reading the log back; else the log read from disk, which *loaded
 * then owns.
 */
static int
flush_source(wc_db *db, uint64_t number, bool wait, wc_logmem **lm, wc_logmem **loaded,
			 wc_err *err)
{
	int			rc;

	*lm = *loaded = NULL;
	for (int i = 0; i < db->nlogs; i++)
		if (db->logs[i]->number == number && db->logs[i]->closed && db->logs[i]->nheld == 0)
		{
			*lm = db->logs[i];
			return WC_OK;
		}
	if ((rc = wc_db_load_log(db, number, wait, loaded, err)) == WC_OK)
		*lm = *loaded;
	return rc;
}

/*
 * Takes log lm out of manifest m, which takes on what it knew: its highest seq,
 * its truncate point and what some snapshot may not see yet of its records
 * (DESIGN.md, "Snapshots").  Its files are the caller's to add.
 */
static int
manifest_take_log(wc_manifest *m, const wc_logmem *lm, wc_err *err)
{
	for (int i = 0; i < m->nlogs; i++)
		if (m->logs[i] == lm->number)
		{
			memmove(&m->logs[i], &m->logs[i + 1], sizeof(uint64_t) * (m->nlogs - i - 1));
			m->nlogs--;
			break;
		}
	if (lm->max_seq > m->last_seq)
		m->last_seq = lm->max_seq;
	if (lm->trunc > m->truncate_seq)
		m->truncate_seq = lm->trunc;
	return wc_recent_append(&m->recent, &lm->recent, err);
}

/*
 * Files of m wholly below its truncate point are dead: out of m, their numbers
 * onto doomed (room for m->nfiles more), to unlink once m is written.
 */
static void
manifest_drop_truncated(wc_manifest *m, uint64_t *doomed, int *ndoomed)
{
	int			first = *ndoomed;

	for (int i = 0; i < m->nfiles; i++)
		if (m->files[i].props.seq_max < m->truncate_seq)
			doomed[(*ndoomed)++] = m->files[i].number;
	for (int i = first; i < *ndoomed; i++)
		wc_manifest_remove_file(m, doomed[i]);
}

/*
 * The files of lm's committed ingest records move into m as they are; those
 * wholly below m's truncate point onto doomed instead (room for lm->ningested).
 */
static int
manifest_add_ingested(wc_manifest *m, const wc_logmem *lm, uint64_t *doomed, int *ndoomed,
					  wc_err *err)
{
	for (int i = 0; i < lm->ningested; i++)
	{
		const wc_sst_props *p = wc_sst_get_props(lm->ingested[i].sst);
		int			rc;

		if (p->seq_max < m->truncate_seq)
			doomed[(*ndoomed)++] = lm->ingested[i].number;
		else if ((rc = wc_manifest_add_file(m, lm->ingested[i].number, p, err)) != WC_OK)
			return rc;
	}
	return WC_OK;
}

/* Flushes one closed, non-active log. */
static int
flush_one(wc_db *db, uint64_t number, bool wait, wc_err *err)
{
	wc_logmem  *lm,
			   *loaded;
	wc_sst_props *props = NULL;
	wc_manifest m;
	uint64_t	first = 0,
				trunc;
	uint64_t   *doomed = NULL;
	int			ndoomed = 0;
	char		name[32];
	int			rc = WC_OK;

	memset(&m, 0, sizeof(m));
	if ((rc = flush_source(db, number, wait, &lm, &loaded, err)) != WC_OK)
		return rc;
	if (lm->nmem > 0 && (rc = wc_db_reserve_numbers(db, lm->nmem, &first, err)) != WC_OK)
		goto out;
	props = calloc(lm->nmem > 0 ? lm->nmem : 1, sizeof(wc_sst_props));
	if (props == NULL)
	{
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
		goto out;
	}
	trunc = lm->trunc > db->manifest.truncate_seq ? lm->trunc : db->manifest.truncate_seq;
	for (int i = 0; i < lm->nmem && rc == WC_OK; i++)
		rc = write_family(db, lm, &lm->mem[i], first + i, trunc, &props[i], err);
	if (rc != WC_OK)
		goto remove_outputs;

	if ((rc = wc_db_lock(db, WC_LOCK_MANIFEST, true, err)) != WC_OK)
		goto remove_outputs;
	if ((rc = wc_db_read_manifest(db, &m, err)) != WC_OK || !has_log(&m, number))
	{
		/* someone else flushed it meanwhile */
		wc_db_unlock(db, WC_LOCK_MANIFEST);
		goto remove_outputs;
	}
	/* the failure path below clears m */
	if ((rc = manifest_take_log(&m, lm, err)) != WC_OK)
	{
		wc_db_unlock(db, WC_LOCK_MANIFEST);
		goto remove_outputs;
	}
	doomed = calloc((size_t) (m.nfiles + lm->ningested) + 1, sizeof(uint64_t));
	if (doomed == NULL)
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
	else
		manifest_drop_truncated(&m, doomed, &ndoomed);
	for (int i = 0; rc == WC_OK && i < lm->nmem; i++)
		if (props[i].cells > 0)
			rc = wc_manifest_add_file(&m, first + i, &props[i], err);
	if (rc == WC_OK)
		rc = manifest_add_ingested(&m, lm, doomed, &ndoomed, err);
	if (rc == WC_OK)
	{
		rc = wc_db_write_manifest(db, &m, err);
		wc_db_unlock(db, WC_LOCK_MANIFEST);
		if (rc != WC_OK)
			goto out;			/* the manifest may name the outputs: keep them */
	}
	else
	{
		wc_db_unlock(db, WC_LOCK_MANIFEST);
		goto remove_outputs;
	}

	{
		wc_err		ignored;

		/* the manifest no longer names them: failures only leave orphans */
		wc_err_clear(&ignored);
		wc_file_name(name, sizeof(name), number, "log");
		(void) wc_env_unlink(db->dir, name, &ignored);
		for (int i = 0; i < ndoomed; i++)
		{
			wc_file_name(name, sizeof(name), doomed[i], "sst");
			(void) wc_env_unlink(db->dir, name, &ignored);
		}
		for (int i = 0; i < lm->nmem; i++)
			if (props[i].cells == 0)
			{
				wc_file_name(name, sizeof(name), first + i, "sst");
				(void) wc_env_unlink(db->dir, name, &ignored);
			}
	}
	goto out;

remove_outputs:
	{
		wc_err		ignored;

		wc_err_clear(&ignored);
		for (int i = 0; i < lm->nmem; i++)
		{
			wc_file_name(name, sizeof(name), first + i, "sst");
			(void) wc_env_unlink(db->dir, name, &ignored);
		}
	}
out:
	if (props)
	{
		for (int i = 0; i < lm->nmem; i++)
			wc_sst_props_clear(&props[i]);
		free(props);
	}
	free(doomed);
	wc_manifest_clear(&m);
	wc_db_log_free(loaded);
	return rc;
}

/*
 * Flushes db->logs[0..n) at once, in one manifest write: logs of this process's
 * view that are closed, resolved (nothing held) and hold nothing but ingest
 * records (a bulk write's log: its files move into the manifest as they are, and
 * nothing is written).  Each bulk write closes its log, so sessions that commit
 * many small ones leave a run of such logs; flushed one at a time, each cost a
 * manifest write (three fsyncs), and every reader loaded each new manifest.
 * *flushed is 0 when another process flushed one of them first.
 */
static int
flush_ingest_run(wc_db *db, int n, int *flushed, wc_err *err)
{
	wc_manifest m;
	uint64_t   *doomed = NULL;
	int			ndoomed = 0,
				ningested = 0;
	char		name[32];
	int			rc;

	*flushed = 0;
	memset(&m, 0, sizeof(m));
	if ((rc = wc_db_lock(db, WC_LOCK_MANIFEST, true, err)) != WC_OK)
		return rc;
	if ((rc = wc_db_read_manifest(db, &m, err)) != WC_OK)
		goto unlock;
	for (int i = 0; i < n; i++)
		if (!has_log(&m, db->logs[i]->number))
			goto unlock;		/* someone else flushed it meanwhile */
	for (int i = 0; i < n && rc == WC_OK; i++)
	{
		rc = manifest_take_log(&m, db->logs[i], err);
		ningested += db->logs[i]->ningested;
	}
	if (rc != WC_OK)
		goto unlock;
	if ((doomed = calloc((size_t) (m.nfiles + ningested) + 1, sizeof(uint64_t))) == NULL)
	{
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
		goto unlock;
	}
	manifest_drop_truncated(&m, doomed, &ndoomed);
	for (int i = 0; i < n && rc == WC_OK; i++)
		rc = manifest_add_ingested(&m, db->logs[i], doomed, &ndoomed, err);
	if (rc == WC_OK && (rc = wc_db_write_manifest(db, &m, err)) == WC_OK)
		*flushed = n;

unlock:
	wc_db_unlock(db, WC_LOCK_MANIFEST);
	if (*flushed > 0)
	{
		wc_err		ignored;

		/* the manifest no longer names them: failures only leave orphans */
		wc_err_clear(&ignored);
		for (int i = 0; i < n; i++)
		{
			wc_file_name(name, sizeof(name), db->logs[i]->number, "log");
			(void) wc_env_unlink(db->dir, name, &ignored);
		}
		for (int i = 0; i < ndoomed; i++)
		{
			wc_file_name(name, sizeof(name), doomed[i], "sst");
			(void) wc_env_unlink(db->dir, name, &ignored);
		}
	}
	free(doomed);
	wc_manifest_clear(&m);
	return rc;
}

/* Logs of this process's view from the oldest that flush_ingest_run can take. */
static int
ingest_run_length(const wc_db *db)
{
	int			n = 0;

	/* never the active log, the last; at most 1,000 a manifest write */
	while (n < db->nlogs - 1 && n < 1000)
	{
		const wc_logmem *lm = db->logs[n];

		if (!lm->closed || lm->nheld > 0 || lm->nmem > 0)
			break;
		n++;
	}
	return n;
}

/*
 * A log that is no longer active normally carries its closing marker; after a
 * crash (or an OS crash that lost the unsynced marker) it may not.  Closing it
 * under the write lock guarantees nobody appends to it while we flush.
 */
static int
ensure_closed(wc_db *db, uint64_t number, wc_err *err)
{
	int			rc;

	if ((rc = wc_db_lock(db, WC_LOCK_WRITE, true, err)) != WC_OK)
		return rc;
	rc = wc_db_refresh_full(db, err);
	for (int i = 0; rc == WC_OK && i < db->nlogs - 1; i++)
		if (db->logs[i]->number == number && !db->logs[i]->closed)
			rc = wc_db_close_log(db, db->logs[i], err);
	wc_db_unlock(db, WC_LOCK_WRITE);
	return rc;
}

int
wc_db_flush_logs(wc_db *db, bool wait, wc_err *err)
{
	int			rc;

	if ((rc = wc_db_refresh_full(db, err)) != WC_OK)
		return rc;
	while (db->nlogs > 1)
	{
		uint64_t	number = db->logs[0]->number;
		int			run = ingest_run_length(db),
					flushed;

		if (run > 1)
		{
			if ((rc = flush_ingest_run(db, run, &flushed, err)) != WC_OK ||
				(rc = wc_db_refresh_full(db, err)) != WC_OK)
				return rc;
			continue;
		}
		if (!db->logs[0]->closed && (rc = ensure_closed(db, number, err)) != WC_OK)
			return rc;
		if ((rc = wc_db_refresh_full(db, err)) != WC_OK)
			return rc;
		if (db->nlogs > 1 && db->logs[0]->number == number &&
			(rc = flush_one(db, number, wait, err)) != WC_OK)
			return rc;
		if ((rc = wc_db_refresh_full(db, err)) != WC_OK)
			return rc;
	}
	return WC_OK;
}

/* wc_db_flush, waiting for other flushers and for commits in flight or not */
static int
flush_all(wc_db *db, bool wait, wc_err *err)
{
	int			rc;

	if ((rc = wc_db_check_writable(db, "flush", err)) != WC_OK)
		return rc;
	if ((rc = wc_db_lock(db, WC_LOCK_FLUSH, wait, err)) != WC_OK)
		return rc;
	if ((rc = wc_db_lock(db, WC_LOCK_WRITE, true, err)) != WC_OK)
	{
		wc_db_unlock(db, WC_LOCK_FLUSH);
		return rc;
	}
	rc = wc_db_refresh_full(db, err);
	if (rc == WC_OK && db->nlogs > 0)
	{
		wc_logmem  *active = db->logs[db->nlogs - 1];

		if (active->valid_end > WC_LOG_HEADER_SIZE || active->nheld > 0 || active->closed)
			rc = wc_db_switch_log(db, active, err);
	}
	wc_db_unlock(db, WC_LOCK_WRITE);
	if (rc == WC_OK)
		rc = wc_db_flush_logs(db, wait, err);
	wc_db_unlock(db, WC_LOCK_FLUSH);
	if (rc == WC_OK)
		rc = wc_db_refresh_full(db, err);
	return rc;
}

int
wc_db_flush(wc_db *db, wc_err *err)
{
	return flush_all(db, true, err);
}

int
wc_db_flush_nowait(wc_db *db, wc_err *err)
{
	return flush_all(db, false, err);
}
