import { GET as get, POST as post } from '@/server/auth/route-handlers';
import { observed } from '@/server/observability/request';

export const GET = observed('/api/auth/[...nextauth]', get);
export const POST = observed('/api/auth/[...nextauth]', post);
