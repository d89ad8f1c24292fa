/*-------------------------------------------------------------------------
 *
 * cache.c
 *		  The block cache and the shared memtables in shared memory:
 *		  widecol_fdw.block_cache_size and widecol_fdw.shared_memtable_size
 *
 * Every backend reading a sorted file decompresses the blocks it reads; the
 * engine's block cache (engine/cache.h) keeps decompressed blocks in memory
 * that every backend shares, as shared_buffers keeps the pages of ordinary
 * tables, so a block one backend read is read by all without decompressing
 * it again.  The memory is set aside at server start, when the library is
 * preloaded (shared_preload_libraries, which logged tables need anyway), and
 * laid out once by the postmaster; backends inherit it.  Scans of row ranges
 * (point reads, joins, short scans) read blocks there and leave the blocks
 * they decompress there; scans of every row and parallel scans do not use it
 * (engine/scan.c).  0 turns it off.
 *
 * The unflushed writes of every widecol table (the memtables of its live
 * logs) are indexed once for every backend in the same way, instead of once in
 * each backend that reads the table (engine/shmt.h): a backend's memory then
 * does not grow with the tables it reads, and a write another backend made is
 * indexed by the first backend to read it, not by all of them.  When the
 * region is full, a table's log goes on in the backends' own memory, as
 * without it.
 *
 * Shared memory is reinitialised after a backend dies abnormally, which also
 * releases the pins and spinlocks a dead backend held in the cache and the
 * references it held on shared memtables.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "widecol_fdw.h"

/* widecol_fdw.block_cache_size and widecol_fdw.shared_memtable_size, kB */
int			wcfdw_block_cache_kb = 131072;
int			wcfdw_shared_memtable_kb = 131072;

static shmem_request_hook_type wcfdw_prev_shmem_request = NULL;
static shmem_startup_hook_type wcfdw_prev_shmem_startup = NULL;

/* An area of shared memory the engine lays out: its setting and functions. */
typedef struct WcFdwArea
{
	const char *name;			/* ShmemInitStruct's, and for messages */
	int		   *kb;				/* the setting */
	size_t		(*region_size) (size_t bytes);
	int			(*create) (void *region, size_t size, wc_err *err);
} WcFdwArea;

static const WcFdwArea wcfdw_areas[] = {
	{"widecol_fdw block cache", &wcfdw_block_cache_kb,
	wc_block_cache_region_size, wc_block_cache_create},
	{"widecol_fdw shared memtables", &wcfdw_shared_memtable_kb,
	wc_shared_memtable_region_size, wc_shared_memtable_create},
};

/* Bytes of shared memory an area's setting asks for (0: none) and 64 for alignment. */
static Size
wcfdw_area_size(const WcFdwArea *a)
{
	size_t		size;

	if (*a->kb <= 0)
		return 0;
	size = a->region_size((size_t) *a->kb * 1024);
	return size > 0 ? add_size(size, 64) : 0;
}

static void
wcfdw_cache_shmem_request(void)
{
	if (wcfdw_prev_shmem_request)
		wcfdw_prev_shmem_request();
	for (int i = 0; i < lengthof(wcfdw_areas); i++)
		RequestAddinShmemSpace(wcfdw_area_size(&wcfdw_areas[i]));
}

static void
wcfdw_cache_shmem_startup(void)
{
	if (wcfdw_prev_shmem_startup)
		wcfdw_prev_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	for (int i = 0; i < lengthof(wcfdw_areas); i++)
	{
		const WcFdwArea *a = &wcfdw_areas[i];
		Size		size = wcfdw_area_size(a);
		bool		found;
		char	   *region;
		wc_err		err;

		if (size == 0)
			continue;
		/* laid out by the postmaster, at every (re)initialisation of shared memory */
		region = ShmemInitStruct(a->name, size, &found);
		if (found)
			continue;
		region = (char *) TYPEALIGN(64, region);
		wc_err_clear(&err);
		if (a->create(region, size - 64, &err) != WC_OK)
			ereport(WARNING,
					(errmsg("%s not set up: %s", a->name, err.msg)));
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * wcfdw_cache_init
 *		The setting and the shared memory, when preloaded (a PGC_POSTMASTER
 *		setting cannot be defined later: the library loaded by a session has
 *		no cache)
 */
void
wcfdw_cache_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("widecol_fdw.block_cache_size",
							"Shared memory for decompressed blocks of widecol tables' sorted files.",
							"Set aside at server start when widecol_fdw is in shared_preload_libraries. 0 turns the cache off.",
							&wcfdw_block_cache_kb,
							131072, 0, INT_MAX / 2,
							PGC_POSTMASTER, GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("widecol_fdw.shared_memtable_size",
							"Shared memory for the index of widecol tables' unflushed writes.",
							"Set aside at server start when widecol_fdw is in shared_preload_libraries; every session reads it instead of keeping its own. 0 turns it off.",
							&wcfdw_shared_memtable_kb,
							131072, 0, INT_MAX / 2,
							PGC_POSTMASTER, GUC_UNIT_KB,
							NULL, NULL, NULL);
	wcfdw_prev_shmem_request = shmem_request_hook;
	shmem_request_hook = wcfdw_cache_shmem_request;
	wcfdw_prev_shmem_startup = shmem_startup_hook;
	shmem_startup_hook = wcfdw_cache_shmem_startup;
}
