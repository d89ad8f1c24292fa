--
-- block_cache: decompressed blocks of sorted files in shared memory
-- (widecol_fdw.block_cache_size), shown by EXPLAIN (ANALYZE, BUFFERS)
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

SHOW widecol_fdw.block_cache_size;
SET widecol_fdw.block_cache_size = '1GB';  -- ERROR: set at server start
-- the index of unflushed cells in shared memory (t/075_preload: sizes 0, 1MB, 128MB)
SHOW widecol_fdw.shared_memtable_size;
SET widecol_fdw.shared_memtable_size = 0;  -- ERROR: set at server start
SELECT area, units > 0 AS sized, unit_bytes FROM widecol_shared_memory() ORDER BY area;

-- family p stored plain (read where it lies, never cached), the others lz4
CREATE FOREIGN TABLE bc (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'a,b,p', "p.compression" 'none');
INSERT INTO bc
SELECT 'row' || lpad(i::text, 5, '0'), f, 'q' || j, 1, repeat(md5(i::text || f || j), 2)
  FROM generate_series(1, 3000) i, (VALUES ('a'), ('b'), ('p')) v(f), generate_series(1, 2) j;
SELECT widecol_flush('bc');

-- the block cache counters of a query's foreign scans: hit, miss
CREATE FUNCTION bc_blocks(q text, OUT hit bigint, OUT miss bigint) LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    hit := 0;
    miss := 0;
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF l ~ 'Block Cache:' THEN
            hit := hit + substring(l from 'hit=(\d+)')::bigint;
            miss := miss + substring(l from 'miss=(\d+)')::bigint;
        END IF;
    END LOOP;
END $$;

-- without BUFFERS, no such line (the counts vary with what other sessions read)
CREATE FUNCTION bc_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF l ~ 'Block Cache' THEN RETURN NEXT l; END IF;
    END LOOP;
END $$;
SELECT count(*) AS block_cache_lines FROM bc_lines($$SELECT * FROM bc WHERE rowkey = 'row01500'$$);

-- a point read decompresses its blocks the first time, finds them the next
SELECT hit = 0 AS no_hit, miss AS first_misses FROM bc_blocks($$SELECT * FROM bc WHERE rowkey = 'row00042'$$);
SELECT hit AS hits, miss AS misses FROM bc_blocks($$SELECT * FROM bc WHERE rowkey = 'row00042'$$);
SELECT family, qualifier, value FROM bc WHERE rowkey = 'row00042' ORDER BY 1, 2;

-- only the lz4 families: a plain block is read where it lies
SELECT hit, miss FROM bc_blocks($$SELECT * FROM bc WHERE rowkey = 'row00042' AND family = 'p'$$);
SELECT hit, miss FROM bc_blocks($$SELECT * FROM bc WHERE rowkey = 'row00042' AND family IN ('a', 'b')$$);

-- a join (a parameterized point read per outer row): the second run is all hits
CREATE TABLE bc_keys AS SELECT 'row' || lpad((i * 37 % 3000 + 1)::text, 5, '0') AS k FROM generate_series(1, 200) i;
ANALYZE bc_keys;
SET enable_memoize = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*), sum(length(value)), count(DISTINCT rowkey) FROM bc_keys JOIN bc ON bc.rowkey = bc_keys.k;
SELECT hit > 0 AS some_hits, miss > 0 AS some_misses FROM bc_blocks($$SELECT * FROM bc_keys JOIN bc ON bc.rowkey = bc_keys.k$$);
SELECT miss AS misses FROM bc_blocks($$SELECT * FROM bc_keys JOIN bc ON bc.rowkey = bc_keys.k AND bc.family IN ('a', 'b')$$);
SELECT count(*), sum(length(value)), count(DISTINCT rowkey) FROM bc_keys JOIN bc ON bc.rowkey = bc_keys.k;
RESET enable_memoize;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- a scan of every row (or a parallel one) decompresses every block itself,
-- faster than it would find them in the cache, and leaves none there: the
-- join's blocks are all still cached after it
SET max_parallel_workers_per_gather = 0;
SELECT hit, miss > 0 AS misses FROM bc_blocks($$SELECT * FROM bc$$);
SELECT count(*), sum(length(value)) FROM bc;
RESET max_parallel_workers_per_gather;
SET enable_memoize = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT miss AS misses FROM bc_blocks($$SELECT * FROM bc_keys JOIN bc ON bc.rowkey = bc_keys.k AND bc.family IN ('a', 'b')$$);
RESET enable_memoize;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- new sorted files (an update, a flush, a compaction): the cached blocks of the
-- files they replace are never read for them; the first read of the new files
-- leaves their blocks in the cache
UPDATE bc SET value = 'new ' || value WHERE rowkey = 'row00042' AND family = 'a';
SELECT widecol_flush('bc');
SELECT widecol_compact('bc');
SELECT family, qualifier, value FROM bc WHERE rowkey = 'row00042' ORDER BY 1, 2;
SELECT hit, miss > 0 AS misses FROM bc_blocks($$SELECT * FROM bc WHERE rowkey = 'row00042' AND family IN ('a', 'b')$$);
SELECT family, qualifier, value FROM bc WHERE rowkey = 'row00042' ORDER BY 1, 2;

-- a table dropped and made again with the same rows and other values of the
-- same length: its new files may reuse the old files' inode numbers
SELECT value FROM bc WHERE rowkey = 'row00007' AND family = 'b' AND qualifier = 'q1';
DROP FOREIGN TABLE bc;
CREATE FOREIGN TABLE bc (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'a,b,p', "p.compression" 'none');
INSERT INTO bc
SELECT 'row' || lpad(i::text, 5, '0'), f, 'q' || j, 1, repeat(md5('again' || i::text || f || j), 2)
  FROM generate_series(1, 3000) i, (VALUES ('a'), ('b'), ('p')) v(f), generate_series(1, 2) j;
SELECT widecol_flush('bc');
SELECT value = repeat(md5('again7b1'), 2) AS new_value FROM bc WHERE rowkey = 'row00007' AND family = 'b' AND qualifier = 'q1';
SELECT count(*) FILTER (WHERE value = repeat(md5('again' || substr(rowkey, 4)::int || family || substr(qualifier, 2)), 2)) AS right_values,
       count(*) AS cells
  FROM bc_keys JOIN bc ON bc.rowkey = bc_keys.k;

DROP FOREIGN TABLE bc;
DROP TABLE bc_keys;
DROP FUNCTION bc_blocks(text);
DROP FUNCTION bc_lines(text);
