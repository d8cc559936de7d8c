import { readFileSync } from 'node:fs';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import ChangelogPage from '@/app/docs/changelog/page';
import { CHANGELOG, changelogVersion, versionsOf, type ChangelogEntry } from '@/server/rest/changelog';
import { CHANGELOG_FILE, changelogFile } from '@/server/rest/changelog-markdown';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';

/**
 * The changelog (server/rest/changelog.ts) and what is derived from it: docs/changelog.md,
 * the OpenAPI document's info.version, the "Changelog" section of its introduction,
 * which the API reference (/docs/api) renders, and the page /docs/changelog, where the
 * deprecation Link headers point.
 */

type Json = Record<string, unknown>;

describe('the changelog', () => {
  it('is what docs/changelog.md says (run `npm run changelog:generate` after changing an entry)', () => {
    expect(readFileSync(CHANGELOG_FILE, 'utf8')).toBe(changelogFile(CHANGELOG));
  });

  it('lists entries newest first, each with its own anchor, the first release last', () => {
    for (let i = 1; i < CHANGELOG.length; i++) expect(CHANGELOG[i - 1]!.date >= CHANGELOG[i]!.date, CHANGELOG[i]!.anchor).toBe(true);
    const anchors = CHANGELOG.map((e) => e.anchor);
    expect(new Set(anchors).size).toBe(anchors.length);
    for (const entry of CHANGELOG) {
      expect(entry.anchor).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(new Date(`${entry.date}T00:00:00Z`).toISOString().slice(0, 10)).toBe(entry.date);
      expect(entry.body.trim().length, entry.anchor).toBeGreaterThan(0);
    }
    expect(CHANGELOG.at(-1)).toMatchObject({ kind: 'release', anchor: 'v1' });
  });

  it('derives the version: a fix raises the patch, anything else the minor, so every entry changes it', () => {
    const entry = (kind: ChangelogEntry['kind'], anchor: string): ChangelogEntry => ({ date: '2026-12-01', anchor, kind, title: anchor, body: anchor });
    const log = [entry('added', 'd'), entry('fixed', 'c'), entry('fixed', 'b'), entry('changed', 'a'), entry('release', 'v1')];
    expect(versionsOf(log)).toEqual(['1.2.0', '1.1.2', '1.1.1', '1.1.0', '1.0.0']);
    expect(changelogVersion([entry('fixed', 'x'), ...CHANGELOG])).not.toBe(changelogVersion());
    expect(changelogVersion([entry('deprecated', 'x'), ...CHANGELOG])).not.toBe(changelogVersion());
    expect(() => versionsOf([entry('added', 'a')])).toThrow(/release/);
  });
});

describe('the OpenAPI document', () => {
  const doc = buildOpenApiDocument('https://api.example.test');
  const info = doc.info as Json;

  it('carries the changelog\'s version, in info and in its own example', () => {
    expect(info.version).toBe(changelogVersion());
    const example = ((((doc.paths as Json)['/openapi.json'] as Json).get as Json).responses as Record<string, Json>)['200']!;
    expect(JSON.stringify(example)).toContain(`"version":"${changelogVersion()}"`);
  });

  it('shows the change policy and every entry in its introduction, linked on the deployment\'s origin', () => {
    const description = String(info.description);
    expect(description).toContain('## Changes and deprecation');
    expect(description).toContain('## Changelog');
    const versions = versionsOf(CHANGELOG);
    CHANGELOG.forEach((entry, i) => {
      expect(description, entry.anchor).toContain(`- **${versions[i]}** (${entry.date})`);
      expect(description, entry.anchor).toContain(`(https://api.example.test/docs/changelog#${entry.anchor})`);
    });
    // The changelog comes last: the sections before it keep their place in the reference's sidebar.
    expect(description.indexOf('## Changelog')).toBeGreaterThan(description.indexOf('## Typed client'));
  });
});

describe('the page /docs/changelog', () => {
  it('has a section for every entry, its anchor as its id, and says what is deprecated now', () => {
    const html = renderToStaticMarkup(createElement(ChangelogPage));
    for (const entry of CHANGELOG) expect(html, entry.anchor).toContain(`<section id="${entry.anchor}">`);
    expect(html).toContain('Nothing is deprecated at the moment.');
    expect(html).toContain('<code>npm run apikey -- roll</code>');
  });
});
