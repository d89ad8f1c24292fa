/*
 * db.c -- opening a store, catching up with other processes, writing batches.
 *
 * The protocol (locks, manifest, logs, versions) is described in DESIGN.md; this
 * file is its reading and writing half (lock.c holds the locks, options.c the
 * settings).  flush.c and compact.c move data from logs to sorted files and
 * between sorted files; scan.c reads a version.
 */
#include "db_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "coding.h"
#include "err.h"
#include "ingest.h"

#define MANIFEST_RETRIES 20

void
wc_file_name(char *buf, size_t size, uint64_t number, const char *ext)
{
	snprintf(buf, size, "%06llu.%s", (unsigned long long) number, ext);
}

/* ---------------------------------------------------------------- manifest */

static int
manifest_stat(wc_db *db, struct stat *st, wc_err *err)
{
	char		path[4096];

	snprintf(path, sizeof(path), "%s/MANIFEST", db->dir);
	if (stat(path, st) != 0)
		return wc_err_sys(err, "could not stat file \"MANIFEST\"");
	return WC_OK;
}

static bool
manifest_same(const wc_db *db, const struct stat *st)
{
	return st->st_dev == db->mf_dev && st->st_ino == db->mf_ino && st->st_size == db->mf_size &&
		(int64_t) st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec == db->mf_mtime_ns;
}

int
wc_db_read_manifest(wc_db *db, wc_manifest *m, wc_err *err)
{
	return wc_manifest_read(db->dir, m, err);
}

int
wc_db_write_manifest(wc_db *db, wc_manifest *m, wc_err *err)
{
	int			rc;

	m->version++;
	rc = wc_manifest_write(db->dir, m, err);
	/* even after a failure: the rename may have happened */
	wc_db_shared_manifest_bump(db);

	/*
	 * A failure may come after the rename (the directory fsync): the new manifest
	 * may then be the live one.  Callers must not delete a file it names, so they
	 * leave their outputs as orphans; and as with any failed fsync, this handle
	 * stops writing until it is reopened.
	 */
	if (rc != WC_OK)
		db->failed = true;
	return rc;
}

static void
logmem_free(wc_logmem *lm)
{
	if (lm == NULL)
		return;
	for (int i = 0; i < lm->nmem; i++)
		wc_memtable_unref(lm->mem[i].mt);
	free(lm->mem);
	for (int i = 0; i < lm->nheld; i++)
		free(lm->held[i].payload);
	free(lm->held);
	for (int i = 0; i < lm->ningested; i++)
		wc_sst_unref(lm->ingested[i].sst);
	free(lm->ingested);
	if (lm->reader)
		wc_log_reader_free(lm->reader);
	wc_file_close(&lm->file);
	free(lm);
}

static int
logmem_open(wc_db *db, uint64_t number, wc_logmem **out, wc_err *err)
{
	wc_logmem  *lm = calloc(1, sizeof(wc_logmem));
	char		name[32];
	uint64_t	hdr_number;
	int			rc;

	*out = NULL;
	if (lm == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory");
	lm->number = number;
	lm->file.fd = -1;
	wc_file_name(name, sizeof(name), number, "log");
	rc = wc_file_open(db->dir, name, WC_OPEN_RDWR, &lm->file, err);
	if (rc == WC_OK)
		rc = wc_log_check_header(&lm->file, &hdr_number, err);
	if (rc == WC_OK && hdr_number != number)
		rc = wc_err_set(err, WC_CORRUPT, "log \"%s\" says it is log %llu",
						name, (unsigned long long) hdr_number);
	if (rc == WC_OK)
	{
		lm->valid_end = WC_LOG_HEADER_SIZE;
		lm->reader = wc_log_reader_new(&lm->file, WC_LOG_HEADER_SIZE);
		if (lm->reader == NULL)
			rc = wc_err_set(err, WC_NOMEM, "out of memory");
	}
	if (rc != WC_OK)
	{
		logmem_free(lm);
		return rc;
	}
	*out = lm;
	return WC_OK;
}

wc_sst *
wc_db_find_sst(wc_db *db, uint64_t number)
{
	for (int i = 0; i < db->nssts; i++)
		if (db->ssts[i].number == number)
			return db->ssts[i].sst;
	for (int i = 0; i < db->nlogs; i++)
		for (int j = 0; db->logs[i] && j < db->logs[i]->ningested; j++)
			if (db->logs[i]->ingested[j].number == number)
				return db->logs[i]->ingested[j].sst;
	return NULL;
}

/*
 * Makes the open files match MANIFEST: opens new sorted files and logs, drops the
 * ones no longer listed.  A listed file may have been deleted by a newer manifest
 * written in between; then we start over with that one.
 */
static int
load_manifest(wc_db *db, wc_err *err)
{
	for (int attempt = 0;; attempt++)
	{
		wc_manifest m;
		struct stat st1,
					st2;
		wc_dbsst   *ssts = NULL;
		wc_logmem **logs = NULL;
		int			rc;
		bool		vanished = false;

		memset(&m, 0, sizeof(m));
		if ((rc = manifest_stat(db, &st1, err)) != WC_OK)
			return rc;
		if ((rc = wc_manifest_read(db->dir, &m, err)) != WC_OK)
		{
			/* a rename may have replaced it between stat and open */
			if (rc == WC_NOT_FOUND && attempt < MANIFEST_RETRIES)
			{
				wc_err_clear(err);
				continue;
			}
			return rc;
		}
		if ((rc = manifest_stat(db, &st2, err)) != WC_OK)
		{
			wc_manifest_clear(&m);
			return rc;
		}
		if (!(st1.st_ino == st2.st_ino && st1.st_mtim.tv_nsec == st2.st_mtim.tv_nsec &&
			  st1.st_mtim.tv_sec == st2.st_mtim.tv_sec) && attempt < MANIFEST_RETRIES)
		{
			wc_manifest_clear(&m);
			continue;
		}

		ssts = calloc(m.nfiles > 0 ? m.nfiles : 1, sizeof(wc_dbsst));
		logs = calloc(m.nlogs > 0 ? m.nlogs : 1, sizeof(wc_logmem *));
		if (ssts == NULL || logs == NULL)
		{
			free(ssts);
			free(logs);
			wc_manifest_clear(&m);
			return wc_err_set(err, WC_NOMEM, "out of memory");
		}

		for (int i = 0; i < m.nfiles && rc == WC_OK; i++)
		{
			ssts[i].number = m.files[i].number;
			/* open already, as a file of the old manifest or of a log's ingest record */
			if ((ssts[i].sst = wc_db_find_sst(db, m.files[i].number)) != NULL)
				wc_sst_ref(ssts[i].sst);
			else
			{
				char		name[32];

				wc_file_name(name, sizeof(name), m.files[i].number, "sst");
				rc = wc_sst_open(db->dir, name, &ssts[i].sst, err);
				if (rc == WC_NOT_FOUND)
					vanished = true;
			}
		}
		for (int i = 0; i < m.nlogs && rc == WC_OK; i++)
		{
			for (int j = 0; j < db->nlogs; j++)
				if (db->logs[j] && db->logs[j]->number == m.logs[i])
				{
					logs[i] = db->logs[j];
					break;
				}
			if (logs[i] == NULL)
			{
				rc = logmem_open(db, m.logs[i], &logs[i], err);
				if (rc == WC_NOT_FOUND)
					vanished = true;
			}
		}

		if (rc != WC_OK)
		{
			/* undo: release what this attempt opened or referenced */
			for (int i = 0; i < m.nfiles; i++)
				if (ssts[i].sst)
					wc_sst_unref(ssts[i].sst);
			for (int i = 0; i < m.nlogs; i++)
			{
				bool		ours = true;

				for (int j = 0; j < db->nlogs; j++)
					if (logs[i] == db->logs[j])
						ours = false;
				if (ours)
					logmem_free(logs[i]);
			}
			free(ssts);
			free(logs);
			wc_manifest_clear(&m);
			if (vanished && attempt < MANIFEST_RETRIES)
			{
				struct stat st3;

				if (manifest_stat(db, &st3, err) == WC_OK &&
					!(st3.st_ino == st2.st_ino && st3.st_mtim.tv_nsec == st2.st_mtim.tv_nsec &&
					  st3.st_mtim.tv_sec == st2.st_mtim.tv_sec))
				{
					wc_err_clear(err);
					continue;
				}
				{
					char		detail[sizeof(err->msg)];

					memcpy(detail, err->msg, sizeof(detail));
					err->code = WC_OK;
					return wc_err_set(err, WC_CORRUPT,
									  "MANIFEST lists a file that does not exist: %s", detail);
				}
			}
			return rc;
		}

		/* commit the new set */
		for (int j = 0; j < db->nssts; j++)
			wc_sst_unref(db->ssts[j].sst);
		free(db->ssts);
		db->ssts = ssts;
		db->nssts = m.nfiles;
		for (int j = 0; j < db->nlogs; j++)
		{
			bool		kept = false;

			for (int i = 0; i < m.nlogs; i++)
				if (logs[i] == db->logs[j])
					kept = true;
			if (!kept)
				logmem_free(db->logs[j]);
		}
		free(db->logs);
		db->logs = logs;
		db->nlogs = m.nlogs;
		wc_manifest_clear(&db->manifest);
		db->manifest = m;
		if (m.truncate_seq > db->truncate_seq)
			db->truncate_seq = m.truncate_seq;
		if (m.last_seq > db->applied_seq)
			db->applied_seq = m.last_seq;
		db->mf_dev = st2.st_dev;
		db->mf_ino = st2.st_ino;
		db->mf_size = st2.st_size;
		db->mf_mtime_ns = (int64_t) st2.st_mtim.tv_sec * 1000000000 + st2.st_mtim.tv_nsec;
		db->dirty = true;
		return WC_OK;
	}
}

/* ---------------------------------------------------------------- log replay */

static wc_memtable *
logmem_family(wc_logmem *lm, const uint8_t *fam, uint32_t fam_len, wc_err *err)
{
	wc_fammem  *grown;

	for (int i = 0; i < lm->nmem; i++)
		if (strlen(lm->mem[i].family) == fam_len && memcmp(lm->mem[i].family, fam, fam_len) == 0)
			return lm->mem[i].mt;
	grown = realloc(lm->mem, sizeof(wc_fammem) * (lm->nmem + 1));
	if (grown == NULL)
		goto oom;
	lm->mem = grown;
	memset(&lm->mem[lm->nmem], 0, sizeof(wc_fammem));
	memcpy(lm->mem[lm->nmem].family, fam, fam_len);
	lm->mem[lm->nmem].mt = wc_memtable_new();
	if (lm->mem[lm->nmem].mt == NULL)
		goto oom;
	return lm->mem[lm->nmem++].mt;

oom:
	wc_err_set(err, WC_NOMEM, "out of memory");
	return NULL;
}

/* Applies the entries of a committed record, positioned in r, to lm's memtables. */
static int
apply_entries(wc_db *db, wc_logmem *lm, wc_batch_reader *rd, wc_err *err)
{
	wc_batch_reader r = *rd;
	wc_batch_entry e;
	int			rc;

	while ((rc = wc_batch_reader_next(&r, &e, err)) == 1)
	{
		if (e.type == WC_TYPE_DEL_ALL)
		{
			if (e.cell.seq > db->truncate_seq)
				db->truncate_seq = e.cell.seq;
			if (e.cell.seq > lm->trunc)
				lm->trunc = e.cell.seq;
			continue;
		}
		else
		{
			wc_memtable *mt = logmem_family(lm, e.fam, e.fam_len, err);

			if (mt == NULL)
				return err->code;
			if ((rc = wc_memtable_add(mt, &e.cell, err)) != WC_OK)
				return rc;
		}
	}
	if (rc < 0)
		return rc;
	if (r.count > 0 && r.seq_base + r.count - 1 > db->applied_seq)
		db->applied_seq = r.seq_base + r.count - 1;
	db->dirty = true;
	return WC_OK;
}

static int
apply_payload(wc_db *db, wc_logmem *lm, const uint8_t *payload, size_t len, wc_err *err)
{
	wc_batch_reader r;
	int			rc;

	if (wc_ingest_is_record(payload, len))
		return wc_db_apply_ingest(db, lm, payload, len, err);
	if ((rc = wc_batch_reader_init(&r, payload, len, err)) != WC_OK)
		return rc;
	return apply_entries(db, lm, &r, err);
}

int
wc_db_hold(wc_logmem *lm, uint64_t tag, const uint8_t *payload, size_t len, wc_err *err)
{
	wc_held    *grown = realloc(lm->held, sizeof(wc_held) * (lm->nheld + 1));
	uint8_t    *copy = malloc(len ? len : 1);

	if (grown == NULL || copy == NULL)
	{
		free(copy);
		if (grown)
			lm->held = grown;
		return wc_err_set(err, WC_NOMEM, "out of memory");
	}
	memcpy(copy, payload, len);
	lm->held = grown;
	lm->held[lm->nheld].tag = tag;
	lm->held[lm->nheld].payload = copy;
	lm->held[lm->nheld].len = len;
	lm->nheld++;
	return WC_OK;
}

/*
 * The shared page does not know where the active log ends (it is rebuilt when a
 * handle opens the store with no other handle on it, as a backend does after all
 * others closed theirs), and lm, the active log, is read to its end: publish
 * that end, so that later refreshes in every process need no fstat until the
 * next write.  Only under the write lock (not waited for), and only if the file
 * still ends there: then no writer can be appending and no torn tail is left.
 */
static void
publish_log_end(wc_db *db, wc_logmem *lm)
{
	uint64_t	size,
				number,
				end;
	wc_err		ignored;

	if (db->nlogs == 0 || lm != db->logs[db->nlogs - 1] || lm->closed)
		return;
	wc_err_clear(&ignored);
	if (wc_db_lock(db, WC_LOCK_WRITE, false, &ignored) != WC_OK)
		return;
	if (!wc_db_shared_get_log(db, &number, &end) &&
		wc_file_size(&lm->file, &size, &ignored) == WC_OK && size == lm->valid_end)
		wc_db_shared_set_log(db, lm->number, size);
	wc_db_unlock(db, WC_LOCK_WRITE);
}

static int
logmem_catch_up(wc_db *db, wc_logmem *lm, wc_err *err)
{
	uint64_t	size;
	int			rc;

	/* records whose transaction was in progress last time */
	for (int i = 0; i < lm->nheld;)
	{
		wc_txn_state state;

		if ((rc = wc_db_resolve(db, lm->held[i].tag, &state, err)) != WC_OK)
			return rc;
		if (state == WC_TXN_IN_PROGRESS)
		{
			i++;
			continue;
		}
		if (state == WC_TXN_COMMITTED &&
			(rc = apply_payload(db, lm, lm->held[i].payload, lm->held[i].len, err)) != WC_OK)
			return rc;			/* still held: a WC_NOT_FOUND is retried */
		free(lm->held[i].payload);
		lm->held[i] = lm->held[--lm->nheld];
	}

	if (lm->closed)
		return WC_OK;
	{
		uint64_t	number;

		/* nothing appended since last time: no read at all, and when the shared
		 * page knows where this log ends, not even a system call */
		if (wc_db_shared_get_log(db, &number, &size) && number == lm->number)
		{
			if (size <= lm->valid_end)
				return WC_OK;
		}
		else
		{
			if ((rc = wc_file_size(&lm->file, &size, err)) != WC_OK)
				return rc;
			if (size <= lm->valid_end)
			{
				publish_log_end(db, lm);
				return WC_OK;
			}
		}
	}
	/*
	 * Up to that size: whatever committed before this refresh began lies below
	 * it.  Reading on would chase a writer appending meanwhile, a read per
	 * record; the next refresh takes those records in one go.
	 */
	while (lm->valid_end < size)
	{
		const uint8_t *payload;
		size_t		len;
		uint64_t	end;
		wc_batch_reader r;
		wc_txn_state state;

		rc = wc_log_read(lm->reader, &payload, &len, &end, err);
		if (rc == 0)
			return WC_OK;
		if (rc < 0)
			return rc;
		if ((rc = wc_ingest_payload_header(payload, len, &r, err)) != WC_OK)
		{
			char		name[32];
			char		detail[sizeof(err->msg)];

			wc_file_name(name, sizeof(name), lm->number, "log");
			memcpy(detail, err->msg, sizeof(detail));
			err->code = WC_OK;
			return wc_err_set(err, WC_CORRUPT, "bad batch record in %s ending at offset %llu: %s",
							  name, (unsigned long long) end, detail);
		}
		if (r.count == 0)
		{
			/* the closing marker: a writer switched to a newer log */
			lm->valid_end = end;
			lm->closed = true;
			db->manifest_stale = true;
			return WC_OK;
		}
		if (r.seq_base + r.count - 1 > lm->max_seq)
			lm->max_seq = r.seq_base + r.count - 1;
		if ((rc = wc_db_resolve(db, r.tag, &state, err)) != WC_OK)
			return rc;
		if (state == WC_TXN_COMMITTED)
			rc = apply_payload(db, lm, payload, len, err);
		else if (state == WC_TXN_IN_PROGRESS)
			rc = wc_db_hold(lm, r.tag, payload, len, err);
		if (rc != WC_OK)
		{
			/* read this record again next time (an ingest record's file may be
			 * missing because our manifest is stale: see refresh) */
			wc_log_reader_skip_to(lm->reader, lm->valid_end);
			return rc;
		}
		lm->valid_end = end;
	}
	return WC_OK;
}

/* ---------------------------------------------------------------- versions */

void
wc_version_unref(wc_version *v)
{
	if (v == NULL || --v->refs > 0)
		return;
	for (int i = 0; i < v->nssts; i++)
		wc_sst_unref(v->ssts[i]);
	for (int i = 0; i < v->nmems; i++)
		wc_memtable_unref(v->mems[i].mt);
	free(v->ssts);
	free(v->mems);
	free(v);
}

static int
build_version(wc_db *db, wc_err *err)
{
	wc_version *v = calloc(1, sizeof(wc_version));
	int			nmems = 0;
	int			nssts = db->nssts;

	if (v == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory");
	for (int i = 0; i < db->nlogs; i++)
	{
		nmems += db->logs[i]->nmem;
		nssts += db->logs[i]->ningested;
	}
	v->refs = 1;
	v->snapshot_seq = db->applied_seq;
	v->truncate_seq = db->truncate_seq;
	v->ssts = calloc(nssts > 0 ? nssts : 1, sizeof(wc_sst *));
	v->mems = calloc(nmems > 0 ? nmems : 1, sizeof(wc_fammem));
	if (v->ssts == NULL || v->mems == NULL)
	{
		free(v->ssts);
		free(v->mems);
		free(v);
		return wc_err_set(err, WC_NOMEM, "out of memory");
	}
	for (int i = 0; i < db->nssts; i++)
	{
		v->ssts[v->nssts++] = db->ssts[i].sst;
		wc_sst_ref(db->ssts[i].sst);
	}
	for (int i = 0; i < db->nlogs; i++)
		for (int j = 0; j < db->logs[i]->ningested; j++)
		{
			v->ssts[v->nssts++] = db->logs[i]->ingested[j].sst;
			wc_sst_ref(db->logs[i]->ingested[j].sst);
		}
	for (int i = 0; i < db->nlogs; i++)
		for (int j = 0; j < db->logs[i]->nmem; j++)
		{
			v->mems[v->nmems] = db->logs[i]->mem[j];
			wc_memtable_ref(v->mems[v->nmems].mt);
			v->nmems++;
		}
	wc_version_unref(db->current);
	db->current = v;
	db->dirty = false;
	return WC_OK;
}

/*
 * Built when asked for, not at every refresh: a writer marks the state changed at
 * every write, and rebuilding references every sorted file and memtable.
 */
wc_version *
wc_db_version(wc_db *db, wc_err *err)
{
	if ((db->dirty || db->current == NULL) && build_version(db, err) != WC_OK)
		return NULL;
	db->current->refs++;
	return db->current;
}

static int
check_manifest(wc_db *db, wc_err *err)
{
	struct stat st;
	int			rc;

	if ((rc = manifest_stat(db, &st, err)) != WC_OK)
		return rc;
	db->manifest_checked_ms = wc_env_monotonic_ms();
	db->manifest_stale = false;
	if (!manifest_same(db, &st))
		return load_manifest(db, err);
	return WC_OK;
}

/*
 * Catches up: new records in the logs and, when a log was closed (or the
 * manifest was not looked at for a while, or force), a new manifest.  New data
 * only ever goes to the active log, and a writer closes a log with a marker
 * before it lists the next one, so a process that reads the marker knows to look
 * at the manifest; flushes and compactions change only the manifest and are seen
 * within WC_MANIFEST_CHECK_MS (the old files and logs stay readable until then).
 */
static int
refresh(wc_db *db, bool force, wc_err *err)
{
	int			rc;
	uint64_t	gen = wc_db_shared_manifest_gen(db);

	if (force || db->manifest_stale || db->current == NULL || gen != db->manifest_gen ||
		wc_env_monotonic_ms() - db->manifest_checked_ms >= WC_MANIFEST_CHECK_MS)
	{
		/* gen read first: a rewrite after this point bumps it again */
		if ((rc = check_manifest(db, err)) != WC_OK)
			return rc;
		db->manifest_gen = gen;
	}
	for (int round = 0;; round++)
	{
		rc = WC_OK;
		for (int i = 0; i < db->nlogs && rc == WC_OK; i++)
			rc = logmem_catch_up(db, db->logs[i], err);
		if (rc == WC_NOT_FOUND)
		{
			/*
			 * A committed ingest record names a sorted file that is gone.  After
			 * our last look at MANIFEST, a flush may have moved the file out of
			 * that log (and a compaction removed it): then the current MANIFEST no
			 * longer lists the log.  If it still does, the file is lost.
			 */
			char		detail[sizeof(err->msg)];

			if (round < 3)
			{
				wc_err_clear(err);
				if ((rc = check_manifest(db, err)) != WC_OK)
					return rc;
				continue;
			}
			memcpy(detail, err->msg, sizeof(detail));
			err->code = WC_OK;
			return wc_err_set(err, WC_CORRUPT, "a live log's ingest record names a missing file: %s",
							  detail);
		}
		if (rc != WC_OK)
			return rc;
		/* a log closed under us: the manifest names its successor (a few rounds
		 * at most; a switch still in progress is picked up next time) */
		if (!db->manifest_stale || round == 3)
			break;
		if ((rc = check_manifest(db, err)) != WC_OK)
			return rc;
		if (db->nlogs > 0 && db->logs[db->nlogs - 1]->closed)
			db->manifest_stale = true;
	}
	if (db->current == NULL)
		return build_version(db, err);	/* the first refresh: a version from now on */
	return WC_OK;
}

int
wc_db_refresh_locked(wc_db *db, wc_err *err)
{
	return refresh(db, false, err);
}

int
wc_db_refresh_full(wc_db *db, wc_err *err)
{
	return refresh(db, true, err);
}

int
wc_db_refresh(wc_db *db, wc_err *err)
{
	return refresh(db, false, err);
}

int
wc_db_close_log(wc_db *db, wc_logmem *lm, wc_err *err)
{
	uint8_t		marker[WC_BATCH_HEADER_MAX];
	size_t		len;
	uint64_t	end;
	int			rc;

	if (lm->closed)
		return WC_OK;
	if ((rc = wc_log_repair_tail(&lm->file, lm->valid_end, err)) != WC_OK)
		return rc;
	len = wc_batch_encode_header(marker, 0, 0, 0);
	if ((rc = wc_log_append(&lm->file, lm->valid_end, marker, len, &end, err)) != WC_OK)
		return rc;
	lm->valid_end = end;
	wc_log_reader_skip_to(lm->reader, end);
	lm->closed = true;
	wc_db_shared_set_log(db, lm->number, end);
	return WC_OK;
}

/* ---------------------------------------------------------------- open / close */

/*
 * A store without MANIFEST is new only if it holds no data: a lost MANIFEST next
 * to logs or sorted files is damage, and starting afresh there would later remove
 * those files as orphans.  The one file a crash of the very first creation can
 * leave is 000001.log holding only its header.
 */
static int
check_no_data(wc_db *db, wc_err *err)
{
	char	  **names;
	int			n,
				rc;

	if ((rc = wc_env_list(db->dir, &names, &n, err)) != WC_OK)
		return rc;
	for (int i = 0; i < n && rc == WC_OK; i++)
	{
		const char *dot = strrchr(names[i], '.');
		bool		data = dot && (strcmp(dot, ".log") == 0 || strcmp(dot, ".sst") == 0);

		if (data && strcmp(names[i], "000001.log") == 0)
		{
			char		path[4096];
			struct stat st;

			snprintf(path, sizeof(path), "%s/%s", db->dir, names[i]);
			data = stat(path, &st) != 0 || st.st_size > WC_LOG_HEADER_SIZE;
		}
		if (data)
			rc = wc_err_set(err, WC_CORRUPT,
							"MANIFEST is missing in a store that holds data (\"%s\" and maybe more)",
							names[i]);
	}
	wc_env_free_list(names, n);
	return rc;
}

/* Writes the first manifest and log of a new store, unless another process did. */
static int
create_store(wc_db *db, wc_err *err)
{
	wc_manifest m;
	char		name[32];
	int			rc;

	if ((rc = wc_db_lock(db, WC_LOCK_MANIFEST, true, err)) != WC_OK)
		return rc;
	if (wc_env_exists(db->dir, "MANIFEST"))
	{
		wc_db_unlock(db, WC_LOCK_MANIFEST);
		return WC_OK;
	}
	if ((rc = check_no_data(db, err)) != WC_OK)
	{
		wc_db_unlock(db, WC_LOCK_MANIFEST);
		return rc;
	}
	memset(&m, 0, sizeof(m));
	m.next_file = 2;
	m.logs = malloc(sizeof(uint64_t));
	if (m.logs == NULL)
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
	else
	{
		m.logs[0] = 1;
		m.nlogs = 1;
		wc_file_name(name, sizeof(name), 1, "log");
		/* a crash may have left the file of an earlier attempt */
		rc = wc_env_unlink(db->dir, name, err);
		if (rc == WC_OK)
			rc = wc_log_create(db->dir, name, 1, err);
		if (rc == WC_OK)
			rc = wc_db_write_manifest(db, &m, err);
	}
	wc_manifest_clear(&m);
	wc_db_unlock(db, WC_LOCK_MANIFEST);
	return rc;
}

int
wc_db_open(const char *dir, const wc_open_opts *opts, wc_db **out, wc_err *err)
{
	wc_db	   *db;
	int			rc;

	*out = NULL;
	if (dir == NULL || opts == NULL)
		return wc_err_set(err, WC_INVALID, "wc_db_open needs a directory and options");
	db = calloc(1, sizeof(wc_db));
	if (db == NULL || (db->dir = strdup(dir)) == NULL)
	{
		free(db);
		return wc_err_set(err, WC_NOMEM, "out of memory");
	}
	db->lockf.fd = -1;
	rc = wc_db_set_options(db, opts, err);
	if (rc == WC_OK && opts->create_if_missing)
		rc = wc_env_mkdir(dir, err);
	if (rc == WC_OK)
	{
		struct stat st;

		if (stat(dir, &st) != 0)
			rc = wc_err_sys(err, "store directory \"%s\" does not exist", dir);
	}
	if (rc == WC_OK)
		rc = wc_db_attach(db, opts->create_if_missing, err);
	if (rc == WC_OK && !wc_env_exists(dir, "MANIFEST"))
	{
		if (opts->create_if_missing)
			rc = create_store(db, err);
		else
			rc = wc_err_set(err, WC_NOT_FOUND, "no store in \"%s\"", dir);
	}
	if (rc == WC_OK)
		rc = wc_db_refresh_locked(db, err);
	if (rc != WC_OK)
	{
		wc_db_close(db);
		return rc;
	}
	*out = db;
	return WC_OK;
}

void
wc_db_close(wc_db *db)
{
	if (db == NULL)
		return;
	wc_version_unref(db->current);
	for (int i = 0; i < db->nssts; i++)
		wc_sst_unref(db->ssts[i].sst);
	free(db->ssts);
	for (int i = 0; i < db->nlogs; i++)
		logmem_free(db->logs[i]);
	free(db->logs);
	wc_manifest_clear(&db->manifest);
	wc_db_detach(db);
	free(db->fams);
	free(db->dir);
	free(db);
}

int
wc_db_destroy(const char *dir, wc_err *err)
{
	char	  **names;
	int			n,
				rc;

	rc = wc_env_list(dir, &names, &n, err);
	if (rc == WC_NOT_FOUND)
	{
		wc_err_clear(err);
		return WC_OK;
	}
	if (rc != WC_OK)
		return rc;
	for (int i = 0; i < n && rc == WC_OK; i++)
		rc = wc_env_unlink(dir, names[i], err);
	wc_env_free_list(names, n);
	if (rc == WC_OK && rmdir(dir) != 0 && errno != ENOENT)
		rc = wc_err_sys(err, "could not remove store directory \"%s\"", dir);
	return rc;
}

/* ---------------------------------------------------------------- writing */

/*
 * Applies our own record (batches[] after header) without reading it back: we hold
 * the write lock and appended it at the valid end, so it is exactly what we wrote.
 * A record with a transaction tag is held until the tag resolves.
 */
static int
apply_own(wc_db *db, wc_logmem *lm, wc_batch *const *batches, int n, const uint8_t *hdr,
		  size_t hdr_len, uint64_t seq_base, uint64_t tag, wc_err *err)
{
	int			rc = WC_OK;

	if (tag != 0)
	{
		size_t		total = hdr_len;
		uint8_t    *payload;

		for (int i = 0; i < n; i++)
			total += wc_batch_bytes(batches[i]);
		if ((payload = malloc(total)) == NULL)
			return wc_err_set(err, WC_NOMEM, "out of memory");
		memcpy(payload, hdr, hdr_len);
		total = hdr_len;
		for (int i = 0; i < n; i++)
		{
			size_t		len;
			const uint8_t *entries = wc_batch_entries(batches[i], &len);

			memcpy(payload + total, entries, len);
			total += len;
		}
		rc = wc_db_hold(lm, tag, payload, total, err);
		free(payload);
		return rc;
	}
	for (int i = 0; i < n && rc == WC_OK; i++)
	{
		wc_batch_reader r;

		wc_batch_reader_of(&r, batches[i], seq_base);
		seq_base += r.count;
		rc = apply_entries(db, lm, &r, err);
	}
	return rc;
}

int
wc_db_append(wc_db *db, const wc_slice *parts, int nparts, uint64_t count, uint8_t *seq_field,
			 uint64_t flag, wc_batch *const *batches, int n, uint64_t tag, bool switch_log,
			 uint64_t *seq_base_out, wc_logmem **active_out, wc_err *err)
{
	uint64_t	seq_base,
				new_end;
	wc_logmem  *active;
	int			rc;

	if ((rc = wc_db_lock(db, WC_LOCK_WRITE, true, err)) != WC_OK)
		return rc;
	rc = wc_db_refresh_locked(db, err);
	if (rc == WC_OK && db->nlogs == 0)
		rc = wc_err_set(err, WC_CORRUPT, "MANIFEST lists no log");
	if (rc == WC_OK && db->logs[db->nlogs - 1]->closed)
	{
		/* a switch was cut short (a crash after the marker): finish it */
		rc = wc_db_switch_log(db, db->logs[db->nlogs - 1], err);
		if (rc == WC_OK)
			rc = wc_db_refresh_full(db, err);
		if (rc == WC_OK && db->logs[db->nlogs - 1]->closed)
			rc = wc_err_set(err, WC_CORRUPT, "the active log is closed after a log switch");
	}
	if (rc != WC_OK)
		goto out;
	active = db->logs[db->nlogs - 1];
	{
		uint64_t	number,
					size;

		/*
		 * The last writer published where it left the log; if that is not known
		 * (first write to this log since the store was opened, a failed append, a
		 * writer that died holding the lock), look at the file: a writer that died
		 * mid-append left a torn tail, cut it off.
		 */
		if (!wc_db_shared_get_log(db, &number, &size) || number != active->number ||
			size != active->valid_end)
		{
			if ((rc = wc_file_size(&active->file, &size, err)) != WC_OK ||
				(size > active->valid_end &&
				 (rc = wc_log_repair_tail(&active->file, active->valid_end, err)) != WC_OK))
				goto out;
		}
	}

	seq_base = db->manifest.last_seq;
	for (int i = 0; i < db->nlogs; i++)
		if (db->logs[i]->max_seq > seq_base)
			seq_base = db->logs[i]->max_seq;
	if (db->applied_seq > seq_base)
		seq_base = db->applied_seq;
	seq_base++;
	wc_put_fixed64(seq_field, seq_base | flag);

	rc = wc_log_appendv(&active->file, active->valid_end, parts, nparts, &new_end, err);
	if (rc != WC_OK)
	{
		wc_err		ignored;

		/* leave no partial record behind for the next writer to judge */
		wc_err_clear(&ignored);
		(void) wc_file_truncate(&active->file, active->valid_end, &ignored);
		wc_db_shared_set_log(db, 0, 0);
		goto out;
	}
	wc_db_shared_set_log(db, active->number, new_end);
	if (seq_base + count - 1 > active->max_seq)
		active->max_seq = seq_base + count - 1;
	{
		uint64_t	old_end = active->valid_end;
		int			arc;

		active->valid_end = new_end;
		wc_log_reader_skip_to(active->reader, new_end);
		if (batches != NULL)
			arc = apply_own(db, active, batches, n, parts[0].data, parts[0].len, seq_base, tag, err);
		else
			arc = wc_db_hold(active, tag, parts[0].data, parts[0].len, err);
		if (arc != WC_OK)
		{
			/* the record is written; only our view lags: read it back next time */
			active->valid_end = old_end;
			wc_log_reader_skip_to(active->reader, old_end);
			wc_err_clear(err);
		}
	}
	if (switch_log || new_end >= db->opts.log_switch_bytes)
	{
		wc_err		serr;

		/* the record is written; a failed switch only delays the flush */
		wc_err_clear(&serr);
		(void) wc_db_switch_log(db, active, &serr);
	}
	*seq_base_out = seq_base;
	*active_out = active;
out:
	wc_db_unlock(db, WC_LOCK_WRITE);
	return rc;
}

int
wc_db_write(wc_db *db, wc_batch *const *batches, int n, uint64_t tag, bool sync, wc_err *err)
{
	uint64_t	count = 0;
	size_t		bytes = 0;
	bool		truncates = false;
	uint8_t		hdr[WC_BATCH_HEADER_MAX];
	wc_slice	stack[16];
	wc_slice   *parts = stack;
	uint64_t	seq_base;
	wc_logmem  *active;
	int			rc;

	if (db->failed)
		return wc_err_set(err, WC_FAILED,
						  "the store handle refuses writes after an earlier fsync failure; reopen it");
	for (int i = 0; i < n; i++)
	{
		count += wc_batch_count(batches[i]);
		bytes += wc_batch_bytes(batches[i]);
		truncates |= wc_batch_truncate_seq(batches[i]) != 0;
	}
	if (count == 0)
		return WC_OK;
	if (count > UINT32_MAX)
		return wc_err_set(err, WC_INVALID, "a batch of %llu entries is too large",
						  (unsigned long long) count);
	if (tag != 0 && !truncates && bytes >= db->ingest_bytes)
		return wc_db_write_ingest(db, batches, n, count, tag, sync, err);
	if (n + 1 > (int) (sizeof(stack) / sizeof(stack[0])) &&
		(parts = malloc(sizeof(wc_slice) * (n + 1))) == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory");

	/* the record's payload is the header and each batch's entries, in order */
	parts[0].data = hdr;
	parts[0].len = wc_batch_encode_header(hdr, 1, tag, (uint32_t) count);
	for (int i = 0; i < n; i++)
		parts[i + 1].data = wc_batch_entries(batches[i], &parts[i + 1].len);
	rc = wc_db_append(db, parts, n + 1, count, hdr, 0, batches, n, tag, false, &seq_base, &active,
					  err);
	if (parts != stack)
		free(parts);
	if (rc == WC_OK && sync && (rc = wc_file_sync(&active->file, false, err)) != WC_OK)
		db->failed = true;
	return rc;
}

/* ---------------------------------------------------------------- statistics */

int
wc_db_files(wc_db *db, wc_file_info **out, int *n, wc_err *err)
{
	wc_file_info *files;
	int			count,
				rc;

	*out = NULL;
	*n = 0;
	/* the list must be current, not up to WC_MANIFEST_CHECK_MS old */
	if ((rc = wc_db_refresh_full(db, err)) != WC_OK)
		return rc;
	/* the manifest's files, then those of committed bulk writes still in a log */
	count = db->manifest.nfiles;
	for (int i = 0; i < db->nlogs; i++)
		count += db->logs[i]->ningested;
	files = calloc(count > 0 ? count : 1, sizeof(wc_file_info));
	if (files == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory");
	for (int i = 0, li = -1, lj = 0; i < count; i++)
	{
		const wc_sst_props *p;
		uint64_t	number;
		wc_file_info *f = &files[i];

		if (i < db->manifest.nfiles)
		{
			p = &db->manifest.files[i].props;
			number = db->manifest.files[i].number;
		}
		else
		{
			while (li < 0 || lj >= db->logs[li]->ningested)
			{
				li++;
				lj = 0;
			}
			number = db->logs[li]->ingested[lj].number;
			p = wc_sst_get_props(db->logs[li]->ingested[lj++].sst);
		}
		wc_file_name(f->name, sizeof(f->name), number, "sst");
		snprintf(f->family, sizeof(f->family), "%s", p->family);
		f->level = p->level;
		f->cells = p->cells;
		f->file_bytes = p->file_bytes;
		f->raw_bytes = p->raw_bytes;
		f->ts_min = p->ts_min;
		f->ts_max = p->ts_max;
		f->row_min = malloc(p->row_min_len ? p->row_min_len : 1);
		f->row_max = malloc(p->row_max_len ? p->row_max_len : 1);
		if (f->row_min == NULL || f->row_max == NULL)
		{
			wc_file_info_free(files, i + 1);
			return wc_err_set(err, WC_NOMEM, "out of memory");
		}
		if (p->row_min_len)
			memcpy(f->row_min, p->row_min, p->row_min_len);
		if (p->row_max_len)
			memcpy(f->row_max, p->row_max, p->row_max_len);
		f->row_min_len = p->row_min_len;
		f->row_max_len = p->row_max_len;
	}
	*out = files;
	*n = count;
	return WC_OK;
}

void
wc_file_info_free(wc_file_info *files, int n)
{
	if (files == NULL)
		return;
	for (int i = 0; i < n; i++)
	{
		free(files[i].row_min);
		free(files[i].row_max);
	}
	free(files);
}

/* Counts sorted file p in stats when it is of family (or family is NULL). */
static void
stats_add_file(wc_db_stats *stats, const wc_sst_props *p, const char *family)
{
	if (family && strcmp(family, p->family) != 0)
		return;
	stats->files++;
	stats->file_cells += p->cells;
	stats->file_bytes += p->file_bytes;
	stats->raw_bytes += p->raw_bytes;
	stats->distinct_rows_est += p->distinct_rows;
}

int
wc_db_get_stats(wc_db *db, const char *family, wc_db_stats *stats, wc_err *err)
{
	memset(stats, 0, sizeof(*stats));
	for (int i = 0; i < db->manifest.nfiles; i++)
		stats_add_file(stats, &db->manifest.files[i].props, family);
	for (int i = 0; i < db->nlogs; i++)
	{
		const wc_logmem *lm = db->logs[i];

		stats->log_bytes += lm->valid_end;
		for (int j = 0; j < lm->ningested; j++)
			stats_add_file(stats, wc_sst_get_props(lm->ingested[j].sst), family);
		for (int j = 0; j < lm->nmem; j++)
		{
			if (family && strcmp(family, lm->mem[j].family) != 0)
				continue;
			stats->mem_cells += wc_memtable_count(lm->mem[j].mt);
			stats->mem_bytes += wc_memtable_bytes(lm->mem[j].mt);
		}
	}
	/* rows spread over several files are counted once per file: an upper bound */
	stats->distinct_rows_est += stats->mem_cells;
	if (stats->distinct_rows_est > stats->file_cells + stats->mem_cells)
		stats->distinct_rows_est = stats->file_cells + stats->mem_cells;
	return WC_OK;
}
