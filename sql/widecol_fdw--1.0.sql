/* widecol_fdw--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION widecol_fdw" to load this file. \quit

CREATE FUNCTION widecol_fdw_handler()
RETURNS fdw_handler
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE FUNCTION widecol_fdw_validator(text[], oid)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE FOREIGN DATA WRAPPER widecol_fdw
  HANDLER widecol_fdw_handler
  VALIDATOR widecol_fdw_validator;

-- Write the in-memory part (the logs) of a table's store to sorted files.
CREATE FUNCTION widecol_flush(regclass)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;

-- Major compaction: one sorted file per family, retention applied.
CREATE FUNCTION widecol_compact(regclass)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;

-- One row per sorted file of a table's store.
CREATE FUNCTION widecol_stats(regclass,
    OUT file text, OUT family text, OUT level int, OUT cells bigint,
    OUT bytes_on_disk bigint, OUT bytes_raw bigint,
    OUT min_rowkey bytea, OUT max_rowkey bytea,
    OUT min_ts bigint, OUT max_ts bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;

-- Loads the library before a DROP that may remove a widecol_fdw table, so
-- that its object access hook can schedule the store's removal at commit.
CREATE FUNCTION widecol_fdw_drop_guard()
RETURNS event_trigger
AS 'MODULE_PATHNAME'
LANGUAGE C;

CREATE EVENT TRIGGER widecol_fdw_drop_guard ON ddl_command_start
  WHEN TAG IN ('DROP FOREIGN TABLE', 'DROP SCHEMA', 'DROP SERVER',
               'DROP FOREIGN DATA WRAPPER', 'DROP OWNED', 'DROP EXTENSION',
               'DROP FUNCTION')
  EXECUTE FUNCTION widecol_fdw_drop_guard();

-- Refuses a widecol table whose columns are not cell fields of supported types
-- when it is defined (CREATE/ALTER FOREIGN TABLE), not at its first use.
CREATE FUNCTION widecol_fdw_check_columns()
RETURNS event_trigger
AS 'MODULE_PATHNAME'
LANGUAGE C;

CREATE EVENT TRIGGER widecol_fdw_check_columns ON ddl_command_end
  WHEN TAG IN ('CREATE FOREIGN TABLE', 'ALTER FOREIGN TABLE')
  EXECUTE FUNCTION widecol_fdw_check_columns();
