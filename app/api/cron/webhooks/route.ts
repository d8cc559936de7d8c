import { observed } from '@/server/observability/request';
import { handleCronRequest } from '@/server/webhooks/cron';

export const dynamic = 'force-dynamic';
// Vercel: room for the drain's 45 s budget plus the last attempt's 10 s.
export const maxDuration = 60;
export const GET = observed('/api/cron/webhooks', handleCronRequest);
