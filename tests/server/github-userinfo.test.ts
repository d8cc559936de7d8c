import { describe, expect, it } from 'vitest';
import { verifiedEmailOf } from '@/server/auth/github-userinfo';

describe('the address taken from GitHub', () => {
  it('is the primary verified address, else another verified one, never an unverified one', () => {
    expect(verifiedEmailOf([{ email: 'a@x.com', primary: true, verified: true }, { email: 'b@x.com', primary: false, verified: true }])).toBe('a@x.com');
    expect(verifiedEmailOf([{ email: 'a@x.com', primary: true, verified: false }, { email: 'b@x.com', primary: false, verified: true }])).toBe('b@x.com');
    expect(verifiedEmailOf([{ email: 'a@x.com', primary: true, verified: false }])).toBeNull();
    expect(verifiedEmailOf([])).toBeNull();
    expect(verifiedEmailOf({ message: 'Bad credentials' })).toBeNull();
    expect(verifiedEmailOf([null, { email: 42, verified: true }])).toBeNull();
  });
});
