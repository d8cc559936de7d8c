CREATE TABLE "token_organization_removals" (
	"token_id" uuid NOT NULL,
	"organization_id" uuid NOT NULL,
	"removed_by" uuid,
	"removed_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "token_organization_removals_token_id_organization_id_pk" PRIMARY KEY("token_id","organization_id")
);
--> statement-breakpoint
ALTER TABLE "access_tokens" ALTER COLUMN "user_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "access_tokens" ADD COLUMN "organization_id" uuid;--> statement-breakpoint
ALTER TABLE "access_tokens" ADD COLUMN "created_by" uuid;--> statement-breakpoint
-- Every existing token was created by the person who owns it; it keeps "everything" (access_all).
UPDATE "access_tokens" SET "created_by" = "user_id";--> statement-breakpoint
ALTER TABLE "access_tokens" ADD COLUMN "access_all" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "access_tokens" ADD COLUMN "access_personal" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "access_tokens" ADD COLUMN "access_organization_ids" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "access_tokens" ADD COLUMN "permissions" jsonb DEFAULT '["contracts:read","contracts:export"]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "access_tokens" ADD COLUMN "allowed_addresses" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "access_tokens" ADD COLUMN "previous_token_hash" char(64);--> statement-breakpoint
ALTER TABLE "access_tokens" ADD COLUMN "previous_expires_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "member_keys_allowed" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "access_all" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "access_personal" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "access_organization_ids" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "token_organization_removals" ADD CONSTRAINT "token_organization_removals_token_id_access_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."access_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "token_organization_removals" ADD CONSTRAINT "token_organization_removals_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "token_organization_removals" ADD CONSTRAINT "token_organization_removals_removed_by_users_id_fk" FOREIGN KEY ("removed_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "token_organization_removals_organization_idx" ON "token_organization_removals" USING btree ("organization_id");--> statement-breakpoint
ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "access_tokens_organization_idx" ON "access_tokens" USING btree ("organization_id","created_at" DESC NULLS LAST) WHERE "access_tokens"."organization_id" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_previous_token_hash_unique" UNIQUE("previous_token_hash");--> statement-breakpoint
ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_one_owner" CHECK (("access_tokens"."user_id" IS NULL) <> ("access_tokens"."organization_id" IS NULL));--> statement-breakpoint
ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_organization_keys" CHECK ("access_tokens"."organization_id" IS NULL OR "access_tokens"."kind" = 'api_key');