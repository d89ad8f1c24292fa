/*
 * flush.c -- switching the active log and turning full logs into sorted files.
 *
 * A log that is no longer active is immutable.  Flushing it reads it from disk
 * (not from this process's memtable, which may lag), resolves every record's
 * transaction, writes one sorted file per family with the committed entries, and
 * replaces the log by those files in one manifest write (DESIGN.md, "Flush").
 */
#include "db_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "ingest.h"

#define RESOLVE_WAIT_MS		10000	/* how long a waiting flush waits for a commit */

static void
sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

/*
 * The order matters: the old log gets its closing marker first, so no writer
 * appends to it once the switch began (a writer reads the marker and looks for
 * the next log); a crash between the marker and the manifest write leaves a
 * closed active log, and the next writer finishes the switch.
 */
int
wc_db_switch_log(wc_db *db, wc_logmem *active, wc_err *err)
{
	wc_manifest m;
	uint64_t   *logs;
	uint64_t	number;
	char		name[32];
	int			rc;

	if ((rc = wc_db_close_log(db, active, err)) != WC_OK)
		return rc;
	if ((rc = wc_db_lock(db, WC_LOCK_MANIFEST, true, err)) != WC_OK)
		return rc;
	memset(&m, 0, sizeof(m));
	if ((rc = wc_db_read_manifest(db, &m, err)) != WC_OK)
		goto out;
	if (m.nlogs == 0 || m.logs[m.nlogs - 1] != active->number)
		goto out;				/* someone finished this switch already */
	number = m.next_file++;
	wc_file_name(name, sizeof(name), number, "log");
	if ((rc = wc_env_unlink(db->dir, name, err)) != WC_OK ||
		(rc = wc_log_create(db->dir, name, number, err)) != WC_OK)
		goto out;
	logs = realloc(m.logs, sizeof(uint64_t) * (m.nlogs + 1));
	if (logs == NULL)
	{
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
		goto out;
	}
	m.logs = logs;
	m.logs[m.nlogs++] = number;
	/* on failure the new log stays: the manifest may name it (orphans are removed later) */
	rc = wc_db_write_manifest(db, &m, err);
	/* we hold the write lock: nobody can have appended to the new log yet, so
	 * readers need not look at it until a writer publishes a new end */
	if (rc == WC_OK)
		wc_db_shared_set_log(db, number, WC_LOG_HEADER_SIZE);
out:
	wc_manifest_clear(&m);
	wc_db_unlock(db, WC_LOCK_MANIFEST);
	return rc;
}

int
wc_db_reserve_numbers(wc_db *db, int n, uint64_t *first, wc_err *err)
{
	wc_manifest m;
	int			rc;

	if ((rc = wc_db_lock(db, WC_LOCK_MANIFEST, true, err)) != WC_OK)
		return rc;
	memset(&m, 0, sizeof(m));
	rc = wc_db_read_manifest(db, &m, err);
	if (rc == WC_OK)
	{
		*first = m.next_file;
		m.next_file += (uint64_t) n;
		rc = wc_db_write_manifest(db, &m, err);
	}
	wc_manifest_clear(&m);
	wc_db_unlock(db, WC_LOCK_MANIFEST);
	return rc;
}

/* Per-family memtables of one log being flushed. */
typedef struct flush_set
{
	int			n;
	wc_fammem  *mem;
	uint64_t	max_seq;
	uint64_t	trunc;
	int			ningested;		/* files of committed ingest records, referenced */
	wc_dbsst   *ingested;
} flush_set;

static void
flush_set_clear(flush_set *fs)
{
	for (int i = 0; i < fs->n; i++)
		wc_memtable_unref(fs->mem[i].mt);
	free(fs->mem);
	for (int i = 0; i < fs->ningested; i++)
		wc_sst_unref(fs->ingested[i].sst);
	free(fs->ingested);
	memset(fs, 0, sizeof(*fs));
}

static wc_memtable *
flush_set_family(flush_set *fs, const uint8_t *fam, uint32_t len, wc_err *err)
{
	wc_fammem  *grown;

	for (int i = 0; i < fs->n; i++)
		if (strlen(fs->mem[i].family) == len && memcmp(fs->mem[i].family, fam, len) == 0)
			return fs->mem[i].mt;
	grown = realloc(fs->mem, sizeof(wc_fammem) * (fs->n + 1));
	if (grown == NULL)
		goto oom;
	fs->mem = grown;
	memset(&fs->mem[fs->n], 0, sizeof(wc_fammem));
	memcpy(fs->mem[fs->n].family, fam, len);
	if ((fs->mem[fs->n].mt = wc_memtable_new()) == NULL)
		goto oom;
	return fs->mem[fs->n++].mt;
oom:
	wc_err_set(err, WC_NOMEM, "out of memory");
	return NULL;
}

/* Opens the files of a committed ingest record of log number into fs. */
static int
flush_set_ingest(wc_db *db, uint64_t number, flush_set *fs, const uint8_t *payload, size_t len,
				 wc_err *err)
{
	uint64_t	last_seq;
	int			rc = wc_db_open_ingest(db, number, payload, len, &fs->ingested,
									   &fs->ningested, &last_seq, err);

	/* the log is live and only its flush (we hold the flush lock) moves its files:
	 * a missing one is lost */
	if (rc == WC_NOT_FOUND)
	{
		char		detail[sizeof(err->msg)];

		memcpy(detail, err->msg, sizeof(detail));
		err->code = WC_OK;
		rc = wc_err_set(err, WC_CORRUPT, "a live log's ingest record names a missing file: %s",
						detail);
	}
	return rc;
}

/* Reads log number into per-family memtables, resolving every record. */
static int
load_log(wc_db *db, uint64_t number, bool wait, flush_set *fs, wc_err *err)
{
	wc_file		f;
	wc_log_reader *r = NULL;
	char		name[32];
	uint64_t	hdr_number;
	int			rc;

	wc_file_name(name, sizeof(name), number, "log");
	if ((rc = wc_file_open(db->dir, name, WC_OPEN_READ, &f, err)) != WC_OK)
		return rc;
	if ((rc = wc_log_check_header(&f, &hdr_number, err)) != WC_OK)
		goto out;
	if ((r = wc_log_reader_new(&f, WC_LOG_HEADER_SIZE)) == NULL)
	{
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
		goto out;
	}
	for (;;)
	{
		const uint8_t *payload;
		size_t		len;
		uint64_t	end;
		wc_batch_reader br;
		wc_batch_entry e;
		wc_txn_state state;
		int			waited = 0;

		rc = wc_log_read(r, &payload, &len, &end, err);
		if (rc <= 0)
			break;
		if ((rc = wc_ingest_payload_header(payload, len, &br, err)) != WC_OK)
			goto out;
		if (br.count > 0 && br.seq_base + br.count - 1 > fs->max_seq)
			fs->max_seq = br.seq_base + br.count - 1;
		for (;;)
		{
			if ((rc = wc_db_resolve(db, br.tag, &state, err)) != WC_OK)
				goto out;
			if (state != WC_TXN_IN_PROGRESS)
				break;
			if (!wait || waited >= RESOLVE_WAIT_MS || wc_db_interrupted(db))
			{
				rc = wc_err_set(err, WC_BUSY,
								"log %s holds a transaction that is still in progress", name);
				goto out;
			}
			sleep_ms(1);
			waited++;
		}
		if (state != WC_TXN_COMMITTED)
			continue;
		if (wc_ingest_is_record(payload, len))
		{
			if ((rc = flush_set_ingest(db, number, fs, payload, len, err)) != WC_OK)
				goto out;
			continue;
		}
		while ((rc = wc_batch_reader_next(&br, &e, err)) == 1)
		{
			wc_memtable *mt;

			if (e.type == WC_TYPE_DEL_ALL)
			{
				if (e.cell.seq > fs->trunc)
					fs->trunc = e.cell.seq;
				continue;
			}
			if ((mt = flush_set_family(fs, e.fam, e.fam_len, err)) == NULL)
			{
				rc = err->code;
				goto out;
			}
			if ((rc = wc_memtable_add(mt, &e.cell, err)) != WC_OK)
				goto out;
		}
		if (rc < 0)
			goto out;
	}
out:
	if (r)
		wc_log_reader_free(r);
	wc_file_close(&f);
	return rc < 0 ? rc : WC_OK;
}

/* Writes the memtable of one family as sorted file number; *props->cells may be 0. */
static int
write_family(wc_db *db, const wc_fammem *fm, uint64_t number, uint64_t trunc,
			 wc_sst_props *props, wc_err *err)
{
	wc_sst_build_opts o;
	wc_sst_builder *b;
	wc_iter    *it;
	char		name[32];
	int			rc = WC_OK;

	wc_file_name(name, sizeof(name), number, "sst");
	wc_db_build_opts(db, fm->family, 0, &o);
	if ((b = wc_sst_builder_new(db->dir, name, &o, err)) == NULL)
		return err->code;
	if ((it = wc_memtable_iter_new(fm->mt)) == NULL)
	{
		wc_sst_builder_abandon(b);
		return wc_err_set(err, WC_NOMEM, "out of memory");
	}
	for (wc_iter_seek_first(it); wc_iter_valid(it) && rc == WC_OK; wc_iter_next(it))
	{
		const wc_cell *c = wc_iter_cell(it);

		if (c->seq < trunc)
			continue;
		rc = wc_sst_builder_add(b, c);
	}
	wc_iter_close(it);
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
 * Takes the log's content from this process's own memtables when they hold all
 * of it (the log is closed and no record waits for its transaction): the common
 * case, which saves reading the log back.
 */
static bool
take_own_memtables(wc_db *db, uint64_t number, flush_set *fs)
{
	for (int i = 0; i < db->nlogs; i++)
	{
		wc_logmem  *lm = db->logs[i];

		if (lm->number != number)
			continue;
		if (!lm->closed || lm->nheld > 0)
			return false;
		fs->mem = calloc(lm->nmem > 0 ? lm->nmem : 1, sizeof(wc_fammem));
		if (fs->mem == NULL)
			return false;
		for (int j = 0; j < lm->nmem; j++)
		{
			fs->mem[j] = lm->mem[j];
			wc_memtable_ref(fs->mem[j].mt);
		}
		fs->n = lm->nmem;
		fs->ingested = calloc(lm->ningested > 0 ? lm->ningested : 1, sizeof(wc_dbsst));
		if (fs->ingested == NULL)
		{
			flush_set_clear(fs);
			return false;
		}
		for (int j = 0; j < lm->ningested; j++)
		{
			fs->ingested[j] = lm->ingested[j];
			wc_sst_ref(fs->ingested[j].sst);
		}
		fs->ningested = lm->ningested;
		fs->max_seq = lm->max_seq;
		fs->trunc = lm->trunc;
		return true;
	}
	return false;
}

/* Flushes one closed, non-active log. */
static int
flush_one(wc_db *db, uint64_t number, bool wait, wc_err *err)
{
	flush_set	fs;
	wc_sst_props *props = NULL;
	wc_manifest m;
	uint64_t	first = 0,
				trunc;
	uint64_t   *doomed = NULL;
	int			ndoomed = 0;
	char		name[32];
	int			rc = WC_OK;

	memset(&fs, 0, sizeof(fs));
	memset(&m, 0, sizeof(m));
	if (!take_own_memtables(db, number, &fs) &&
		(rc = load_log(db, number, wait, &fs, err)) != WC_OK)
		goto out;
	if (fs.n > 0 && (rc = wc_db_reserve_numbers(db, fs.n, &first, err)) != WC_OK)
		goto out;
	props = calloc(fs.n > 0 ? fs.n : 1, sizeof(wc_sst_props));
	if (props == NULL)
	{
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
		goto out;
	}
	trunc = fs.trunc > db->manifest.truncate_seq ? fs.trunc : db->manifest.truncate_seq;
	for (int i = 0; i < fs.n && rc == WC_OK; i++)
		rc = write_family(db, &fs.mem[i], first + i, trunc, &props[i], err);
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
	for (int i = 0; i < m.nlogs; i++)
		if (m.logs[i] == number)
		{
			memmove(&m.logs[i], &m.logs[i + 1], sizeof(uint64_t) * (m.nlogs - i - 1));
			m.nlogs--;
			break;
		}
	if (fs.max_seq > m.last_seq)
		m.last_seq = fs.max_seq;
	if (fs.trunc > m.truncate_seq)
		m.truncate_seq = fs.trunc;
	/* files wholly below the truncate point are dead */
	doomed = calloc((size_t) (m.nfiles + fs.ningested) + 1, sizeof(uint64_t));
	if (doomed == NULL)
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
	for (int i = 0; rc == WC_OK && i < m.nfiles; i++)
		if (m.files[i].props.seq_max < m.truncate_seq)
			doomed[ndoomed++] = m.files[i].number;
	for (int i = 0; i < ndoomed; i++)
		wc_manifest_remove_file(&m, doomed[i]);
	for (int i = 0; rc == WC_OK && i < fs.n; i++)
		if (props[i].cells > 0)
			rc = wc_manifest_add_file(&m, first + i, &props[i], err);
	/* files of the log's committed ingest records move into the manifest as they are */
	for (int i = 0; rc == WC_OK && i < fs.ningested; i++)
	{
		const wc_sst_props *p = wc_sst_get_props(fs.ingested[i].sst);

		if (p->seq_max < m.truncate_seq)
			doomed[ndoomed++] = fs.ingested[i].number;
		else
			rc = wc_manifest_add_file(&m, fs.ingested[i].number, p, err);
	}
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
		for (int i = 0; i < fs.n; i++)
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
		for (int i = 0; i < fs.n; i++)
		{
			wc_file_name(name, sizeof(name), first + i, "sst");
			(void) wc_env_unlink(db->dir, name, &ignored);
		}
	}
out:
	if (props)
	{
		for (int i = 0; i < fs.n; i++)
			wc_sst_props_clear(&props[i]);
		free(props);
	}
	free(doomed);
	wc_manifest_clear(&m);
	flush_set_clear(&fs);
	return rc;
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

int
wc_db_flush(wc_db *db, wc_err *err)
{
	int			rc;

	if ((rc = wc_db_lock(db, WC_LOCK_FLUSH, true, err)) != WC_OK)
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
		rc = wc_db_flush_logs(db, true, err);
	wc_db_unlock(db, WC_LOCK_FLUSH);
	if (rc == WC_OK)
		rc = wc_db_refresh_full(db, err);
	return rc;
}

int
wc_db_maintain(wc_db *db, wc_err *err)
{
	int			rc;

	if ((rc = wc_db_refresh_full(db, err)) != WC_OK)
		return rc;
	if (db->nlogs > 1)
	{
		rc = wc_db_lock(db, WC_LOCK_FLUSH, false, err);
		if (rc == WC_OK)
		{
			rc = wc_db_flush_logs(db, false, err);
			wc_db_unlock(db, WC_LOCK_FLUSH);
		}
		if (rc == WC_BUSY)
		{
			/* someone else is at it, or a commit is in flight: next time */
			wc_err_clear(err);
			rc = WC_OK;
		}
		if (rc != WC_OK)
			return rc;
	}
	/* a family where a rowkey lies in too many files gets those files compacted */
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
	}
	return wc_db_refresh_locked(db, err);
}
