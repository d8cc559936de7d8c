/**
 * Waits while a rate-limit window of `seconds` is about to end. The limits are sliding
 * windows counted from fixed boundaries: right after a boundary the previous window's count
 * is weighted by the share of it left, so a sequence that crosses one can let through an
 * attempt that the exact count would refuse. A test that counts attempts exactly starts with
 * at least `marginMs` left before the next boundary.
 */
export async function awayFromWindowEdge(seconds: number, marginMs: number): Promise<void> {
  const windowMs = seconds * 1000;
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
