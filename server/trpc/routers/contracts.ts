import { listContractsPage } from '@/server/contracts/list';
import { getContractInput, listContractsInput } from '@/server/contracts/schemas';
import { getContract } from '@/server/contracts/service';
import { getContractOutput, listContractsOutput } from '@/server/contracts/shape';
import { linkTo } from '@/server/http/links';
import { apiKeyProcedure, router } from '../init';

const TAGS = ['Contracts'];

/** The public REST API's JSON operations (served by trpc-to-openapi under /api/v1). */
export const contractsRouter = router({
  list: apiKeyProcedure('general')
    .meta({
      openapi: {
        method: 'GET',
        path: '/contracts',
        operationId: 'listContracts',
        tags: TAGS,
        summary: 'List contracts',
        description:
          'Contracts the caller may access (personal and organisation contracts), newest first (created_at descending, then id descending) unless `sort` says otherwise. Filters combine with AND. Page with `cursor` (every page costs the same however deep: pass `pagination.next_cursor`, also in the `Link: <…>; rel="next"` header) or with `offset`. For incremental sync, pass `updated_since` (the time of your previous sync, minus a minute of margin) with `sort=updated_at`.',
        protect: true,
      },
    })
    .input(listContractsInput)
    .output(listContractsOutput)
    .query(async ({ ctx, input }) => {
      const data = await listContractsPage(ctx.readDb, ctx.caller.scope, input);
      const next = data.pagination.next_cursor;
      if (next) ctx.setHeader('Link', linkTo(ctx, 'next', { cursor: next, offset: undefined }));
      return { success: true as const, data };
    }),

  get: apiKeyProcedure('general')
    .meta({
      openapi: {
        method: 'GET',
        path: '/contracts/{id}',
        operationId: 'getContract',
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
      data: { contract: await getContract(ctx.readDb, ctx.caller.scope, input.id) },
    })),
});
