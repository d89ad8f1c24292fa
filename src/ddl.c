/*-------------------------------------------------------------------------
 *
 * ddl.c
 *		  DROP of a widecol foreign table removes its store at commit
 *
 * The store of a table is a directory outside the catalogs, so PostgreSQL
 * does not know to remove it.  An object_access_hook sees every OAT_DROP of
 * a relation while the catalogs still describe it (its server, hence its
 * directory) and registers the directory with store.c, which removes it at
 * COMMIT and forgets it on ROLLBACK (or ROLLBACK TO a savepoint before the
 * DROP).
 *
 * The hook exists only in backends that loaded this library.  An event
 * trigger on ddl_command_start for the DROP commands that can reach a
 * foreign table (DROP FOREIGN TABLE, SCHEMA, SERVER, OWNED, EXTENSION ...)
 * calls widecol_fdw_drop_guard(), whose only job is to load the library
 * before the DROP runs, so the hook is in place.  This also covers DROP
 * EXTENSION widecol_fdw CASCADE, for which a sql_drop trigger would not fire
 * (it is dropped by the same command).  DROP DATABASE needs nothing: stores
 * live inside the database directory.
 *
 * A second event trigger, on ddl_command_end of CREATE and ALTER FOREIGN
 * TABLE, checks the columns of widecol tables (names and types, see
 * convert.c; cell options, see wide.c), so that a table that could never be
 * read is refused when it is defined rather than at its first use.  For a
 * table with option store it checks the table named and records that the
 * table depends on it, so that the store's own table cannot be dropped
 * while another shows its store (DROP ... CASCADE drops both).  pg_dump
 * writes a wide table as a CREATE FOREIGN TABLE without column options and
 * then one ALTER COLUMN ... OPTIONS per column: after those two commands a
 * table of rowkey and columns that map no cell yet only gets a WARNING
 * (wide.c, wcfdw_check_columns_ddl).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/dependency.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_class.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "tcop/deparse_utility.h"
#include "access/genam.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_inherits.h"
#include "utils/fmgroids.h"
#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "foreign/foreign.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "widecol_fdw.h"

PG_FUNCTION_INFO_V1(widecol_fdw_drop_guard);
PG_FUNCTION_INFO_V1(widecol_fdw_check_columns);

static object_access_hook_type wcfdw_prev_object_access = NULL;

/*
 * wcfdw_is_widecol_table
 *		Is relid a foreign table whose wrapper's handler is ours?
 */
bool
wcfdw_is_widecol_table(Oid relid)
{
	Oid			serverid;
	ForeignServer *server;
	ForeignDataWrapper *fdw;
	HeapTuple	tup;
	bool		result = false;

	if (get_rel_relkind(relid) != RELKIND_FOREIGN_TABLE)
		return false;
	serverid = GetForeignServerIdByRelId(relid);
	server = GetForeignServer(serverid);
	fdw = GetForeignDataWrapper(server->fdwid);
	if (!OidIsValid(fdw->fdwhandler))
		return false;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fdw->fdwhandler));
	if (HeapTupleIsValid(tup))
	{
		Form_pg_proc proc = (Form_pg_proc) GETSTRUCT(tup);
		bool		isnull;
		Datum		src;

		if (proc->prolang == ClanguageId)
		{
			src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
			if (!isnull && strcmp(TextDatumGetCString(src), "widecol_fdw_handler") == 0)
				result = true;
		}
		ReleaseSysCache(tup);
	}
	return result;
}

static void
wcfdw_object_access(ObjectAccessType access, Oid classId, Oid objectId,
					int subId, void *arg)
{
	if (wcfdw_prev_object_access)
		wcfdw_prev_object_access(access, classId, objectId, subId, arg);

	if (access == OAT_DROP && classId == RelationRelationId && subId == 0 &&
		wcfdw_is_widecol_table(objectId))
	{
		WcFdwTableOptions opts;
		char	   *path;

		/* a table that shows another one's store leaves it alone */
		if (wcfdw_store_owner(objectId, true) != objectId)
			return;

		wcfdw_get_table_options(objectId, &opts);
		/* store_directory without the server's directory: there is no store */
		if (opts.store_dir != NULL && opts.directory == NULL)
			return;
		path = wcfdw_store_path(objectId, &opts);
		wcfdw_store_drop_at_commit(objectId, path);
		pfree(path);
	}
}

void
wcfdw_ddl_init(void)
{
	wcfdw_prev_object_access = object_access_hook;
	object_access_hook = wcfdw_object_access;
}

/*
 * widecol_fdw_drop_guard
 *		Event trigger (ddl_command_start): loading this library is the point
 */
Datum
widecol_fdw_drop_guard(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("widecol_fdw_drop_guard() must be called as an event trigger")));
	PG_RETURN_VOID();
}

/*
 * wcfdw_forget_store_owner
 *		Removes the dependency of relid on the table its option store named
 *		(before one on the table it names now is recorded)
 *
 * That is a normal dependency on another widecol table that is not an
 * inheritance parent of relid.
 */
static void
wcfdw_forget_store_owner(Oid relid)
{
	Relation	depRel = table_open(DependRelationId, RowExclusiveLock);
	ScanKeyData key[3];
	SysScanDesc scan;
	HeapTuple	tup;

	/* inheritance is a normal dependency too: leave a child's alone */
	if (has_superclass(relid))
	{
		table_close(depRel, RowExclusiveLock);
		return;
	}

	ScanKeyInit(&key[0], Anum_pg_depend_classid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(RelationRelationId));
	ScanKeyInit(&key[1], Anum_pg_depend_objid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	ScanKeyInit(&key[2], Anum_pg_depend_objsubid, BTEqualStrategyNumber, F_INT4EQ,
				Int32GetDatum(0));
	scan = systable_beginscan(depRel, DependDependerIndexId, true, NULL, 3, key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_depend dep = (Form_pg_depend) GETSTRUCT(tup);

		if (dep->refclassid == RelationRelationId && dep->deptype == DEPENDENCY_NORMAL &&
			dep->refobjsubid == 0 &&
			wcfdw_is_widecol_table(dep->refobjid))
			CatalogTupleDelete(depRel, &tup->t_self);
	}
	systable_endscan(scan);
	table_close(depRel, RowExclusiveLock);
	CommandCounterIncrement();
}

/* Has widecol table relid option cell on a column (a wide table)? */
static bool
wcfdw_table_is_wide(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	char	  **specs;
	bool		wide = wcfdw_get_cell_specs(rel, &specs);

	table_close(rel, AccessShareLock);
	return wide;
}

/*
 * wcfdw_store_shown_wide
 *		Does a wide table show the store of table owner: owner itself, or a
 *		table whose option store names it (its dependents, recorded by the
 *		event trigger below)?
 */
bool
wcfdw_store_shown_wide(Oid owner)
{
	Relation	depRel;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;
	bool		wide;

	if (wcfdw_table_is_wide(owner))
		return true;
	depRel = table_open(DependRelationId, AccessShareLock);
	ScanKeyInit(&key[0], Anum_pg_depend_refclassid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(RelationRelationId));
	ScanKeyInit(&key[1], Anum_pg_depend_refobjid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(owner));
	scan = systable_beginscan(depRel, DependReferenceIndexId, true, NULL, 2, key);
	wide = false;
	while (!wide && HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_depend dep = (Form_pg_depend) GETSTRUCT(tup);

		if (dep->classid == RelationRelationId && dep->deptype == DEPENDENCY_NORMAL &&
			dep->objsubid == 0 && wcfdw_is_widecol_table(dep->objid) &&
			wcfdw_store_owner(dep->objid, true) == owner)
			wide = wcfdw_table_is_wide(dep->objid);
	}
	systable_endscan(scan);
	table_close(depRel, AccessShareLock);
	return wide;
}

/*
 * wcfdw_ddl_defines_columns
 *		Is cmd one of those pg_dump defines a foreign table's columns with: a
 *		CREATE FOREIGN TABLE, or an ALTER that only sets column options?
 */
static bool
wcfdw_ddl_defines_columns(const CollectedCommand *cmd)
{
	ListCell   *lc;

	if (cmd->type == SCT_Simple)
		return IsA(cmd->parsetree, CreateForeignTableStmt);
	if (cmd->type != SCT_AlterTable)
		return false;
	foreach(lc, cmd->d.alterTable.subcmds)
	{
		CollectedATSubcmd *sub = lfirst(lc);

		if (!IsA(sub->parsetree, AlterTableCmd) ||
			((AlterTableCmd *) sub->parsetree)->subtype != AT_AlterColumnGenericOptions)
			return false;
	}
	return true;
}

/*
 * widecol_fdw_check_columns
 *		Event trigger (ddl_command_end): the columns of new or altered
 *		widecol tables must be cell fields of supported types
 */
Datum
widecol_fdw_check_columns(PG_FUNCTION_ARGS)
{
	List	   *relids = NIL;
	List	   *strict = NIL;	/* relids some other command changed */
	ListCell   *lc;
	uint64		i;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("widecol_fdw_check_columns() must be called as an event trigger")));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("SELECT objid, command FROM pg_catalog.pg_event_trigger_ddl_commands() "
					"WHERE object_type IN ('foreign table', 'foreign table column')", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the commands of the event");
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull,
					cmdnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
		Datum		c = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &cmdnull);

		if (isnull)
			continue;
		relids = list_append_unique_oid(relids, DatumGetObjectId(d));
		if (cmdnull || !wcfdw_ddl_defines_columns((CollectedCommand *) DatumGetPointer(c)))
			strict = list_append_unique_oid(strict, DatumGetObjectId(d));
	}
	SPI_finish();

	foreach(lc, relids)
	{
		Oid			relid = lfirst_oid(lc);
		Relation	rel;
		Oid			owner;

		if (!wcfdw_is_widecol_table(relid))
			continue;
		rel = table_open(relid, AccessShareLock);
		wcfdw_check_columns_ddl(rel, !list_member_oid(strict, relid));
		table_close(rel, AccessShareLock);

		/* the table whose store it shows: exists, and cannot go first */
		owner = wcfdw_store_owner(relid, false);
		wcfdw_forget_store_owner(relid);
		if (owner != relid)
		{
			ObjectAddress dependent;
			ObjectAddress referenced;

			ObjectAddressSet(dependent, RelationRelationId, relid);
			ObjectAddressSet(referenced, RelationRelationId, owner);
			recordDependencyOn(&dependent, &referenced, DEPENDENCY_NORMAL);
		}
	}
	PG_RETURN_VOID();
}
