-- bench/gen.sql -- the benchmark's cells, made once into the staging table cells_src.
-- psql variables: nrows (HBase rows), order ('rowkey' or 'random': the order of the load).
--
-- Each HBase row user<6 digits> has 10 cells in 3 families, JSON-ish values of 100-250 bytes
-- drawn from small dictionaries (names, cities, user agents ...) plus random numbers and
-- hex ids, so that they compress about as well as real application JSON:
--   f1 (profile): name, email, city, prefs          one version each
--   f2 (stats):   score, visits, last_login         one version each
--   f3 (events):  ev                                3 versions (max_versions '0' keeps them)
-- ts (ms since the epoch) spread over the last 30 days.

SELECT setseed(0.4242);

CREATE TABLE cells_src AS
WITH d AS (
  SELECT ARRAY['Alice','Bob','Chloe','David','Emma','Farid','Grace','Hugo','Ines','Jonas',
               'Karim','Lena','Marco','Nora','Oscar','Priya','Quentin','Rosa','Sven','Tariq'] AS first,
         ARRAY['Nguyen','Smith','Martin','Garcia','Muller','Rossi','Kowalski','Silva','Dubois',
               'Jensen','Novak','Haddad','Tanaka','Okafor','Larsen','Moreau'] AS last,
         ARRAY['Lyon','Paris','Berlin','Madrid','Lisbon','Warsaw','Oslo','Rome','Vienna','Prague',
               'Dublin','Zurich'] AS city,
         ARRAY['FR','FR','DE','ES','PT','PL','NO','IT','AT','CZ','IE','CH'] AS country,
         ARRAY['Europe/Paris','Europe/Paris','Europe/Berlin','Europe/Madrid','Europe/Lisbon',
               'Europe/Warsaw','Europe/Oslo','Europe/Rome','Europe/Vienna','Europe/Prague',
               'Europe/Dublin','Europe/Zurich'] AS tz,
         ARRAY['Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0',
               'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/119.0',
               'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) Mobile/15E148',
               'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) Safari/605.1.15'] AS agent,
         ARRAY['view','click','add_to_cart','purchase','search','login'] AS evtype,
         (extract(epoch FROM now()) * 1000)::bigint AS now_ms,
         30::bigint * 86400000 AS month_ms,
         10::bigint * 86400000 AS ten_days_ms
), r AS (
  SELECT i, 'user' || lpad(i::text, 6, '0') AS rowkey,
         1 + (random() * 19.999)::int % 20 AS fn, 1 + (random() * 15.999)::int % 16 AS ln,
         1 + (random() * 11.999)::int % 12 AS cn, 1 + (random() * 3.999)::int % 4 AS an
    FROM generate_series(0, :nrows - 1) i
)
SELECT r.rowkey, c.family, c.qualifier, c.ts,
       -- every value ends with the metadata an application typically adds
       left(c.value, -1) || format(',"updated_at":"%s","source":"%s","v":%s}',
            to_char(to_timestamp(c.ts / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            (ARRAY['profile-service/2.3','web-frontend/5.1','batch-import/1.0'])[1 + (random() * 2.999)::int % 3],
            1 + (random() * 3)::int) AS value
  FROM r, d, LATERAL (VALUES
  ('f1', 'name', d.now_ms - (random() * d.month_ms)::bigint,
   format('{"first":"%s","last":"%s","display":"%s %s.","locale":"en_US","verified":%s}',
          d.first[r.fn], d.last[r.ln], d.first[r.fn], left(d.last[r.ln], 1), random() < 0.8)),
  ('f1', 'email', d.now_ms - (random() * d.month_ms)::bigint,
   format('{"email":"%s.%s%s@example.com","primary":true,"confirmed":%s}',
          lower(d.first[r.fn]), lower(d.last[r.ln]), r.i % 10000, random() < 0.9)),
  ('f1', 'city', d.now_ms - (random() * d.month_ms)::bigint,
   format('{"city":"%s","country":"%s","tz":"%s","lat":%s,"lon":%s}',
          d.city[r.cn], d.country[r.cn], d.tz[r.cn],
          round((40 + random() * 20)::numeric, 4), round((-8 + random() * 30)::numeric, 4))),
  ('f1', 'prefs', d.now_ms - (random() * d.month_ms)::bigint,
   format('{"theme":"%s","lang":"%s","newsletter":%s,"notifications":{"email":%s,"push":%s}}',
          CASE WHEN random() < 0.6 THEN 'dark' ELSE 'light' END, lower(d.country[r.cn]),
          random() < 0.3, random() < 0.7, random() < 0.5)),
  ('f2', 'score', d.now_ms - (random() * d.month_ms)::bigint,
   format('{"score":%s,"rank":%s,"percentile":%s,"level":"%s"}',
          (random() * 10000)::int, (random() * 100000)::int, round((random() * 100)::numeric, 1),
          (ARRAY['bronze','silver','gold','platinum'])[1 + (random() * 3.999)::int % 4])),
  ('f2', 'visits', d.now_ms - (random() * d.month_ms)::bigint,
   format('{"visits":%s,"last_ip":"10.%s.%s.%s","device":"%s","session_ms":%s}',
          (random() * 500)::int, (random() * 255)::int, (random() * 255)::int,
          (random() * 255)::int, d.agent[r.an], (random() * 3600000)::int)),
  ('f2', 'last_login', d.now_ms - (random() * d.month_ms)::bigint,
   format('{"at":"%s","method":"%s","mfa":%s}',
          to_char(to_timestamp((d.now_ms - (random() * d.month_ms)::bigint) / 1000.0) AT TIME ZONE 'UTC',
                  'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
          (ARRAY['password','sso','passkey'])[1 + (random() * 2.999)::int % 3], random() < 0.4)),
  -- three versions of one cell, 10-day bands apart so the timestamps never collide
  ('f3', 'ev', d.now_ms - (random() * d.ten_days_ms)::bigint,
   format('{"type":"%s","sku":"SKU-%s","qty":%s,"price":%s,"currency":"EUR","session":"%s"}',
          d.evtype[1 + (random() * 5.999)::int % 6], lpad(((random() * 5000)::int)::text, 5, '0'),
          1 + (random() * 4)::int, round((random() * 200)::numeric, 2), left(md5(random()::text), 16))),
  ('f3', 'ev', d.now_ms - d.ten_days_ms - 1 - (random() * (d.ten_days_ms - 2))::bigint,
   format('{"type":"%s","sku":"SKU-%s","qty":%s,"price":%s,"currency":"EUR","session":"%s"}',
          d.evtype[1 + (random() * 5.999)::int % 6], lpad(((random() * 5000)::int)::text, 5, '0'),
          1 + (random() * 4)::int, round((random() * 200)::numeric, 2), left(md5(random()::text), 16))),
  ('f3', 'ev', d.now_ms - 2 * d.ten_days_ms - 1 - (random() * (d.ten_days_ms - 2))::bigint,
   format('{"type":"%s","sku":"SKU-%s","qty":%s,"price":%s,"currency":"EUR","session":"%s"}',
          d.evtype[1 + (random() * 5.999)::int % 6], lpad(((random() * 5000)::int)::text, 5, '0'),
          1 + (random() * 4)::int, round((random() * 200)::numeric, 2), left(md5(random()::text), 16)))
  ) AS c(family, qualifier, ts, value)
 ORDER BY CASE WHEN :'order' = 'random' THEN random() END, r.rowkey, c.family, c.qualifier, c.ts DESC;
