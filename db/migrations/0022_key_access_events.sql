-- An API key's own events in the event list (issue 35): access.reduced and
-- access.expanded, written when what the key may see changes (server/access/access-events.ts),
-- carry the key's id and neither owner nor organisation, so that no other key's paths
-- read them; the index of the events about every tenant leaves them out.
--
-- The whole list's index (webhook_events_position_idx) becomes partial on a condition the
-- pages never state (endpoint_id IS NULL: the list's rows), so that the planner can no
-- longer read a path's page through it: for the heavy caller at 3,000,000 events it did,
-- filtering the other tenants' events one by one (1.2 s a page from a cursor, measured),
-- where the path's own index holds that caller's events alone.
SET LOCAL statement_timeout = 0;--> statement-breakpoint
DROP INDEX "webhook_events_position_idx";--> statement-breakpoint
DROP INDEX "webhook_events_everyone_position_idx";--> statement-breakpoint
ALTER TABLE "webhook_events" ADD COLUMN "token_id" uuid;--> statement-breakpoint
ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_token_id_access_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."access_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_events_token_position_idx" ON "webhook_events" USING btree ("token_id","position") WHERE "webhook_events"."token_id" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_events_position_idx" ON "webhook_events" USING btree ("position") WHERE "webhook_events"."endpoint_id" IS NULL;--> statement-breakpoint
CREATE INDEX "webhook_events_everyone_position_idx" ON "webhook_events" USING btree ("position") WHERE "webhook_events"."owner_id" IS NULL AND "webhook_events"."organization_id" IS NULL AND "webhook_events"."token_id" IS NULL AND "webhook_events"."position" IS NOT NULL;