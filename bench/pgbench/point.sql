-- One HBase row (10 cells) by its rowkey; @TABLE@ is replaced by bench/run.sh.
-- :nrows comes from pgbench -D nrows=N.
\set k random(0, :nrows - 1)
SELECT * FROM @TABLE@ WHERE rowkey = 'user' || lpad(:k::text, 6, '0');
