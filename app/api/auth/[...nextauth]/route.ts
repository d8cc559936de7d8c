export { GET, POST } from '@/server/auth/route-handlers';
