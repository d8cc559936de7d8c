'use client';

import { createTRPCClient, httpLink } from '@trpc/client';
import type { AppRouter } from '@/server/trpc/root';

/** The browser's client of the app's own tRPC endpoint (session cookie, same origin). */
export const trpc = createTRPCClient<AppRouter>({
  links: [httpLink({ url: '/api/trpc', methodOverride: undefined })],
});
