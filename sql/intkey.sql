--
-- intkey: smallint, integer and bigint rowkeys (stored big-endian with the
-- sign bit flipped, as Apache Phoenix stores its integer keys: the bytes sort
-- as the numbers) and uuid rowkeys (their 16 bytes), compared with ordinary
-- tables of the same rows
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

-- pgbench's accounts as a wide table, and as pgbench makes it
CREATE FOREIGN TABLE accounts (
    rowkey   int,
    bid      int  OPTIONS (cell 'a:bid'),
    abalance int  OPTIONS (cell 'a:abalance'),
    filler   text OPTIONS (cell 'a:filler')
) SERVER wide OPTIONS (families 'a');
CREATE TABLE accounts_heap (aid int PRIMARY KEY, bid int, abalance int, filler text);

-- negative keys, zero, the extremes, in an order that is not the keys'
INSERT INTO accounts_heap
SELECT k, k % 7, (k % 1000) * 3, 'f' || k
  FROM (SELECT unnest(ARRAY[-2147483648, 2147483647, -1, 0, 1, 255, 256, -256, 65536, -65537]) AS k
        UNION ALL SELECT g * 37 - 500 FROM generate_series(1, 60) g) s;
INSERT INTO accounts SELECT * FROM accounts_heap;
SELECT count(*) FROM accounts;

-- the same rows, in the same order: the store's order is the numbers'
CREATE FUNCTION same(q_wide text, q_heap text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    a text;
    b text;
BEGIN
    EXECUTE 'SELECT string_agg(t::text, '';'') FROM (' || q_wide || ') t' INTO a;
    EXECUTE 'SELECT string_agg(t::text, '';'') FROM (' || q_heap || ') t' INTO b;
    IF a IS DISTINCT FROM b THEN
        RETURN 'DIFFERENT: ' || coalesce(a, '<none>') || ' | ' || coalesce(b, '<none>');
    END IF;
    RETURN 'same (' || coalesce(length(a), 0) || ' chars)';
END $$;

SELECT same('SELECT * FROM accounts', 'SELECT * FROM accounts_heap ORDER BY aid');
SELECT rowkey FROM accounts ORDER BY rowkey LIMIT 5;
SELECT rowkey FROM accounts ORDER BY rowkey DESC LIMIT 3;

-- conditions on the key: each pushed down (the plans below), each the ordinary table's answer
SELECT q, same(replace(q, 'K', 'rowkey') || ' ORDER BY 1',
               replace(replace(q, 'accounts', 'accounts_heap'), 'K', 'aid') || ' ORDER BY 1')
  FROM unnest(ARRAY[
    'SELECT * FROM accounts WHERE K = 0',
    'SELECT * FROM accounts WHERE K = -1',
    'SELECT * FROM accounts WHERE K = 2147483647',
    'SELECT * FROM accounts WHERE K = -2147483648',
    'SELECT * FROM accounts WHERE K = 5000000000',
    'SELECT * FROM accounts WHERE K = 1::smallint',
    'SELECT * FROM accounts WHERE K = 256::bigint',
    'SELECT * FROM accounts WHERE K < 0',
    'SELECT * FROM accounts WHERE K <= -256',
    'SELECT * FROM accounts WHERE K > 1000',
    'SELECT * FROM accounts WHERE K >= 2147483647',
    'SELECT * FROM accounts WHERE K > 2147483647',
    'SELECT * FROM accounts WHERE K < -2147483648',
    'SELECT * FROM accounts WHERE K < 9999999999',
    'SELECT * FROM accounts WHERE K > -9999999999 AND K < -300',
    'SELECT * FROM accounts WHERE K BETWEEN -500 AND 500',
    'SELECT * FROM accounts WHERE K BETWEEN 500 AND -500',
    'SELECT * FROM accounts WHERE K IN (-1, 1, 3, 1, 5000000000, NULL, 65536)',
    'SELECT * FROM accounts WHERE K = ANY (ARRAY[-65537, 255, 256]::bigint[])',
    'SELECT * FROM accounts WHERE K < -100 OR K > 1500 OR K = 0',
    'SELECT * FROM accounts WHERE (K >= 0 AND K < 300) OR K IN (-1, -2147483648)',
    'SELECT * FROM accounts WHERE K IS NULL',
    'SELECT * FROM accounts WHERE K = NULL::int',
    'SELECT * FROM accounts WHERE K % 2 = 0 AND K > 100',
    'SELECT count(*), sum(abalance), min(K), max(K) FROM accounts WHERE K > -1000'
  ]) q;

EXPLAIN (COSTS OFF) SELECT * FROM accounts WHERE rowkey = 5;
EXPLAIN (COSTS OFF) SELECT * FROM accounts WHERE rowkey IN (3, 1, 2);
EXPLAIN (COSTS OFF) SELECT * FROM accounts WHERE rowkey >= -10 AND rowkey < 10::bigint;
EXPLAIN (COSTS OFF) SELECT * FROM accounts WHERE rowkey BETWEEN 1 AND 10 ORDER BY rowkey;
EXPLAIN (COSTS OFF) SELECT * FROM accounts ORDER BY rowkey DESC LIMIT 3;

-- prepared statements, custom and generic plans (pgbench -M prepared)
PREPARE get(int) AS SELECT abalance FROM accounts WHERE rowkey = $1;
PREPARE upd(int, int) AS UPDATE accounts SET abalance = abalance + $2 WHERE rowkey = $1;
PREPARE upd_heap(int, int) AS UPDATE accounts_heap SET abalance = abalance + $2 WHERE aid = $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE get(7);
EXECUTE upd(-1, 10); EXECUTE upd_heap(-1, 10);
EXECUTE upd(2147483647, -5); EXECUTE upd_heap(2147483647, -5);
EXECUTE upd(12345, 1); EXECUTE upd_heap(12345, 1);
EXECUTE get(-1);
RESET plan_cache_mode;
EXECUTE upd(0, 3); EXECUTE upd_heap(0, 3);
SELECT same('SELECT * FROM accounts', 'SELECT * FROM accounts_heap ORDER BY aid');

-- pgbench's transaction (tpcb-like, on accounts), then DELETE, UPDATE of the key, RETURNING
BEGIN;
UPDATE accounts SET abalance = abalance + 42 WHERE rowkey = 256;
UPDATE accounts_heap SET abalance = abalance + 42 WHERE aid = 256;
SELECT abalance FROM accounts WHERE rowkey = 256;
COMMIT;
DELETE FROM accounts WHERE rowkey < -1000 RETURNING rowkey;
DELETE FROM accounts_heap WHERE aid < -1000;
UPDATE accounts SET rowkey = rowkey + 100000 WHERE rowkey BETWEEN 1 AND 100 RETURNING rowkey, bid;
UPDATE accounts_heap SET aid = aid + 100000 WHERE aid BETWEEN 1 AND 100;
SELECT same('SELECT * FROM accounts', 'SELECT * FROM accounts_heap ORDER BY aid');

-- an UPDATE that reads nothing of the row is a direct one; ANALYZE samples the rows
EXPLAIN (COSTS OFF) UPDATE accounts SET filler = 'direct' WHERE rowkey = -1;
UPDATE accounts SET filler = 'direct' WHERE rowkey IN (-1, 5000000000);
UPDATE accounts_heap SET filler = 'direct' WHERE aid IN (-1, 5000000000);
ANALYZE accounts;
SELECT (SELECT reltuples FROM pg_class WHERE relname = 'accounts') = (SELECT count(*) FROM accounts) AS counted;

-- joins: a parameterized scan of the key per outer row (the outer side's type may differ)
CREATE TABLE picks (id bigint, note text);
INSERT INTO picks VALUES (0, 'zero'), (-1, 'minus one'), (256, 'two five six'), (5000000000, 'too big'), (7, 'none');
SET enable_hashjoin = off; SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT p.note, a.abalance FROM picks p JOIN accounts a ON a.rowkey = p.id;
SELECT same('SELECT p.note, a.abalance FROM picks p JOIN accounts a ON a.rowkey = p.id ORDER BY 1',
            'SELECT p.note, a.abalance FROM picks p JOIN accounts_heap a ON a.aid = p.id ORDER BY 1');
RESET enable_hashjoin; RESET enable_mergejoin;

-- COPY in and out
COPY accounts (rowkey, bid, abalance, filler) FROM stdin;
-7	1	2	copied
7	3	4	\N
\.
SELECT * FROM accounts WHERE rowkey IN (-7, 7) ORDER BY rowkey;
INSERT INTO accounts_heap VALUES (-7, 1, 2, 'copied'), (7, 3, 4, NULL);
COPY (SELECT * FROM accounts WHERE rowkey BETWEEN -300 AND -200) TO stdout;

-- INSERT ... ON CONFLICT DO NOTHING: a put if absent by the key
INSERT INTO accounts VALUES (7, 9, 9, 'again'), (8, 9, 9, 'new') ON CONFLICT DO NOTHING RETURNING rowkey;
INSERT INTO accounts_heap VALUES (7, 9, 9, 'again'), (8, 9, 9, 'new') ON CONFLICT DO NOTHING;

-- smallint and bigint keys, a domain over int, a tall table
CREATE FOREIGN TABLE small_keys (rowkey smallint, v text OPTIONS (cell 'f:v'))
    SERVER wide OPTIONS (families 'f');
INSERT INTO small_keys VALUES (-32768, 'min'), (32767, 'max'), (-1, 'm1'), (0, 'zero'), (1, 'one');
SELECT * FROM small_keys;
SELECT * FROM small_keys WHERE rowkey > -2 AND rowkey < 100000;
SELECT * FROM small_keys WHERE rowkey IN (32767, 40000, -40000);
SELECT * FROM small_keys WHERE rowkey < -32768;
CREATE DOMAIN account_id AS bigint CHECK (VALUE <> 13);
CREATE FOREIGN TABLE big_keys (rowkey account_id, family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'f');
INSERT INTO big_keys VALUES (-9223372036854775808, 'f', 'q', 1, 'min'),
                            (9223372036854775807, 'f', 'q', 1, 'max'),
                            (-1, 'f', 'q', 1, 'm1'), (0, 'f', 'q', 1, 'zero'), (1, 'f', 'q', 1, 'one');
SELECT rowkey, value FROM big_keys;
SELECT rowkey, value FROM big_keys WHERE rowkey >= 0;
SELECT rowkey, value FROM big_keys WHERE rowkey < 0 ORDER BY rowkey DESC;
INSERT INTO big_keys VALUES (13, 'f', 'q', 1, 'x');

-- a tall table of another key type over the same store: the key's bytes, or an error
CREATE FOREIGN TABLE accounts_bytes (rowkey bytea, family text, qualifier text, ts bigint, value bytea)
    SERVER wide OPTIONS (store 'accounts');
SELECT rowkey, qualifier, value FROM accounts_bytes WHERE rowkey = '\x80000000' ORDER BY qualifier, ts DESC;
CREATE FOREIGN TABLE accounts_big (rowkey bigint, family text, qualifier text, value bytea)
    SERVER wide OPTIONS (store 'accounts');
SELECT * FROM accounts_big LIMIT 1;
INSERT INTO accounts_bytes VALUES ('\x0102', 'a', 'bid', 1, '\x00000001');
SELECT * FROM accounts WHERE rowkey > 0 LIMIT 1;
DELETE FROM accounts_bytes WHERE rowkey = '\x0102';
SELECT count(*) FROM accounts;
SELECT same('SELECT * FROM accounts', 'SELECT * FROM accounts_heap ORDER BY aid');

-- random key conditions, orders and writes on both tables (a fixed seed): every answer the
-- ordinary table's, rows in the same order
CREATE FUNCTION rnd_key() RETURNS text LANGUAGE sql AS $$
    SELECT CASE WHEN random() < 0.1
                THEN (ARRAY['-2147483648', '2147483647', '5000000000', '-5000000000', '0::smallint',
                            '40000::bigint', '-1::bigint', '32767::smallint'])[1 + floor(random() * 8)::int]
                ELSE (floor(random() * 120) - 60)::int::text END $$;
CREATE FUNCTION rnd_cond(depth int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r int := floor(random() * (CASE WHEN depth > 1 THEN 8 ELSE 11 END))::int;
BEGIN
    CASE r
        WHEN 0 THEN RETURN format('K = %s', rnd_key());
        WHEN 1 THEN RETURN format('K < %s', rnd_key());
        WHEN 2 THEN RETURN format('K <= %s', rnd_key());
        WHEN 3 THEN RETURN format('K > %s', rnd_key());
        WHEN 4 THEN RETURN format('K >= %s', rnd_key());
        WHEN 5 THEN RETURN format('K BETWEEN %s AND %s', rnd_key(), rnd_key());
        WHEN 6 THEN RETURN format('K IN (%s, %s, %s)', rnd_key(), rnd_key(), rnd_key());
        WHEN 7 THEN RETURN format('abalance > %s', floor(random() * 3000)::int);
        WHEN 8 THEN RETURN format('(%s OR %s)', rnd_cond(depth + 1), rnd_cond(depth + 1));
        WHEN 9 THEN RETURN format('(%s AND %s)', rnd_cond(depth + 1), rnd_cond(depth + 1));
        ELSE RETURN format('K = ANY (ARRAY[%s, %s]::bigint[])', rnd_key(), rnd_key());
    END CASE;
END $$;
CREATE FUNCTION fuzz(n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    c text;
    q text;
    o text;
    bad int := 0;
    reads int := 0;
    writes int := 0;
    res text;
BEGIN
    PERFORM setseed(0.42);
    FOR i IN 1 .. n LOOP
        c := rnd_cond(0);
        o := CASE floor(random() * 3)::int WHEN 0 THEN 'K' WHEN 1 THEN 'K DESC' ELSE 'abalance, K' END;
        CASE floor(random() * 6)::int
            WHEN 0 THEN
                q := format('SELECT K, bid, abalance, filler FROM accounts WHERE %s ORDER BY %s LIMIT %s',
                            c, o, 1 + floor(random() * 20)::int);
            WHEN 1 THEN
                q := format('SELECT count(*), sum(abalance), min(K), max(K) FROM accounts WHERE %s', c);
            WHEN 2 THEN
                EXECUTE format('UPDATE accounts SET abalance = abalance + %s WHERE %s',
                               i, replace(c, 'K', 'rowkey'));
                EXECUTE format('UPDATE accounts_heap SET abalance = abalance + %s WHERE %s', i, replace(c, 'K', 'aid'));
                writes := writes + 1;
                CONTINUE;
            WHEN 3 THEN
                IF random() < 0.3 THEN
                    c := format('K IN (%s, %s)', rnd_key(), rnd_key());
                    EXECUTE format('DELETE FROM accounts WHERE %s', replace(c, 'K', 'rowkey'));
                    EXECUTE format('DELETE FROM accounts_heap WHERE %s', replace(c, 'K', 'aid'));
                ELSE
                    q := (floor(random() * 120) - 60)::int::text;
                    EXECUTE format('INSERT INTO accounts VALUES (%s, 1, %s, ''ins'') ON CONFLICT DO NOTHING', q, i);
                    EXECUTE format('INSERT INTO accounts_heap VALUES (%s, 1, %s, ''ins'') ON CONFLICT DO NOTHING', q, i);
                END IF;
                writes := writes + 1;
                CONTINUE;
            ELSE
                q := format('SELECT K, abalance FROM accounts WHERE %s ORDER BY %s', c, o);
        END CASE;
        reads := reads + 1;
        res := same(replace(q, 'K', 'rowkey'), replace(replace(q, 'accounts', 'accounts_heap'), 'K', 'aid'));
        IF res LIKE 'DIFFERENT%' THEN
            bad := bad + 1;
            RAISE WARNING '%: %', q, res;
        END IF;
    END LOOP;
    RETURN format('%s reads, %s writes, %s different', reads, writes, bad);
END $$;
SELECT fuzz(400);
SET enable_sort = off;
SELECT fuzz(100);
RESET enable_sort;
SELECT same('SELECT * FROM accounts', 'SELECT * FROM accounts_heap ORDER BY aid');

-- uuid keys: stored as their 16 bytes, whose order is uuid's
CREATE FOREIGN TABLE sessions (
    rowkey  uuid,
    user_id int  OPTIONS (cell 's:user'),
    data    text OPTIONS (cell 's:data')
) SERVER wide OPTIONS (families 's');
CREATE TABLE sessions_heap (id uuid PRIMARY KEY, user_id int, data text);
INSERT INTO sessions_heap
SELECT md5(g::text)::uuid, g, 'session ' || g FROM generate_series(1, 200) g
UNION ALL VALUES ('00000000-0000-0000-0000-000000000000'::uuid, 0, 'nil'),
                 ('ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid, -1, 'max');
INSERT INTO sessions SELECT * FROM sessions_heap;
SELECT same('SELECT * FROM sessions', 'SELECT * FROM sessions_heap ORDER BY id');
SELECT rowkey, data FROM sessions ORDER BY rowkey DESC LIMIT 2;
SELECT * FROM sessions WHERE rowkey = 'c4ca4238-a0b9-2382-0dcc-509a6f75849b';
EXPLAIN (COSTS OFF) SELECT * FROM sessions WHERE rowkey >= 'c0000000-0000-0000-0000-000000000000' ORDER BY rowkey LIMIT 3;
SELECT q, same(replace(q, 'K', 'rowkey') || ' ORDER BY 1',
               replace(replace(q, 'sessions', 'sessions_heap'), 'K', 'id') || ' ORDER BY 1')
  FROM unnest(ARRAY[
    'SELECT * FROM sessions WHERE K = md5(''7'')::uuid',
    'SELECT * FROM sessions WHERE K < ''10000000-0000-0000-0000-000000000000''',
    'SELECT * FROM sessions WHERE K > ''fe000000-0000-0000-0000-000000000000''',
    'SELECT * FROM sessions WHERE K BETWEEN ''40000000-0000-0000-0000-000000000000'' AND ''48000000-0000-0000-0000-000000000000''',
    'SELECT * FROM sessions WHERE K IN (md5(''1'')::uuid, md5(''2'')::uuid, md5(''999'')::uuid, NULL)',
    'SELECT * FROM sessions WHERE K = ANY (ARRAY[md5(''3'')::uuid, ''ffffffff-ffff-ffff-ffff-ffffffffffff''])',
    'SELECT * FROM sessions WHERE K <= ''00000000-0000-0000-0000-000000000000'' OR K >= ''f8000000-0000-0000-0000-000000000000''',
    'SELECT count(*), sum(user_id) FROM sessions WHERE K >= ''80000000-0000-0000-0000-000000000000'''
  ]) q;
CREATE TABLE session_picks AS SELECT md5(g::text)::uuid AS id FROM generate_series(195, 205) g;
ANALYZE session_picks, sessions;
SET enable_hashjoin = off; SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT s.data FROM session_picks p JOIN sessions s ON s.rowkey = p.id;
SELECT same('SELECT s.data FROM session_picks p JOIN sessions s ON s.rowkey = p.id ORDER BY 1',
            'SELECT s.data FROM session_picks p JOIN sessions_heap s ON s.id = p.id ORDER BY 1');
RESET enable_hashjoin; RESET enable_mergejoin;
UPDATE sessions SET data = data || '!' WHERE rowkey < '20000000-0000-0000-0000-000000000000';
UPDATE sessions_heap SET data = data || '!' WHERE id < '20000000-0000-0000-0000-000000000000';
DELETE FROM sessions WHERE rowkey IN (md5('10')::uuid, md5('11')::uuid);
DELETE FROM sessions_heap WHERE id IN (md5('10')::uuid, md5('11')::uuid);
INSERT INTO sessions VALUES (md5('12')::uuid, 12, 'again'), (md5('11')::uuid, 11, 'back') ON CONFLICT DO NOTHING;
INSERT INTO sessions_heap VALUES (md5('12')::uuid, 12, 'again'), (md5('11')::uuid, 11, 'back') ON CONFLICT DO NOTHING;
SELECT same('SELECT * FROM sessions', 'SELECT * FROM sessions_heap ORDER BY id');
CREATE FOREIGN TABLE sessions_int (rowkey int, family text, value bytea) SERVER wide OPTIONS (store 'sessions');
SELECT * FROM sessions_int LIMIT 1;
DROP FOREIGN TABLE sessions_int, sessions;
DROP TABLE sessions_heap, session_picks;

-- bad input
CREATE FOREIGN TABLE bad_key (rowkey numeric, v text OPTIONS (cell 'f:v')) SERVER wide OPTIONS (families 'f');
CREATE FOREIGN TABLE bad_key (rowkey int[], family text, value text) SERVER wide OPTIONS (families 'f');
INSERT INTO accounts VALUES (NULL, 1, 1, 'x');

DROP FOREIGN TABLE accounts_bytes, accounts_big, big_keys, small_keys;
DROP DOMAIN account_id;
DROP FOREIGN TABLE accounts;
DROP TABLE accounts_heap, picks;
DROP FUNCTION same(text, text), fuzz(int), rnd_cond(int), rnd_key();
