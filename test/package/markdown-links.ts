import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** A link of a Markdown file to another file or a heading: `[text](target)`, outside code. */
export interface MarkdownLink {
  line: number;
  target: string;
}

/** The links of `markdown` that stay inside its tree: relative paths and `#anchors` (not `https:`, not `mailto:`, not `/site-absolute`). */
export function relativeLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  let fenced = false;
  markdown.split('\n').forEach((text, index) => {
    if (/^\s*(`{3,}|~{3,})/.test(text)) fenced = !fenced;
    if (fenced) return;
    const prose = text.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('/')) links.push({ line: index + 1, target });
    }
  });
  return links;
}

/** A heading's anchor as GitHub (and VitePress, for plain headings) makes it: lower case, punctuation dropped, spaces to hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(path: string): Set<string> {
  const headings = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => /^#{1,6}\s/.test(line));
  return new Set(headings.map((line) => headingSlug(line.replace(/^#+\s+/, ''))));
}

/**
 * The links of `file` (relative to `root`) that do not resolve inside `root`: a file that is not
 * there, or a heading that the target Markdown file does not have. Empty when all resolve.
 */
export function brokenLinks(root: string, file: string): string[] {
  const path = join(root, file);
  const problems: string[] = [];
  for (const { line, target } of relativeLinks(readFileSync(path, 'utf8'))) {
    const [pathPart, anchor] = target.split('#') as [string, string | undefined];
    const resolved = pathPart === '' ? path : resolve(dirname(path), decodeURIComponent(pathPart));
    const inside = relative(root, resolved);
    if (inside.startsWith('..')) problems.push(`${file}:${line}: ${target} leads out of ${root}`);
    else if (!existsSync(resolved)) problems.push(`${file}:${line}: ${target} does not exist`);
    else if (anchor && statSync(resolved).isFile() && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
      problems.push(`${file}:${line}: ${target}: ${inside} has no heading #${anchor}`);
    }
  }
  return problems;
}
