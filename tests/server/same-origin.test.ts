import { describe, expect, it } from 'vitest';
import { isCrossSiteNavigation, isSameOriginRequest } from '@/server/http/same-origin';

/**
 * The host an Origin is compared with, behind zero, one or several proxies. The
 * cross-site shapes themselves (Sec-Fetch-Site, null and look-alike origins) are in
 * tests/reliability/web-security.test.ts.
 */

const post = (headers: Record<string, string>) =>
  new Request('http://127.0.0.1:3000/api/trpc/apiKeys.create', { method: 'POST', headers });

describe('isSameOriginRequest: the host the browser addressed', () => {
  it('served directly: Host', () => {
    expect(isSameOriginRequest(post({ Host: 'localhost:3000', Origin: 'http://localhost:3000' }))).toBe(true);
    expect(isSameOriginRequest(post({ Host: 'localhost:3000', Origin: 'http://evil.example' }))).toBe(false);
  });

  it('behind a proxy that rewrites Host: the X-Forwarded-Host it sets', () => {
    const headers = { Host: '127.0.0.1:3000', 'X-Forwarded-Host': 'contracts.example.com', Origin: 'https://contracts.example.com' };
    expect(isSameOriginRequest(post(headers))).toBe(true);
    expect(isSameOriginRequest(post({ ...headers, Origin: 'https://evil.example' }))).toBe(false);
  });

  it('behind several proxies: the first entry of the list, what the proxy nearest the browser saw', () => {
    const list = 'contracts.example.com, internal-lb.local:8080,127.0.0.1:3000';
    expect(isSameOriginRequest(post({ 'X-Forwarded-Host': list, Origin: 'https://contracts.example.com' }))).toBe(true);
    // A list was compared whole before: a same-origin request behind two proxies was refused.
    expect(isSameOriginRequest(post({ 'X-Forwarded-Host': `  contracts.example.com  ,${list}`, Origin: 'https://contracts.example.com' }))).toBe(true);
    // Only the first entry counts: a later entry naming the attacker's site does not match it.
    expect(isSameOriginRequest(post({ 'X-Forwarded-Host': 'contracts.example.com, evil.example', Origin: 'https://evil.example' }))).toBe(false);
  });

  it('compares hosts as URLs do: case and the default port do not matter, the scheme does', () => {
    expect(isSameOriginRequest(post({ 'X-Forwarded-Host': 'Contracts.Example.COM:443', Origin: 'https://contracts.example.com' }))).toBe(true);
    expect(isSameOriginRequest(post({ 'X-Forwarded-Host': 'contracts.example.com:8443', Origin: 'https://contracts.example.com' }))).toBe(false);
    expect(isSameOriginRequest(post({ 'X-Forwarded-Host': 'contracts.example.com:80', Origin: 'https://contracts.example.com' }))).toBe(false);
  });

  it('a host that is not a host matches nothing', () => {
    for (const host of ['evil.example/@contracts.example.com', 'x@contracts.example.com', 'contracts.example.com/path', 'contracts.example.com?', '']) {
      expect(isSameOriginRequest(post({ 'X-Forwarded-Host': host, Host: '', Origin: 'https://contracts.example.com' })), host).toBe(false);
    }
    expect(isSameOriginRequest(post({ Origin: 'https://contracts.example.com' }))).toBe(false);
  });
});

describe('isCrossSiteNavigation: a GET that uses the session cookie (the CSV download)', () => {
  const get = (headers: Record<string, string>) => new Request('http://127.0.0.1:3000/contracts/export', { headers: { Host: 'contracts.example.com', ...headers } });

  it('believes Sec-Fetch-Site: only this origin or the browser itself (typed, a bookmark)', () => {
    expect(isCrossSiteNavigation(get({ 'Sec-Fetch-Site': 'same-origin' }))).toBe(false);
    expect(isCrossSiteNavigation(get({ 'Sec-Fetch-Site': 'none' }))).toBe(false);
    expect(isCrossSiteNavigation(get({ 'Sec-Fetch-Site': 'same-site' }))).toBe(true);
    expect(isCrossSiteNavigation(get({ 'Sec-Fetch-Site': 'cross-site' }))).toBe(true);
    // A same-origin Referer does not outvote the browser's own statement.
    expect(isCrossSiteNavigation(get({ 'Sec-Fetch-Site': 'cross-site', Referer: 'https://contracts.example.com/contracts' }))).toBe(true);
  });

  it('without Fetch Metadata, reads Referer: another origin, a look-alike or garbage is another site', () => {
    expect(isCrossSiteNavigation(get({ Referer: 'https://contracts.example.com/contracts?status=completed' }))).toBe(false);
    for (const referer of ['https://evil.example/', 'https://contracts.example.com.evil.example/', 'https://evil.example/https://contracts.example.com', 'null', 'not a url']) {
      expect(isCrossSiteNavigation(get({ Referer: referer })), referer).toBe(true);
    }
  });

  it('with neither header the request does not come from another site’s page', () => {
    expect(isCrossSiteNavigation(get({}))).toBe(false);
  });
});
