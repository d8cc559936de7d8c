/**
 * The map @upstash/ratelimit uses as its "ephemeral cache": identifier -> epoch ms until
 * which the identifier is known to be denied, so a client hammering past its limit costs
 * no store call. The library deletes an entry only when the same identifier comes back
 * after its reset, so identifiers that never return (client addresses in the
 * auth_failure bucket, say) would pile up forever. This map drops expired entries once
 * it reaches `maxEntries`, and everything if they are all still live.
 */
export class BlockedUntilMap extends Map<string, number> {
  constructor(
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {
    super();
  }

  override set(identifier: string, blockedUntil: number): this {
    if (this.size >= this.maxEntries && !this.has(identifier)) this.prune();
    return super.set(identifier, blockedUntil);
  }

  private prune() {
    const now = this.now();
    for (const [identifier, blockedUntil] of this) {
      if (blockedUntil < now) this.delete(identifier);
    }
    // Still full of live blocks: forgetting them is safe (the store still holds the
    // counts), it only costs store calls until they are denied again.
    if (this.size >= this.maxEntries) this.clear();
  }
}
