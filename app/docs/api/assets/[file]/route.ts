import { scalarBundleResponse } from '@/server/docs/scalar-bundle';
import { observed } from '@/server/observability/request';

// Read from node_modules at run time (once per process), not prerendered into the build.
export const dynamic = 'force-dynamic';

type Context = { params: Promise<{ file: string }> };

export const GET = observed('/docs/api/assets/[file]', async (req: Request, { params }: Context) => scalarBundleResponse((await params).file, req));

export const HEAD = GET;
