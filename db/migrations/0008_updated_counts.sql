-- The backfill below reads every contract once (a grouped scan: seconds at 2,000,000),
-- longer than the API's statement timeout (DATABASE_STATEMENT_TIMEOUT_MS), which the
-- migrating connection also carries: no limit for this transaction, as in 0007.
SET LOCAL statement_timeout = 0;--> statement-breakpoint
CREATE TABLE "contract_updated_counts" (
	"personal" boolean NOT NULL,
	"scope_id" uuid NOT NULL,
	"day" date NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "contract_updated_counts_scope_id_personal_day_pk" PRIMARY KEY("scope_id","personal","day")
);
--> statement-breakpoint
-- How many contracts of each access path were last updated on each UTC day (all
-- statuses), for the total of updated_since (db/queries/contracts/count.ts): kept like
-- the counters of 0007, by statement-level triggers with transition tables in the
-- writer's own transaction, one grouped upsert per statement, keys in key order. An
-- update nets its old day (-1) against its new day (+1) per access path: one that leaves
-- updated_at's day and the scope alone touches no counter, one that stamps a contract
-- last updated on an earlier day moves one from that day's row to today's. The price:
-- every update that stamps updated_at now also locks today's row of its access path until
-- it commits, so concurrent updates of one path queue on it (docs/query-plans.md, "The
-- price on writes"). These triggers are named after 0007's and so fire after them (same
-- event: name order): counters are always locked in the same table order.
CREATE FUNCTION "contract_updated_counts_capture"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Written out per operation rather than as dynamic SQL, so that each keeps its cached
  -- plan (as in 0007).
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "contract_updated_counts" AS t ("personal", "scope_id", "day", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), (c.updated_at AT TIME ZONE 'UTC')::date, count(*)
    FROM new_rows c
    GROUP BY 1, 2, 3
    ORDER BY 2, 1, 3
    ON CONFLICT ("scope_id", "personal", "day") DO UPDATE SET "n" = t."n" + excluded."n";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "contract_updated_counts" AS t ("personal", "scope_id", "day", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), (c.updated_at AT TIME ZONE 'UTC')::date, -count(*)
    FROM old_rows c
    GROUP BY 1, 2, 3
    ORDER BY 2, 1, 3
    ON CONFLICT ("scope_id", "personal", "day") DO UPDATE SET "n" = t."n" + excluded."n";
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO "contract_updated_counts" AS t ("personal", "scope_id", "day", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), (c.updated_at AT TIME ZONE 'UTC')::date, sum(c.d)
    FROM (SELECT owner_id, organization_id, updated_at, 1 AS d FROM new_rows UNION ALL SELECT owner_id, organization_id, updated_at, -1 FROM old_rows) c
    GROUP BY 1, 2, 3 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3
    ON CONFLICT ("scope_id", "personal", "day") DO UPDATE SET "n" = t."n" + excluded."n";
  ELSE
    DELETE FROM "contract_updated_counts";
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "contracts_updated_counts_insert" AFTER INSERT ON "contracts" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "contract_updated_counts_capture"();--> statement-breakpoint
CREATE TRIGGER "contracts_updated_counts_update" AFTER UPDATE ON "contracts" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "contract_updated_counts_capture"();--> statement-breakpoint
CREATE TRIGGER "contracts_updated_counts_delete" AFTER DELETE ON "contracts" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "contract_updated_counts_capture"();--> statement-breakpoint
CREATE TRIGGER "contracts_updated_counts_truncate" AFTER TRUNCATE ON "contracts" FOR EACH STATEMENT EXECUTE FUNCTION "contract_updated_counts_capture"();--> statement-breakpoint
-- The rows already there, counted once, after the triggers: CREATE TRIGGER holds a lock
-- that keeps writers out until this transaction commits, so no write is missed or
-- counted twice.
INSERT INTO "contract_updated_counts" ("personal", "scope_id", "day", "n")
SELECT organization_id IS NULL, coalesce(organization_id, owner_id), (updated_at AT TIME ZONE 'UTC')::date, count(*)
FROM "contracts" GROUP BY 1, 2, 3;
