-- Renewal decisions (issue 34): the list filters and sorts by a contract's next renewal and
-- notice deadline (lib/renewal-dates.ts), which move with the day. They are stored, as of
-- the day the row was written or last rolled forward, so that indexes serve them, and read
-- through the same rule in SQL for a row whose stored next renewal has passed and that the
-- scheduled job has not rolled yet (db/queries/contracts/expressions.ts, isStale). Written
-- by hand: Drizzle writes neither functions, triggers nor INCLUDE.
-- Rebuilding the counters and filling the columns over millions of contracts takes longer
-- than the API's statement timeout (docs/query-plans.md, "Migrating a large table").
SET LOCAL statement_timeout = 0;--> statement-breakpoint
ALTER TABLE "contract_date_counts" DROP CONSTRAINT "contract_date_counts_kind";--> statement-breakpoint
ALTER TABLE "contracts" ADD COLUMN "next_renewal_date" date;--> statement-breakpoint
ALTER TABLE "contracts" ADD COLUMN "notice_deadline" date;--> statement-breakpoint

-- The rule of lib/renewal-dates.ts in SQL, tested against it (tests/db/renewal-decisions.test.ts).
-- `date + n * interval` adds the months (years as 12) first, clamped to the month's last
-- day, then the days (weeks as 7): the order the rule states. Each k-th renewal counts
-- from the contract's own day. IMMUTABLE: the result depends on the arguments only (ISO
-- 8601 interval input reads no setting); no index is built on them.
CREATE FUNCTION "contract_next_renewal"(renewal date, auto boolean, term text, today date) RETURNS date
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  step interval;
  approx float8;
  k integer;
  candidate date;
BEGIN
  IF renewal IS NULL OR today IS NULL THEN RETURN renewal; END IF;
  IF renewal >= today OR auto IS NOT TRUE OR term IS NULL THEN RETURN renewal; END IF;
  step := term::interval;
  approx := (extract(year FROM step) * 12 + extract(month FROM step)) * 30.436875 + extract(day FROM step);
  IF approx <= 0 THEN RETURN renewal; END IF;
  -- Start a little before the guess and step: it can be off by a clamped month end.
  k := greatest(1, floor((today - renewal) / approx)::integer - 1);
  LOOP
    candidate := (renewal + k * step)::date;
    -- Past the year 9999 the rule has no next renewal: the extracted date stands (as in TypeScript).
    IF candidate > '9999-12-31' THEN RETURN renewal; END IF;
    IF candidate >= today THEN RETURN candidate; END IF;
    k := k + 1;
  END LOOP;
END
$$;--> statement-breakpoint
CREATE FUNCTION "contract_notice_deadline"(next_renewal date, auto boolean, notice text) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN auto IS TRUE AND notice IS NOT NULL AND next_renewal IS NOT NULL AND (next_renewal - notice::interval) >= '0001-01-01' THEN (next_renewal - notice::interval)::date END
$$;--> statement-breakpoint

-- The stored dates cannot be written wrong. On an insert, or a change of what they derive
-- from, the next renewal is the extracted renewal date: right for every day up to it, and
-- read by the rule (stale) after it until the job rolls it. The scheduled job rolls a
-- contract forward by setting next_renewal_date to a day (yesterday, UTC:
-- server/contracts/rolling.ts), which this makes the first renewal on or after that day;
-- any other value written there is turned into one the rule gives for some day. The
-- notice deadline always follows the next renewal. So a stored date is never ahead of the
-- rule for a day from yesterday on: a reader whose clock is a little behind the job's
-- around midnight still reads the rule's answer.
CREATE FUNCTION "contracts_renewal_decision"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.renewal_date IS DISTINCT FROM OLD.renewal_date OR NEW.auto_renewal IS DISTINCT FROM OLD.auto_renewal
     OR NEW.renewal_term IS DISTINCT FROM OLD.renewal_term OR NEW.next_renewal_date IS NOT DISTINCT FROM OLD.next_renewal_date THEN
    NEW.next_renewal_date := NEW.renewal_date;
  ELSE
    NEW.next_renewal_date := contract_next_renewal(NEW.renewal_date, NEW.auto_renewal, NEW.renewal_term, NEW.next_renewal_date);
  END IF;
  NEW.notice_deadline := contract_notice_deadline(NEW.next_renewal_date, NEW.auto_renewal, NEW.notice_period);
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER "contracts_renewal_decision" BEFORE INSERT OR UPDATE OF "renewal_date", "auto_renewal", "renewal_term", "notice_period", "next_renewal_date", "notice_deadline" ON "contracts"
FOR EACH ROW EXECUTE FUNCTION "contracts_renewal_decision"();--> statement-breakpoint

-- The trigger computes both. The counters' trigger is still 0007's here: it sees no key of
-- its own change, and neither do the webhooks' nor updated_at's.
UPDATE "contracts" SET "renewal_date" = "renewal_date" WHERE "renewal_date" IS NOT NULL;--> statement-breakpoint
-- And rolls the evergreen ones forward as the job would (as of yesterday), so that the
-- lists do not read them all by the rule until the job has caught up.
UPDATE "contracts" SET "next_renewal_date" = (now() AT TIME ZONE 'UTC')::date - 1
WHERE "status" = 'completed' AND "auto_renewal" AND "renewal_term" IS NOT NULL AND "next_renewal_date" < (now() AT TIME ZONE 'UTC')::date - 1;--> statement-breakpoint
ALTER TABLE "contract_date_counts" ADD CONSTRAINT "contract_date_counts_kind" CHECK ("contract_date_counts"."kind" IN ('e', 'r', 'n'));--> statement-breakpoint

CREATE OR REPLACE FUNCTION "contract_counts_capture"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- The same two upserts for each operation, over the rows it added (+1) and removed (-1);
  -- written out three times rather than as dynamic SQL, so that each keeps its cached plan
  -- (EXECUTE planned them on every statement: about 1 ms more per single-row write). The
  -- date counters hold the dates the API shows: only a completed contract's (since 0019 its
  -- stored next renewal and notice deadline, not the extracted renewal date).
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "contract_counts" AS t ("personal", "scope_id", "status", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), c.status,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, sum(c.d)
    FROM (SELECT owner_id, organization_id, status, auto_renewal, expiration_date, next_renewal_date, notice_deadline, 1 AS d FROM new_rows) c
    GROUP BY 1, 2, 3, 4 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3, 4
    ON CONFLICT ("scope_id", "personal", "status", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
    INSERT INTO "contract_date_counts" AS t ("personal", "scope_id", "kind", "day", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), x.kind, x.day,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, sum(c.d)
    FROM (SELECT owner_id, organization_id, status, auto_renewal, expiration_date, next_renewal_date, notice_deadline, 1 AS d FROM new_rows) c
    CROSS JOIN LATERAL (VALUES ('e', c.expiration_date), ('r', c.next_renewal_date), ('n', c.notice_deadline)) AS x(kind, day)
    WHERE c.status = 'completed' AND x.day IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3, 4, 5
    ON CONFLICT ("scope_id", "personal", "kind", "day", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "contract_counts" AS t ("personal", "scope_id", "status", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), c.status,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, sum(c.d)
    FROM (SELECT owner_id, organization_id, status, auto_renewal, expiration_date, next_renewal_date, notice_deadline, -1 AS d FROM old_rows) c
    GROUP BY 1, 2, 3, 4 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3, 4
    ON CONFLICT ("scope_id", "personal", "status", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
    INSERT INTO "contract_date_counts" AS t ("personal", "scope_id", "kind", "day", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), x.kind, x.day,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, sum(c.d)
    FROM (SELECT owner_id, organization_id, status, auto_renewal, expiration_date, next_renewal_date, notice_deadline, -1 AS d FROM old_rows) c
    CROSS JOIN LATERAL (VALUES ('e', c.expiration_date), ('r', c.next_renewal_date), ('n', c.notice_deadline)) AS x(kind, day)
    WHERE c.status = 'completed' AND x.day IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3, 4, 5
    ON CONFLICT ("scope_id", "personal", "kind", "day", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
  ELSE
    INSERT INTO "contract_counts" AS t ("personal", "scope_id", "status", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), c.status,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, sum(c.d)
    FROM (SELECT owner_id, organization_id, status, auto_renewal, expiration_date, next_renewal_date, notice_deadline, 1 AS d FROM new_rows UNION ALL SELECT owner_id, organization_id, status, auto_renewal, expiration_date, next_renewal_date, notice_deadline, -1 FROM old_rows) c
    GROUP BY 1, 2, 3, 4 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3, 4
    ON CONFLICT ("scope_id", "personal", "status", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
    INSERT INTO "contract_date_counts" AS t ("personal", "scope_id", "kind", "day", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), x.kind, x.day,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, sum(c.d)
    FROM (SELECT owner_id, organization_id, status, auto_renewal, expiration_date, next_renewal_date, notice_deadline, 1 AS d FROM new_rows UNION ALL SELECT owner_id, organization_id, status, auto_renewal, expiration_date, next_renewal_date, notice_deadline, -1 FROM old_rows) c
    CROSS JOIN LATERAL (VALUES ('e', c.expiration_date), ('r', c.next_renewal_date), ('n', c.notice_deadline)) AS x(kind, day)
    WHERE c.status = 'completed' AND x.day IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3, 4, 5
    ON CONFLICT ("scope_id", "personal", "kind", "day", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint

-- The renewal counters count the stored next renewal now, and the notice deadlines join
-- them (the writers are kept out by the function's replacement until this commits).
DELETE FROM "contract_date_counts" WHERE "kind" = 'r';--> statement-breakpoint
INSERT INTO "contract_date_counts" ("personal", "scope_id", "kind", "day", "auto_renewal", "n")
SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), x.kind, x.day,
       CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, count(*)
FROM "contracts" c
CROSS JOIN LATERAL (VALUES ('r', c.next_renewal_date), ('n', c.notice_deadline)) AS x(kind, day)
WHERE c.status = 'completed' AND x.day IS NOT NULL
GROUP BY 1, 2, 3, 4, 5;--> statement-breakpoint

-- As 0012's: the ascending date indexes carry INCLUDE columns, so that a window sorted by
-- another date, freshness test included (auto_renewal, renewal_term, next_renewal_date),
-- is read index-only; the expiration ones are rebuilt with the new columns too. Every one
-- carries every date: with one index covering a window's statement and the window's own
-- index not, Postgres read the covering one whole, filtering 100,000 entries a path
-- (`expiring_within_days=90&sort=next_renewal_date`: 83 ms at 2M).
DROP INDEX IF EXISTS "contracts_personal_expiration_idx";--> statement-breakpoint
DROP INDEX IF EXISTS "contracts_organization_expiration_idx";--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_personal_expiration_idx" ON "contracts" USING btree ("owner_id",(CASE WHEN status = 'completed' THEN expiration_date END),"id") INCLUDE ("status","expiration_date","renewal_date","next_renewal_date","notice_deadline","auto_renewal","renewal_term") WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_organization_expiration_idx" ON "contracts" USING btree ("organization_id",(CASE WHEN status = 'completed' THEN expiration_date END),"id") INCLUDE ("status","expiration_date","renewal_date","next_renewal_date","notice_deadline","auto_renewal","renewal_term");--> statement-breakpoint
CREATE INDEX "contracts_personal_next_renewal_idx" ON "contracts" USING btree ("owner_id",(CASE WHEN status = 'completed' THEN next_renewal_date END),"id") INCLUDE ("status","expiration_date","renewal_date","next_renewal_date","notice_deadline","auto_renewal","renewal_term") WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX "contracts_organization_next_renewal_idx" ON "contracts" USING btree ("organization_id",(CASE WHEN status = 'completed' THEN next_renewal_date END),"id") INCLUDE ("status","expiration_date","renewal_date","next_renewal_date","notice_deadline","auto_renewal","renewal_term");--> statement-breakpoint
CREATE INDEX "contracts_personal_next_renewal_desc_idx" ON "contracts" USING btree ("owner_id",(CASE WHEN status = 'completed' THEN next_renewal_date END) DESC NULLS LAST,"id" DESC NULLS FIRST) WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX "contracts_organization_next_renewal_desc_idx" ON "contracts" USING btree ("organization_id",(CASE WHEN status = 'completed' THEN next_renewal_date END) DESC NULLS LAST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "contracts_personal_notice_idx" ON "contracts" USING btree ("owner_id",(CASE WHEN status = 'completed' THEN notice_deadline END),"id") INCLUDE ("status","expiration_date","renewal_date","next_renewal_date","notice_deadline","auto_renewal","renewal_term") WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX "contracts_organization_notice_idx" ON "contracts" USING btree ("organization_id",(CASE WHEN status = 'completed' THEN notice_deadline END),"id") INCLUDE ("status","expiration_date","renewal_date","next_renewal_date","notice_deadline","auto_renewal","renewal_term");--> statement-breakpoint
CREATE INDEX "contracts_personal_notice_desc_idx" ON "contracts" USING btree ("owner_id",(CASE WHEN status = 'completed' THEN notice_deadline END) DESC NULLS LAST,"id" DESC NULLS FIRST) WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX "contracts_organization_notice_desc_idx" ON "contracts" USING btree ("organization_id",(CASE WHEN status = 'completed' THEN notice_deadline END) DESC NULLS LAST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "contracts_personal_rolling_idx" ON "contracts" USING btree ("owner_id","next_renewal_date") WHERE "contracts"."organization_id" IS NULL AND "contracts"."status" = 'completed' AND "contracts"."auto_renewal" AND "contracts"."renewal_term" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "contracts_organization_rolling_idx" ON "contracts" USING btree ("organization_id","next_renewal_date") WHERE "contracts"."organization_id" IS NOT NULL AND "contracts"."status" = 'completed' AND "contracts"."auto_renewal" AND "contracts"."renewal_term" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "contracts_rolling_idx" ON "contracts" USING btree ("next_renewal_date") WHERE "contracts"."status" = 'completed' AND "contracts"."auto_renewal" AND "contracts"."renewal_term" IS NOT NULL;
