/*
 * version.c -- this process's view of a store: the MANIFEST it last read, the
 * sorted files and live logs that manifest names, the log replay that fills the
 * logs' memtables, and the versions scans read (DESIGN.md, "Reading: refresh,
 * versions, snapshots").
 *
 * replay() is the one place where log records are read and applied: a refresh
 * reads each live log on from where it stopped, and a flush that cannot take a log
 * from this view reads it whole from disk (wc_db_load_log).  Layer 2 of the store
 * core: it calls lock.c and options.c only.
 */
#include "db_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "err.h"
#include "ingest.h"
#include "visible.h"

#define MANIFEST_RETRIES	20
#define RESOLVE_WAIT_MS		10000	/* how long a waiting flush waits for a commit */

void
wc_file_name(char *buf, size_t size, uint64_t number, const char *ext)
{
	snprintf(buf, size, "%06llu.%s", (unsigned long long) number, ext);
}

/* ---------------------------------------------------------------- MANIFEST */

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
	/* records every snapshot sees by now need not be remembered */
	if (db->opts.horizon != NULL)
	{
		wc_recent_prune(&m->recent, wc_db_horizon(db));
		wc_recent_bound(&m->recent, db->opts.recent_max);
	}
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

/* ---------------------------------------------------------------- open files */

void
wc_db_log_free(wc_logmem *lm)
{
	if (lm == NULL)
		return;
	for (int i = 0; i < lm->nmem; i++)
		wc_memtable_unref(lm->mem[i].mt);
	free(lm->mem);
	wc_shlog_unref(lm->shl, lm->dead);	/* memtables still referenced keep it */
	wc_mapping_unref(lm->map);	/* memtables still referenced keep it */
	for (int i = 0; i < lm->nheld; i++)
		free(lm->held[i].payload);
	free(lm->held);
	for (int i = 0; i < lm->ningested; i++)
		wc_sst_unref(lm->ingested[i].sst);
	free(lm->ingested);
	wc_recent_clear(&lm->recent);
	if (lm->reader)
		wc_log_reader_free(lm->reader);
	wc_file_close(&lm->file);
	free(lm);
}

size_t		wc_log_map_bytes;

/* How many bytes of a log to map: more than it grows to before it is switched. */
static size_t
log_map_len(const wc_db *db)
{
	size_t		len = (size_t) 64 << 20;

	if (wc_log_map_bytes != 0)
		return wc_log_map_bytes;
	if (db->opts.log_switch_bytes <= SIZE_MAX / 4 && 4 * db->opts.log_switch_bytes > len)
		len = 4 * db->opts.log_switch_bytes;
	return len;
}

static int	logmem_sync_families(wc_db *db, wc_logmem *lm, wc_err *err);

/*
 * Opens log number, positioned at its first record, with nothing applied; with
 * share, its memtables are the shared ones when there is a region (shmt.h).
 */
static int
logmem_open(wc_db *db, uint64_t number, bool share, wc_logmem **out, wc_err *err)
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
		rc = wc_mapping_new(&lm->file, log_map_len(db), &lm->map, err);
	if (rc == WC_OK)
	{
		lm->valid_end = WC_LOG_HEADER_SIZE;
		lm->reader = wc_log_reader_new(&lm->file, WC_LOG_HEADER_SIZE);
		if (lm->reader == NULL)
			rc = wc_err_set(err, WC_NOMEM, "out of memory");
		else if (lm->map != NULL)
			wc_log_reader_set_map(lm->reader, lm->map->addr, lm->map->len);
	}
	if (rc == WC_OK && share && lm->map != NULL && wc_shmt_enabled())
	{
		uint64_t	size;

		if ((rc = wc_file_size(&lm->file, &size, err)) == WC_OK &&
			(lm->shl = wc_shlog_get(db->shm->store_id, number, lm->map->len, size)) != NULL)
			rc = logmem_sync_families(db, lm, err);
	}
	if (rc != WC_OK)
	{
		wc_db_log_free(lm);
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
 * What the failed attempts of one load_manifest opened, kept for the next: a
 * file or log opened once need not be opened again when a newer manifest still
 * lists it.
 */
typedef struct carry
{
	wc_dbsst   *ssts;			/* referenced */
	int			nssts;
	size_t		ssts_cap;
	wc_logmem **logs;			/* owned */
	int			nlogs;
	size_t		logs_cap;
} carry;

/* Takes the sorted file number out of c, or NULL (a reference passes). */
static wc_sst *
carry_take_sst(carry *c, uint64_t number)
{
	for (int i = 0; i < c->nssts; i++)
		if (c->ssts[i].number == number)
		{
			wc_sst	   *sst = c->ssts[i].sst;

			c->ssts[i] = c->ssts[--c->nssts];
			return sst;
		}
	return NULL;
}

static wc_logmem *
carry_take_log(carry *c, uint64_t number)
{
	for (int i = 0; i < c->nlogs; i++)
		if (c->logs[i]->number == number)
		{
			wc_logmem  *lm = c->logs[i];

			c->logs[i] = c->logs[--c->nlogs];
			return lm;
		}
	return NULL;
}

/* Keeps a referenced sst (or an owned log) for the next attempt, else lets it go. */
static void
carry_put_sst(carry *c, uint64_t number, wc_sst *sst)
{
	if (wc_array_reserve(&c->ssts, &c->ssts_cap, (size_t) c->nssts + 1, sizeof(wc_dbsst)))
	{
		c->ssts[c->nssts].number = number;
		c->ssts[c->nssts++].sst = sst;
	}
	else
		wc_sst_unref(sst);
}

static void
carry_put_log(carry *c, wc_logmem *lm)
{
	if (wc_array_reserve(&c->logs, &c->logs_cap, (size_t) c->nlogs + 1, sizeof(wc_logmem *)))
		c->logs[c->nlogs++] = lm;
	else
		wc_db_log_free(lm);
}

static void
carry_free(carry *c)
{
	for (int i = 0; i < c->nssts; i++)
		wc_sst_unref(c->ssts[i].sst);
	for (int i = 0; i < c->nlogs; i++)
		wc_db_log_free(c->logs[i]);
	free(c->ssts);
	free(c->logs);
	memset(c, 0, sizeof(*c));
}

/*
 * Makes the open files match MANIFEST: opens new sorted files and logs, drops the
 * ones no longer listed.  A listed file may have been deleted by a newer manifest
 * written in between; then we start over with that one, keeping what this
 * attempt opened (carry): a store of many logs and files, flushed and compacted
 * one step at a time by another process, took longer to open whole than a step,
 * and every attempt that opened everything again met a step.
 */
static int
load_manifest(wc_db *db, wc_err *err)
{
	carry		c;
	int			rc;

	memset(&c, 0, sizeof(c));
	for (int attempt = 0;; attempt++)
	{
		wc_manifest m;
		struct stat st1,
					st2;
		wc_dbsst   *ssts = NULL;
		wc_logmem **logs = NULL;
		bool		vanished = false;

		memset(&m, 0, sizeof(m));
		if ((rc = manifest_stat(db, &st1, err)) != WC_OK)
			break;
		if ((rc = wc_manifest_read(db->dir, &m, err)) != WC_OK)
		{
			/* a rename may have replaced it between stat and open */
			if (rc == WC_NOT_FOUND && attempt < MANIFEST_RETRIES)
			{
				wc_err_clear(err);
				continue;
			}
			break;
		}
		if ((rc = manifest_stat(db, &st2, err)) != WC_OK)
		{
			wc_manifest_clear(&m);
			break;
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
			rc = wc_err_set(err, WC_NOMEM, "out of memory");
			break;
		}

		for (int i = 0; i < m.nfiles && rc == WC_OK; i++)
		{
			ssts[i].number = m.files[i].number;
			/* open already, as a file of the old manifest or of a log's ingest
			 * record, or by an attempt before */
			if ((ssts[i].sst = wc_db_find_sst(db, m.files[i].number)) != NULL)
				wc_sst_ref(ssts[i].sst);
			else if ((ssts[i].sst = carry_take_sst(&c, m.files[i].number)) == NULL)
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
			if (logs[i] == NULL && (logs[i] = carry_take_log(&c, m.logs[i])) == NULL)
			{
				rc = logmem_open(db, m.logs[i], true, &logs[i], err);
				if (rc == WC_NOT_FOUND)
					vanished = true;
			}
		}

		if (rc != WC_OK)
		{
			/* undo: release what this attempt referenced, keep what it opened */
			for (int i = 0; i < m.nfiles; i++)
				if (ssts[i].sst)
					carry_put_sst(&c, ssts[i].number, ssts[i].sst);
			for (int i = 0; i < m.nlogs; i++)
			{
				bool		ours = true;

				for (int j = 0; j < db->nlogs; j++)
					if (logs[i] == db->logs[j])
						ours = false;
				if (ours && logs[i] != NULL)
					carry_put_log(&c, logs[i]);
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
				rc = wc_err_relabel(err, WC_CORRUPT, "MANIFEST lists a file that does not exist");
			}
			break;
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
			{
				db->logs[j]->dead = true;	/* flushed: its shared memtables go */
				wc_db_log_free(db->logs[j]);
			}
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
		/* what attempts before opened and this one did not list: flushed */
		for (int i = 0; i < c.nlogs; i++)
			c.logs[i]->dead = true;
		rc = WC_OK;
		break;
	}
	carry_free(&c);
	return rc;
}

/* ---------------------------------------------------------------- log replay */

/* Adds a handle on each family some process added to lm's slot since last time. */
static int
logmem_sync_families(wc_db *db, wc_logmem *lm, wc_err *err)
{
	int			i = 0;

	for (const wc_shfam *f = wc_shlog_families(lm->shl); f != NULL; f = f->next, i++)
	{
		wc_fammem  *fm;

		if (i < lm->nmem)
			continue;			/* handles follow the slot's order */
		if (!wc_array_reserve(&lm->mem, &lm->mem_cap, (size_t) lm->nmem + 1, sizeof(wc_fammem)))
			return wc_err_set(err, WC_NOMEM, "out of memory");
		fm = &lm->mem[lm->nmem];
		memset(fm, 0, sizeof(wc_fammem));
		snprintf(fm->family, sizeof(fm->family), "%s", f->name);
		if ((fm->mt = wc_memtable_attach_shared(lm->shl, f->core, lm->map)) == NULL)
			return wc_err_set(err, WC_NOMEM, "out of memory");
		lm->nmem++;
		if (!lm->for_flush)
			db->dirty = true;	/* versions from now on read it */
	}
	return WC_OK;
}

/*
 * lm's slot had no room for a record: go on with private copies of its
 * memtables, which take entries given twice once (the copy may hold part of a
 * record, or records this process has not read yet).
 */
static int
logmem_unshare(wc_db *db, wc_logmem *lm, wc_err *err)
{
	int			rc;

	if ((rc = logmem_sync_families(db, lm, err)) != WC_OK)
		return rc;
	for (int i = 0; i < lm->nmem; i++)
	{
		wc_memtable *copy = wc_memtable_copy(lm->mem[i].mt, err);

		if (copy == NULL)
			return err->code;
		wc_memtable_unref(lm->mem[i].mt);	/* versions keep theirs */
		lm->mem[i].mt = copy;
	}
	wc_shlog_unref(lm->shl, false);
	lm->shl = NULL;
	if (!lm->for_flush)
		db->dirty = true;
	return WC_OK;
}

static wc_memtable *
logmem_family(wc_db *db, wc_logmem *lm, const uint8_t *fam, uint32_t fam_len, wc_err *err)
{
	wc_fammem  *fm;

	for (int i = 0; i < lm->nmem; i++)
		if (strlen(lm->mem[i].family) == fam_len && memcmp(lm->mem[i].family, fam, fam_len) == 0)
			return lm->mem[i].mt;
	if (lm->shl != NULL)
	{
		/* made by another process since (we hold the slot's lock) */
		int			had = lm->nmem;

		if (logmem_sync_families(db, lm, err) != WC_OK)
			return NULL;
		for (int i = had; i < lm->nmem; i++)
			if (strlen(lm->mem[i].family) == fam_len && memcmp(lm->mem[i].family, fam, fam_len) == 0)
				return lm->mem[i].mt;
	}
	if (!wc_array_reserve(&lm->mem, &lm->mem_cap, (size_t) lm->nmem + 1, sizeof(wc_fammem)))
		goto oom;
	fm = &lm->mem[lm->nmem];
	memset(fm, 0, sizeof(wc_fammem));
	memcpy(fm->family, fam, fam_len);
	if (lm->shl != NULL)
	{
		if ((fm->mt = wc_memtable_new_shared(lm->shl, fm->family, lm->map, err)) == NULL)
			return NULL;
	}
	else
	{
		if ((fm->mt = wc_memtable_new()) == NULL)
			goto oom;
		wc_memtable_set_mapping(fm->mt, lm->map);
	}
	lm->nmem++;
	return fm->mt;

oom:
	wc_err_set(err, WC_NOMEM, "out of memory");
	return NULL;
}

/*
 * The entries of one batch, positioned in rd, into lm's memtables (insert) or
 * only into the handle's bookkeeping (another process added them).
 */
static int
apply_entries(wc_db *db, wc_logmem *lm, const wc_batch_reader *rd, bool insert,
			  wc_shlog_facts *facts, wc_err *err)
{
	wc_batch_reader r = *rd;
	wc_batch_entry e;
	int			rc;

	while ((rc = wc_batch_reader_next(&r, &e, err)) == 1)
	{
		if (e.type == WC_TYPE_DEL_ALL)
		{
			if (!lm->for_flush && e.cell.seq > db->truncate_seq)
				db->truncate_seq = e.cell.seq;
			if (e.cell.seq > lm->trunc)
				lm->trunc = e.cell.seq;
			if (facts != NULL && e.cell.seq > facts->trunc)
				facts->trunc = e.cell.seq;
			continue;
		}
		else if (insert)
		{
			wc_memtable *mt = logmem_family(db, lm, e.fam, e.fam_len, err);

			if (mt == NULL)
				return err->code;
			if ((rc = wc_memtable_add(mt, &e.cell, err)) != WC_OK)
				return rc;
		}
	}
	if (rc < 0)
		return rc;
	if (lm->for_flush)
		return WC_OK;
	if (r.count > 0 && r.seq_base + r.count - 1 > db->applied_seq)
		db->applied_seq = r.seq_base + r.count - 1;
	db->dirty = true;
	return WC_OK;
}

/* Is off a record's payload offset (0 = unknown)? */
static inline bool
payload_known(uint64_t off)
{
	return off >= WC_LOG_HEADER_SIZE + WC_LOG_RECORD_HEADER;
}

/* Marks the record whose payload lies at off..end of lm's log done in its slot,
 * with what it told (facts; NULL: not known); an unknown offset: not marked. */
static void
mark_done(wc_logmem *lm, uint64_t off, uint64_t end, const wc_shlog_facts *facts)
{
	if (lm->shl == NULL || !payload_known(off))
		return;
	wc_shlog_lock(lm->shl);
	wc_shlog_mark_done(lm->shl, off - WC_LOG_RECORD_HEADER, end, facts);
	wc_shlog_unlock(lm->shl);
}

/* Marks a record (tag, seqs seq_lo..seq_hi) done: aborted, or a committed ingest
 * record (a batch record's facts are gathered as it is applied). */
static void
mark_record(wc_logmem *lm, uint64_t off, uint64_t end, uint64_t tag, uint64_t seq_lo,
			uint64_t seq_hi, bool aborted, bool ingest)
{
	wc_shlog_facts f;

	memset(&f, 0, sizeof(f));
	f.tag = tag;
	f.seq_lo = seq_lo;
	f.seq_hi = seq_hi;
	f.aborted = aborted;
	f.ingest = ingest;
	f.known = true;
	mark_done(lm, off, end, &f);
}

int
wc_db_apply_readers(wc_db *db, wc_logmem *lm, const wc_batch_reader *rs, int n, uint64_t off,
					uint64_t end, wc_err *err)
{
	wc_shlog   *s = lm->shl;
	bool		known = payload_known(off);
	bool		insert = true;
	int			rc = WC_OK;
	wc_shlog_facts facts;

	/*
	 * Applied by another process, as most records are by the time a process
	 * reads them: only this handle's bookkeeping, without the lock that every
	 * process's refresh would otherwise take once a record.
	 */
	if (s != NULL && known && wc_shlog_done_below(s, end))
	{
		for (int i = 0; i < n && rc == WC_OK; i++)
			rc = apply_entries(db, lm, &rs[i], false, NULL, err);
		if (rc == WC_OK)
			rc = logmem_sync_families(db, lm, err);
		return rc;
	}
	if (s != NULL)
	{
		wc_shlog_lock(s);
		if (wc_shlog_failed(s))
		{
			wc_shlog_unlock(s);
			if ((rc = logmem_unshare(db, lm, err)) != WC_OK)
				return rc;
			s = NULL;
		}
		else if (known && wc_shlog_done(s, end))
			insert = false;
	}
	/* what the record tells a process that will not read it (wc_shlog_summarise) */
	memset(&facts, 0, sizeof(facts));
	facts.known = true;
	facts.tag = n > 0 ? rs[0].tag : 0;
	facts.seq_lo = UINT64_MAX;
	for (int i = 0; i < n && rc == WC_OK; i++)
	{
		if (rs[i].count > 0 && rs[i].seq_base < facts.seq_lo)
			facts.seq_lo = rs[i].seq_base;
		if (rs[i].count > 0 && rs[i].seq_base + rs[i].count - 1 > facts.seq_hi)
			facts.seq_hi = rs[i].seq_base + rs[i].count - 1;
		rc = apply_entries(db, lm, &rs[i], insert, &facts, err);
	}
	if (s == NULL)
		return rc;
	if (rc == WC_OK && known)
		wc_shlog_mark_done(s, off - WC_LOG_RECORD_HEADER, end, &facts);
	else if (rc == WC_NOMEM && insert)
		wc_shlog_set_failed(s); /* no room: everyone goes on with copies */
	wc_shlog_unlock(s);
	if (rc == WC_OK)
		return logmem_sync_families(db, lm, err);
	if (rc != WC_NOMEM || !insert)
		return rc;
	/* what this record added stays in the copy; the rest is added to it */
	wc_err_clear(err);
	if ((rc = logmem_unshare(db, lm, err)) != WC_OK)
		return rc;
	for (int i = 0; i < n && rc == WC_OK; i++)
		rc = apply_entries(db, lm, &rs[i], true, NULL, err);
	return rc;
}

int
wc_db_hold(wc_logmem *lm, uint64_t tag, uint64_t seq_lo, uint64_t seq_hi,
		   const uint8_t *payload, size_t len, uint64_t off, wc_err *err)
{
	uint8_t    *copy;

	if (!wc_array_reserve(&lm->held, &lm->held_cap, (size_t) lm->nheld + 1, sizeof(wc_held)) ||
		(copy = malloc(len ? len : 1)) == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory");
	memcpy(copy, payload, len);
	lm->held[lm->nheld].tag = tag;
	lm->held[lm->nheld].seq_lo = seq_lo;
	lm->held[lm->nheld].seq_hi = seq_hi;
	lm->held[lm->nheld].payload = copy;
	lm->held[lm->nheld].len = len;
	lm->held[lm->nheld].off = off;
	lm->nheld++;
	return WC_OK;
}

/*
 * Opens (or finds open) the files of the committed ingest record in payload, checks
 * each against the record, and adds them, referenced, to lm, all or none.
 * WC_NOT_FOUND when a file is missing: the caller decides what that means.
 */
static int
apply_ingest(wc_db *db, wc_logmem *lm, const uint8_t *payload, size_t len, wc_err *err)
{
	wc_ingest_record rec;
	int			opened = 0,
				rc;

	if ((rc = wc_ingest_decode(payload, len, &rec, err)) != WC_OK)
		return rc;
	if (!wc_array_reserve(&lm->ingested, &lm->ingested_cap,
						  (size_t) lm->ningested + (size_t) rec.nfiles, sizeof(wc_dbsst)))
	{
		wc_ingest_record_clear(&rec);
		return wc_err_set(err, WC_NOMEM, "out of memory");
	}
	for (int i = 0; i < rec.nfiles && rc == WC_OK; i++)
	{
		char		name[32];
		wc_sst	   *sst = wc_db_find_sst(db, rec.files[i].number);
		const wc_sst_props *p;

		wc_file_name(name, sizeof(name), rec.files[i].number, "sst");
		if (sst != NULL)
			wc_sst_ref(sst);
		else if ((rc = wc_sst_open(db->dir, name, &sst, err)) != WC_OK)
			break;
		p = wc_sst_get_props(sst);
		if (strcmp(p->family, rec.files[i].family) != 0 || p->cells == 0 ||
			p->seq_min < rec.seq_base || p->seq_max > rec.seq_base + rec.count - 1)
		{
			char		log[32];

			wc_file_name(log, sizeof(log), lm->number, "log");
			rc = wc_err_set(err, WC_CORRUPT,
							"sorted file %s (family \"%s\", seqs %llu..%llu) is not what the ingest record in %s names (family \"%s\", seqs %llu..%llu)",
							name, p->family, (unsigned long long) p->seq_min,
							(unsigned long long) p->seq_max, log, rec.files[i].family,
							(unsigned long long) rec.seq_base,
							(unsigned long long) (rec.seq_base + rec.count - 1));
			wc_sst_unref(sst);
			break;
		}
		lm->ingested[lm->ningested + opened].number = rec.files[i].number;
		lm->ingested[lm->ningested + opened].sst = sst;
		opened++;
	}
	if (rc != WC_OK)
	{
		for (int i = 0; i < opened; i++)
			wc_sst_unref(lm->ingested[lm->ningested + i].sst);
	}
	else
	{
		lm->ningested += opened;
		if (!lm->for_flush)
		{
			if (rec.seq_base + rec.count - 1 > db->applied_seq)
				db->applied_seq = rec.seq_base + rec.count - 1;
			db->dirty = true;
		}
	}
	wc_ingest_record_clear(&rec);
	return rc;
}

/*
 * Applies a committed record of either kind to lm.  It lies at offset off of the
 * log (0 = unknown): read from the log's mapping when that holds it, so that the
 * memtables point to its values there instead of copying them.  The mapped bytes
 * are the ones read (the page cache's), and a committed record's bytes are never
 * cut or rewritten (DESIGN.md, "Values stay in the log").
 */
static int
apply_payload(wc_db *db, wc_logmem *lm, uint64_t tag, uint64_t seq_lo, uint64_t seq_hi,
			  const uint8_t *payload, size_t len, uint64_t off, wc_err *err)
{
	wc_batch_reader r;
	int			rc;

	if (lm->map != NULL && off != 0 && len <= SIZE_MAX - off &&
		wc_mapping_holds(lm->map, lm->map->addr + off, len))
		payload = lm->map->addr + off;
	if (wc_ingest_is_record(payload, len))
	{
		/* its files each process opens itself (logmem_jump) */
		if ((rc = apply_ingest(db, lm, payload, len, err)) == WC_OK && off != 0)
			mark_record(lm, off, off + len, tag, seq_lo, seq_hi, false, true);
		return rc;
	}
	if ((rc = wc_batch_reader_init(&r, payload, len, err)) != WC_OK)
		return rc;
	return wc_db_apply_readers(db, lm, &r, 1, off, off + len, err);
}

/*
 * Applies a committed record (tag, seqs seq_lo..seq_hi) to lm, remembering it in
 * lm->recent while some snapshot may not see it (DESIGN.md, "Snapshots").
 */
static int
apply_committed(wc_db *db, wc_logmem *lm, uint64_t tag, uint64_t seq_lo, uint64_t seq_hi,
				const uint8_t *payload, size_t len, uint64_t off, wc_err *err)
{
	bool		remember = seq_lo <= seq_hi && wc_db_tag_recent(db, tag);
	int			rc;

	/* remembered first: a record applied but not remembered would be seen by all */
	if (remember && (rc = wc_recent_add(&lm->recent, tag, seq_lo, seq_hi, err)) != WC_OK)
		return rc;
	if ((rc = apply_payload(db, lm, tag, seq_lo, seq_hi, payload, len, off, err)) != WC_OK &&
		remember)
		wc_recent_remove(&lm->recent, tag, seq_lo);
	else if (remember)
		wc_recent_bound(&lm->recent, db->opts.recent_max);
	return rc;
}

static void
sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

/*
 * What tag resolves to.  A log of the view keeps a record in progress aside; a
 * flush cannot, so with wait it waits up to RESOLVE_WAIT_MS for the outcome, and
 * then, or without wait, fails with WC_BUSY.
 */
static int
resolve_record(wc_db *db, const wc_logmem *lm, uint64_t tag, bool wait, wc_txn_state *state,
			   wc_err *err)
{
	for (int waited = 0;; waited++)
	{
		int			rc = wc_db_resolve(db, tag, state, err);
		char		name[32];

		if (rc == WC_OK && *state == WC_TXN_PREPARED)
		{
			*state = WC_TXN_IN_PROGRESS;
			if (lm->for_flush)
			{
				/* its end may be days away: say so at once, nobody waits */
				wc_file_name(name, sizeof(name), lm->number, "log");
				return wc_err_set(err, WC_HELD,
								  "log %s holds a prepared transaction (tag %llu)", name,
								  (unsigned long long) tag);
			}
		}
		if (rc != WC_OK || *state != WC_TXN_IN_PROGRESS || !lm->for_flush)
			return rc;
		if (wait && waited < RESOLVE_WAIT_MS && !wc_db_interrupted(db))
		{
			sleep_ms(1);
			continue;
		}
		wc_file_name(name, sizeof(name), lm->number, "log");
		return wc_err_set(err, WC_BUSY, "log %s holds a transaction that is still in progress",
						  name);
	}
}

/*
 * Reads lm's records from where it stopped (lm->valid_end) up to offset until,
 * or to its first incomplete record, or to its closing marker, and applies each by
 * its transaction's outcome: committed, to lm's memtables (an ingest record: its
 * files); aborted, not at all; in progress, see resolve_record.  On failure lm
 * stays at the record that failed, to be read again.
 */
static int
replay(wc_db *db, wc_logmem *lm, uint64_t until, bool wait, wc_err *err)
{
	while (lm->valid_end < until)
	{
		const uint8_t *payload;
		size_t		len;
		uint64_t	end;
		wc_batch_reader r;
		wc_txn_state state;
		int			rc;

		rc = wc_log_read(lm->reader, &payload, &len, &end, err);
		if (rc <= 0)
			return rc;
		if ((rc = wc_ingest_payload_header(payload, len, &r, err)) != WC_OK)
		{
			char		name[32];

			/* reported again by the next refresh, never skipped */
			wc_log_reader_skip_to(lm->reader, lm->valid_end);
			wc_file_name(name, sizeof(name), lm->number, "log");
			return wc_err_relabel(err, rc, "bad batch record in %s ending at offset %llu", name,
								  (unsigned long long) end);
		}
		if (r.count == 0)
		{
			/* the closing marker: a writer switched to a newer log */
			lm->valid_end = end;
			lm->closed = true;
			if (!lm->for_flush)
				db->manifest_stale = true;
			return WC_OK;
		}
		if (r.seq_base + r.count - 1 > lm->max_seq)
			lm->max_seq = r.seq_base + r.count - 1;
		/* indexed as committed by a process before: no need to ask */
		if (lm->shl != NULL && payload_known(end - len) &&
			wc_shlog_committed_below(lm->shl, end))
		{
			state = WC_TXN_COMMITTED;
			rc = WC_OK;
		}
		else
			rc = resolve_record(db, lm, r.tag, wait, &state, err);
		if (rc == WC_OK && state == WC_TXN_COMMITTED)
			rc = apply_committed(db, lm, r.tag, r.seq_base, r.seq_base + r.count - 1,
								 payload, len, end - len, err);
		else if (rc == WC_OK && state == WC_TXN_ABORTED)
			mark_record(lm, end - len, end, r.tag, r.seq_base, r.seq_base + r.count - 1, true,
						false);
		else if (rc == WC_OK && state == WC_TXN_IN_PROGRESS)
		{
			rc = wc_db_hold(lm, r.tag, r.seq_base, r.seq_base + r.count - 1, payload, len,
							end - len, err);
			/* a version names what it must not see: this one now */
			if (!lm->for_flush)
				db->dirty = true;
		}
		if (rc != WC_OK)
		{
			/* read this record again next time: its transaction's fate could not
			 * be learnt (the resolve callback failed), or an ingest record's file
			 * is missing because our manifest is stale (see refresh) */
			wc_log_reader_skip_to(lm->reader, lm->valid_end);
			return rc;
		}
		lm->valid_end = end;
	}
	return WC_OK;
}

int
wc_db_load_log(wc_db *db, uint64_t number, bool wait, wc_logmem **out, wc_err *err)
{
	wc_logmem  *lm;
	int			rc;

	*out = NULL;
	if ((rc = logmem_open(db, number, false, &lm, err)) != WC_OK)
		return rc;
	lm->for_flush = true;
	rc = replay(db, lm, UINT64_MAX, wait, err);
	/* the log is live and only its flush (the caller holds the flush lock) moves
	 * its files: a missing one is lost */
	if (rc == WC_NOT_FOUND)
		rc = wc_err_relabel(err, WC_CORRUPT, "a live log's ingest record names a missing file");
	if (rc != WC_OK)
	{
		wc_db_log_free(lm);
		return rc;
	}
	*out = lm;
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

bool		wc_db_jump_disabled;

/*
 * Opens the files of the ingest records sum names, reading those records (in the
 * log's mapping, else with pread), into lm (which has none yet); on failure
 * nothing is left of them and the records are read with the others.
 */
static int
jump_ingested(wc_db *db, wc_logmem *lm, const wc_shlog_summary *sum, wc_err *err)
{
	uint64_t	applied = db->applied_seq;
	bool		dirty = db->dirty;
	uint8_t    *buf = NULL;
	int			rc = WC_OK;

	for (uint32_t i = 0; i < sum->ningest && rc == WC_OK; i++)
	{
		uint64_t	off = sum->ingest_start[i] + WC_LOG_RECORD_HEADER;
		size_t		len = (size_t) (sum->ingest_end[i] - off);
		const uint8_t *payload;

		if (lm->map != NULL && wc_mapping_holds(lm->map, lm->map->addr + off, len))
			payload = lm->map->addr + off;
		else
		{
			uint8_t    *b = realloc(buf, len ? len : 1);

			if (b == NULL)
			{
				rc = wc_err_set(err, WC_NOMEM, "out of memory");
				break;
			}
			buf = b;
			if ((rc = wc_file_pread(&lm->file, buf, len, off, err)) != WC_OK)
				break;
			payload = buf;
		}
		if (!wc_ingest_is_record(payload, len))
			rc = wc_err_set(err, WC_CORRUPT, "the record at offset %llu is not an ingest record",
							(unsigned long long) off);
		else
			rc = apply_ingest(db, lm, payload, len, err);
	}
	free(buf);
	if (rc != WC_OK)
	{
		for (int i = 0; i < lm->ningested; i++)
			wc_sst_unref(lm->ingested[i].sst);
		lm->ningested = 0;
		db->applied_seq = applied;
		db->dirty = dirty;
	}
	return rc;
}

/*
 * lm, a log of the view not read yet, whose slot's frontier lies below until:
 * takes what the records below the frontier tell (wc_shlog_summarise) instead of
 * reading them, and goes on reading from the frontier.  Their entries are in the
 * shared memtables already, and reading them would only tell this handle their
 * seqs, truncates and the committed records its snapshots may not see yet;
 * those are the recent ones, which the summary keeps unless it dropped one whose
 * tag the horizon has not passed (then, or when the summary does not know a
 * record, the log is read as before).  The files of the committed ingest records
 * below the frontier it opens itself, reading those records only (at most
 * WC_SHLOG_INGEST).  A new PostgreSQL session reads the active log of every
 * table it touches: with 3.8 MB of log it copied, checked and decoded every
 * record (8.6 ms a connection against 3.8 ms with an ordinary table).
 */
static int
logmem_jump(wc_db *db, wc_logmem *lm, uint64_t until, wc_err *err)
{
	wc_shlog_summary *sum;
	bool		ok;
	int			rc = WC_OK;

	if (lm->shl == NULL || lm->for_flush || wc_db_jump_disabled ||
		lm->valid_end != WC_LOG_HEADER_SIZE || lm->nheld > 0 || lm->recent.n > 0 ||
		lm->ningested > 0)
		return WC_OK;
	if ((sum = malloc(sizeof(wc_shlog_summary))) == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory");
	wc_shlog_lock(lm->shl);
	ok = !wc_shlog_failed(lm->shl) && wc_shlog_summarise(lm->shl, sum);
	wc_shlog_unlock(lm->shl);
	if (!ok || sum->frontier <= lm->valid_end || sum->frontier > until ||
		wc_db_tag_recent(db, sum->dropped_tag))
	{
		free(sum);
		return WC_OK;
	}
	/* what can fail first, each undone on failure: lm is then as it was */
	for (uint32_t i = 0; i < sum->nrecent && rc == WC_OK; i++)
		if (wc_db_tag_recent(db, sum->recent[i].tag))
			rc = wc_recent_add(&lm->recent, sum->recent[i].tag, sum->recent[i].seq_lo,
							   sum->recent[i].seq_hi, err);
	if (rc == WC_OK)
		rc = jump_ingested(db, lm, sum, err);
	if (rc != WC_OK)
	{
		wc_recent_clear(&lm->recent);
		free(sum);
		if (rc == WC_NOMEM)
			return rc;
		wc_err_clear(err);		/* read as before: that tells what went wrong */
		return WC_OK;
	}
	wc_recent_bound(&lm->recent, db->opts.recent_max);
	if (sum->max_seq > lm->max_seq)
		lm->max_seq = sum->max_seq;
	if (sum->trunc > lm->trunc)
		lm->trunc = sum->trunc;
	if (sum->trunc > db->truncate_seq)
		db->truncate_seq = sum->trunc;
	if (sum->applied_seq > db->applied_seq)
		db->applied_seq = sum->applied_seq;
	db->dirty = true;
	db->jumped_bytes += sum->frontier - lm->valid_end;
	lm->valid_end = sum->frontier;
	wc_log_reader_skip_to(lm->reader, lm->valid_end);
	free(sum);
	return logmem_sync_families(db, lm, err);
}

/* Brings lm, a log of the view, up to date: held records and new ones. */
static int
logmem_catch_up(wc_db *db, wc_logmem *lm, wc_err *err)
{
	uint64_t	number,
				size;
	int			rc;

	/* records whose transaction was in progress last time */
	for (int i = 0; i < lm->nheld;)
	{
		wc_txn_state state;

		if ((rc = wc_db_resolve(db, lm->held[i].tag, &state, err)) != WC_OK)
			return rc;
		if (state == WC_TXN_IN_PROGRESS || state == WC_TXN_PREPARED)
		{
			i++;
			continue;
		}
		if (state == WC_TXN_COMMITTED &&
			(rc = apply_committed(db, lm, lm->held[i].tag, lm->held[i].seq_lo,
								  lm->held[i].seq_hi, lm->held[i].payload, lm->held[i].len,
								  lm->held[i].off, err)) != WC_OK)
			return rc;			/* still held: a WC_NOT_FOUND is retried */
		if (state == WC_TXN_ABORTED && lm->held[i].off != 0)
			mark_record(lm, lm->held[i].off, lm->held[i].off + lm->held[i].len, lm->held[i].tag,
						lm->held[i].seq_lo, lm->held[i].seq_hi, true, false);
		/* resolved: the view changes (a version built before still excluded it) */
		db->dirty = true;
		free(lm->held[i].payload);
		lm->held[i] = lm->held[--lm->nheld];
	}

	if (lm->closed)
		return WC_OK;
	/* nothing appended since last time: no read at all, and when the shared page
	 * knows where this log ends, not even a system call */
	if (wc_db_shared_get_log(db, &number, &size) && number == lm->number)
	{
		if (size <= lm->valid_end)
			return WC_OK;
		/*
		 * Writers publish an end only after their append, and cut a log only
		 * above it (a torn tail, a failed append).  Not so a standby's copy,
		 * where redo may cut what it wrote before (read_only handles read it):
		 * there a record is read, so that a cut gives a short read, not a fault.
		 */
		if (!db->opts.read_only)
			wc_log_reader_set_whole(lm->reader, size);
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

	/*
	 * Up to that size: whatever committed before this refresh began lies below
	 * it.  Reading on would chase a writer appending meanwhile, a read per
	 * record; the next refresh takes those records in one go.  The reader's
	 * buffers are not kept for then: a process may read many logs.
	 */
	rc = logmem_jump(db, lm, size, err);
	if (rc == WC_OK)
		rc = replay(db, lm, size, false, err);
	wc_log_reader_release(lm->reader);
	return rc;
}

/* ---------------------------------------------------------------- versions */

void
wc_db_compact_rules(wc_db *db, const char *family, bool partial, uint64_t trunc,
					wc_recent_list *also, wc_vis_rules *rules)
{
	const wc_family *f = wc_db_family(db, (const uint8_t *) family, strlen(family));

	wc_vis_rules_init(rules);
	rules->mode = WC_VIS_COMPACT;
	rules->partial = partial;
	rules->trunc = trunc;
	if (db->opts.horizon != NULL)
	{
		uint64_t	min_seq;

		wc_recent_prune(&db->manifest.recent, wc_db_horizon(db));
		min_seq = wc_recent_min_seq(&db->manifest.recent);
		if (also != NULL)
		{
			wc_recent_prune(also, wc_db_horizon(db));
			if (wc_recent_min_seq(also) < min_seq)
				min_seq = wc_recent_min_seq(also);
		}
		if (min_seq != UINT64_MAX)
			rules->keep_above = min_seq - 1;
	}
	if (f)
	{
		rules->max_versions = f->max_versions;
		rules->ttl_cutoff = wc_vis_ttl_cutoff(wc_env_now_ms(), f->ttl_ms);
	}
}

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
	wc_recent_clear(&v->held);
	free(v);
}

/*
 * The records a scan of v never sees (held); the handle's lists of those it
 * must ask its snapshot about (committed, the horizon has not passed them) are
 * pruned here as it moves.
 */
static int
version_recent(wc_db *db, wc_version *v, wc_err *err)
{
	int			rc = WC_OK;
	bool		any = false;

	for (int i = 0; i <= db->nlogs && !any; i++)
		any = wc_db_recent_list(db, i)->n > 0 || wc_db_recent_list(db, i)->forgotten != 0;
	if (any)					/* the horizon is asked for only then */
	{
		uint64_t	horizon = wc_db_horizon(db);

		for (int i = 0; i <= db->nlogs; i++)
			wc_recent_prune(wc_db_recent_list(db, i), horizon);
	}
	for (int i = 0; i < db->nlogs && rc == WC_OK; i++)
		for (int j = 0; j < db->logs[i]->nheld && rc == WC_OK; j++)
			rc = wc_recent_add(&v->held, db->logs[i]->held[j].tag, db->logs[i]->held[j].seq_lo,
							   db->logs[i]->held[j].seq_hi, err);
	return rc;
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
	if (version_recent(db, v, err) != WC_OK)
	{
		wc_version_unref(v);
		return err->code;
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

/* ---------------------------------------------------------------- refresh */

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
 * Inline in its two callers: a write's catching up on the log is one call.
 */
static inline int
refresh(wc_db *db, bool force, wc_err *err)
{
	int			rc;
	uint64_t	gen;

	db->horizon_known = false;	/* asked again, once, when needed */
	if (db->absent)
	{
		/* a read-only handle of a store that did not exist: does it now? */
		if (!wc_env_exists(db->dir, "MANIFEST"))
			return WC_OK;		/* wc_db_version builds an empty version */
		if ((rc = wc_db_attach(db, true, err)) != WC_OK)
			return rc;
		db->absent = false;
		force = true;
	}
	gen = wc_db_shared_manifest_gen(db);

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
			if (round < 3)
			{
				wc_err_clear(err);
				if ((rc = check_manifest(db, err)) != WC_OK)
					return rc;
				continue;
			}
			return wc_err_relabel(err, WC_CORRUPT,
								  "a live log's ingest record names a missing file");
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
wc_db_refresh(wc_db *db, wc_err *err)
{
	return refresh(db, false, err);
}

int
wc_db_refresh_full(wc_db *db, wc_err *err)
{
	return refresh(db, true, err);
}

void
wc_db_view_free(wc_db *db)
{
	wc_version_unref(db->current);
	db->current = NULL;
	for (int i = 0; i < db->nssts; i++)
		wc_sst_unref(db->ssts[i].sst);
	free(db->ssts);
	db->ssts = NULL;
	db->nssts = 0;
	for (int i = 0; i < db->nlogs; i++)
		wc_db_log_free(db->logs[i]);
	free(db->logs);
	db->logs = NULL;
	db->nlogs = 0;
	wc_manifest_clear(&db->manifest);
}
