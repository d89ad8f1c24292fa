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

RESET timezone;
DROP FOREIGN TABLE tb, tt, tz, tint, tjson, tmisc, tarr, tdom;
DROP DOMAIN rk;
