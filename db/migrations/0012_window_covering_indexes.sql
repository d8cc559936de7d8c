-- The ascending date indexes gain INCLUDE columns (status, both dates, auto_renewal; not key
-- columns, so their order, every walk of them and the planner's estimates of their ranges
-- are unchanged): a date window sorted by the other date reads its range index-only
-- (db/queries/contracts/page.ts, WINDOW_FEW_MATCHES). Written by hand: Drizzle cannot write
-- INCLUDE (db/schema.ts declares the key columns).
-- Rebuilding four indexes over millions of contracts takes longer than the API's statement
-- timeout, which the migrating connection also carries: no limit for this transaction. The
-- builds block writes to contracts until they commit (about 40 s at 2,000,000 contracts on
-- 2 cores); docs/query-plans.md ("Migrating a large table") says how to build them
-- CONCURRENTLY under other names ahead of the migration instead.
SET LOCAL statement_timeout = 0;--> statement-breakpoint
DROP INDEX IF EXISTS "contracts_personal_expiration_idx";--> statement-breakpoint
DROP INDEX IF EXISTS "contracts_organization_expiration_idx";--> statement-breakpoint
DROP INDEX IF EXISTS "contracts_personal_renewal_idx";--> statement-breakpoint
DROP INDEX IF EXISTS "contracts_organization_renewal_idx";--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_personal_expiration_idx" ON "contracts" USING btree ("owner_id",(CASE WHEN status = 'completed' THEN expiration_date END),"id") INCLUDE ("status","expiration_date","renewal_date","auto_renewal") WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_organization_expiration_idx" ON "contracts" USING btree ("organization_id",(CASE WHEN status = 'completed' THEN expiration_date END),"id") INCLUDE ("status","expiration_date","renewal_date","auto_renewal");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_personal_renewal_idx" ON "contracts" USING btree ("owner_id",(CASE WHEN status = 'completed' THEN renewal_date END),"id") INCLUDE ("status","expiration_date","renewal_date","auto_renewal") WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_organization_renewal_idx" ON "contracts" USING btree ("organization_id",(CASE WHEN status = 'completed' THEN renewal_date END),"id") INCLUDE ("status","expiration_date","renewal_date","auto_renewal");
