import {
  getContractInput,
  getContractOutput,
  listContractsInput,
  listContractsOutput,
} from '@/server/contracts/schemas';
import { toContractFilters, toSort } from '@/server/contracts/query';
import { getContract, listContracts } from '@/server/contracts/service';
import { apiKeyProcedure, router } from '../init';

const TAGS = ['Contracts'];

/** The public REST API's JSON operations (served by trpc-to-openapi under /api/v1). */
export const contractsRouter = router({
  list: apiKeyProcedure('general')
    .meta({
      openapi: {
        method: 'GET',
        path: '/contracts',
        tags: TAGS,
        summary: 'List contracts',
        description:
          'Contracts the caller may access (personal and organisation contracts), newest first (created_at descending, then id descending) unless `sort` says otherwise. Filters combine with AND. For incremental sync, pass `updated_since` (the time of your previous sync, minus a minute of margin) with `sort=updated_at`.',
        protect: true,
      },
    })
    .input(listContractsInput)
    .output(listContractsOutput)
    .query(async ({ ctx, input }) => ({
      success: true as const,
      data: await listContracts(ctx.db, ctx.caller, {
        filters: toContractFilters(input),
        sort: toSort(input.sort),
        limit: input.limit,
        offset: input.offset,
      }),
    })),

  get: apiKeyProcedure('general')
    .meta({
      openapi: {
        method: 'GET',
        path: '/contracts/{id}',
        tags: TAGS,
        summary: 'Get one contract',
        description: 'One contract with its extracted data. A contract that does not exist or that the caller cannot access is a 404.',
        protect: true,
      },
    })
    .input(getContractInput)
    .output(getContractOutput)
    .query(async ({ ctx, input }) => ({
      success: true as const,
      data: { contract: await getContract(ctx.db, ctx.caller, input.id) },
    })),
});
