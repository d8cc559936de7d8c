import { currentUser } from '@/server/auth/session';
import { observed } from '@/server/observability/request';
import { organizationLog, serveSecurityLogDownload } from '@/server/security-log/download';

// An organisation's page, its security log's "Download CSV" (server/security-log/download.ts).
export const dynamic = 'force-dynamic';

export const GET = observed('/settings/organizations/[id]/security-log/export', async (req: Request, { params }: { params: Promise<{ id: string }> }) =>
  serveSecurityLogDownload(req, await currentUser(), organizationLog((await params).id)),
);
