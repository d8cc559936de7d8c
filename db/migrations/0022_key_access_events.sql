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
--
-- A contract moved to another organisation (or a personal one given to another owner) was
-- an update in its new scope only: a copy of the old scope kept it. The capture now writes
-- a contract.deleted for the scope it leaves, before the update (webhooks too: to the old
-- scope's endpoints it is gone).
SET LOCAL statement_timeout = 0;--> statement-breakpoint
DROP INDEX "webhook_events_position_idx";--> statement-breakpoint
DROP INDEX "webhook_events_everyone_position_idx";--> statement-breakpoint
ALTER TABLE "webhook_events" ADD COLUMN "token_id" uuid;--> statement-breakpoint
ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_token_id_access_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."access_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_events_token_position_idx" ON "webhook_events" USING btree ("token_id","position") WHERE "webhook_events"."token_id" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_events_position_idx" ON "webhook_events" USING btree ("position") WHERE "webhook_events"."endpoint_id" IS NULL;--> statement-breakpoint
CREATE INDEX "webhook_events_everyone_position_idx" ON "webhook_events" USING btree ("position") WHERE "webhook_events"."owner_id" IS NULL AND "webhook_events"."organization_id" IS NULL AND "webhook_events"."token_id" IS NULL AND "webhook_events"."position" IS NOT NULL;--> statement-breakpoint
-- The capture of 0021, and a contract.deleted for the scope a moved contract leaves.
CREATE OR REPLACE FUNCTION "webhook_capture_contract_changes"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  written bigint;
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "webhook_events" ("type", "contract_id", "owner_id", "organization_id", "contract")
    SELECT e."type", n."id", n."owner_id", n."organization_id", to_jsonb(n)
    FROM new_rows n
    CROSS JOIN LATERAL (VALUES (1, 'contract.created'), (2, 'contract.extraction_completed')) AS e("ord", "type")
    WHERE e."ord" = 1 OR n."status" = 'completed'
    ORDER BY n."id", e."ord";
  ELSIF TG_OP = 'UPDATE' THEN
    -- A contract that leaves what an owner scope sees (moved to another organisation, or a
    -- personal contract given to another owner) is gone for that scope: a contract.deleted
    -- there (ord 0: its old owner and organisation), before its update in the new one. A
    -- copy kept from the old scope alone drops it; one that sees both deletes, then upserts.
    INSERT INTO "webhook_events" ("type", "contract_id", "owner_id", "organization_id", "contract", "extra")
    SELECT e."type", c."id",
           CASE WHEN e."ord" = 0 THEN c."old_owner_id" ELSE c."owner_id" END,
           CASE WHEN e."ord" = 0 THEN c."old_organization_id" ELSE c."organization_id" END,
           CASE WHEN e."ord" = 0 THEN jsonb_build_object('id', c."id", 'organization_id', c."old_organization_id") ELSE c."row" END,
           CASE WHEN e."ord" = 1 THEN jsonb_build_object('changed_fields', to_jsonb(c."fields")) END
    FROM (
      SELECT n."id", n."owner_id", n."organization_id", to_jsonb(n) AS "row",
             o."owner_id" AS "old_owner_id", o."organization_id" AS "old_organization_id",
             n."organization_id" IS DISTINCT FROM o."organization_id" OR (o."organization_id" IS NULL AND n."owner_id" IS DISTINCT FROM o."owner_id") AS "left_scope",
             o."status" <> 'completed' AND n."status" = 'completed' AS "completed_now",
             array_remove(ARRAY[
               CASE WHEN n."title" IS DISTINCT FROM o."title" THEN 'title' END,
               CASE WHEN n."status" IS DISTINCT FROM o."status" THEN 'status' END,
               CASE WHEN n."file_name" IS DISTINCT FROM o."file_name" THEN 'file_name' END,
               CASE WHEN n."file_size" IS DISTINCT FROM o."file_size" THEN 'file_size' END,
               CASE WHEN n."created_at" IS DISTINCT FROM o."created_at" THEN 'created_at' END,
               CASE WHEN n."organization_id" IS DISTINCT FROM o."organization_id" THEN 'organization_id' END,
               -- data appears or disappears with the completed status; within it, each field.
               CASE WHEN (n."status" = 'completed') <> (o."status" = 'completed') THEN 'data' END,
               CASE WHEN n."status" = 'completed' AND o."status" = 'completed' THEN CASE WHEN n."expiration_date" IS DISTINCT FROM o."expiration_date" THEN 'data.expiration_date' END END,
               CASE WHEN n."status" = 'completed' AND o."status" = 'completed' THEN CASE WHEN n."renewal_date" IS DISTINCT FROM o."renewal_date" THEN 'data.renewal_date' END END,
               CASE WHEN n."status" = 'completed' AND o."status" = 'completed' THEN CASE WHEN n."auto_renewal" IS DISTINCT FROM o."auto_renewal" THEN 'data.auto_renewal' END END,
               CASE WHEN n."status" = 'completed' AND o."status" = 'completed' THEN CASE WHEN n."notice_period" IS DISTINCT FROM o."notice_period" THEN 'data.notice_period' END END,
               CASE WHEN n."status" = 'completed' AND o."status" = 'completed' THEN CASE WHEN n."renewal_term" IS DISTINCT FROM o."renewal_term" THEN 'data.renewal_term' END END,
               CASE WHEN n."status" = 'completed' AND o."status" = 'completed' THEN CASE WHEN n."contract_value" IS DISTINCT FROM o."contract_value" THEN 'data.contract_value' END END,
               CASE WHEN n."status" = 'completed' AND o."status" = 'completed' THEN CASE WHEN n."currency" IS DISTINCT FROM o."currency" THEN 'data.currency' END END,
               CASE WHEN n."status" = 'completed' AND o."status" = 'completed' THEN CASE WHEN n."provider" IS DISTINCT FROM o."provider" THEN 'data.parties.provider' END END,
               CASE WHEN n."status" = 'completed' AND o."status" = 'completed' THEN CASE WHEN n."client" IS DISTINCT FROM o."client" THEN 'data.parties.client' END END,
               CASE WHEN n."status" = 'completed' AND o."status" = 'completed' THEN CASE WHEN n."summary" IS DISTINCT FROM o."summary" THEN 'data.summary' END END,
               CASE WHEN n."status" = 'completed' AND o."status" = 'completed' THEN CASE WHEN n."confidence_score" IS DISTINCT FROM o."confidence_score" THEN 'data.confidence_score' END END
             ], NULL) AS "fields"
      FROM new_rows n JOIN old_rows o ON o."id" = n."id"
    ) c
    CROSS JOIN LATERAL (VALUES (0, 'contract.deleted'), (1, 'contract.updated'), (2, 'contract.extraction_completed')) AS e("ord", "type")
    WHERE (cardinality(c."fields") > 0 OR c."left_scope") AND (e."ord" = 1 OR (e."ord" = 2 AND c."completed_now") OR (e."ord" = 0 AND c."left_scope"))
    ORDER BY c."id", e."ord";
  ELSE
    -- A deleted contract is gone: its id and owner scope only.
    INSERT INTO "webhook_events" ("type", "contract_id", "owner_id", "organization_id", "contract")
    SELECT 'contract.deleted', o."id", o."owner_id", o."organization_id", jsonb_build_object('id', o."id", 'organization_id', o."organization_id")
    FROM old_rows o
    ORDER BY o."id";
  END IF;
  GET DIAGNOSTICS written = ROW_COUNT;
  -- Wakes the workers that LISTEN (on commit; one notification per transaction).
  IF written > 0 THEN
    PERFORM pg_notify('webhook_events', '');
  END IF;
  RETURN NULL;
END
$$;
