import { scalarBundleResponse } from '@/server/docs/scalar-bundle';

// Read from node_modules at run time (once per process), not prerendered into the build.
export const dynamic = 'force-dynamic';

type Context = { params: Promise<{ file: string }> };

export async function GET(req: Request, { params }: Context): Promise<Response> {
  return scalarBundleResponse((await params).file, req);
}

export const HEAD = GET;
