-- contract_updated_counts gains the status and auto_renewal of contract_counts, so that
-- updated_since with a status or auto_renewal (an incremental sync of completed
-- contracts) is counted from counters too (db/queries/contracts/count.ts); it counted
-- rows, 58 to 95 ms at 2,000,000. The table is filled again from the contracts, which
-- takes seconds at 2,000,000: no statement timeout for this transaction (as in 0008).
SET LOCAL statement_timeout = 0;--> statement-breakpoint
-- Writers of contracts wait until this commits: none writes between the count below and
-- the new trigger function (a writer already running is waited for). So, from the
-- TRUNCATE on, do the updated_since totals of instances still serving during a deploy:
-- at 2,000,000 contracts the count takes about 5 s, at the statement timeout's edge, so
-- some of those requests may answer 503 with Retry-After until it commits.
LOCK TABLE "contracts" IN SHARE ROW EXCLUSIVE MODE;--> statement-breakpoint
TRUNCATE "contract_updated_counts";--> statement-breakpoint
ALTER TABLE "contract_updated_counts" DROP CONSTRAINT "contract_updated_counts_scope_id_personal_day_pk";--> statement-breakpoint
ALTER TABLE "contract_updated_counts" ADD COLUMN "status" "contract_status" NOT NULL;--> statement-breakpoint
ALTER TABLE "contract_updated_counts" ADD COLUMN "auto_renewal" smallint NOT NULL;--> statement-breakpoint
ALTER TABLE "contract_updated_counts" ADD CONSTRAINT "contract_updated_counts_scope_id_personal_day_status_auto_renewal_pk" PRIMARY KEY("scope_id","personal","day","status","auto_renewal");--> statement-breakpoint
-- 0008's function with the two new key columns (auto_renewal encoded as in 0007). An
-- update nets its old key (-1) against its new key (+1): one that leaves the day, the
-- scope, the status and auto_renewal alone touches no counter. The triggers of 0008 stay
-- and call this.
CREATE OR REPLACE FUNCTION "contract_updated_counts_capture"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "contract_updated_counts" AS t ("personal", "scope_id", "day", "status", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), (c.updated_at AT TIME ZONE 'UTC')::date, c.status,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, count(*)
    FROM new_rows c
    GROUP BY 1, 2, 3, 4, 5
    ORDER BY 2, 1, 3, 4, 5
    ON CONFLICT ("scope_id", "personal", "day", "status", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "contract_updated_counts" AS t ("personal", "scope_id", "day", "status", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), (c.updated_at AT TIME ZONE 'UTC')::date, c.status,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, -count(*)
    FROM old_rows c
    GROUP BY 1, 2, 3, 4, 5
    ORDER BY 2, 1, 3, 4, 5
    ON CONFLICT ("scope_id", "personal", "day", "status", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO "contract_updated_counts" AS t ("personal", "scope_id", "day", "status", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), (c.updated_at AT TIME ZONE 'UTC')::date, c.status,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, sum(c.d)
    FROM (SELECT owner_id, organization_id, updated_at, status, auto_renewal, 1 AS d FROM new_rows
          UNION ALL SELECT owner_id, organization_id, updated_at, status, auto_renewal, -1 FROM old_rows) c
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3, 4, 5
    ON CONFLICT ("scope_id", "personal", "day", "status", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
  ELSE
    DELETE FROM "contract_updated_counts";
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
INSERT INTO "contract_updated_counts" ("personal", "scope_id", "day", "status", "auto_renewal", "n")
SELECT organization_id IS NULL, coalesce(organization_id, owner_id), (updated_at AT TIME ZONE 'UTC')::date, status,
       CASE auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, count(*)
FROM "contracts" GROUP BY 1, 2, 3, 4, 5;
