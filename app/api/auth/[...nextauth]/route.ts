import { routeHandlers } from '@/server/auth/next-auth';

export const { GET, POST } = routeHandlers;
