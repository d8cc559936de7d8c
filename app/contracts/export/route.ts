import { currentUser } from '@/server/auth/session';
import { serveContractsDownload } from '@/server/contracts/download';
import { observed } from '@/server/observability/request';

// The contracts page's "Download CSV": the list's CSV for the signed-in user (server/contracts/download.ts).
export const dynamic = 'force-dynamic';

export const GET = observed('/contracts/export', async (req: Request) => serveContractsDownload(req, await currentUser()));
