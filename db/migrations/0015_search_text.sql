-- q searches a stored, lower-cased search text (db/schema.ts, contracts.search_text) with
-- LIKE instead of ILIKE over an expression: the same matches (ILIKE lower-cases both sides
-- in a UTF-8 database; tests/db/search-text.test.ts), without lower-casing every row a
-- search tests. The trigram index moves to the column.
-- Adding a stored generated column rewrites the table and rebuilds its indexes, which takes
-- longer than the API's statement timeout the migrating connection also carries: no limit
-- for this transaction. Writes to contracts wait until it commits (docs/query-plans.md,
-- "Migrating a large table": about a minute at 2,000,000 contracts on 2 cores).
SET LOCAL statement_timeout = 0;--> statement-breakpoint
DROP INDEX "contracts_search_idx";--> statement-breakpoint
ALTER TABLE "contracts" ADD COLUMN "search_text" text GENERATED ALWAYS AS (lower(title || E'\n' || CASE WHEN status = 'completed' THEN coalesce(provider, '') || E'\n' || coalesce(client, '') ELSE '' END)) STORED;--> statement-breakpoint
CREATE INDEX "contracts_search_idx" ON "contracts" USING gin ("search_text" gin_trgm_ops);
