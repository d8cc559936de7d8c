import { handleAppTrpcRequest } from '@/server/trpc/app-handler';

export const dynamic = 'force-dynamic';
export const GET = handleAppTrpcRequest;
export const POST = handleAppTrpcRequest;
