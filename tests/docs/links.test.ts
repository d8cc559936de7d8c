import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Every relative link of README.md and docs/*.md resolves: the file or directory exists
 * (relative to the linking file; a leading `/` is the repository root, as on GitHub), and
 * a `#fragment` names a heading or an explicit `<a id>`/`<a name>` anchor of the target
 * Markdown file, with GitHub's slugs. Links to http(s), mailto and other schemes are not
 * checked, nor anything inside fenced code blocks or code spans.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** GitHub's heading slug (github-slugger): lower case, punctuation dropped, each space a hyphen. */
function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The text GitHub renders for a heading's Markdown: links, images, code, emphasis and tags reduced to their text. */
function headingText(markdown: string): string {
  return markdown
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|[\s(])[*_]([^*_]+)[*_](?=$|[\s).,:;!?])/g, '$1$2')
    .trim();
}

type Line = { text: string; number: number };

/** The lines outside fenced code blocks (``` or ~~~, indented or not), with their numbers. */
function proseLines(markdown: string): Line[] {
  const lines: Line[] = [];
  let fence: { char: string; length: number } | undefined;
  markdown.split('\n').forEach((text, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text);
    if (fence) {
      if (marker && marker[1]![0] === fence.char && marker[1]!.length >= fence.length && text.trim() === marker[1]) fence = undefined;
      return;
    }
    if (marker) {
      fence = { char: marker[1]![0]!, length: marker[1]!.length };
      return;
    }
    lines.push({ text, number: index + 1 });
  });
  return lines;
}

/** The anchors a Markdown file offers: its headings' slugs (duplicates numbered -1, -2, …) and explicit HTML anchors. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const occurrences = new Map<string, number>();
  const addHeading = (markdown: string) => {
    const base = githubSlug(headingText(markdown));
    let slug = base;
    while (occurrences.has(slug)) {
      const n = occurrences.get(base)! + 1;
      occurrences.set(base, n);
      slug = `${base}-${n}`;
    }
    occurrences.set(slug, 0);
    anchors.add(slug);
  };
  const lines = proseLines(markdown);
  lines.forEach(({ text }, i) => {
    const atx = /^ {0,3}#{1,6}(?:\s+(.*?))?(?:\s+#+)?\s*$/.exec(text);
    if (atx) addHeading(atx[1] ?? '');
    // A setext heading: a paragraph line underlined with = or - (not a list item, table or heading).
    const next = lines[i + 1];
    if (!atx && next && next.number === lines[i]!.number + 1 && /^ {0,3}(=+|-+)\s*$/.test(next.text) && /^ {0,3}[^\s#>|*+-]/.test(text) && !/^\s*\d+[.)]\s/.test(text)) {
      const previous = lines[i - 1];
      if (!previous || previous.number !== lines[i]!.number - 1 || previous.text.trim() === '') addHeading(text.trim());
    }
    for (const match of text.matchAll(/<a\s[^>]*?\b(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi)) {
      anchors.add(match[1] ?? match[2] ?? match[3]!);
    }
  });
  return anchors;
}

type Link = { line: number; target: string };

/** The link targets of a Markdown file outside code: inline links and images, and reference definitions. */
function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  for (const { text, number } of proseLines(markdown)) {
    // Code spans are not links; keep the brackets of a link whose text is code.
    const prose = text.replace(/(`+)(?:(?!\1).)+?\1/g, 'code');
    for (const match of prose.matchAll(/\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g)) {
      links.push({ line: number, target: match[1]!.replace(/^<|>$/g, '') });
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(prose);
    if (definition) links.push({ line: number, target: definition[1]!.replace(/^<|>$/g, '') });
  }
  return links;
}

/** Every broken link of the given Markdown files (paths relative to root), as `file:line -> target (why)`. */
function brokenLinks(root: string, files: string[]): string[] {
  const broken: string[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchorsOfFile = (file: string) => {
    if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(readFileSync(file, 'utf8')));
    return anchorCache.get(file)!;
  };
  for (const file of files) {
    const absolute = path.join(root, file);
    for (const { line, target } of linksOf(readFileSync(absolute, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http(s), mailto, webcal, …
      const report = (why: string) => broken.push(`${file}:${line} -> ${target} (${why})`);
      const hash = target.indexOf('#');
      const rawPath = hash === -1 ? target : target.slice(0, hash);
      const fragment = hash === -1 ? undefined : target.slice(hash + 1);
      let linkPath: string;
      try {
        linkPath = decodeURIComponent(rawPath.split('?')[0]!);
      } catch {
        report('not a valid URL');
        continue;
      }
      const resolved = linkPath === '' ? absolute : linkPath.startsWith('/') ? path.join(root, linkPath) : path.resolve(path.dirname(absolute), linkPath);
      if (path.relative(root, resolved).startsWith('..')) {
        report('outside the repository');
        continue;
      }
      if (!existsSync(resolved)) {
        report('no such file');
        continue;
      }
      if (fragment === undefined) continue;
      if (fragment === '') {
        report('empty anchor');
        continue;
      }
      if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
        if (!/^L\d+(-L\d+)?$/.test(fragment)) report('an anchor in a file that is not Markdown');
        continue;
      }
      let anchor: string;
      try {
        anchor = decodeURIComponent(fragment);
      } catch {
        report('not a valid anchor');
        continue;
      }
      if (!anchorsOfFile(resolved).has(anchor)) report(`no heading or anchor "${anchor}" in ${path.relative(root, resolved)}`);
    }
  }
  return broken;
}

/** README.md and every Markdown file of docs/. */
function documentation(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

describe('links of README.md and docs/', () => {
  it('every relative link and anchor resolves', () => {
    const broken = brokenLinks(ROOT, documentation());
    expect(broken, `${broken.length} broken link(s):\n${broken.join('\n')}`).toEqual([]);
  });
});

describe('the link check itself', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cda-links-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('makes GitHub\'s slugs', () => {
    expect(githubSlug(headingText("Vercel's build, before you push"))).toBe('vercels-build-before-you-push');
    expect(githubSlug(headingText('Paging: `cursor` or `offset`'))).toBe('paging-cursor-or-offset');
    expect(githubSlug(headingText('Activity of a key: usage, request log, security log'))).toBe('activity-of-a-key-usage-request-log-security-log');
    expect(githubSlug(headingText('The API (v1) — **keys** and [links](x.md)'))).toBe('the-api-v1--keys-and-links');
    expect(githubSlug(headingText('`DATABASE_URL` and café'))).toBe('database_url-and-café');
    expect([...anchorsOf('# A\n\n## Same\n\n## Same\n\n### Same\n\nSetext\n------\n\n<a id="here"></a>\n<a name=there>\n')]).toEqual(['a', 'same', 'same-1', 'same-2', 'setext', 'here', 'there']);
  });

  it('ignores links and headings inside fenced code and code spans', () => {
    const markdown = 'Text [ok](b.md) and `[not](c.md)`.\n\n```md\n# Not a heading\n[not](d.md)\n```\n\n   ~~~\n   [not](e.md)\n   ~~~\n';
    expect(linksOf(markdown).map((l) => l.target)).toEqual(['b.md']);
    expect([...anchorsOf(markdown)]).toEqual([]);
  });

  it('reports every broken link with its file and line, and passes good ones', () => {
    writeFileSync(path.join(dir, 'a.md'), '# Title\n\n## Second part\n');
    writeFileSync(path.join(dir, 'source.ts'), 'export {};\n');
    writeFileSync(
      path.join(dir, 'b.md'),
      [
        '# B',
        '[fine](a.md) [fine](a.md#second-part) [fine](#b) [fine](./a.md#title) [fine](source.ts) [fine](source.ts#L1) [fine](https://example.com/x#y) [fine](mailto:a@b.c)',
        '[missing file](nope.md)',
        '[missing anchor](a.md#third-part) [missing here](#nothing)',
        '[outside](../elsewhere.md) [anchor in code](source.ts#top)',
        '[ref]: gone/file.ts',
      ].join('\n'),
    );
    expect(brokenLinks(dir, ['b.md'])).toEqual([
      'b.md:3 -> nope.md (no such file)',
      'b.md:4 -> a.md#third-part (no heading or anchor "third-part" in a.md)',
      'b.md:4 -> #nothing (no heading or anchor "nothing" in b.md)',
      'b.md:5 -> ../elsewhere.md (outside the repository)',
      'b.md:5 -> source.ts#top (an anchor in a file that is not Markdown)',
      'b.md:6 -> gone/file.ts (no such file)',
    ]);
  });
});
