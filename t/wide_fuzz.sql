-- t/wide_fuzz.sql -- the functions of t/110_wide_fuzz.sh: random statements run on a wide
-- table (through a view of one key prefix, so that sessions work side by side on one store) and
-- on an ordinary table with the same rows, whose results are compared.
--
-- Settings of the session: fz.p the key prefix; fz.w the wide view, fz.h the ordinary table,
-- fz.k an ordinary table of some of the keys (for joins).  With fz.kind = 'int' the rowkey is a
-- bigint and key n is fz.base + n (a session's view holds fz.base to fz.base + 999): the same
-- statements then run on an integer-keyed wide table, their text-only shapes (LIKE, ||) in an
-- integer's terms (fz_prefix_cond, fz_derive).  The ordinary table models the wide
-- table's documented rules (doc/SQL.md, "Wide tables"): an INSERT of an existing rowkey is a put
-- (NULL columns keep their cells, a jsonb family object adds its qualifiers); a row whose columns
-- are all NULL does not exist; an UPDATE of the rowkey replaces the row at the new rowkey.
CREATE OR REPLACE FUNCTION fz_int() RETURNS bool LANGUAGE sql AS $$ SELECT coalesce(current_setting('fz.kind', true), '') = 'int' $$;
CREATE OR REPLACE FUNCTION fz_key(n int) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN fz_int() THEN (current_setting('fz.base')::numeric + n)::text
              ELSE current_setting('fz.p') || 'k' || lpad(n::text, 3, '0') END $$;
-- the rowkey's type, for a parameter's cast
CREATE OR REPLACE FUNCTION fz_keytype() RETURNS text LANGUAGE sql AS $$ SELECT CASE WHEN fz_int() THEN 'bigint' ELSE 'text' END $$;
-- a key no session uses
CREATE OR REPLACE FUNCTION fz_nokey() RETURNS text LANGUAGE sql AS $$ SELECT CASE WHEN fz_int() THEN '9223372036854775807' ELSE 'zzz' END $$;
-- the keys whose number has n's tens: a LIKE of a prefix, or a half-open range of integers
CREATE OR REPLACE FUNCTION fz_prefix_cond(n int) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN fz_int() THEN format('rowkey >= %L AND rowkey < %L', fz_key(n / 10 * 10), fz_key(n / 10 * 10 + 10))
              ELSE format('rowkey LIKE %L', current_setting('fz.p') || 'k' || lpad((n / 10)::text, 2, '0') || '%') END $$;
-- a new key made of the key expression e, within the session's view
CREATE OR REPLACE FUNCTION fz_derive(e text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN fz_int() THEN e || ' + 500' ELSE e || ' || ''x''' END $$;
-- the lesser and the greater of two keys, in the key type's order
CREATE OR REPLACE FUNCTION fz_least(a text, b text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN fz_int() THEN least(a::numeric, b::numeric)::text ELSE least(a, b) END $$;
CREATE OR REPLACE FUNCTION fz_greatest(a text, b text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN fz_int() THEN greatest(a::numeric, b::numeric)::text ELSE greatest(a, b) END $$;
CREATE OR REPLACE FUNCTION fz_val(col text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r float := random();
BEGIN
  IF r < 0.25 THEN RETURN 'NULL'; END IF;
  CASE col
    WHEN 'a' THEN RETURN (floor(random()*2000)-1000)::int::text;
    WHEN 'b' THEN RETURN quote_literal(CASE WHEN random() < 0.1 THEN '' ELSE md5(random()::text) END);
    WHEN 'c' THEN RETURN quote_literal(round((random()*1000)::numeric, (random()*4)::int)::text) || '::numeric';
    WHEN 'd' THEN RETURN quote_literal(CASE (random()*4)::int WHEN 0 THEN '{"m": 1, "n": "A+"}' WHEN 1 THEN '{"q": {"z": [1, true]}}' WHEN 2 THEN '{"": 3.50}' WHEN 3 THEN '{"a": false, "b": "x y"}' ELSE '{"k": 7}' END) || '::jsonb';
    WHEN 'e' THEN RETURN quote_literal('\x' || md5(random()::text)) || '::bytea';
    ELSE RETURN quote_literal((timestamptz '2020-01-01' + random() * interval '1000 days')::text) || '::timestamptz';
  END CASE;
END $$;
-- compare: returns the number of differing rows for a query on both
CREATE OR REPLACE FUNCTION fz_diff(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint; qh text := replace(replace(q, '@T', current_setting('fz.h')), '@K', current_setting('fz.k')); qw text := replace(replace(q, '@T', current_setting('fz.w')), '@K', current_setting('fz.k'));
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x', qh, qw, qw, qh) INTO n;
  IF n <> 0 THEN RAISE WARNING 'diff % rows (plan:%): %', n, current_setting('fz.plan', true), q; END IF;
  RETURN n;
END $$;
CREATE OR REPLACE FUNCTION fz_diff_ordered(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint; qh text := replace(replace(q, '@T', current_setting('fz.h')), '@K', current_setting('fz.k')); qw text := replace(replace(q, '@T', current_setting('fz.w')), '@K', current_setting('fz.k'));
BEGIN
  EXECUTE format('SELECT count(*) FROM (SELECT row_number() over () rn, x.* FROM (%s) x) h FULL JOIN (SELECT row_number() over () rn, y.* FROM (%s) y) w ON h.rn = w.rn AND h::text = w::text WHERE h.rn IS NULL OR w.rn IS NULL', qh, qw) INTO n;
  IF n <> 0 THEN RAISE WARNING 'ordered diff % rows (plan:%): %', n, current_setting('fz.plan', true), q; END IF;
  RETURN n;
END $$;
CREATE OR REPLACE FUNCTION fz_cond() RETURNS text LANGUAGE plpgsql AS $$
DECLARE r int := (random()*12)::int; h text := current_setting('fz.h');
BEGIN
  CASE r
    WHEN 0 THEN RETURN format('rowkey = %L', fz_key((random()*199)::int));
    WHEN 1 THEN RETURN format('rowkey BETWEEN %L AND %L', fz_key((random()*100)::int), fz_key((100 + random()*99)::int));
    WHEN 2 THEN RETURN fz_prefix_cond((random()*199)::int);
    WHEN 3 THEN RETURN format('rowkey IN (%L, %L, %L)', fz_key((random()*199)::int), fz_key((random()*199)::int), fz_key((random()*199)::int));
    WHEN 4 THEN RETURN format('a > %s', (random()*2000 - 1000)::int);
    WHEN 5 THEN RETURN 'b IS NULL';
    WHEN 6 THEN RETURN format('rowkey >= %L AND a IS NOT NULL', fz_key((random()*199)::int));
    WHEN 7 THEN RETURN 'd ? ''m''';
    WHEN 8 THEN RETURN format('rowkey < %L OR c > 500', fz_key((random()*199)::int));
    -- cell filters (scan.c): = on a cell column, the value one of the ordinary table's
    WHEN 9 THEN RETURN format('a = (SELECT a FROM %I WHERE a IS NOT NULL ORDER BY 1 LIMIT 1 OFFSET %s)', h, (random()*20)::int);
    WHEN 10 THEN RETURN format('b = (SELECT b FROM %I WHERE b IS NOT NULL ORDER BY 1 LIMIT 1 OFFSET %s) AND e IS NOT NULL', h, (random()*20)::int);
    WHEN 11 THEN RETURN format('f = (SELECT f FROM %I ORDER BY 1 LIMIT 1 OFFSET %s) OR e = (SELECT e FROM %I ORDER BY 1 DESC NULLS LAST LIMIT 1)', h, (random()*20)::int, h);
    ELSE RETURN format('rowkey = %L', fz_key((random()*199)::int));
  END CASE;
END $$;
CREATE OR REPLACE FUNCTION fz_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE t text; BEGIN EXECUTE format('WITH u AS (%s) SELECT string_agg(u::text, %L ORDER BY u::text) FROM u', q, E'\n') INTO t; RETURN coalesce(t, ''); END $$;
-- random planner settings (join methods, materialization, sorts), so that the wide table is
-- read and written under other plans than its usual ones (nested loops that scan it again for
-- each outer row, merge joins over its ordered scans); returns the settings changed, '' if none
CREATE OR REPLACE FUNCTION fz_plan() RETURNS text LANGUAGE plpgsql AS $$
DECLARE g text; d text := '';
BEGIN
  -- a disabled plan node costs 1e10, far above jit_above_cost: every such query would be
  -- compiled (0.3-0.8 s each)
  PERFORM set_config('jit', 'off', false);
  FOREACH g IN ARRAY ARRAY['enable_hashjoin', 'enable_mergejoin', 'enable_nestloop', 'enable_material', 'enable_sort', 'enable_hashagg'] LOOP
    IF random() < 0.3 THEN
      PERFORM set_config(g, 'off', false);
      d := d || ' ' || g || '=off';
    ELSE
      PERFORM set_config(g, 'on', false);
    END IF;
  END LOOP;
  RETURN d;
END $$;
CREATE OR REPLACE FUNCTION fz_plan_reset() RETURNS void LANGUAGE plpgsql AS $$
DECLARE g text;
BEGIN
  FOREACH g IN ARRAY ARRAY['enable_hashjoin', 'enable_mergejoin', 'enable_nestloop', 'enable_material', 'enable_sort', 'enable_hashagg'] LOOP
    PERFORM set_config(g, 'on', false);
  END LOOP;
END $$;
-- fz_rows(q) on the wide table, under fz_plan()'s settings; they go into the setting fz.plan
CREATE OR REPLACE FUNCTION fz_wide_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE t text;
BEGIN
  PERFORM set_config('fz.plan', fz_plan(), false);
  t := fz_rows(q);
  PERFORM fz_plan_reset();
  RETURN t;
END $$;
-- one random operation on both tables; returns a description
CREATE OR REPLACE FUNCTION fz_op() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r int := (random()*9)::int; cols text[] := ARRAY['a','b','c','d','e','f'];
  k text; k2 text; vals text[]; v text; i int; sets text := ''; hsets text := ''; cond text; rh text; rw text; allnull bool := true;
  st text; nw bigint; nh bigint;
BEGIN
  IF r <= 2 THEN   -- insert (put)
    k := fz_key((random()*199)::int);
    FOR i IN 1..6 LOOP v := fz_val(cols[i]); vals[i] := v; IF v <> 'NULL' THEN allnull := false; END IF; END LOOP;
    IF allnull THEN
      BEGIN
        EXECUTE format('INSERT INTO %I VALUES (%L, %s)', current_setting('fz.w'), k, array_to_string(vals, ','));
        RAISE EXCEPTION 'fz: all-NULL insert accepted';
      EXCEPTION WHEN not_null_violation THEN NULL;
      END;
      RETURN 'insert all null ' || k;
    END IF;
    IF random() < 0.2 THEN
      -- a put if absent: the ordinary table's own ON CONFLICT DO NOTHING
      st := format('INSERT INTO @T VALUES (%L, %s) ON CONFLICT DO NOTHING RETURNING rowkey, a, b, c::text, d::text, e, f', k, array_to_string(vals, ','));
      rw := fz_wide_rows(replace(st, '@T', current_setting('fz.w')));
      rh := fz_rows(replace(st, '@T', current_setting('fz.h')));
      IF rw IS DISTINCT FROM rh THEN RAISE EXCEPTION 'fz: INSERT ON CONFLICT DO NOTHING differs: % | wide:% | heap:%', st, rw, rh; END IF;
      RETURN 'insert if absent ' || k;
    END IF;
    IF random() < 0.3 THEN
      EXECUTE format('INSERT INTO %I VALUES (%L, %s) RETURNING *', current_setting('fz.w'), k, array_to_string(vals, ',')) INTO rw;
    ELSE
      EXECUTE format('INSERT INTO %I VALUES (%L, %s)', current_setting('fz.w'), k, array_to_string(vals, ','));
    END IF;
    EXECUTE format('INSERT INTO %I AS fh VALUES (%L, %s) ON CONFLICT (rowkey) DO UPDATE SET a = coalesce(EXCLUDED.a, fh.a), b = coalesce(EXCLUDED.b, fh.b), c = coalesce(EXCLUDED.c, fh.c), d = CASE WHEN EXCLUDED.d IS NULL THEN fh.d ELSE coalesce(fh.d, ''{}'') || EXCLUDED.d END, e = coalesce(EXCLUDED.e, fh.e), f = coalesce(EXCLUDED.f, fh.f)', current_setting('fz.h'), k, array_to_string(vals, ','));
    RETURN 'insert ' || k;
  ELSIF r <= 5 THEN  -- update
    FOR i IN 1..6 LOOP
      IF random() < 0.35 THEN
        IF cols[i] = 'a' AND random() < 0.5 THEN v := 'a + 1'; ELSE v := fz_val(cols[i]); END IF;
        sets := sets || CASE WHEN sets = '' THEN '' ELSE ', ' END || cols[i] || ' = ' || v;
      END IF;
    END LOOP;
    IF sets = '' THEN sets := 'b = ' || fz_val('b'); END IF;
    IF random() < 0.4 THEN
      -- by rowkey, no RETURNING: the direct update (src/direct.c) when SET reads nothing of the row
      k := fz_key((random()*199)::int);
      cond := CASE WHEN random() < 0.5 THEN format('rowkey = %L', k)
                   ELSE format('rowkey IN (%L, %L)', k, fz_key((random()*199)::int)) END;
      EXECUTE format('UPDATE %I SET %s WHERE %s', current_setting('fz.w'), sets, cond);
      GET DIAGNOSTICS nw = ROW_COUNT;
      EXECUTE format('UPDATE %I SET %s WHERE %s', current_setting('fz.h'), sets, cond);
      GET DIAGNOSTICS nh = ROW_COUNT;
      EXECUTE format('DELETE FROM %I WHERE a IS NULL AND b IS NULL AND c IS NULL AND d IS NULL AND e IS NULL AND f IS NULL', current_setting('fz.h'));
      IF nw <> nh THEN RAISE EXCEPTION 'fz: UPDATE by rowkey counts differ: UPDATE SET % WHERE % | wide:% | heap:%', sets, cond, nw, nh; END IF;
      RETURN 'update by rowkey ' || sets || ' where ' || cond;
    END IF;
    cond := fz_cond();
    st := format('UPDATE @T SET %s WHERE %s RETURNING rowkey, a, b, c::text, d::text, e, f', sets, cond);
    rw := fz_wide_rows(replace(st, '@T', current_setting('fz.w')));
    rh := fz_rows(replace(st, '@T', current_setting('fz.h')));
    EXECUTE format('DELETE FROM %I WHERE a IS NULL AND b IS NULL AND c IS NULL AND d IS NULL AND e IS NULL AND f IS NULL', current_setting('fz.h'));
    IF rw IS DISTINCT FROM rh THEN RAISE EXCEPTION 'fz: UPDATE RETURNING differs (plan:%): % | wide:% | heap:%', current_setting('fz.plan', true), st, rw, rh; END IF;
    RETURN 'update ' || sets || ' where ' || cond;
  ELSIF r <= 7 THEN  -- delete
    cond := fz_cond();
    st := format('DELETE FROM @T WHERE %s RETURNING rowkey, a, b, c::text, d::text, e, f', cond);
    rw := fz_wide_rows(replace(st, '@T', current_setting('fz.w')));
    rh := fz_rows(replace(st, '@T', current_setting('fz.h')));
    IF rw IS DISTINCT FROM rh THEN RAISE EXCEPTION 'fz: DELETE RETURNING differs (plan:%): % | wide:% | heap:%', current_setting('fz.plan', true), st, rw, rh; END IF;
    RETURN 'delete where ' || cond;
  ELSIF r = 8 AND random() < 0.6 THEN  -- other statement shapes
    i := (random()*5)::int;
    IF i = 0 THEN  -- UPDATE ... FROM a join
      st := 'UPDATE @T t SET a = coalesce(t.a, 0) + 10, b = k.rowkey FROM @K k WHERE t.rowkey = k.rowkey AND (' || replace(fz_cond(), 'rowkey', 't.rowkey') || ') RETURNING t.rowkey, t.a, t.b';
    ELSIF i = 1 THEN  -- DELETE ... USING
      st := 'DELETE FROM @T t USING @K k WHERE t.rowkey = k.rowkey AND t.a > ' || (random()*2000 - 1000)::int || ' RETURNING t.rowkey, t.d::text';
    ELSIF i = 2 THEN  -- jsonb read-modify-write
      st := 'UPDATE @T SET d = ' || CASE WHEN random() < 0.5 THEN 'd - ''m''' ELSE 'coalesce(d, ''{}'') || ''{"w": [2]}''' END || ' WHERE ' || fz_cond() || ' RETURNING rowkey, d::text';
    ELSIF i = 3 AND random() < 0.3 THEN  -- INSERT ... SELECT ... ON CONFLICT DO NOTHING
      k := fz_key((random()*150)::int);
      st := format('INSERT INTO @T SELECT CASE WHEN b IS NULL THEN rowkey ELSE %s END, a, b, c, d, e, f FROM @T WHERE rowkey BETWEEN %L AND %L AND a IS NOT NULL ON CONFLICT DO NOTHING RETURNING rowkey', fz_derive('rowkey'), k, fz_key(199));
    ELSIF i = 3 THEN  -- INSERT ... SELECT of several rows (a put each)
      k := fz_key((random()*150)::int);
      st := format('INSERT INTO @T SELECT %s, a, b, c, d, e, f FROM @T WHERE rowkey BETWEEN %L AND %L AND a IS NOT NULL', fz_derive('rowkey'), k, fz_key(199));
      rw := fz_wide_rows(replace(st, '@T', current_setting('fz.w')) || ' RETURNING rowkey');
      st := format('INSERT INTO %I AS fh SELECT %s, a, b, c, d, e, f FROM %I WHERE rowkey BETWEEN %L AND %L AND a IS NOT NULL ON CONFLICT (rowkey) DO UPDATE SET a = coalesce(EXCLUDED.a, fh.a), b = coalesce(EXCLUDED.b, fh.b), c = coalesce(EXCLUDED.c, fh.c), d = CASE WHEN EXCLUDED.d IS NULL THEN fh.d ELSE coalesce(fh.d, ''{}'') || EXCLUDED.d END, e = coalesce(EXCLUDED.e, fh.e), f = coalesce(EXCLUDED.f, fh.f) RETURNING rowkey',
                   current_setting('fz.h'), fz_derive('rowkey'), current_setting('fz.h'), k, fz_key(199));
      rh := fz_rows(st);
      IF rw IS DISTINCT FROM rh THEN RAISE EXCEPTION 'fz: INSERT SELECT RETURNING differs (plan:%): % | wide:% | heap:%', current_setting('fz.plan', true), st, rw, rh; END IF;
      RETURN 'insert select from ' || k;
    ELSIF i = 4 THEN  -- a parameter
      k := fz_key((random()*199)::int);
      EXECUTE format('UPDATE %I SET c = $1, a = $2 WHERE rowkey = $3::%s OR rowkey = $4::%s', current_setting('fz.w'), fz_keytype(), fz_keytype()) USING 1.25, 7, k, fz_key(3);
      EXECUTE format('UPDATE %I SET c = $1, a = $2 WHERE rowkey = $3::%s OR rowkey = $4::%s', current_setting('fz.h'), fz_keytype(), fz_keytype()) USING 1.25, 7, k, fz_key(3);
      RETURN 'update with params ' || k;
    ELSE  -- SELECT FOR UPDATE then a delete of what it locked
      st := 'DELETE FROM @T WHERE rowkey IN (SELECT rowkey FROM @T WHERE ' || fz_cond() || ' ORDER BY rowkey LIMIT 2 FOR UPDATE) RETURNING rowkey';
    END IF;
    rw := fz_wide_rows(replace(replace(st, '@T', current_setting('fz.w')), '@K', current_setting('fz.k')));
    -- The heap's answer to the locking subquery's shape depends on its plan: a nested loop
    -- that runs the subquery again for each row skips the rows the DELETE already deleted
    -- and locks the next ones (doc/SQL.md: "A locking scan sees the rows as its statement
    -- began"); ours never depends on the plan, and is the heap's under any other join.
    IF st LIKE '%FOR UPDATE%' THEN PERFORM set_config('enable_nestloop', 'off', false); END IF;
    rh := fz_rows(replace(replace(st, '@T', current_setting('fz.h')), '@K', current_setting('fz.k')));
    PERFORM set_config('enable_nestloop', 'on', false);
    EXECUTE format('UPDATE %I SET d = NULL WHERE d = ''{}''', current_setting('fz.h'));
    EXECUTE format('DELETE FROM %I WHERE a IS NULL AND b IS NULL AND c IS NULL AND d IS NULL AND e IS NULL AND f IS NULL', current_setting('fz.h'));
    IF rw IS DISTINCT FROM rh THEN RAISE EXCEPTION 'fz: RETURNING differs (plan:%): % | wide:% | heap:%', current_setting('fz.plan', true), st, rw, rh; END IF;
    RETURN 'shape ' || i || ': ' || st;
  ELSE  -- move a rowkey
    k := fz_key((random()*199)::int); k2 := fz_key((random()*199)::int);
    IF k = k2 THEN RETURN 'noop'; END IF;
    EXECUTE format('UPDATE %I SET rowkey = %L WHERE rowkey = %L', current_setting('fz.w'), k2, k);
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE rowkey = %L)', current_setting('fz.h'), k) INTO allnull;
    IF allnull THEN
      EXECUTE format('DELETE FROM %I WHERE rowkey = %L', current_setting('fz.h'), k2);
      EXECUTE format('UPDATE %I SET rowkey = %L WHERE rowkey = %L', current_setting('fz.h'), k2, k);
    END IF;
    RETURN 'move ' || k || ' -> ' || k2;
  END IF;
END $$;
CREATE OR REPLACE FUNCTION fz_check() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint := 0; n1 int := (random()*199)::int; k1 text := fz_key(n1); k2 text := fz_key((random()*199)::int); lim int := 1 + (random()*30)::int;
BEGIN
  PERFORM set_config('fz.plan', fz_plan(), false);
  n := n + fz_diff('SELECT rowkey, a, b, c::text, d::text, e, f FROM @T');
  n := n + fz_diff('SELECT rowkey, d::text FROM @T');
  n := n + fz_diff('SELECT rowkey, a FROM @T');
  n := n + fz_diff('SELECT rowkey, c::text, e FROM @T');
  n := n + fz_diff('SELECT rowkey FROM @T');
  n := n + fz_diff('SELECT count(*), count(a), sum(a), count(d), count(e), max(f) FROM @T');
  n := n + fz_diff(format('SELECT rowkey, a, b, d::text FROM @T WHERE rowkey = %L', k1));
  n := n + fz_diff(format('SELECT rowkey, a, b, f FROM @T WHERE rowkey BETWEEN %L AND %L', fz_least(k1, k2), fz_greatest(k1, k2)));
  n := n + fz_diff(format('SELECT * FROM @T WHERE %s', fz_prefix_cond(n1)));
  n := n + fz_diff(format('SELECT rowkey, b FROM @T WHERE rowkey IN (%L, %L, %L, %L)', k1, k2, fz_key(0), fz_nokey()));
  n := n + fz_diff(format('SELECT rowkey, a FROM @T WHERE a > %s', (random()*2000 - 1000)::int));
  n := n + fz_diff('SELECT rowkey, a FROM @T WHERE d IS NULL');
  n := n + fz_diff('SELECT t.rowkey, t.a, t.d::text FROM @K k JOIN @T t ON t.rowkey = k.rowkey');
  n := n + fz_diff('SELECT k.rowkey, t.b FROM @K k LEFT JOIN @T t ON t.rowkey = k.rowkey');
  n := n + fz_diff_ordered(format('SELECT rowkey, a, c::text FROM @T WHERE rowkey > %L ORDER BY rowkey LIMIT %s', k1, lim));
  n := n + fz_diff_ordered(format('SELECT rowkey, e FROM @T WHERE rowkey < %L ORDER BY rowkey DESC LIMIT %s', k1, lim));
  n := n + fz_diff_ordered('SELECT rowkey, f FROM @T ORDER BY rowkey');
  PERFORM fz_plan_reset();
  RETURN n;
END $$;
-- One step of a transaction: a statement, or (below depth 3) a block of one or two steps
-- that is rolled back or that commits, so that savepoints nest: a level rolled back inside
-- one that commits and the other way round, each writing into the batches of the levels
-- around it (src/store.c's marks).  Returns what it did, for the failure message.
CREATE OR REPLACE FUNCTION fz_step(depth int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE log text := ''; n bigint;
BEGIN
  IF depth < 3 AND random() < 0.2 THEN
    BEGIN
      log := ' [in a savepoint rolled back:' || fz_step(depth + 1);
      IF random() < 0.5 THEN log := log || fz_step(depth + 1); END IF;
      IF random() < 0.2 THEN
        n := fz_check();
        IF n <> 0 THEN RAISE EXCEPTION 'fz: % rows differ in a savepoint, after%]', n, log; END IF;
      END IF;
      RAISE EXCEPTION 'fz_rollback';
    EXCEPTION WHEN raise_exception THEN
      IF SQLERRM <> 'fz_rollback' THEN RAISE; END IF;
    END;
    RETURN log || ']';
  ELSIF depth < 3 AND random() < 0.25 THEN
    BEGIN   -- a subtransaction that commits (its writes join its parent's)
      log := ' [in a subtransaction:' || fz_step(depth + 1);
      IF random() < 0.5 THEN log := log || fz_step(depth + 1); END IF;
    EXCEPTION WHEN division_by_zero THEN NULL;
    END;
    RETURN log || ']';
  END IF;
  RETURN ' [' || fz_op() || ']';
END $$;
