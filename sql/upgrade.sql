--
-- upgrade: the extension's SQL objects from version 1.0 to 1.1 (ALTER EXTENSION
-- widecol_fdw UPDATE), with a table written under 1.0; the objects an updated 1.0
-- has are those a fresh install has
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
RESET client_min_messages;
SELECT extversion FROM pg_extension WHERE extname = 'widecol_fdw';
SELECT pg_describe_object(classid, objid, 0) AS object
  FROM pg_depend
 WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'widecol_fdw') AND deptype = 'e'
 ORDER BY 1;

\set here :DBNAME
CREATE DATABASE widecol_upgrade;
\c widecol_upgrade
CREATE EXTENSION widecol_fdw VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'widecol_fdw';
SELECT count(*) AS shared_memory_functions FROM pg_proc WHERE proname = 'widecol_shared_memory';
CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE FOREIGN TABLE up (rowkey text, family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'f');
INSERT INTO up VALUES ('r1', 'f', 'q', 1, 'v1'), ('r2', 'f', 'q', 2, 'v2');
ALTER EXTENSION widecol_fdw UPDATE TO '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'widecol_fdw';
SELECT * FROM up ORDER BY rowkey;
INSERT INTO up VALUES ('r3', 'f', 'q', 3, 'v3');
SELECT widecol_flush('up');
SELECT * FROM up ORDER BY rowkey;
SELECT area, units > 0 AS sized, unit_bytes FROM widecol_shared_memory() ORDER BY area;
SELECT pg_describe_object(classid, objid, 0) AS object
  FROM pg_depend
 WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'widecol_fdw') AND deptype = 'e'
 ORDER BY 1;
ALTER EXTENSION widecol_fdw UPDATE;  -- already at the default version
\c :here
DROP DATABASE widecol_upgrade;
