import { currentUser } from '@/server/auth/session';
import { serveContractsDownload } from '@/server/contracts/download';

// The contracts page's "Download CSV": the list's CSV for the signed-in user (server/contracts/download.ts).
export const dynamic = 'force-dynamic';

export async function GET(req: Request): Promise<Response> {
  return serveContractsDownload(req, await currentUser());
}
