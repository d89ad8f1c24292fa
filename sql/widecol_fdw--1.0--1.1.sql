/* widecol_fdw 1.0 -> 1.1: ALTER EXTENSION widecol_fdw UPDATE */

\echo Use "ALTER EXTENSION widecol_fdw UPDATE TO '1.1'" to load this file. \quit

-- What the shared memory set aside at server start holds (doc/SQL.md, "Shared
-- memtables" and "The block cache"): one row per area.  units: slots of the
-- block cache or chunks of the shared memtables; used: those holding data;
-- logs ... evictions: the shared memtables' logs (NULL for the block cache).
CREATE FUNCTION widecol_shared_memory(
    OUT area text, OUT units bigint, OUT unit_bytes bigint, OUT used bigint,
    OUT logs bigint, OUT logs_unused bigint, OUT logs_failed bigint, OUT evictions bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;
