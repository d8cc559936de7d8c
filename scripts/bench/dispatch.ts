/**
 * What dispatching one JSON operation costs, without the database: the same procedure
 * (get-one's input schema, a constant answer) called three ways, in turns, medians of
 * `--rounds` rounds of `--calls` calls each:
 * - `procedure`: the procedure function invoked directly with tRPC's internal call options
 *   (how server/rest/json-operations.ts called it before it used the public caller);
 * - `caller`: tRPC's public caller, `createCallerFactory(router)` once, `createCaller(ctx)`
 *   and the call per request (what it does now);
 * - `library`: trpc-to-openapi's fetch adapter, `createOpenApiFetchHandler` per request
 *   (how the library is meant to be used).
 *
 *   npx tsx --conditions=react-server scripts/bench/dispatch.ts [--calls 20000] [--rounds 7]
 */
import { parseArgs } from 'node:util';
import type { AnyProcedure } from '@trpc/server';
import { createOpenApiFetchHandler } from 'trpc-to-openapi';
import { z } from 'zod';
import { getContractInput } from '@/server/contracts/schemas';
import { createCallerFactory, createInnerContext, publicProcedure, router } from '@/server/trpc/init';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '7' } } });
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);

const benchRouter = router({
  contracts: router({
    get: publicProcedure
      .meta({ openapi: { method: 'GET', path: '/contracts/{id}', operationId: 'getContract' } })
      .input(getContractInput)
      .output(z.object({ id: z.string() }))
      .query(({ input }) => ({ id: input.id })),
  }),
});
const ID = '3f9c2a4e-8b1d-4c7a-9e2f-1a2b3c4d5e6f';
const ctx = createInnerContext({ db: undefined as never });
const createCaller = createCallerFactory(benchRouter);
// The former way (tRPC internals), measured for comparison only.
const procedure = (benchRouter._def.procedures as unknown as Record<string, AnyProcedure>)['contracts.get']!;

const WAYS: Record<string, () => Promise<unknown>> = {
  procedure: () => procedure({ path: 'contracts.get', getRawInput: async () => ({ id: ID }), ctx, type: 'query', signal: undefined, batchIndex: 0 }) as Promise<unknown>,
  caller: () => createCaller(ctx).contracts.get({ id: ID }),
  library: async () =>
    (await createOpenApiFetchHandler({ endpoint: '/api/v1', router: benchRouter, req: new Request(`http://localhost/api/v1/contracts/${ID}`), createContext: () => ctx })).text(),
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const perCall: Record<string, number[]> = Object.fromEntries(Object.keys(WAYS).map((k) => [k, []]));
for (const way of Object.values(WAYS)) for (let i = 0; i < 2000; i++) await way(); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, way] of Object.entries(WAYS)) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) await way();
    perCall[name]!.push(Number(process.hrtime.bigint() - started) / 1e3 / CALLS);
  }
}
const base = median(perCall.procedure!);
console.log(`node ${process.version}, ${CALLS} calls x ${ROUNDS} rounds, NODE_ENV=${process.env.NODE_ENV ?? '(unset)'}`);
console.log('way        median µs/call   vs procedure');
for (const [name, xs] of Object.entries(perCall)) {
  const m = median(xs);
  console.log(`${name.padEnd(10)} ${m.toFixed(2).padStart(14)}   ${m - base >= 0 ? '+' : ''}${(m - base).toFixed(2)} µs (${(m / base).toFixed(2)}x)`);
}
