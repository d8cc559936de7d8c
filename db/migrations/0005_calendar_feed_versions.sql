CREATE TABLE "calendar_feed_versions" (
	"token_id" uuid PRIMARY KEY NOT NULL,
	"etag" varchar(64) NOT NULL,
	"changed_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "calendar_feed_versions" ADD CONSTRAINT "calendar_feed_versions_token_id_access_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."access_tokens"("id") ON DELETE cascade ON UPDATE no action;