import { observed } from '@/server/observability/request';
import { handleAppTrpcRequest } from '@/server/trpc/app-handler';

const handler = observed('/api/trpc/[trpc]', handleAppTrpcRequest);
export const dynamic = 'force-dynamic';
export const GET = handler;
export const POST = handler;
