import { listAnswer } from '../../../../../floor-core';
import { serve } from '../../../../handler';

export const dynamic = 'force-dynamic';

export function GET(req: Request) {
  return serve(req, (db, scope) => listAnswer(db, scope, new URL(req.url).searchParams));
}
