/*-------------------------------------------------------------------------
 *
 * functions.c
 *		  widecol_flush, widecol_compact, widecol_stats, widecol_shared_memory
 *
 * flush and compact need ownership of the table (as VACUUM does); stats
 * needs SELECT on it.  Each starts with a refresh so that it acts on what
 * is committed now.  A flush meets WC_BUSY while a transaction that wrote
 * to the log is between its pre-commit write and its commit; we wait for it
 * briefly.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"

#include "access/table.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "widecol_fdw.h"

PG_FUNCTION_INFO_V1(widecol_flush);
PG_FUNCTION_INFO_V1(widecol_compact);
PG_FUNCTION_INFO_V1(widecol_stats);

#define WCFDW_BUSY_RETRIES	500		/* x 10 ms */

static Relation
wcfdw_open_table(Oid relid, bool need_owner)
{
	Relation	rel = try_table_open(relid, AccessShareLock);

	/* a dropped table's OID, or none ever: as regclass's own lookup says it */
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (!wcfdw_is_widecol_table(relid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a widecol_fdw foreign table",
						RelationGetRelationName(rel))));
	if (need_owner)
	{
		if (!pg_class_ownercheck(relid, GetUserId()))
			aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_FOREIGN_TABLE,
						   RelationGetRelationName(rel));
	}
	else
	{
		AclResult	acl = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);

		if (acl != ACLCHECK_OK)
			aclcheck_error(acl, OBJECT_FOREIGN_TABLE, RelationGetRelationName(rel));
	}
	return rel;
}

static void
wcfdw_maintenance(Oid relid, bool compact)
{
	Relation	rel = wcfdw_open_table(relid, true);
	WcFdwStore *store = wcfdw_store_get(rel);
	wc_err		err;
	int			rc;
	int			tries = 0;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("recovery is in progress"),
				 errhint("A standby's stores change only through the WAL: flush and compact on the primary.")));
	if (store->read_only)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot %s logged widecol table \"%s\"", compact ? "compact" : "flush",
						store->relname),
				 errhint("Add widecol_fdw to shared_preload_libraries in postgresql.conf and restart the server.")));
	for (;;)
	{
		wcfdw_store_refresh(store);
		wc_err_clear(&err);
		rc = compact ? wc_db_compact(store->db, &err) : wc_db_flush(store->db, &err);
		if (rc != WC_BUSY || ++tries > WCFDW_BUSY_RETRIES)
			break;
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);
	}
	wcfdw_check(rc, &err, compact ? "compact" : "flush", store->relname);
	/* let the statement's later scans see the new files */
	wcfdw_store_refresh(store);
	store->refreshed_cxt = NULL;
	table_close(rel, AccessShareLock);
}

Datum
widecol_flush(PG_FUNCTION_ARGS)
{
	wcfdw_maintenance(PG_GETARG_OID(0), false);
	PG_RETURN_VOID();
}

Datum
widecol_compact(PG_FUNCTION_ARGS)
{
	wcfdw_maintenance(PG_GETARG_OID(0), true);
	PG_RETURN_VOID();
}

/* A major compaction of relid's store, as widecol_compact (database.c). */
void
wcfdw_compact_table(Oid relid)
{
	wcfdw_maintenance(relid, true);
}

static Datum
wcfdw_bytea_datum(const uint8 *data, size_t len)
{
	bytea	   *b = palloc(len + VARHDRSZ);

	SET_VARSIZE(b, len + VARHDRSZ);
	if (len)
		memcpy(VARDATA(b), data, len);
	return PointerGetDatum(b);
}

Datum
widecol_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel = wcfdw_open_table(PG_GETARG_OID(0), false);
	WcFdwStore *store = wcfdw_store_get(rel);
	wc_file_info *files = NULL;
	int			nfiles = 0;
	wc_err		err;
	int			rc;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	wcfdw_store_refresh(store);
	wc_err_clear(&err);
	rc = wc_db_files(store->db, &files, &nfiles, &err);
	wcfdw_check(rc, &err, "list the files of the", store->relname);

	PG_TRY();
	{
		for (i = 0; i < nfiles; i++)
		{
			wc_file_info *f = &files[i];
			Datum		values[10];
			bool		nulls[10] = {0};

			values[0] = CStringGetTextDatum(f->name);
			values[1] = CStringGetTextDatum(f->family);
			values[2] = Int32GetDatum(f->level);
			values[3] = Int64GetDatum((int64) f->cells);
			values[4] = Int64GetDatum((int64) f->file_bytes);
			values[5] = Int64GetDatum((int64) f->raw_bytes);
			values[6] = wcfdw_bytea_datum(f->row_min, f->row_min_len);
			values[7] = wcfdw_bytea_datum(f->row_max, f->row_max_len);
			values[8] = Int64GetDatum(f->ts_min);
			values[9] = Int64GetDatum(f->ts_max);
			if (f->cells == 0)
				nulls[6] = nulls[7] = nulls[8] = nulls[9] = true;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	PG_FINALLY();
	{
		wc_file_info_free(files, nfiles);
	}
	PG_END_TRY();

	table_close(rel, AccessShareLock);
	return (Datum) 0;
}

/*
 * widecol_shared_memory
 *		What the shared memory set aside at start holds: one row for the block
 *		cache and one for the shared memtables (doc/SQL.md, "Shared
 *		memtables"), each with its size in units, the unit's bytes, the units
 *		in use, and for the memtables the logs indexed there: all of them, those
 *		no session references (kept until their room is needed), those that ran
 *		out of room, and how often an unreferenced log's room was taken.  A row
 *		of zeros when the area is off or the library was not preloaded.
 */
PG_FUNCTION_INFO_V1(widecol_shared_memory);

Datum
widecol_shared_memory(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	wc_block_cache_stats bc;
	wc_shared_memtable_stats mt;
	Datum		values[8];
	bool		nulls[8] = {0};

	InitMaterializedSRF(fcinfo, 0);
	wc_block_cache_get_stats(&bc);
	wc_shared_memtable_get_stats(&mt);

	values[0] = CStringGetTextDatum("block cache");
	values[1] = Int64GetDatum((int64) bc.slots);
	values[2] = Int64GetDatum((int64) bc.slot_bytes);
	values[3] = Int64GetDatum((int64) bc.used);
	nulls[4] = nulls[5] = nulls[6] = nulls[7] = true;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);

	memset(nulls, 0, sizeof(nulls));
	values[0] = CStringGetTextDatum("shared memtables");
	values[1] = Int64GetDatum((int64) mt.chunks);
	values[2] = Int64GetDatum((int64) mt.chunk_bytes);
	values[3] = Int64GetDatum((int64) (mt.chunks - mt.chunks_free));
	values[4] = Int64GetDatum((int64) mt.logs);
	values[5] = Int64GetDatum((int64) mt.logs_unused);
	values[6] = Int64GetDatum((int64) mt.logs_failed);
	values[7] = Int64GetDatum((int64) mt.evictions);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}
