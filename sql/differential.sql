--
-- differential: random cells in a foreign table and in an ordinary table, many
-- generated queries, the same answers (before and after flush and compaction)
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

-- all versions are kept: retention has no equivalent in an ordinary table
CREATE FOREIGN TABLE dw (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'a,bb,c', max_versions '0');
CREATE TABLE dh (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
);
-- the same with a rowkey under a collation that is not byte order
CREATE FOREIGN TABLE dwi (rowkey text COLLATE "und-x-icu", family text, qualifier bytea, ts bigint, value text)
    SERVER wide OPTIONS (families 'a,bb,c', max_versions '0');
CREATE TABLE dhi (rowkey text COLLATE "und-x-icu", family text, qualifier bytea, ts bigint, value text);

SELECT setseed(0.4242);

-- a random string over a small alphabet (so keys share prefixes)
CREATE FUNCTION wc_rand_key(maxlen int) RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT string_agg(substr('abAB0_%z', 1 + floor(random() * 8)::int, 1), '')
      FROM generate_series(1, 1 + floor(random() * maxlen)::int)
$$;

CREATE FUNCTION wc_load(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    -- new cells only: a write of an existing (rowkey, family, qualifier, ts)
    -- replaces it in the store but would add a row to the ordinary table
    CREATE TEMP TABLE cells ON COMMIT DROP AS
    SELECT DISTINCT ON (rowkey, family, qualifier, ts) *
      FROM (SELECT wc_rand_key(4) AS rowkey,
                   (ARRAY['a', 'bb', 'c'])[1 + floor(random() * 3)::int] AS family,
                   (ARRAY['', 'q', 'q1', 'q2', 'r', 'qq'])[1 + floor(random() * 6)::int] AS qualifier,
                   floor(random() * 20)::bigint AS ts,
                   md5(random()::text) AS value
              FROM generate_series(1, n)) g
     WHERE NOT EXISTS (SELECT 1 FROM dh WHERE (dh.rowkey, dh.family, dh.qualifier, dh.ts) =
                                              (g.rowkey, g.family, g.qualifier, g.ts));
    INSERT INTO dw SELECT * FROM cells;
    INSERT INTO dh SELECT * FROM cells;
    INSERT INTO dwi SELECT rowkey, family, convert_to(qualifier, 'UTF8'), ts, value FROM cells;
    INSERT INTO dhi SELECT rowkey, family, convert_to(qualifier, 'UTF8'), ts, value FROM cells;
END $$;

-- a random condition on one of the cell fields
CREATE FUNCTION wc_rand_cond(bytea_qual boolean) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    k int := floor(random() * 22)::int;
    q text := (ARRAY['', 'q', 'q1', 'q2', 'r', 'qq', 'x'])[1 + floor(random() * 7)::int];
    ql text := CASE WHEN bytea_qual THEN format('convert_to(%L, ''UTF8'')', q) ELSE quote_literal(q) END;
    t1 bigint := floor(random() * 22)::bigint - 1;
    t2 bigint := floor(random() * 22)::bigint - 1;
BEGIN
    RETURN CASE k
        WHEN 0 THEN format('rowkey = %L', wc_rand_key(3))
        WHEN 1 THEN format('rowkey IN (%L, %L, %L)', wc_rand_key(3), wc_rand_key(2), wc_rand_key(1))
        WHEN 2 THEN format('rowkey < %L', wc_rand_key(3))
        WHEN 3 THEN format('rowkey <= %L', wc_rand_key(3))
        WHEN 4 THEN format('rowkey > %L', wc_rand_key(3))
        WHEN 5 THEN format('rowkey >= %L', wc_rand_key(3))
        WHEN 6 THEN format('rowkey BETWEEN %L AND %L', wc_rand_key(2), wc_rand_key(3))
        WHEN 7 THEN format('rowkey LIKE %L', wc_rand_key(2) || '%')
        WHEN 8 THEN format('starts_with(rowkey, %L)', wc_rand_key(2))
        WHEN 9 THEN format('rowkey = ANY (ARRAY[%L, %L])', wc_rand_key(2), wc_rand_key(3))
        WHEN 10 THEN format('family = %L', (ARRAY['a', 'bb', 'c', 'd'])[1 + floor(random() * 4)::int])
        WHEN 11 THEN format('family IN (%L, %L)', (ARRAY['a', 'bb', 'c', 'd'])[1 + floor(random() * 4)::int],
                            (ARRAY['a', 'bb', 'c'])[1 + floor(random() * 3)::int])
        WHEN 12 THEN format('qualifier = %s', ql)
        WHEN 13 THEN format('qualifier IN (%s, %s)', ql, CASE WHEN bytea_qual THEN '''\x7131''::bytea' ELSE '''q1''' END)
        WHEN 14 THEN CASE WHEN bytea_qual THEN format('qualifier LIKE %s', format('convert_to(%L, ''UTF8'')', q || '%'))
                          ELSE format('qualifier LIKE %L', q || '%') END
        WHEN 15 THEN format('ts = %s', t1)
        WHEN 16 THEN format('ts < %s', t1)
        WHEN 17 THEN format('ts <= %s', t1)
        WHEN 18 THEN format('ts > %s', t1)
        WHEN 19 THEN format('ts >= %s', t1)
        WHEN 20 THEN format('ts BETWEEN %s AND %s', t1, t2)
        ELSE format('ts IN (%s, %s)', t1, t2)
    END;
END $$;

-- a random query over table T
CREATE FUNCTION wc_rand_query(bytea_qual boolean) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    n int := floor(random() * 4)::int;
    conds text[] := '{}';
    w text;
    shape int := floor(random() * 6)::int;
BEGIN
    FOR i IN 1 .. n LOOP
        conds := conds || wc_rand_cond(bytea_qual);
    END LOOP;
    w := CASE WHEN n = 0 THEN 'true' ELSE array_to_string(conds, CASE WHEN random() < 0.85 THEN ' AND ' ELSE ' OR ' END) END;
    RETURN CASE shape
        WHEN 0 THEN format('SELECT * FROM T WHERE %s', w)
        WHEN 1 THEN format('SELECT rowkey, count(*) FROM T WHERE %s GROUP BY rowkey', w)
        WHEN 2 THEN format('SELECT row_number() OVER () AS n, s.* FROM (SELECT * FROM T WHERE %s '
                           'ORDER BY rowkey, family, qualifier, ts DESC LIMIT %s) s', w, 1 + floor(random() * 20)::int)
        WHEN 3 THEN format('SELECT DISTINCT ON (rowkey, family, qualifier) * FROM T WHERE %s '
                           'ORDER BY rowkey, family, qualifier, ts DESC', w)
        WHEN 4 THEN format('SELECT k.id, T.* FROM wc_keys k JOIN T ON T.rowkey = k.k%s WHERE %s',
                           CASE WHEN bytea_qual THEN ' COLLATE "und-x-icu"' ELSE '' END, w)
        ELSE format('SELECT family, qualifier, max(ts), count(*) FROM T WHERE %s GROUP BY 1, 2', w)
    END;
END $$;

-- rows of q over the foreign table that the ordinary table lacks, and the reverse
CREATE FUNCTION wc_diff(q text, ft text, ht text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    qf text := regexp_replace(q, '\mT\M', ft, 'g');
    qh text := regexp_replace(q, '\mT\M', ht, 'g');
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((SELECT * FROM (%s) a EXCEPT ALL SELECT * FROM (%s) b) '
                   'UNION ALL (SELECT * FROM (%s) c EXCEPT ALL SELECT * FROM (%s) d)) e',
                   qf, qh, qh, qf) INTO n;
    IF n > 0 THEN
        RAISE NOTICE 'mismatch (%): %', n, qf;
    END IF;
    RETURN n;
END $$;

-- many queries on both pairs of tables; also with nested loops forced
CREATE FUNCTION wc_run(nq int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    bad bigint := 0;
    q text;
BEGIN
    FOR i IN 1 .. nq LOOP
        q := wc_rand_query(false);
        bad := bad + wc_diff(q, 'dw', 'dh');
        q := wc_rand_query(true);
        bad := bad + wc_diff(q, 'dwi', 'dhi');
    END LOOP;
    PERFORM set_config('enable_hashjoin', 'off', true);
    PERFORM set_config('enable_mergejoin', 'off', true);
    FOR i IN 1 .. nq / 5 LOOP
        q := format('SELECT k.id, T.* FROM wc_keys k JOIN T ON T.rowkey = k.k WHERE %s', wc_rand_cond(false));
        bad := bad + wc_diff(q, 'dw', 'dh');
    END LOOP;
    PERFORM set_config('enable_hashjoin', 'on', true);
    PERFORM set_config('enable_mergejoin', 'on', true);
    RETURN bad;
END $$;

CREATE TABLE wc_keys (id int, k text COLLATE "C");
INSERT INTO wc_keys SELECT i, wc_rand_key(3) FROM generate_series(1, 30) i;
ANALYZE wc_keys;

-- 1. everything in the log (memtables)
BEGIN;
SELECT wc_load(3000);
COMMIT;
SELECT count(*) = (SELECT count(*) FROM dh) AS same_count FROM dw;
SELECT wc_run(150) AS mismatches;

-- 2. flushed to sorted files
SELECT widecol_flush('dw'), widecol_flush('dwi');
SELECT wc_run(150) AS mismatches;

-- 3. more writes in the log on top of the files: new cells, deletes, updates
BEGIN;
SELECT wc_load(1000);
COMMIT;
DELETE FROM dw WHERE value < '3';
DELETE FROM dh WHERE value < '3';
DELETE FROM dwi WHERE value < '3';
DELETE FROM dhi WHERE value < '3';
UPDATE dw SET value = 'updated' WHERE rowkey LIKE 'a%' AND ts > 15;
UPDATE dh SET value = 'updated' WHERE rowkey LIKE 'a%' AND ts > 15;
UPDATE dwi SET value = 'updated' WHERE rowkey LIKE 'a%' AND ts > 15;
UPDATE dhi SET value = 'updated' WHERE rowkey LIKE 'a%' AND ts > 15;
UPDATE dw SET ts = ts + 100 WHERE family = 'c' AND ts < 3;
UPDATE dh SET ts = ts + 100 WHERE family = 'c' AND ts < 3;
UPDATE dwi SET ts = ts + 100 WHERE family = 'c' AND ts < 3;
UPDATE dhi SET ts = ts + 100 WHERE family = 'c' AND ts < 3;
SELECT count(*) = (SELECT count(*) FROM dh) AS same_count FROM dw;
SELECT wc_run(150) AS mismatches;

-- 4. a second flush, then everything compacted
SELECT widecol_flush('dw'), widecol_flush('dwi');
SELECT wc_run(100) AS mismatches;
SELECT widecol_compact('dw'), widecol_compact('dwi');
SELECT wc_run(150) AS mismatches;

-- 5. inside a transaction: pending writes overlaid on the files
BEGIN;
SELECT wc_load(500);
DELETE FROM dw WHERE value > 'e';
DELETE FROM dh WHERE value > 'e';
DELETE FROM dwi WHERE value > 'e';
DELETE FROM dhi WHERE value > 'e';
SELECT wc_run(100) AS mismatches;
COMMIT;
SELECT wc_run(50) AS mismatches;

DROP FOREIGN TABLE dw, dwi;
DROP TABLE dh, dhi, wc_keys;
DROP FUNCTION wc_rand_key(int), wc_load(int), wc_rand_cond(boolean), wc_rand_query(boolean),
    wc_diff(text, text, text), wc_run(int);
