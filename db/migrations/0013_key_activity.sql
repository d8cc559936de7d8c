CREATE TABLE "key_usage" (
	"token_id" uuid NOT NULL,
	"granularity" varchar(4) NOT NULL,
	"bucket_start" timestamp (3) with time zone NOT NULL,
	"operation" varchar(8) NOT NULL,
	"outcome" varchar(4) NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "key_usage_token_id_granularity_bucket_start_operation_outcome_pk" PRIMARY KEY("token_id","granularity","bucket_start","operation","outcome")
);
--> statement-breakpoint
CREATE TABLE "request_log" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "request_log_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"token_id" uuid NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	"method" varchar(16) NOT NULL,
	"path" varchar(2048) NOT NULL,
	"status" smallint NOT NULL,
	"error_code" varchar(64),
	"duration_ms" real NOT NULL,
	"request_id" varchar(64) NOT NULL,
	"client_address" varchar(64),
	"user_agent" varchar(300),
	"bytes" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "security_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "security_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"kind" varchar(48) NOT NULL,
	"actor_kind" varchar(8) NOT NULL,
	"actor_user_id" uuid,
	"actor_label" varchar(320) NOT NULL,
	"client_address" varchar(64),
	"user_agent" varchar(300),
	"subject_user_id" uuid,
	"organization_id" uuid,
	"object_type" varchar(32) NOT NULL,
	"object_id" varchar(64),
	"object_label" varchar(320),
	"details" jsonb
);
--> statement-breakpoint
ALTER TABLE "key_usage" ADD CONSTRAINT "key_usage_token_id_access_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."access_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "request_log" ADD CONSTRAINT "request_log_token_id_access_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."access_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "request_log_token_idx" ON "request_log" USING btree ("token_id","at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "request_log_request_id_idx" ON "request_log" USING btree ("request_id");--> statement-breakpoint
CREATE INDEX "security_events_subject_idx" ON "security_events" USING btree ("subject_user_id","at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "security_events_org_idx" ON "security_events" USING btree ("organization_id","at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "security_events_at_idx" ON "security_events" USING btree ("at");--> statement-breakpoint
CREATE INDEX "security_events_object_idx" ON "security_events" USING btree ("object_id","kind");
--> statement-breakpoint
-- The security log is append-only: no statement of the app may change or remove an event.
-- Only the retention job deletes, inside a transaction that first runs
-- SET LOCAL app.security_log_retention = 'on' (server/security-log/retention.ts); UPDATE
-- is refused always. TRUNCATE too (a statement-level trigger).
CREATE FUNCTION security_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND coalesce(current_setting('app.security_log_retention', true), '') = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'security_events is append-only: % refused', TG_OP USING ERRCODE = '42501';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER security_events_append_only BEFORE UPDATE OR DELETE ON "security_events"
  FOR EACH ROW EXECUTE FUNCTION security_events_append_only();
--> statement-breakpoint
CREATE TRIGGER security_events_no_truncate BEFORE TRUNCATE ON "security_events"
  FOR EACH STATEMENT EXECUTE FUNCTION security_events_append_only();
