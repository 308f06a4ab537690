/**
 * The page's only script and stylesheet, shipped in the package as string constants (like the Lua
 * scripts: nothing to copy, nothing fetched from a CDN). The script polls `<path>/live` every refresh
 * interval and swaps the server-rendered `<main>` in (HTML escaped by the server), keeps the filter
 * and the page in the address bar, pauses while the tab is hidden or text is selected, and backs off
 * when the server does not answer. Without it the page is the same table, refreshed by `<noscript>`.
 */
export const BOARD_SCRIPT = `(() => {
  'use strict';
  const body = document.body;
  const live = body.dataset.live;
  const every = Math.max(250, Number(body.dataset.refreshMs) || 1000);
  const main = document.getElementById('board');
  const status = document.getElementById('status');
  const form = document.querySelector('form[role=search]');
  const input = form.querySelector('input[name=filter]');
  let page = Number(new URL(location.href).searchParams.get('page')) || 1;
  let timer;
  let pending;
  let failures = 0;
  let lastRead = Date.now();
  const query = () => {
    const params = new URLSearchParams();
    if (input.value.trim()) params.set('filter', input.value.trim());
    if (page > 1) params.set('page', String(page));
    const text = params.toString();
    return text ? '?' + text : '';
  };
  const show = (text, state) => {
    status.textContent = text;
    status.className = state;
  };
  const selecting = () => {
    const selection = document.getSelection();
    return selection && !selection.isCollapsed && main.contains(selection.anchorNode);
  };
  async function refresh() {
    clearTimeout(timer);
    if (document.hidden) return;
    if (selecting()) {
      show('paused while text is selected', 'paused');
      timer = setTimeout(refresh, every);
      return;
    }
    if (pending) pending.abort();
    const controller = new AbortController();
    pending = controller;
    try {
      const response = await fetch(live + query(), { signal: controller.signal, credentials: 'same-origin', cache: 'no-store' });
      if (!response.ok) throw new Error('HTTP ' + response.status);
      main.innerHTML = await response.text();
      failures = 0;
      lastRead = Date.now();
      show('live', 'live');
    } catch (error) {
      if (controller.signal.aborted) return;
      failures += 1;
      show('not updated since ' + new Date(lastRead).toLocaleTimeString() + ' (' + error.message + '); retrying', 'error');
    } finally {
      if (pending === controller) {
        pending = undefined;
        timer = setTimeout(refresh, failures ? Math.min(every * 2 ** failures, 30000) : every);
      }
    }
  }
  const navigate = () => {
    history.replaceState(null, '', location.pathname + query());
    refresh();
  };
  let typing;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    page = 1;
    navigate();
  });
  input.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      page = 1;
      navigate();
    }, 300);
  });
  main.addEventListener('click', (event) => {
    const link = event.target.closest('a[data-page]');
    if (!link) return;
    event.preventDefault();
    page = Number(link.dataset.page);
    navigate();
  });
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) refresh();
  });
  show('live', 'live');
  timer = setTimeout(refresh, every);
})();
`;

export const BOARD_STYLE = `:root { color-scheme: light dark; --line: #8884; --muted: #777; --warn: #b45309; --bad: #b91c1c; --ok: #15803d; --head: #8881; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header { position: sticky; top: 0; display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; padding: .6rem 1rem; background: Canvas; border-bottom: 1px solid var(--line); z-index: 1; }
h1 { font-size: 1.15rem; margin: 0; }
h1 a { color: inherit; text-decoration: none; }
h2 { font-size: 1rem; margin: 1.4rem 0 .4rem; }
h2 small { font-weight: normal; color: var(--muted); }
main { padding: 0 1rem 2rem; }
main.plain { max-width: 50rem; }
.who, .stamp, .summary, .empty { color: var(--muted); }
form[role=search] { display: flex; gap: .4rem; margin-left: auto; }
input[type=search] { width: 16rem; padding: .25rem .4rem; font: inherit; }
button { font: inherit; padding: .25rem .7rem; cursor: pointer; }
#status { font-size: .85rem; padding: .1rem .5rem; border-radius: 1rem; }
#status.live { color: var(--ok); } #status.live::before { content: "● "; }
#status.error { color: var(--bad); } #status.paused { color: var(--warn); }
table { border-collapse: collapse; width: 100%; margin: .3rem 0; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid var(--line); }
thead th { background: var(--head); font-weight: 600; white-space: nowrap; }
tbody.lock { border-top: 2px solid var(--line); }
tbody.lock th.name { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; word-break: break-all; }
tbody.waiting th.name, .warn { color: var(--warn); }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code, .owner { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .8rem; }
.owner { color: var(--muted); word-break: break-all; }
.self { font-size: .75rem; padding: 0 .35rem; border: 1px solid var(--ok); color: var(--ok); border-radius: .6rem; white-space: nowrap; }
.role { font-weight: 600; }
.free { color: var(--muted); }
td.waiting ol { margin: 0; padding-left: 1.2rem; }
.more { margin: .2rem 0 0; color: var(--muted); }
.waited { white-space: nowrap; font-variant-numeric: tabular-nums; }
.pager { display: flex; gap: .8rem; align-items: center; margin: .4rem 0; }
.error { color: var(--bad); font-weight: 600; }
a.danger, button.danger { color: var(--bad); }
dl.confirm { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
dl.confirm dt { font-weight: 600; }
`;
