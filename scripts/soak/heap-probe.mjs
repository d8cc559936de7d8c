/**
 * Loaded into the soak's own server only (node --expose-gc --import this file; never in a
 * deployment): on SIGUSR2 it runs full garbage collections and appends the process's memory
 * figures to SOAK_HEAP_FILE as one JSON line. The soak compares the live heap after the
 * warm-up with the live heap after the soak: unlike RSS, which moves with V8's heap sizing
 * and malloc's arenas from one run to the next, what survives a full collection only grows
 * when something keeps what it should not.
 */
import { appendFileSync } from 'node:fs';

const file = process.env.SOAK_HEAP_FILE;
if (file && typeof globalThis.gc === 'function') {
  process.on('SIGUSR2', () => {
    // Twice: the first collection runs finalizers and clears weak references whose
    // targets the second one then frees.
    globalThis.gc();
    globalThis.gc();
    const m = process.memoryUsage();
    appendFileSync(
      file,
      `${JSON.stringify({ heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, heapTotal: m.heapTotal, rss: m.rss })}\n`,
    );
  });
}
