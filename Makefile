# Makefile -- widecol_fdw, a PostgreSQL 15 foreign data wrapper for wide-column data
#
#   make                 build engine/build/libwidecol_engine.a, then widecol_fdw.so
#   make install         install the extension (as root)
#   make installcheck    run the pg_regress suite, then the isolation specs, against a
#                        running server
#                        (PGHOST, PGPORT, PGUSER as usual)

MODULE_big = widecol_fdw
OBJS = \
	src/cache.o \
	src/convert.o \
	src/database.o \
	src/ddl.o \
	src/direct.o \
	src/error.o \
	src/functions.o \
	src/import.o \
	src/keys.o \
	src/modify.o \
	src/option.o \
	src/optparse.o \
	src/pushdown.o \
	src/resolve.o \
	src/scan.o \
	src/sync.o \
	src/store.o \
	src/wal.o \
	src/wide.o \
	src/widecol_fdw.o

EXTENSION = widecol_fdw
DATA = sql/widecol_fdw--1.0.sql sql/widecol_fdw--1.0--1.1.sql
PGFILEDESC = "widecol_fdw - HBase/Bigtable-style wide-column tables"

REGRESS = basic options types scan analyze pushdown pushdown_or order reverse join modify xact bulk errors functions drop differential snapshot wide intkey import twophase remote parallel compression truncate direct_delete wide_direct block_cache row_cache upgrade

# isolation specs (specs/NAME.spec, expected/NAME.out), run after REGRESS by make installcheck;
# scripts/isolation.sh runs them against an ordinary-table twin first (those that have one),
# which must give expected/ exactly (keep this list on one line: that script reads it)
ISOLATION = iso_visibility iso_statement iso_cursor iso_savepoint iso_increment iso_check_and_mutate iso_update_delete iso_row_locks iso_no_block iso_deadlock iso_timeouts iso_pg_locks iso_ssi_write_skew iso_wide iso_twophase iso_direct_delete iso_epq iso_direct_update iso_row_cache iso_tall_wide iso_insert_if_absent iso_delete_insert iso_put_delete

ENGINE_LIB = engine/build/libwidecol_engine.a
SHLIB_LINK += $(ENGINE_LIB) -llz4 -lzstd
EXTRA_CLEAN = results regression.diffs regression.out output_iso

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(OBJS): src/widecol_fdw.h engine/wc.h

$(shlib): $(ENGINE_LIB)

.PHONY: engine
$(ENGINE_LIB): engine
engine:
	$(MAKE) -C engine
