/*-------------------------------------------------------------------------
 *
 * import.c
 *		  IMPORT FOREIGN SCHEMA: foreign tables for the stores under a server's
 *		  directory
 *
 * A store is self-describing only in part: its MANIFEST lists its sorted
 * files and their families, but not the table's name, column types or
 * retention.  So each subdirectory of the server's directory that holds a
 * MANIFEST becomes a tall table named after the directory (rename the
 * directory to choose the name), with the families of its files, the five
 * columns of a tall table (keys as text COLLATE "C", value as bytea: any
 * bytes), max_versions '0' (nothing hidden or compacted away until the
 * retention is set) and the option store_directory naming the directory.
 * The remote schema name is not used.
 *
 * Refused or left out:
 *	- a store with writes in its logs, or remembered transactions in its
 *	  MANIFEST: those carry transaction ids of the cluster that wrote them,
 *	  which mean something else here (ERROR, 55000; flush it where it was
 *	  written, with no transaction running);
 *	- a store some table of this database on this server already shows;
 *	- a directory named <oid>_<oid> whose first OID is a database of this
 *	  cluster: the store of a table of that database, perhaps in use;
 *	- a store without sorted files (its families are unknown; WARNING).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_foreign_table.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/fd.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/syscache.h"

#include "widecol_fdw.h"

/* The store directories of this database's tables on the server. */
static List *
wcfdw_import_used_paths(Oid serverOid)
{
	List	   *paths = NIL;
	Relation	ft = table_open(ForeignTableRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(ft, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_foreign_table f = (Form_pg_foreign_table) GETSTRUCT(tup);
		WcFdwTableOptions opts;

		if (f->ftserver != serverOid || wcfdw_store_owner(f->ftrelid, true) != f->ftrelid)
			continue;
		wcfdw_get_table_options(f->ftrelid, &opts);
		paths = lappend(paths, wcfdw_store_path(f->ftrelid, &opts));
	}
	systable_endscan(scan);
	table_close(ft, AccessShareLock);
	return paths;
}

/* Is name <digits>_<digits> with the first a database of this cluster? */
static bool
wcfdw_import_local_store_name(const char *name)
{
	unsigned long dboid;
	char	   *end;

	if (name[0] < '0' || name[0] > '9')
		return false;
	dboid = strtoul(name, &end, 10);
	if (*end != '_' || end[1] == '\0' || strspn(end + 1, "0123456789") != strlen(end + 1))
		return false;
	return dboid <= PG_UINT32_MAX &&
		SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum((Oid) dboid));
}

/* Does IMPORT's LIMIT TO / EXCEPT let the table name through? */
static bool
wcfdw_import_wanted(ImportForeignSchemaStmt *stmt, const char *name)
{
	ListCell   *lc;
	bool		listed = false;

	if (stmt->list_type == FDW_IMPORT_SCHEMA_ALL)
		return true;
	foreach(lc, stmt->table_list)
		if (strcmp(((RangeVar *) lfirst(lc))->relname, name) == 0)
			listed = true;
	return stmt->list_type == FDW_IMPORT_SCHEMA_LIMIT_TO ? listed : !listed;
}

static int
wcfdw_cmp_names(const ListCell *a, const ListCell *b)
{
	return strcmp(lfirst(a), lfirst(b));
}

/*
 * widecolImportForeignSchema
 *		CREATE FOREIGN TABLE commands for the stores under the server's
 *		directory
 */
List *
widecolImportForeignSchema(ImportForeignSchemaStmt *stmt, Oid serverOid)
{
	ForeignServer *server = GetForeignServer(serverOid);
	char	   *directory = NULL;
	List	   *names = NIL;
	List	   *used;
	List	   *commands = NIL;
	ListCell   *lc;
	DIR		   *dir;
	struct dirent *de;

	foreach(lc, server->options)
	{
		DefElem    *def = lfirst(lc);

		if (strcmp(def->defname, "directory") == 0)
			directory = defGetString(def);
	}
	if (directory == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("server \"%s\" has no option \"directory\"", server->servername),
				 errdetail("IMPORT FOREIGN SCHEMA makes tables of the stores found under a server's directory."),
				 errhint("Copy the stores into a directory and create a server with OPTIONS (directory '...') for it.")));
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to import stores"),
				 errhint("Only a superuser may make tables of files under a directory.")));

	dir = AllocateDir(directory);
	if (dir == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open directory \"%s\": %m", directory)));
	while ((de = ReadDir(dir, directory)) != NULL)
	{
		char	   *path;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		path = psprintf("%s/%s/MANIFEST", directory, de->d_name);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			names = lappend(names, pstrdup(de->d_name));
		pfree(path);
	}
	FreeDir(dir);
	list_sort(names, wcfdw_cmp_names);

	used = wcfdw_import_used_paths(serverOid);
	foreach(lc, names)
	{
		char	   *name = lfirst(lc);
		char	   *path = psprintf("%s/%s", directory, name);
		wc_store_info info;
		wc_err		err;
		StringInfoData fams;
		StringInfoData cmd;
		ListCell   *lu;
		bool		taken = false;
		int			rc;
		int			i;

		if (!wcfdw_import_wanted(stmt, name) || wcfdw_import_local_store_name(name))
			continue;
		foreach(lu, used)
			if (strcmp(lfirst(lu), path) == 0)
				taken = true;
		if (taken)
			continue;

		wc_err_clear(&err);
		rc = wc_store_inspect(path, &info, &err);
		if (rc == WC_NOT_FOUND)
			continue;			/* gone meanwhile */
		if (rc < 0)
			wcfdw_engine_error(ERROR, rc, &err, "inspect the store", name);
		if (info.log_bytes > 0 || info.recent > 0 || info.forgotten != 0)
		{
			uint64		log_bytes = info.log_bytes;

			wc_store_info_free(&info);
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("store \"%s\" has writes that are not flushed to its sorted files", name),
					 errdetail("Its logs hold " UINT64_FORMAT " bytes of records, or its MANIFEST remembers recent transactions: both carry transaction IDs of the cluster that wrote them.",
							   log_bytes),
					 errhint("In that cluster, run widecol_flush() on its table while no other transaction runs, then copy the directory again; or leave it out with EXCEPT.")));
		}
		if (info.nfamilies == 0)
		{
			wc_store_info_free(&info);
			ereport(WARNING,
					(errmsg("store \"%s\" has no sorted files: its families are unknown, skipped", name),
					 errhint("Create its table by hand with OPTIONS (store_directory '%s', families '...').",
							 name)));
			continue;
		}

		initStringInfo(&fams);
		for (i = 0; i < info.nfamilies; i++)
			appendStringInfo(&fams, "%s%s", i ? "," : "", info.families[i]);
		wc_store_info_free(&info);

		initStringInfo(&cmd);
		appendStringInfo(&cmd,
						 "CREATE FOREIGN TABLE %s (rowkey text COLLATE \"C\", family text COLLATE \"C\", "
						 "qualifier text COLLATE \"C\", ts bigint, value bytea) SERVER %s "
						 "OPTIONS (families %s, max_versions '0', store_directory %s)",
						 quote_identifier(name), quote_identifier(server->servername),
						 quote_literal_cstr(fams.data), quote_literal_cstr(name));
		commands = lappend(commands, cmd.data);
	}
	return commands;
}
