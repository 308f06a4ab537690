// Checks the built documentation site (dist/docs, or the folder given): every internal link and
// anchor resolves, and no page makes the browser fetch anything from elsewhere.
//   - Links: <a href>, <img src>, <script src>, <link href>, <source srcset> and CSS url(...) that
//     stay on the site must name a file of the build (a page `x.html`, a folder's index.html, an
//     asset); a #fragment must be an id (or name) on the target page. External <a> links are left
//     alone: following them is the reader's choice, not a fetch the page makes.
//   - Fetches: a script, stylesheet, font, image or @import from an absolute URL (http:, https:, //)
//     would make the site depend on the network when viewed; every asset must ship in the build.
// Usage: node scripts/docs-check-site.mjs [dir] (exit code 1 with the list of problems).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;

/**
 * @param {string} dir the built site
 * @param {{ base?: string }} [options] the site's base path (VitePress `base`, default '/')
 * @returns {{ pages: number; links: number; problems: string[] }}
 */
export function checkSite(dir, { base = '/' } = {}) {
  const files = walk(dir);
  const ids = new Map();
  const idsOf = (file) => {
    if (!ids.has(file)) {
      const html = readFileSync(file, 'utf8');
      ids.set(file, new Set([...html.matchAll(/\s(?:id|name)="([^"]*)"/g)].map((match) => decodeEntities(match[1]))));
    }
    return ids.get(file);
  };
  const problems = [];
  let links = 0;
  for (const file of files) {
    const page = '/' + relative(dir, file).split(sep).join('/');
    if (file.endsWith('.html')) {
      const html = readFileSync(file, 'utf8');
      for (const { attribute, url, fetched } of htmlReferences(html)) {
        links++;
        const problem = checkUrl(url, page, fetched, { dir, base, idsOf });
        if (problem) problems.push(`${page}: ${attribute}="${url}": ${problem}`);
      }
      for (const { url } of cssReferences(html)) {
        links++;
        const problem = checkUrl(url, page, true, { dir, base, idsOf });
        if (problem) problems.push(`${page}: inline style url(${url}): ${problem}`);
      }
    } else if (file.endsWith('.css')) {
      for (const { url } of cssReferences(readFileSync(file, 'utf8'))) {
        links++;
        const problem = checkUrl(url, page, true, { dir, base, idsOf });
        if (problem) problems.push(`${page}: url(${url}): ${problem}`);
      }
    }
  }
  return { pages: files.filter((file) => file.endsWith('.html')).length, links, problems };
}

function checkUrl(raw, page, fetched, { dir, base, idsOf }) {
  const url = decodeEntities(raw).trim();
  if (url === '' || url.startsWith('data:')) return undefined;
  if (EXTERNAL.test(url)) {
    if (!fetched) return undefined;
    return 'fetched from the network when the page is viewed; ship it in the build instead';
  }
  const [pathPart, fragment] = splitFragment(url);
  let path = pathPart === '' ? page : pathPart.startsWith('/') ? pathPart : posix.join(posix.dirname(page), pathPart);
  path = path.replace(/\?.*$/, '');
  if (!path.startsWith(base)) return `outside the site's base ${base}`;
  path = '/' + path.slice(base.length);
  const target = resolveFile(dir, safeDecode(path));
  if (!target) return 'no such page or file in the build';
  if (fragment === undefined || fragment === '') return undefined;
  if (!target.endsWith('.html')) return undefined;
  const id = safeDecode(fragment);
  return idsOf(target).has(id) ? undefined : `no anchor #${id} on ${'/' + relative(dir, target).split(sep).join('/')}`;
}

function resolveFile(dir, path) {
  const candidates = path.endsWith('/') ? [`${path}index.html`] : [path, `${path}.html`, `${path}/index.html`];
  for (const candidate of candidates) {
    const file = join(dir, ...candidate.split('/'));
    if (existsSync(file) && statSync(file).isFile()) return file;
  }
  return undefined;
}

/** References in the HTML: whether the browser fetches them by itself (everything but <a href>). */
function htmlReferences(html) {
  const references = [];
  const withoutScripts = html.replace(/<script\b[^>]*>[\s\S]*?<\/script>/gi, (script) => script.replace(/>[\s\S]*<\/script>$/i, '></script>'));
  for (const tag of withoutScripts.matchAll(/<([a-z][a-z0-9-]*)\b([^>]*)>/gi)) {
    const name = tag[1].toLowerCase();
    const attributes = tag[2];
    for (const attribute of attributes.matchAll(/\s(href|src|srcset|xlink:href)="([^"]*)"/gi)) {
      const attr = attribute[1].toLowerCase();
      const fetched = !(name === 'a' && attr === 'href') && !(name === 'link' && /\brel="(?:canonical|alternate|prev|next)"/i.test(attributes));
      const values = attr === 'srcset' ? attribute[2].split(',').map((entry) => entry.trim().split(/\s+/)[0]) : [attribute[2]];
      for (const url of values) {
        // In an inline <svg>, href="#x" points into the same document, as on the page.
        references.push({ attribute: `<${name} ${attr}`, url, fetched });
      }
    }
  }
  return references;
}

function cssReferences(css) {
  const references = [];
  for (const match of css.matchAll(/url\(\s*(['"]?)([^'")]+)\1\s*\)/g)) if (!match[2].startsWith('#')) references.push({ url: match[2] });
  for (const match of css.matchAll(/@import\s+(['"])([^'"]+)\1/g)) references.push({ url: match[2] });
  return references;
}

function splitFragment(url) {
  const hash = url.indexOf('#');
  return hash === -1 ? [url, undefined] : [url.slice(0, hash), url.slice(hash + 1)];
}

function walk(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...walk(path));
    else files.push(path);
  }
  return files;
}

function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function decodeEntities(text) {
  return text
    .replace(/&#(\d+);/g, (_, code) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code) => String.fromCodePoint(parseInt(code, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? fileURLToPath(new URL('../dist/docs', import.meta.url));
  const { pages, links, problems } = checkSite(dir, { base: process.env.DOCS_BASE ?? '/' });
  // A broken link of the navigation bar is on every page: say it once, with the number of pages.
  const grouped = new Map();
  for (const problem of problems) {
    const [page, rest] = [problem.slice(0, problem.indexOf(': ')), problem.slice(problem.indexOf(': ') + 2)];
    grouped.set(rest, [...(grouped.get(rest) ?? []), page]);
  }
  for (const [problem, pages] of grouped) console.error(`${pages[0]}${pages.length > 1 ? ` (and ${pages.length - 1} other pages)` : ''}: ${problem}`);
  console.log(`docs: ${pages} pages, ${links} links and assets checked, ${problems.length} problem(s)`);
  if (problems.length > 0) process.exitCode = 1;
}
