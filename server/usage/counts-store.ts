import type { Database } from '@/db/client';
import { addUsage, selectUsage, type UsageIncrement } from '@/db/queries/key-activity';
import { USAGE_DAYS, USAGE_HOURS, USAGE_OPERATIONS, USAGE_OUTCOMES } from '@/lib/key-activity';
import type { RatelimitRedis, RateLimitStore } from '@/server/rate-limit/types';

/**
 * Where per-key usage counts live: the rate limits' Redis (plain Redis or Upstash) when one
 * is configured, so that every instance adds to one set of counts; else the database
 * (the in-memory store means a single instance, whose counts are flushed to the
 * key_usage table). Either way an instance sends its counts once a second
 * (./recorder.ts), never on a request's path.
 */
export interface UsageCountsStore {
  readonly kind: 'redis' | 'database';
  add(increments: UsageIncrement[]): Promise<void>;
  /** One key's counts of a granularity for the bucket starts given. */
  read(tokenId: string, granularity: 'hour' | 'day', starts: Date[]): Promise<Omit<UsageIncrement, 'tokenId' | 'granularity'>[]>;
}

export function usageCountsStore(rateLimitStore: RateLimitStore, db: () => Promise<Database>): UsageCountsStore {
  return rateLimitStore.kind === 'memory' ? databaseCounts(db) : redisCounts(rateLimitStore.redis);
}

function databaseCounts(db: () => Promise<Database>): UsageCountsStore {
  return {
    kind: 'database',
    async add(increments) {
      await addUsage(await db(), increments);
    },
    async read(tokenId, granularity, starts) {
      if (starts.length === 0) return [];
      const from = starts.reduce((a, b) => (a < b ? a : b));
      return selectUsage(await db(), tokenId, granularity, from);
    },
  };
}

// Redis: one hash per key and bucket (cda:usage:<key id>:<h|d>:<bucket start, epoch ms>),
// a field per operation and outcome ("read:2xx"), expiring a little after it leaves the
// page (hourly 49 h, daily 91 days): no retention job needed there.
const PREFIX = 'cda:usage';
const TTL_SECONDS = { hour: (USAGE_HOURS + 1) * 3600, day: (USAGE_DAYS + 1) * 86_400 };
const FIELDS = USAGE_OPERATIONS.flatMap((operation) => USAGE_OUTCOMES.map((outcome) => ({ operation, outcome, field: `${operation}:${outcome}` })));

const keyOf = (tokenId: string, granularity: 'hour' | 'day', start: Date) => `${PREFIX}:${tokenId}:${granularity === 'hour' ? 'h' : 'd'}:${start.getTime()}`;

// ARGV, per key in KEYS order: its TTL, the number of fields m, then m pairs field, count.
const ADD_SCRIPT = `
local a = 1
for i, key in ipairs(KEYS) do
  local ttl = tonumber(ARGV[a]); local m = tonumber(ARGV[a + 1]); a = a + 2
  for j = 1, m do
    redis.call('HINCRBY', key, ARGV[a], tonumber(ARGV[a + 1])); a = a + 2
  end
  redis.call('EXPIRE', key, ttl)
end
return 1`;

// Numbers only in the answer (Upstash encodes strings): per key, the fields of ARGV in order.
const READ_SCRIPT = `
local out = {}
for i, key in ipairs(KEYS) do
  local values = redis.call('HMGET', key, unpack(ARGV))
  for j = 1, #ARGV do out[#out + 1] = tonumber(values[j]) or 0 end
end
return out`;

function redisCounts(redis: RatelimitRedis): UsageCountsStore {
  return {
    kind: 'redis',
    async add(increments) {
      if (increments.length === 0) return;
      const byKey = new Map<string, { ttl: number; fields: Map<string, number> }>();
      for (const inc of increments) {
        const key = keyOf(inc.tokenId, inc.granularity, inc.bucketStart);
        let entry = byKey.get(key);
        if (!entry) byKey.set(key, (entry = { ttl: TTL_SECONDS[inc.granularity], fields: new Map() }));
        const field = `${inc.operation}:${inc.outcome}`;
        entry.fields.set(field, (entry.fields.get(field) ?? 0) + inc.n);
      }
      const keys: string[] = [];
      const args: (string | number)[] = [];
      for (const [key, { ttl, fields }] of byKey) {
        keys.push(key);
        args.push(ttl, fields.size);
        for (const [field, n] of fields) args.push(field, n);
      }
      await redis.eval(ADD_SCRIPT, keys, args);
    },
    async read(tokenId, granularity, starts) {
      if (starts.length === 0) return [];
      const values = (await redis.eval(
        READ_SCRIPT,
        starts.map((start) => keyOf(tokenId, granularity, start)),
        FIELDS.map((f) => f.field),
      )) as number[];
      const rows: Omit<UsageIncrement, 'tokenId' | 'granularity'>[] = [];
      starts.forEach((bucketStart, i) => {
        FIELDS.forEach(({ operation, outcome }, j) => {
          const n = Number(values[i * FIELDS.length + j] ?? 0);
          if (n > 0) rows.push({ bucketStart, operation, outcome, n });
        });
      });
      return rows;
    },
  };
}
