/*
 * inspect.c -- what a store directory holds, read without opening the store.
 *
 * For moving a store between PostgreSQL clusters (the FDW's IMPORT FOREIGN
 * SCHEMA): the families of its sorted files, and whether anything in it still
 * depends on the transactions of the cluster that wrote it.  Log records carry
 * that cluster's transaction ids (resolved through its commit log), and so do
 * the remembered recent records in MANIFEST (DESIGN.md, "Snapshots"); the
 * sorted files' entries carry none.  Nothing is locked or changed: the caller
 * must make sure nobody writes the directory meanwhile.
 */
#include "db_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "log.h"
#include "manifest.h"

int
wc_store_inspect(const char *dir, wc_store_info *info, wc_err *err)
{
	wc_manifest m;
	int			rc;

	memset(info, 0, sizeof(*info));
	memset(&m, 0, sizeof(m));
	if ((rc = wc_manifest_read(dir, &m, err)) != WC_OK)
		return rc;
	info->families = calloc(m.nfiles > 0 ? (size_t) m.nfiles : 1, sizeof(*info->families));
	if (info->families == NULL)
	{
		wc_manifest_clear(&m);
		return wc_err_set(err, WC_NOMEM, "out of memory");
	}
	for (int i = 0; i < m.nfiles; i++)
	{
		const wc_sst_props *p = &m.files[i].props;
		bool		seen = false;

		info->files++;
		info->cells += p->cells;
		for (int j = 0; j < info->nfamilies && !seen; j++)
			seen = strcmp(info->families[j], p->family) == 0;
		if (!seen)
			memcpy(info->families[info->nfamilies++], p->family, sizeof(info->families[0]));
	}
	/* sorted, as a table's families are listed */
	qsort(info->families, (size_t) info->nfamilies, sizeof(info->families[0]),
		  (int (*) (const void *, const void *)) strcmp);
	for (int i = 0; i < m.nlogs; i++)
	{
		char		name[32];
		char		path[4096];
		struct stat st;

		wc_file_name(name, sizeof(name), m.logs[i], "log");
		if ((size_t) snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		{
			rc = wc_err_set(err, WC_INVALID, "path too long: %s/%s", dir, name);
			break;
		}
		if (stat(path, &st) != 0)
		{
			rc = wc_err_set(err, WC_IO, "could not stat %s of the store in %s", name, dir);
			err->sys_errno = errno;
			break;
		}
		if ((uint64_t) st.st_size > WC_LOG_HEADER_SIZE)
			info->log_bytes += (uint64_t) st.st_size - WC_LOG_HEADER_SIZE;
	}
	info->recent = m.recent.n;
	info->forgotten = m.recent.forgotten;
	info->truncated = m.truncate_seq > 0;
	wc_manifest_clear(&m);
	if (rc != WC_OK)
		wc_store_info_free(info);
	return rc;
}

void
wc_store_info_free(wc_store_info *info)
{
	free(info->families);
	info->families = NULL;
	info->nfamilies = 0;
}
