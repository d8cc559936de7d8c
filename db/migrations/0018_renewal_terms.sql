-- Renewal decisions (issue 34): the notice period and renewal term the pipeline extracts,
-- as ISO 8601 durations kept as written (lib/renewal-dates.ts reads them; the API computes
-- next_renewal_date and notice_deadline from them). Adding nullable columns rewrites
-- nothing; the two CHECK constraints scan the table once to validate (every row null).
SET LOCAL statement_timeout = 0;--> statement-breakpoint
ALTER TABLE "contracts" ADD COLUMN "notice_period" text;--> statement-breakpoint
ALTER TABLE "contracts" ADD COLUMN "renewal_term" text;--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_notice_period_iso8601" CHECK ("contracts"."notice_period" ~ '^P(?!$)([0-9]{1,4}Y)?([0-9]{1,4}M)?([0-9]{1,4}W)?([0-9]{1,4}D)?$');--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_renewal_term_iso8601" CHECK ("contracts"."renewal_term" ~ '^P(?!$)([0-9]{1,4}Y)?([0-9]{1,4}M)?([0-9]{1,4}W)?([0-9]{1,4}D)?$' AND "contracts"."renewal_term" !~ '^P(0+[YMWD])+$');--> statement-breakpoint
-- contract.updated names the two new fields among its changed_fields (docs/webhooks.md).
CREATE OR REPLACE FUNCTION "webhook_capture_contract_changes"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  written bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM "webhook_endpoints" WHERE "status" <> 'disabled') THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "webhook_events" ("type", "contract_id", "owner_id", "organization_id", "contract")
    SELECT e."type", n."id", n."owner_id", n."organization_id", to_jsonb(n)
    FROM new_rows n
    CROSS JOIN LATERAL (VALUES (1, 'contract.created'), (2, 'contract.extraction_completed')) AS e("ord", "type")
    WHERE e."ord" = 1 OR n."status" = 'completed'
    ORDER BY n."id", e."ord";
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO "webhook_events" ("type", "contract_id", "owner_id", "organization_id", "contract", "extra")
    SELECT e."type", c."id", c."owner_id", c."organization_id", c."row",
           CASE WHEN e."ord" = 1 THEN jsonb_build_object('changed_fields', to_jsonb(c."fields")) END
    FROM (
      SELECT n."id", n."owner_id", n."organization_id", to_jsonb(n) AS "row",
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
    CROSS JOIN LATERAL (VALUES (1, 'contract.updated'), (2, 'contract.extraction_completed')) AS e("ord", "type")
    WHERE cardinality(c."fields") > 0 AND (e."ord" = 1 OR c."completed_now")
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
