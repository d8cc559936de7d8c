import { getOneAnswer } from '../../../../../../floor-core';
import { serve } from '../../../../../handler';

export const dynamic = 'force-dynamic';

export async function GET(req: Request, { params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return serve(req, (db, scope) => getOneAnswer(db, scope, id));
}
