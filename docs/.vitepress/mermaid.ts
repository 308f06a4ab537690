/**
 * ```mermaid fences rendered to SVG while the site builds (beautiful-mermaid: no browser, no DOM),
 * so a page shows its diagrams without running any script and without fetching anything.
 *
 * beautiful-mermaid's SVG carries a <style> element: an @import of a web font (a fetch at view time,
 * which this site must not make), `text { font-family }` and `svg { --_text: ...; }` (its colours,
 * derived from --bg and --fg). A <style> inside a Vue template is dropped from the client render, and
 * an inline SVG's <style> would apply to the whole page anyway, so the rules are moved onto the root
 * <svg>'s style attribute (custom properties and font-family inherit) and the @import is removed. Any
 * other rule fails the build: it would be a change of beautiful-mermaid this code has not seen.
 * Marker ids are prefixed per diagram, so two diagrams on one page do not share ids.
 *
 * The parser is lenient (a line it does not understand is skipped), so every label written after a
 * colon (messages, notes, transitions) and every block label (loop, alt, ...) must appear in the SVG,
 * or the build fails naming the diagram: a diagram never silently loses a line.
 */
import { createHash } from 'node:crypto';
import { renderMermaidSVG } from 'beautiful-mermaid';
import type { MarkdownRenderer } from 'vitepress';

const COLORS = { bg: 'var(--vp-c-bg)', fg: 'var(--vp-c-text-1)', accent: 'var(--vp-c-brand-1)', transparent: true };

export function mermaidPlugin(md: MarkdownRenderer): void {
  const fence = md.renderer.rules.fence!;
  md.renderer.rules.fence = (tokens, index, options, env: { relativePath?: string }, self) => {
    const token = tokens[index]!;
    if (token.info.trim() !== 'mermaid') return fence(tokens, index, options, env, self);
    const where = `${env.relativePath ?? 'a page'} line ${(token.map?.[0] ?? 0) + 1}`;
    return `<figure class="diagram">${renderDiagram(token.content, where)}</figure>\n`;
  };
}

export function renderDiagram(source: string, where: string): string {
  let svg: string;
  try {
    svg = renderMermaidSVG(source, COLORS);
  } catch (error) {
    throw new Error(`Mermaid diagram at ${where}: ${(error as Error).message}`, { cause: error });
  }
  svg = inlineStyle(svg, where);
  svg = prefixIds(svg, `d${createHash('sha1').update(source).digest('hex').slice(0, 8)}-`);
  const missing = labels(source).filter((label) => !svg.includes(escapeXml(label)));
  if (missing.length > 0) throw new Error(`Mermaid diagram at ${where}: not rendered (a line the renderer does not understand?): ${missing.join(' | ')}`);
  return svg;
}

function inlineStyle(svg: string, where: string): string {
  const style = /<style>([\s\S]*?)<\/style>/.exec(svg);
  if (!style) return svg;
  const css = style[1]!
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/@import url\([^)]*\);/g, '')
    .trim();
  const declarations: string[] = [];
  for (const rule of css.matchAll(/([^{}]+)\{([^{}]*)\}/g)) {
    const selector = rule[1]!.trim();
    const body = rule[2]!.trim().replace(/;?\s*$/, ';');
    if (selector === 'svg') declarations.push(body.replace(/\s+/g, ' '));
    else if (selector === 'text' && /^font-family:[^;]+;$/.test(body)) declarations.push('font-family: var(--vp-font-family-base);');
    else throw new Error(`Mermaid diagram at ${where}: unexpected CSS rule "${selector}" in beautiful-mermaid's output; update docs/.vitepress/mermaid.ts`);
  }
  if (css.replace(/([^{}]+)\{([^{}]*)\}/g, '').trim() !== '')
    throw new Error(`Mermaid diagram at ${where}: unexpected CSS in beautiful-mermaid's output: ${css}`);
  const withoutStyle = svg.replace(style[0], '');
  return withoutStyle.replace(
    /^<svg([^>]*?)style="([^"]*)"/,
    (_, attributes: string, inline: string) => `<svg${attributes}style="${inline.replace(/;?$/, ';')}${declarations.join(' ')}"`,
  );
}

function prefixIds(svg: string, prefix: string): string {
  return svg
    .replace(/\bid="([^"]+)"/g, (_, id: string) => `id="${prefix}${id}"`)
    .replace(/url\(#([^)]+)\)/g, (_, id: string) => `url(#${prefix}${id})`)
    .replace(/href="#([^"]+)"/g, (_, id: string) => `href="#${prefix}${id}"`);
}

/** The texts a reader must see: what follows the colon of a message, note or transition, and block labels. */
function labels(source: string): string[] {
  const found: string[] = [];
  for (const raw of source.split('\n').slice(1)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('%%')) continue;
    const block = /^(loop|alt|else|opt|par|and|critical|break)\s+(.+)$/.exec(line);
    if (block) found.push(block[2]!.trim());
    else if (!/^(participant|actor)\s/.test(line)) {
      const label = /:\s*(.+)$/.exec(line);
      if (label) found.push(...label[1]!.split(/<br\s*\/?>/).map((part) => part.trim()));
    }
  }
  return found.filter((label) => label !== '');
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}
