import { openPostgres } from './db/client';
const h = await openPostgres('postgres://postgres@127.0.0.1:6499/postgres', { max: 1, prepare: process.argv[2] !== 'prepare' ? false : true });
const t = (p: Promise<unknown>, ms = 3000) => Promise.race([p.then(() => 'ok', (e) => 'err ' + e.code), new Promise((r) => setTimeout(() => r('HANG'), ms))]);
let ok = 0;
for (let i = 0; i < 50; i++) {
  const r = await Promise.all([t(h.query('select pg_sleep(0.005)')), t(h.query('select $1::int as n', [i]))]);
  if (r.includes('HANG')) { console.log('HANG at', i, r); break; } ok++;
}
console.log({ ok }); await h.close(); process.exit(0);
