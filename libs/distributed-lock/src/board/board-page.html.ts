import { esc } from './board-html.js';
import type { BoardSnapshot } from './board-snapshot.js';
import { circuitsSection, instancesSection, leadersSection, locksSection, statsSection } from './board-tables.html.js';

/** The part of the page that refreshes: rendered here for the first load and for every refresh. */
export function boardMain(snapshot: BoardSnapshot, base: string): string {
  const error = snapshot.error ? `<p class="error" role="alert">${esc(snapshot.error)}</p>` : '';
  const stamp = `<p class="stamp">Read at <time datetime="${esc(snapshot.at)}" id="read-at">${esc(snapshot.at.slice(11, 19))}</time> UTC in ${snapshot.readMs} ms from ${esc(snapshot.target)}${snapshot.forceUnlock ? ' · <strong class="warn">force-unlock is enabled</strong>' : ' · read-only'}.</p>`;
  return `${error}${locksSection(snapshot, base)}${leadersSection(snapshot)}${circuitsSection(snapshot.circuits)}${instancesSection(snapshot.instances)}${statsSection(snapshot)}${stamp}`;
}

/**
 * The whole page: server-rendered, so that it is a plain table without JavaScript (a `<noscript>`
 * refresh keeps it live), and the package's small script (board.js) refreshes `<main>` in place.
 * Every asset comes from the board's own path: nothing is fetched from anywhere else.
 */
export function boardPage(snapshot: BoardSnapshot, base: string, refreshIntervalMs: number): string {
  const noScriptRefresh = Math.max(5, Math.ceil((refreshIntervalMs * 5) / 1000));
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(snapshot.title)}</title>
<link rel="stylesheet" href="${esc(base)}/board.css">
<script src="${esc(base)}/board.js" defer></script>
<noscript><meta http-equiv="refresh" content="${noScriptRefresh}"></noscript>
</head>
<body data-live="${esc(base)}/live" data-refresh-ms="${refreshIntervalMs}">
<header>
<h1><a href="${esc(base)}">${esc(snapshot.title)}</a></h1>
<span class="who">${esc(snapshot.self)}</span>
<form method="get" action="${esc(base)}" role="search">
<label>Filter <input type="search" name="filter" value="${esc(snapshot.query.filter)}" placeholder="product:* or any text" maxlength="200" autocomplete="off"></label>
<button type="submit">Apply</button>
</form>
<span id="status" class="static" aria-live="polite"><noscript>refreshes every ${noScriptRefresh} s</noscript></span>
</header>
<main id="board">${boardMain(snapshot, base)}</main>
</body>
</html>
`;
}
