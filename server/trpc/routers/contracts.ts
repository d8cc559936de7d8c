import {
  getContractInput,
  getContractOutput,
  listContractsInput,
  listContractsOutput,
} from '@/server/contracts/schemas';
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
          'Contracts the caller may access (personal and organisation contracts), newest first (created_at descending, then id descending).',
        protect: true,
      },
    })
    .input(listContractsInput)
    .output(listContractsOutput)
    .query(async ({ ctx, input }) => ({
      success: true as const,
      data: await listContracts(ctx.db, ctx.caller, {
        filters: { status: input.status, organizationId: input.organization_id },
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
