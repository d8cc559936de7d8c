-- q with a status other than completed (db/queries/contracts/filters.ts): a path's contracts
-- of that status in list order, with their search text as an INCLUDE column, so that the
-- word is tested on the index's entries (index-only) instead of on every such row from the
-- heap. Partial: a completed contract's search text holds its parties and may exceed a
-- B-tree entry's 2,704 bytes; any other contract's is its title (at most 500 characters,
-- 2,001 bytes lower-cased) and a line break. Written by hand: Drizzle cannot write INCLUDE
-- (db/schema.ts declares the key columns).
-- Building them over millions of contracts takes longer than the API's statement timeout,
-- which the migrating connection also carries: no limit for this transaction. The builds
-- block writes to contracts (not reads) until they commit; docs/query-plans.md
-- ("Migrating a large table") says how to build them CONCURRENTLY ahead of the migration.
SET LOCAL statement_timeout = 0;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_personal_not_completed_idx" ON "contracts" USING btree ("owner_id","status","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) INCLUDE ("search_text") WHERE "contracts"."organization_id" IS NULL AND "contracts"."status" <> 'completed';--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_organization_not_completed_idx" ON "contracts" USING btree ("organization_id","status","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) INCLUDE ("search_text") WHERE "contracts"."organization_id" IS NOT NULL AND "contracts"."status" <> 'completed';
