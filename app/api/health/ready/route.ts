import { handleReadiness } from '@/server/health/handlers';

export const dynamic = 'force-dynamic';
export const GET = handleReadiness;
export const HEAD = handleReadiness;
