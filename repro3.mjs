import postgres from 'postgres';
for (const mp of [0, 1]) {
  const sql = postgres('postgres://postgres@127.0.0.1:6499/postgres', { max: 2, prepare: false, max_pipeline: mp, onnotice() {} });
  try { const r = await sql.begin(async (tx) => (await tx`select ${1}::int as n`)[0].n); console.log(mp, 'begin ok', r); } catch (e) { console.log(mp, 'begin failed', e.message); }
  await sql.end({ timeout: 1 });
}
