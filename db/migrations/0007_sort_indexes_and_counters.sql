-- Building ten indexes over millions of contracts takes longer than the API's statement
-- timeout (DATABASE_STATEMENT_TIMEOUT_MS), which the migrating connection also carries: no
-- limit for this transaction. The builds block writes to contracts until they commit (34 s
-- at 2,000,000 contracts on 2 cores); docs/query-plans.md says how to build them
-- CONCURRENTLY ahead of the migration instead.
SET LOCAL statement_timeout = 0;--> statement-breakpoint
CREATE TABLE "contract_counts" (
	"personal" boolean NOT NULL,
	"scope_id" uuid NOT NULL,
	"status" "contract_status" NOT NULL,
	"auto_renewal" smallint NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "contract_counts_scope_id_personal_status_auto_renewal_pk" PRIMARY KEY("scope_id","personal","status","auto_renewal")
);
--> statement-breakpoint
CREATE TABLE "contract_date_counts" (
	"personal" boolean NOT NULL,
	"scope_id" uuid NOT NULL,
	"kind" char(1) NOT NULL,
	"day" date NOT NULL,
	"auto_renewal" smallint NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "contract_date_counts_scope_id_personal_kind_day_auto_renewal_pk" PRIMARY KEY("scope_id","personal","kind","day","auto_renewal"),
	CONSTRAINT "contract_date_counts_kind" CHECK ("contract_date_counts"."kind" IN ('e', 'r'))
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_personal_expiration_desc_idx" ON "contracts" USING btree ("owner_id",(CASE WHEN status = 'completed' THEN expiration_date END) DESC NULLS LAST,"id" DESC NULLS FIRST) WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_organization_expiration_desc_idx" ON "contracts" USING btree ("organization_id",(CASE WHEN status = 'completed' THEN expiration_date END) DESC NULLS LAST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_personal_renewal_desc_idx" ON "contracts" USING btree ("owner_id",(CASE WHEN status = 'completed' THEN renewal_date END) DESC NULLS LAST,"id" DESC NULLS FIRST) WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_organization_renewal_desc_idx" ON "contracts" USING btree ("organization_id",(CASE WHEN status = 'completed' THEN renewal_date END) DESC NULLS LAST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_personal_value_idx" ON "contracts" USING btree ("owner_id",(CASE WHEN status = 'completed' THEN contract_value END),"id") WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_organization_value_idx" ON "contracts" USING btree ("organization_id",(CASE WHEN status = 'completed' THEN contract_value END),"id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_personal_value_desc_idx" ON "contracts" USING btree ("owner_id",(CASE WHEN status = 'completed' THEN contract_value END) DESC NULLS LAST,"id" DESC NULLS FIRST) WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_organization_value_desc_idx" ON "contracts" USING btree ("organization_id",(CASE WHEN status = 'completed' THEN contract_value END) DESC NULLS LAST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_personal_title_idx" ON "contracts" USING btree ("owner_id",lower(title),"id") WHERE "contracts"."organization_id" IS NULL;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "contracts_organization_title_idx" ON "contracts" USING btree ("organization_id",lower(title),"id");--> statement-breakpoint
-- The counters of contract_counts and contract_date_counts (db/schema.ts), kept by
-- statement-level triggers with transition tables in the writer's own transaction: one
-- grouped upsert per statement however many rows it wrote, exact and transactional (a
-- rolled-back write never counted). Each statement nets its changes per key first, so an
-- update that changes neither the scope, the status, auto_renewal nor a shown date touches
-- no counter. Keys are upserted in key order, so two writers lock counters in the same
-- order and cannot deadlock on them. The price: writers of one access path and status
-- queue on that counter row until they commit (row lock), which bounds one path's write
-- rate, not the reads.
CREATE FUNCTION "contract_counts_capture"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- The same two upserts for each operation, over the rows it added (+1) and removed (-1);
  -- written out three times rather than as dynamic SQL, so that each keeps its cached plan
  -- (EXECUTE planned them on every statement: about 1 ms more per single-row write). The
  -- date counters hold the dates the API shows: only a completed contract's.
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "contract_counts" AS t ("personal", "scope_id", "status", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), c.status,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, sum(c.d)
    FROM (SELECT owner_id, organization_id, status, auto_renewal, expiration_date, renewal_date, 1 AS d FROM new_rows) c
    GROUP BY 1, 2, 3, 4 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3, 4
    ON CONFLICT ("scope_id", "personal", "status", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
    INSERT INTO "contract_date_counts" AS t ("personal", "scope_id", "kind", "day", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), x.kind, x.day,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, sum(c.d)
    FROM (SELECT owner_id, organization_id, status, auto_renewal, expiration_date, renewal_date, 1 AS d FROM new_rows) c
    CROSS JOIN LATERAL (VALUES ('e', c.expiration_date), ('r', c.renewal_date)) AS x(kind, day)
    WHERE c.status = 'completed' AND x.day IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3, 4, 5
    ON CONFLICT ("scope_id", "personal", "kind", "day", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "contract_counts" AS t ("personal", "scope_id", "status", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), c.status,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, sum(c.d)
    FROM (SELECT owner_id, organization_id, status, auto_renewal, expiration_date, renewal_date, -1 AS d FROM old_rows) c
    GROUP BY 1, 2, 3, 4 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3, 4
    ON CONFLICT ("scope_id", "personal", "status", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
    INSERT INTO "contract_date_counts" AS t ("personal", "scope_id", "kind", "day", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), x.kind, x.day,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, sum(c.d)
    FROM (SELECT owner_id, organization_id, status, auto_renewal, expiration_date, renewal_date, -1 AS d FROM old_rows) c
    CROSS JOIN LATERAL (VALUES ('e', c.expiration_date), ('r', c.renewal_date)) AS x(kind, day)
    WHERE c.status = 'completed' AND x.day IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3, 4, 5
    ON CONFLICT ("scope_id", "personal", "kind", "day", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
  ELSE
    INSERT INTO "contract_counts" AS t ("personal", "scope_id", "status", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), c.status,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, sum(c.d)
    FROM (SELECT owner_id, organization_id, status, auto_renewal, expiration_date, renewal_date, 1 AS d FROM new_rows UNION ALL SELECT owner_id, organization_id, status, auto_renewal, expiration_date, renewal_date, -1 FROM old_rows) c
    GROUP BY 1, 2, 3, 4 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3, 4
    ON CONFLICT ("scope_id", "personal", "status", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
    INSERT INTO "contract_date_counts" AS t ("personal", "scope_id", "kind", "day", "auto_renewal", "n")
    SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), x.kind, x.day,
           CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, sum(c.d)
    FROM (SELECT owner_id, organization_id, status, auto_renewal, expiration_date, renewal_date, 1 AS d FROM new_rows UNION ALL SELECT owner_id, organization_id, status, auto_renewal, expiration_date, renewal_date, -1 FROM old_rows) c
    CROSS JOIN LATERAL (VALUES ('e', c.expiration_date), ('r', c.renewal_date)) AS x(kind, day)
    WHERE c.status = 'completed' AND x.day IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(c.d) <> 0
    ORDER BY 2, 1, 3, 4, 5
    ON CONFLICT ("scope_id", "personal", "kind", "day", "auto_renewal") DO UPDATE SET "n" = t."n" + excluded."n";
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE FUNCTION "contract_counts_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "contract_counts";
  DELETE FROM "contract_date_counts";
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "contracts_counts_insert" AFTER INSERT ON "contracts" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "contract_counts_capture"();--> statement-breakpoint
CREATE TRIGGER "contracts_counts_update" AFTER UPDATE ON "contracts" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "contract_counts_capture"();--> statement-breakpoint
CREATE TRIGGER "contracts_counts_delete" AFTER DELETE ON "contracts" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "contract_counts_capture"();--> statement-breakpoint
CREATE TRIGGER "contracts_counts_truncate" AFTER TRUNCATE ON "contracts" FOR EACH STATEMENT EXECUTE FUNCTION "contract_counts_truncate"();--> statement-breakpoint
-- The rows already there, counted once. The triggers above were created first in this
-- transaction, and CREATE TRIGGER holds a lock that keeps writers out until it commits.
INSERT INTO "contract_counts" ("personal", "scope_id", "status", "auto_renewal", "n")
SELECT organization_id IS NULL, coalesce(organization_id, owner_id), status,
       CASE auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, count(*)
FROM "contracts" GROUP BY 1, 2, 3, 4;--> statement-breakpoint
INSERT INTO "contract_date_counts" ("personal", "scope_id", "kind", "day", "auto_renewal", "n")
SELECT c.organization_id IS NULL, coalesce(c.organization_id, c.owner_id), x.kind, x.day,
       CASE c.auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END, count(*)
FROM "contracts" c
CROSS JOIN LATERAL (VALUES ('e', c.expiration_date), ('r', c.renewal_date)) AS x(kind, day)
WHERE c.status = 'completed' AND x.day IS NOT NULL
GROUP BY 1, 2, 3, 4, 5;
