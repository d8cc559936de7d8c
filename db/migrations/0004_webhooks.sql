CREATE TYPE "public"."webhook_delivery_state" AS ENUM('pending', 'succeeded', 'failed', 'skipped');--> statement-breakpoint
CREATE TYPE "public"."webhook_endpoint_status" AS ENUM('active', 'paused', 'disabled');--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"delivery_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"attempted_at" timestamp (3) with time zone NOT NULL,
	"succeeded" boolean NOT NULL,
	"status_code" integer,
	"duration_ms" integer NOT NULL,
	"error" text
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"event_seq" bigint NOT NULL,
	"contract_id" uuid,
	"state" "webhook_delivery_state" DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone NOT NULL,
	"lease_token" uuid,
	"lease_expires_at" timestamp (3) with time zone,
	"last_attempt_at" timestamp (3) with time zone,
	"last_status_code" integer,
	"last_duration_ms" integer,
	"last_response" text,
	"last_error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"url" varchar(2048) NOT NULL,
	"event_types" jsonb NOT NULL,
	"renewal_offsets" jsonb NOT NULL,
	"status" "webhook_endpoint_status" DEFAULT 'active' NOT NULL,
	"secret_ciphertext" text NOT NULL,
	"secret_hint" varchar(32) NOT NULL,
	"previous_secret_ciphertext" text,
	"previous_secret_expires_at" timestamp (3) with time zone,
	"failing_since" timestamp (3) with time zone,
	"disabled_reason" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_events" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "webhook_events_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"type" varchar(64) NOT NULL,
	"contract_id" uuid,
	"owner_id" uuid,
	"organization_id" uuid,
	"contract" jsonb,
	"extra" jsonb,
	"endpoint_id" uuid,
	"occurred_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"fanned_out_at" timestamp (3) with time zone,
	CONSTRAINT "webhook_events_id_unique" UNIQUE("id")
);
--> statement-breakpoint
CREATE TABLE "webhook_upcoming_sent" (
	"endpoint_id" uuid NOT NULL,
	"contract_id" uuid NOT NULL,
	"kind" varchar(16) NOT NULL,
	"date" date NOT NULL,
	"offset_days" integer NOT NULL,
	"sent_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_upcoming_sent_endpoint_id_contract_id_kind_date_offset_days_pk" PRIMARY KEY("endpoint_id","contract_id","kind","date","offset_days")
);
--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_seq_webhook_events_seq_fk" FOREIGN KEY ("event_seq") REFERENCES "public"."webhook_events"("seq") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_upcoming_sent" ADD CONSTRAINT "webhook_upcoming_sent_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts" USING btree ("delivery_id","attempted_at");--> statement-breakpoint
CREATE INDEX "webhook_attempts_user_idx" ON "webhook_attempts" USING btree ("user_id","attempted_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE "webhook_deliveries"."state" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_order_idx" ON "webhook_deliveries" USING btree ("endpoint_id","contract_id","event_seq") WHERE "webhook_deliveries"."state" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_log_idx" ON "webhook_deliveries" USING btree ("endpoint_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "webhook_deliveries_event_idx" ON "webhook_deliveries" USING btree ("event_seq");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_user_idx" ON "webhook_endpoints" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "webhook_events_pending_idx" ON "webhook_events" USING btree ("seq") WHERE "webhook_events"."fanned_out_at" IS NULL;--> statement-breakpoint
CREATE INDEX "webhook_events_occurred_idx" ON "webhook_events" USING btree ("occurred_at");--> statement-breakpoint
-- The outbox is filled by Postgres itself: contracts are written by the upload and
-- extraction pipeline, not by this app, so a trigger writes the events in the writer's
-- own transaction (none is forgotten by a writer, none survives a rolled-back write, none
-- is lost on a crash). Statement-level triggers with transition tables: one INSERT per
-- statement however many rows it touched, and nothing at all while no webhook endpoint
-- exists. The names of the changed fields are the payload's (server/contracts/shape.ts);
-- tests/webhooks/trigger.test.ts holds them against that shape. updated_at alone, or a
-- change the API does not show (extracted data of a contract that is not completed), is no
-- event. The fan-out (server/webhooks/worker.ts) picks the endpoints that may see each one.
CREATE FUNCTION "webhook_capture_contract_changes"() RETURNS trigger LANGUAGE plpgsql AS $$
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
$$;--> statement-breakpoint
CREATE TRIGGER "contracts_webhook_insert" AFTER INSERT ON "contracts" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "webhook_capture_contract_changes"();--> statement-breakpoint
CREATE TRIGGER "contracts_webhook_update" AFTER UPDATE ON "contracts" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "webhook_capture_contract_changes"();--> statement-breakpoint
CREATE TRIGGER "contracts_webhook_delete" AFTER DELETE ON "contracts" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "webhook_capture_contract_changes"();
