import { handleMetricsRequest } from '@/server/health/metrics-endpoint';

// Prometheus text, read afresh on every scrape.
export const dynamic = 'force-dynamic';
export const GET = handleMetricsRequest;
