/*
 * maintain.c -- maintenance: wc_db_maintain (opportunistic: full logs flushed,
 * minor compactions, never waiting for a lock), wc_db_compact (on request: a
 * flush, a major compaction of every family, then orphan removal), and the
 * removal of files nobody refers to (DESIGN.md, "Files nobody refers to").
 *
 * Layer 4 of the store core, beside db.c: it calls flush.c, compact.c,
 * version.c and lock.c.
 */
#include "db_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "ingest.h"

/* NNNNNN.ext -> number; false if name is not of that form. */
static bool
parse_file_name(const char *name, const char *ext, uint64_t *number)
{
	const char *dot = strchr(name, '.');
	uint64_t	n = 0;

	if (dot == NULL || dot == name || strcmp(dot + 1, ext) != 0)
		return false;
	for (const char *p = name; p < dot; p++)
	{
		if (*p < '0' || *p > '9' || n > UINT64_MAX / 10)
			return false;
		n = n * 10 + (uint64_t) (*p - '0');
	}
	*number = n;
	return true;
}

/*
 * Adds to *keep (*nkeep entries, room for *cap) the files of ingest records in
 * the view's logs, which no manifest names yet: those of committed records (open
 * in the view) and of records still in progress (held).
 */
static int
ingest_files(wc_db *db, uint64_t **keep, size_t *nkeep, size_t *cap, wc_err *err)
{
	for (int i = 0; i < db->nlogs; i++)
	{
		const wc_logmem *lm = db->logs[i];

		if (!wc_array_reserve(keep, cap, *nkeep + (size_t) lm->ningested, sizeof(uint64_t)))
			return wc_err_set(err, WC_NOMEM, "out of memory");
		for (int j = 0; j < lm->ningested; j++)
			(*keep)[(*nkeep)++] = lm->ingested[j].number;
		for (int j = 0; j < lm->nheld; j++)
		{
			wc_ingest_record rec;
			int			rc;

			if (!wc_ingest_is_record(lm->held[j].payload, lm->held[j].len))
				continue;
			if ((rc = wc_ingest_decode(lm->held[j].payload, lm->held[j].len, &rec, err)) != WC_OK)
				return rc;
			if (!wc_array_reserve(keep, cap, *nkeep + (size_t) rec.nfiles, sizeof(uint64_t)))
			{
				wc_ingest_record_clear(&rec);
				return wc_err_set(err, WC_NOMEM, "out of memory");
			}
			for (int k = 0; k < rec.nfiles; k++)
				(*keep)[(*nkeep)++] = rec.files[k].number;
			wc_ingest_record_clear(&rec);
		}
	}
	return WC_OK;
}

/*
 * Removes every NNNNNN.sst and NNNNNN.log below the manifest's next_file that
 * neither the manifest nor an ingest record of a live log names, and
 * MANIFEST.tmp.  Caller holds the compact and flush locks.
 */
static int
remove_orphans(wc_db *db, wc_err *err)
{
	wc_manifest m;
	char	  **names = NULL;
	int			n = 0,
				rc;
	uint64_t   *keep = NULL;
	size_t		nkeep = 0,
				keep_cap = 0;

	memset(&m, 0, sizeof(m));

	/*
	 * Files of ingest records in live logs are in no manifest yet.  A bulk writer
	 * appends its record before it creates a file, so with the write lock held
	 * (no record can be appended) and every live log read, each such file that
	 * exists is named by a record we have read: keep those of committed records
	 * and of records still in progress.
	 */
	if ((rc = wc_db_lock(db, WC_LOCK_WRITE, true, err)) != WC_OK)
		return rc;
	rc = wc_db_refresh_full(db, err);
	if (rc == WC_OK)
		rc = ingest_files(db, &keep, &nkeep, &keep_cap, err);
	if (rc == WC_OK)
		rc = wc_db_lock(db, WC_LOCK_MANIFEST, true, err);
	if (rc != WC_OK)
	{
		wc_db_unlock(db, WC_LOCK_WRITE);
		free(keep);
		return rc;
	}

	rc = wc_db_read_manifest(db, &m, err);
	if (rc == WC_OK)
		rc = wc_env_list(db->dir, &names, &n, err);
	for (int i = 0; rc == WC_OK && i < n; i++)
	{
		uint64_t	number;
		bool		live = false;

		if (strcmp(names[i], "MANIFEST.tmp") == 0)
		{
			rc = wc_env_unlink(db->dir, names[i], err);
			continue;
		}
		if (parse_file_name(names[i], "sst", &number))
		{
			for (int j = 0; j < m.nfiles; j++)
				if (m.files[j].number == number)
					live = true;
			for (size_t j = 0; j < nkeep; j++)
				if (keep[j] == number)
					live = true;
		}
		else if (parse_file_name(names[i], "log", &number))
		{
			for (int j = 0; j < m.nlogs; j++)
				if (m.logs[j] == number)
					live = true;
		}
		else
			continue;
		if (!live && number < m.next_file)
			rc = wc_env_unlink(db->dir, names[i], err);
	}
	wc_db_unlock(db, WC_LOCK_MANIFEST);
	wc_db_unlock(db, WC_LOCK_WRITE);
	free(keep);
	wc_env_free_list(names, n);
	wc_manifest_clear(&m);
	return rc;
}


int
wc_db_compact(wc_db *db, wc_err *err)
{
	int			rc = wc_db_flush(db, err);	/* refuses a read-only handle */

	/* a commit in flight or a prepared transaction keeps its log; the files
	 * are compacted all the same */
	if (rc == WC_BUSY || rc == WC_HELD)
	{
		wc_err_clear(err);
		rc = WC_OK;
	}
	if (rc != WC_OK)
		return rc;
	if ((rc = wc_db_lock(db, WC_LOCK_COMPACT, true, err)) != WC_OK)
		return rc;
	if ((rc = wc_db_refresh_full(db, err)) == WC_OK)
	{
		/* every family with files, declared or not; each compaction changes the
		 * manifest, so take the names first */
		int			nfiles = db->manifest.nfiles;
		int			nnames = 0;
		char	  (*names)[WC_MAX_FAMILY + 1] = calloc(nfiles > 0 ? nfiles : 1, WC_MAX_FAMILY + 1);

		if (names == NULL)
			rc = wc_err_set(err, WC_NOMEM, "out of memory");
		for (int i = 0; rc == WC_OK && i < nfiles; i++)
		{
			const char *family = db->manifest.files[i].props.family;
			bool		seen = false;

			for (int j = 0; j < nnames; j++)
				if (strcmp(names[j], family) == 0)
					seen = true;
			if (!seen)
				snprintf(names[nnames++], WC_MAX_FAMILY + 1, "%s", family);
		}
		for (int i = 0; rc == WC_OK && i < nnames; i++)
			rc = wc_db_compact_family(db, names[i], NULL, 0, false, err);
		free(names);
	}
	if (rc == WC_OK && wc_db_lock(db, WC_LOCK_FLUSH, false, err) == WC_OK)
	{
		rc = remove_orphans(db, err);
		wc_db_unlock(db, WC_LOCK_FLUSH);
	}
	wc_db_unlock(db, WC_LOCK_COMPACT);
	return rc;
}

int
wc_db_maintain(wc_db *db, wc_err *err)
{
	int			rc;
	bool		acted = false;

	if ((rc = wc_db_check_writable(db, "maintain", err)) != WC_OK)
		return rc;

	/*
	 * On the handle's view as of its last refresh or write (PostgreSQL
	 * maintains after a commit, at the start of the next statement, right
	 * after that statement's refresh).  A refresh of its own here and another
	 * after it read the other sessions' records again and asked again about
	 * those in progress, three refreshes a statement where one does (with 8
	 * clients updating, refreshes took 8% of a backend's time).  What is
	 * decided here on an older view is decided again under the locks: a flush
	 * and a compaction each refresh fully before they choose their inputs, and
	 * a log that fills up meanwhile is flushed after a later commit.
	 */
	if (db->nlogs > 1)
	{
		rc = wc_db_lock(db, WC_LOCK_FLUSH, false, err);
		if (rc == WC_OK)
		{
			rc = wc_db_flush_logs(db, false, err);
			wc_db_unlock(db, WC_LOCK_FLUSH);
			acted = rc == WC_OK;
		}
		if (rc == WC_BUSY || rc == WC_HELD)
		{
			/* someone else is at it, a commit is in flight or a prepared
			 * transaction holds the log: next time */
			wc_err_clear(err);
			rc = WC_OK;
		}
		if (rc != WC_OK)
			return rc;
	}
	/*
	 * A family where a rowkey lies in too many files gets those files
	 * compacted.  Which do is a matter of the manifest alone: once none does,
	 * not asked again (sorting the files, finding the groups) at every commit
	 * until the manifest changes.  version + next_file name a manifest of
	 * this handle's store: both only grow.
	 */
	if (db->quiet_version == db->manifest.version &&
		db->quiet_next_file == db->manifest.next_file)
		return acted ? wc_db_refresh(db, err) : WC_OK;
	for (int i = 0; i < db->nfams; i++)
	{
		int			l0 = 0;

		for (int j = 0; j < db->manifest.nfiles; j++)
			if (db->manifest.files[j].props.level == 0 &&
				strcmp(db->manifest.files[j].props.family, db->fams[i].name) == 0)
				l0++;
		if (l0 == 0)
			continue;
		rc = wc_db_compact_some(db, db->fams[i].name, db->opts.l0_compaction_trigger, false, err);
		if (rc <= 0)
		{
			if (rc < 0)
				return rc;
			continue;
		}
		rc = wc_db_lock(db, WC_LOCK_COMPACT, false, err);
		if (rc == WC_BUSY)
		{
			wc_err_clear(err);
			return WC_OK;
		}
		if (rc != WC_OK)
			return rc;
		rc = wc_db_compact_some(db, db->fams[i].name, db->opts.l0_compaction_trigger, true, err);
		wc_db_unlock(db, WC_LOCK_COMPACT);
		if (rc != WC_OK)
			return rc;
		acted = true;
	}
	if (!acted)
	{
		db->quiet_version = db->manifest.version;
		db->quiet_next_file = db->manifest.next_file;
	}
	/* the files it made, in the handle's view */
	return acted ? wc_db_refresh(db, err) : WC_OK;
}
