ALTER TYPE "public"."token_kind" ADD VALUE 'email_verification';--> statement-breakpoint
ALTER TYPE "public"."token_kind" ADD VALUE 'password_reset';--> statement-breakpoint
CREATE TABLE "mail_outbox" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"recipient" varchar(320) NOT NULL,
	"subject" varchar(200) NOT NULL,
	"text" text NOT NULL,
	"html" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"lease_token" uuid,
	"lease_expires_at" timestamp (3) with time zone,
	"last_error" text,
	"failed_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verified_at" timestamp (3) with time zone DEFAULT now();--> statement-breakpoint
CREATE INDEX "mail_outbox_due_idx" ON "mail_outbox" USING btree ("next_attempt_at") WHERE "mail_outbox"."failed_at" IS NULL;--> statement-breakpoint
-- Accounts from before e-mail verification existed keep everything they could do.
UPDATE "users" SET "email_verified_at" = "created_at" WHERE "email_verified_at" IS NULL;--> statement-breakpoint
-- Any change of a password hash (a reset, a change in Settings, whatever code makes it)
-- revokes every password-reset link of the user, so that no caller can forget to.
CREATE FUNCTION revoke_password_reset_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE access_tokens SET revoked_at = now()
  WHERE user_id = NEW.id AND kind::text = 'password_reset' AND revoked_at IS NULL;
  RETURN NEW;
END $$;--> statement-breakpoint
CREATE TRIGGER users_password_changed AFTER UPDATE OF password_hash ON users
FOR EACH ROW WHEN (OLD.password_hash IS DISTINCT FROM NEW.password_hash)
EXECUTE FUNCTION revoke_password_reset_links();
