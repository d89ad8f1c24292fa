--
-- types: bytea keys, timestamptz ts, values of any type through their binary form
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

-- bytea rowkey and qualifier: any bytes, byte order
CREATE FOREIGN TABLE tb (rowkey bytea, family text, qualifier bytea, ts bigint, value bytea)
    SERVER wide OPTIONS (families 'f');
INSERT INTO tb VALUES
    ('\x00', 'f', '\x', 1, '\x'),
    ('\xff', 'f', '\x00ff', 1, '\xdeadbeef'),
    ('\x7f', 'f', '\xff', 1, '\x00'),
    ('\x00ff', 'f', '\x01', 1, '\x01'),
    ('\xffff', 'f', '\x01', 1, '\x02');
SELECT rowkey, qualifier, value, length(value) FROM tb;
SELECT rowkey FROM tb WHERE rowkey > '\x00' AND rowkey <= '\xff';
SELECT rowkey FROM tb WHERE rowkey LIKE '\xff'::bytea || '%'::bytea;
SELECT rowkey, qualifier FROM tb WHERE qualifier IN ('\x01', '\x');

-- text is stored as its bytes in the database encoding
CREATE FOREIGN TABLE tt (rowkey text COLLATE "C", value text) SERVER wide OPTIONS (families 'f');
INSERT INTO tt VALUES ('héllo', 'wörld'), ('a', '');
SELECT rowkey, value, octet_length(rowkey) AS bytes, value = '' AS empty FROM tt;

-- timestamptz ts: milliseconds
CREATE FOREIGN TABLE tz (rowkey text, family text, qualifier text, ts timestamptz, value text)
    SERVER wide OPTIONS (families 'f', max_versions '0');
SET timezone = 'UTC';
INSERT INTO tz VALUES
    ('r', 'f', 'q', '2024-01-01 00:00:00+00', 'new year'),
    ('r', 'f', 'q', '2024-01-01 00:00:00.123456+00', 'kept to the ms'),
    ('r', 'f', 'q', '1969-12-31 23:59:59.9995+00', 'before the epoch'),
    ('r', 'f', 'q', '2023-06-15 12:00:00+02', 'summer');
SELECT ts, value FROM tz;
SELECT value FROM tz WHERE ts = '2024-01-01 00:00:00+00';
SELECT value FROM tz WHERE ts = '2024-01-01 00:00:00.123+00';
SELECT value FROM tz WHERE ts = '2024-01-01 00:00:00.123456+00';  -- the stored value has ms only
SELECT value FROM tz WHERE ts > '2024-01-01 00:00:00.1229+00';
SELECT value FROM tz WHERE ts < '2024-01-01 00:00:00.1231+00' AND ts >= '2024-01-01';
SELECT value FROM tz WHERE ts BETWEEN '2023-01-01' AND '2023-12-31';
SELECT value FROM tz WHERE ts < '1970-01-01';
SELECT value FROM tz WHERE ts < 'infinity' AND ts > '-infinity' ORDER BY value;
SELECT count(*) FROM tz WHERE ts > 'infinity';
INSERT INTO tz VALUES ('r', 'f', 'q', 'infinity', 'never');  -- ERROR
-- the cells hold milliseconds since the Unix epoch
SELECT (extract(epoch FROM ts) * 1000)::bigint AS ms FROM tz ORDER BY 1;

-- values of other types, stored in their binary send/receive form
CREATE FOREIGN TABLE tint (rowkey text, qualifier text, value int) SERVER wide OPTIONS (families 'f');
INSERT INTO tint VALUES ('a', 'x', 1), ('a', 'y', -2147483648), ('b', 'x', 42);
SELECT rowkey, qualifier, value, value + 1 AS plus_one FROM tint WHERE value > 0 OR value < -1000;
SELECT sum(value::bigint) FROM tint;

CREATE FOREIGN TABLE tjson (rowkey text, value jsonb) SERVER wide OPTIONS (families 'f');
INSERT INTO tjson VALUES ('doc1', '{"a": [1, 2, {"b": null}], "c": "d"}'), ('doc2', '[]');
SELECT rowkey, value, value -> 'a' -> 2 AS a2, jsonb_typeof(value) FROM tjson;

CREATE FOREIGN TABLE tmisc (rowkey text, qualifier text, value numeric) SERVER wide OPTIONS (families 'f');
INSERT INTO tmisc VALUES ('pi', 'v', 3.14159265358979323846264338327950288), ('nan', 'v', 'NaN'), ('big', 'v', 1e100);
SELECT * FROM tmisc;

CREATE FOREIGN TABLE tarr (rowkey varchar(10), value text[]) SERVER wide OPTIONS (families 'f');
INSERT INTO tarr VALUES ('k1', ARRAY['x', NULL, 'z']), ('k2', '{}');
SELECT rowkey, value, array_length(value, 1) FROM tarr WHERE rowkey = 'k1' OR rowkey = 'k2';

-- a domain over text as rowkey
CREATE DOMAIN rk AS text CHECK (VALUE <> 'bad');
CREATE FOREIGN TABLE tdom (rowkey rk, value text) SERVER wide OPTIONS (families 'f');
INSERT INTO tdom VALUES ('good', 'ok');
INSERT INTO tdom VALUES ('bad', 'no');  -- ERROR
SELECT * FROM tdom WHERE rowkey = 'good';

-- a session's client_encoding does not reach the stored bytes: the binary forms
-- of char(n), jsonb and text[] hold text that their send and receive functions
-- convert for a client, which a store must not (a LATIN1 session wrote bytes a
-- UTF8 one could not read); the same value written from both is stored alike
CREATE FOREIGN TABLE tenc (rowkey text, family text, qualifier text, value bytea)
    SERVER wide OPTIONS (families 'f');
CREATE FOREIGN TABLE tenc_b (rowkey text, family text, qualifier text, value char(3))
    SERVER wide OPTIONS (store 'tenc');
CREATE FOREIGN TABLE tenc_j (rowkey text, family text, qualifier text, value jsonb)
    SERVER wide OPTIONS (store 'tenc');
CREATE FOREIGN TABLE tenc_a (rowkey text, family text, qualifier text, value text[])
    SERVER wide OPTIONS (store 'tenc');
SET client_encoding = 'LATIN1';
INSERT INTO tenc_b VALUES ('latin1', 'f', 'b', convert_from('\xe9'::bytea, 'LATIN1'));
INSERT INTO tenc_j VALUES ('latin1', 'f', 'j', jsonb_build_object('a', convert_from('\xe9'::bytea, 'LATIN1')));
INSERT INTO tenc_a VALUES ('latin1', 'f', 'a', ARRAY[convert_from('\xe9'::bytea, 'LATIN1')]);
SELECT rowkey, convert_to(value::text, 'UTF8') AS j FROM tenc_j WHERE qualifier = 'j';
RESET client_encoding;
INSERT INTO tenc_b VALUES ('utf8', 'f', 'b', convert_from('\xc3a9'::bytea, 'UTF8'));
INSERT INTO tenc_j VALUES ('utf8', 'f', 'j', jsonb_build_object('a', convert_from('\xc3a9'::bytea, 'UTF8')));
INSERT INTO tenc_a VALUES ('utf8', 'f', 'a', ARRAY[convert_from('\xc3a9'::bytea, 'UTF8')]);
SELECT rowkey, convert_to(value::text, 'UTF8') AS b, octet_length(value) FROM tenc_b WHERE qualifier = 'b' ORDER BY rowkey;
SELECT rowkey, convert_to(value::text, 'UTF8') AS j FROM tenc_j WHERE qualifier = 'j' ORDER BY rowkey;
SELECT rowkey, convert_to(value[1], 'UTF8') AS a FROM tenc_a WHERE qualifier = 'a' ORDER BY rowkey;
SELECT qualifier, count(DISTINCT value) AS stored_forms FROM tenc GROUP BY qualifier ORDER BY qualifier;
-- char(n) as it stores it: ASCII of its length, shorter, longer, wider characters
CREATE FOREIGN TABLE tenc_c5 (rowkey text, family text, qualifier text, value char(5))
    SERVER wide OPTIONS (store 'tenc');
INSERT INTO tenc VALUES
    ('c', 'f', '5', 'abcde'), ('c', 'f', '3', 'abc'), ('c', 'f', '7', 'abcde  '),
    ('c', 'f', '8', 'abcdefgh'), ('c', 'f', 'w', '\xc3a9c3a9');
SELECT qualifier, format('[%s]', value) AS value, octet_length(value) FROM tenc_c5
    WHERE rowkey = 'c' AND qualifier IN ('3', '5', '7', 'w') ORDER BY qualifier;
SELECT value FROM tenc_c5 WHERE rowkey = 'c' AND qualifier = '8';  -- ERROR: too long for char(5)
DROP FOREIGN TABLE tenc_b, tenc_j, tenc_a, tenc_c5;
DROP FOREIGN TABLE tenc;

RESET timezone;
DROP FOREIGN TABLE tb, tt, tz, tint, tjson, tmisc, tarr, tdom;
DROP DOMAIN rk;
