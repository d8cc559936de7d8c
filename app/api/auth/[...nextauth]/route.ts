import { handlers } from '@/server/auth/next-auth';

export const { GET, POST } = handlers;
