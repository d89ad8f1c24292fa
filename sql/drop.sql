--
-- drop: a store's files go with its table at commit, and stay on rollback
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

-- is there a store directory for this table OID in the database directory?
CREATE FUNCTION wc_store_exists(reloid oid) RETURNS boolean LANGUAGE sql AS $$
    SELECT EXISTS (SELECT 1 FROM pg_ls_dir('base/' || (SELECT oid FROM pg_database
                                                       WHERE datname = current_database())) d
                    WHERE d = 'widecol_' || reloid)
$$;

CREATE FOREIGN TABLE d1 (rowkey text, value text) SERVER wide OPTIONS (families 'f');
SELECT 'd1'::regclass::oid AS d1 \gset
SELECT wc_store_exists(:d1);  -- not used yet: nothing on disk
INSERT INTO d1 VALUES ('k', 'v');
SELECT wc_store_exists(:d1);

-- DROP + ROLLBACK keeps the files and the data
BEGIN;
DROP FOREIGN TABLE d1;
SELECT wc_store_exists(:d1);
ROLLBACK;
SELECT wc_store_exists(:d1);
SELECT * FROM d1;
-- DROP in a subtransaction that is rolled back
BEGIN;
SAVEPOINT s;
DROP FOREIGN TABLE d1;
ROLLBACK TO s;
COMMIT;
SELECT wc_store_exists(:d1);
SELECT * FROM d1;
-- DROP + COMMIT removes them
DROP FOREIGN TABLE d1;
SELECT wc_store_exists(:d1);

-- a table created and written in a transaction that rolls back leaves nothing
BEGIN;
CREATE FOREIGN TABLE d2 (rowkey text, value text) SERVER wide OPTIONS (families 'f');
SELECT 'd2'::regclass::oid AS d2 \gset
INSERT INTO d2 VALUES ('k', 'v');
SELECT * FROM d2;
SELECT wc_store_exists(:d2);
ROLLBACK;
SELECT wc_store_exists(:d2);
-- created and dropped in one transaction
BEGIN;
CREATE FOREIGN TABLE d3 (rowkey text, value text) SERVER wide OPTIONS (families 'f');
SELECT 'd3'::regclass::oid AS d3 \gset
INSERT INTO d3 VALUES ('k', 'v');
SELECT count(*) FROM d3;
DROP FOREIGN TABLE d3;
COMMIT;
SELECT wc_store_exists(:d3);
-- created in a subtransaction that rolls back, in a transaction that commits
BEGIN;
SAVEPOINT s;
CREATE FOREIGN TABLE d4 (rowkey text, value text) SERVER wide OPTIONS (families 'f');
SELECT 'd4'::regclass::oid AS d4 \gset
SELECT count(*) FROM d4;
ROLLBACK TO s;
COMMIT;
SELECT wc_store_exists(:d4);

-- DROP SCHEMA ... CASCADE and DROP SERVER ... CASCADE
CREATE SCHEMA wc_s;
CREATE FOREIGN TABLE wc_s.d5 (rowkey text, value text) SERVER wide OPTIONS (families 'f');
SELECT 'wc_s.d5'::regclass::oid AS d5 \gset
INSERT INTO wc_s.d5 VALUES ('k', 'v');
SET client_min_messages = warning;
DROP SCHEMA wc_s CASCADE;
RESET client_min_messages;
SELECT wc_store_exists(:d5);
CREATE SERVER wide2 FOREIGN DATA WRAPPER widecol_fdw;
CREATE FOREIGN TABLE d6 (rowkey text, value text) SERVER wide2 OPTIONS (families 'f');
SELECT 'd6'::regclass::oid AS d6 \gset
INSERT INTO d6 VALUES ('k', 'v');
BEGIN;
SET LOCAL client_min_messages = warning;
DROP SERVER wide2 CASCADE;
ROLLBACK;
SELECT wc_store_exists(:d6), (SELECT count(*) FROM d6);
SET client_min_messages = warning;
DROP SERVER wide2 CASCADE;
RESET client_min_messages;
SELECT wc_store_exists(:d6);

-- TRUNCATE keeps the directory (an empty store) and follows the transaction
CREATE FOREIGN TABLE d7 (rowkey text, value text) SERVER wide OPTIONS (families 'f');
INSERT INTO d7 VALUES ('k', 'v');
BEGIN;
TRUNCATE d7;
ROLLBACK;
SELECT * FROM d7;

-- DROP EXTENSION ... CASCADE from a new session that has not loaded the
-- library yet: the event trigger loads it, so the stores still go
CREATE FOREIGN TABLE d8 (rowkey text, value text) SERVER wide OPTIONS (families 'f');
SELECT 'd8'::regclass::oid AS d8, 'd7'::regclass::oid AS d7 \gset
INSERT INTO d8 VALUES ('k', 'v');
\c
SELECT wc_store_exists(:d7), wc_store_exists(:d8);
SET client_min_messages = warning;
DROP EXTENSION widecol_fdw CASCADE;
RESET client_min_messages;
SELECT wc_store_exists(:d7), wc_store_exists(:d8);
SELECT count(*) FROM pg_ls_dir('base/' || (SELECT oid FROM pg_database WHERE datname = current_database())) d
 WHERE d LIKE 'widecol%';

DROP FUNCTION wc_store_exists(oid);
