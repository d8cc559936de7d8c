CREATE TYPE "public"."token_kind" AS ENUM('api_key', 'calendar_feed');--> statement-breakpoint
CREATE TABLE "access_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"kind" "token_kind" NOT NULL,
	"name" varchar(64) NOT NULL,
	"token_hash" char(64) NOT NULL,
	"hint" varchar(32) NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp (3) with time zone,
	"expires_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone,
	CONSTRAINT "access_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
-- API keys and calendar feed tokens had two tables of the same shape; every existing
-- token moves over with its id, hash, hint and times, so keys and feed addresses in use
-- keep working across the upgrade.
INSERT INTO "access_tokens" ("id", "user_id", "kind", "name", "token_hash", "hint", "created_at", "last_used_at", "expires_at", "revoked_at")
SELECT "id", "user_id", 'api_key', "name", "key_hash", "hint", "created_at", "last_used_at", "expires_at", "revoked_at" FROM "api_keys";--> statement-breakpoint
INSERT INTO "access_tokens" ("id", "user_id", "kind", "name", "token_hash", "hint", "created_at", "last_used_at", "expires_at", "revoked_at")
SELECT "id", "user_id", 'calendar_feed', "name", "token_hash", "hint", "created_at", "last_used_at", NULL, "revoked_at" FROM "calendar_feeds";--> statement-breakpoint
DROP TABLE "api_keys" CASCADE;--> statement-breakpoint
DROP TABLE "calendar_feeds" CASCADE;--> statement-breakpoint
ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "access_tokens_user_idx" ON "access_tokens" USING btree ("user_id","kind","created_at" DESC NULLS LAST);