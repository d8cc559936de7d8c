-- Substring search (q) uses trigram indexes; available on managed Postgres and in PGlite.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE TABLE "calendar_feeds" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"name" varchar(64) NOT NULL,
	"token_hash" char(64) NOT NULL,
	"hint" varchar(32) NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone,
	CONSTRAINT "calendar_feeds_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "oauth_accounts" (
	"provider" varchar(32) NOT NULL,
	"provider_account_id" varchar(255) NOT NULL,
	"user_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "oauth_accounts_provider_provider_account_id_pk" PRIMARY KEY("provider","provider_account_id")
);
--> statement-breakpoint
ALTER TABLE "calendar_feeds" ADD CONSTRAINT "calendar_feeds_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_accounts" ADD CONSTRAINT "oauth_accounts_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "calendar_feeds_user_idx" ON "calendar_feeds" USING btree ("user_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "oauth_accounts_user_idx" ON "oauth_accounts" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "contracts_personal_updated_idx" ON "contracts" USING btree ("owner_id","updated_at","id") WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX "contracts_organization_updated_idx" ON "contracts" USING btree ("organization_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "contracts_personal_expiration_idx" ON "contracts" USING btree ("owner_id",(CASE WHEN status = 'completed' THEN expiration_date END),"id") WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX "contracts_organization_expiration_idx" ON "contracts" USING btree ("organization_id",(CASE WHEN status = 'completed' THEN expiration_date END),"id");--> statement-breakpoint
CREATE INDEX "contracts_personal_renewal_idx" ON "contracts" USING btree ("owner_id",(CASE WHEN status = 'completed' THEN renewal_date END),"id") WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX "contracts_organization_renewal_idx" ON "contracts" USING btree ("organization_id",(CASE WHEN status = 'completed' THEN renewal_date END),"id");--> statement-breakpoint
CREATE INDEX "contracts_search_idx" ON "contracts" USING gin ((title || E'\n' || CASE WHEN status = 'completed' THEN coalesce(provider, '') || E'\n' || coalesce(client, '') ELSE '' END) gin_trgm_ops);