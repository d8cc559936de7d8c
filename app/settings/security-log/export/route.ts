import { currentUser } from '@/server/auth/session';
import { observed } from '@/server/observability/request';
import { ownLog, serveSecurityLogDownload } from '@/server/security-log/download';

// Settings → Security log's "Download CSV" (server/security-log/download.ts).
export const dynamic = 'force-dynamic';

export const GET = observed('/settings/security-log/export', async (req: Request) => serveSecurityLogDownload(req, await currentUser(), ownLog));
