import { handleLiveness } from '@/server/health/handlers';

// Answered on every request, never prerendered at build time.
export const dynamic = 'force-dynamic';
export const GET = handleLiveness;
export const HEAD = handleLiveness;
