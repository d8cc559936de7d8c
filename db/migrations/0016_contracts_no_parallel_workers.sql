-- Statements on contracts run without parallel workers. Every statement of the API reads a
-- few rows (a page, a capped count, a range of a path), and Postgres's costs sometimes
-- plan such a branch as a Gather over two workers: starting them costs about 5 ms here,
-- paid even when the branch's one-time filter then skips it (q's capped count for a
-- word found nowhere: 1.1 ms, 13 ms with workers; a window with updated_since: 35 ms,
-- 17 ms without). A table's parallel_workers also sets CREATE INDEX's workers: the scale
-- seed gives its index builds Postgres's own choice back (db/seed/scale.ts).
-- A storage parameter: no rewrite, a brief lock (docs/query-plans.md).
ALTER TABLE "contracts" SET (parallel_workers = 0);
