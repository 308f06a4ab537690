import type { LockCircuitStatus, LockInstanceInfo } from '../core/index.js';
import { duration, esc, queryString } from './board-html.js';
import type { BoardHolder, BoardLock, BoardSnapshot, BoardWaiter } from './board-snapshot.js';
import type { LockStatsRow } from './lock-stats.js';

const RENEWAL: Record<BoardHolder['renewal'], string> = { watchdog: 'watchdog', fixed: 'fixed lease', grant: 'granted, not yet claimed', unknown: '?' };
const KIND: Record<BoardLock['kind'], string> = {
  reentrant: 'lock',
  fair: 'fair lock',
  'read-write': 'read-write',
  semaphore: 'semaphore',
  leader: 'leadership',
};

function who(process: string, self: boolean): string {
  return `${esc(process)}${self ? ' <span class="self" title="the process serving this page">this process</span>' : ''}`;
}

function waiterItem(waiter: BoardWaiter): string {
  const waited = waiter.timing === 'exact' ? duration(waiter.waitedMs) : `${waiter.timing === 'at-least' ? '≥ ' : '~'}${duration(waiter.waitedMs)}`;
  const title =
    waiter.timing === 'exact'
      ? 'timed by this process'
      : waiter.timing === 'at-least'
        ? 'already waiting when this board first looked: at least this long'
        : 'since this board first saw it in line (within one refresh)';
  const callers = waiter.callers !== undefined && waiter.callers > 1 ? ` · ${waiter.callers} callers` : '';
  const permits = waiter.permits !== undefined ? ` · asks ${waiter.permits}` : '';
  const owner = waiter.owner !== undefined ? ` <code class="owner">${esc(waiter.owner)}</code>` : '';
  return `<li data-process="${esc(waiter.process)}" data-waited-ms="${Math.round(waiter.waitedMs)}">${who(waiter.process, waiter.self)}${owner}${permits}${callers} · <span class="waited" title="${title}">${waited}</span></li>`;
}

/** Waiters listed per lock at most: a line of a thousand stays readable (and the page light); the JSON has them all. */
const MAX_WAITERS_SHOWN = 20;

function waitersCell(lock: BoardLock): string {
  if (lock.waiters.length === 0) return '<td class="waiting">-</td>';
  const more = lock.waiters.length - MAX_WAITERS_SHOWN;
  const rest = more > 0 ? `<p class="more">… and ${more} more (${lock.waiters.length} in all)</p>` : '';
  return `<td class="waiting"><ol>${lock.waiters.slice(0, MAX_WAITERS_SHOWN).map(waiterItem).join('')}</ol>${rest}</td>`;
}

function holderCells(holder: BoardHolder | undefined, lock: BoardLock): string {
  if (!holder)
    return `<td class="holder free">${lock.state === 'waiting' ? 'free, waiters about to take it' : 'free'}</td><td></td><td></td><td></td><td></td><td></td>`;
  const role = holder.role === 'reader' || holder.role === 'writer' ? `<span class="role">${holder.role}</span> ` : '';
  const amount =
    holder.permits !== undefined ? `${holder.permits} permit${holder.permits === 1 ? '' : 's'}` : `${holder.holds} hold${holder.holds === 1 ? '' : 's'}`;
  return [
    `<td class="holder">${role}${who(holder.process, holder.self)}<br><code class="owner">${esc(holder.owner)}</code></td>`,
    `<td class="num token" data-token="${holder.token}" title="${holder.role === 'leader' ? 'term' : 'fencing token'}">${holder.token}</td>`,
    `<td class="num">${duration(holder.heldForMs)}</td>`,
    `<td class="num">${duration(holder.leaseLeftMs)}</td>`,
    `<td>${RENEWAL[holder.renewal]}</td>`,
    `<td class="num">${amount}</td>`,
  ].join('');
}

function lockGroup(lock: BoardLock, base: string): string {
  const holders = lock.holders.length > 0 ? lock.holders : [undefined];
  const span = holders.length;
  const kind = lock.semaphore ? `${KIND[lock.kind]} <span class="permits">${lock.semaphore.used}/${lock.semaphore.size}</span>` : KIND[lock.kind];
  const action = lock.canForceUnlock
    ? `<a class="danger" href="${esc(`${base}/force-unlock${queryString({ name: lock.name, kind: lock.kind === 'leader' ? 'reentrant' : lock.kind })}`)}">force unlock…</a>`
    : '';
  const rows = holders.map((holder, i) => {
    const head = i === 0 ? `<th scope="rowgroup" rowspan="${span}" class="name">${esc(lock.name)}</th><td rowspan="${span}">${kind}</td>` : '';
    const tail = i === 0 ? `${waitersCell(lock).replace('<td', `<td rowspan="${span}"`)}<td rowspan="${span}">${action}</td>` : '';
    return `<tr>${head}${holderCells(holder, lock)}${tail}</tr>`;
  });
  return `<tbody class="lock ${lock.state}" data-lock="${esc(lock.name)}" data-kind="${lock.kind}">${rows.join('')}</tbody>`;
}

const LOCK_HEAD =
  '<thead><tr><th scope="col">Lock</th><th scope="col">Kind</th><th scope="col">Holder (process, owner)</th><th scope="col">Token / term</th><th scope="col">Held for</th><th scope="col">Lease left</th><th scope="col">Renewal</th><th scope="col">Holds / permits</th><th scope="col">Waiting, in order</th><th scope="col"></th></tr></thead>';

function pager(snapshot: BoardSnapshot, base: string): string {
  const { page, pages } = snapshot.locks;
  if (pages <= 1) return '';
  const link = (to: number, text: string): string =>
    to < 1 || to > pages || to === page
      ? `<span>${text}</span>`
      : `<a href="${esc(`${base}${queryString({ filter: snapshot.query.filter, page: to })}`)}" data-page="${to}">${text}</a>`;
  return `<nav class="pager" aria-label="pages">${link(1, '« first')} ${link(page - 1, '‹ previous')} <span>page ${page} of ${pages}</span> ${link(page + 1, 'next ›')} ${link(pages, 'last »')}</nav>`;
}

export function locksSection(snapshot: BoardSnapshot, base: string): string {
  const { locks } = snapshot;
  const cut = locks.truncated ? ` <strong class="warn">The scan stopped at ${locks.total} locks: narrow the filter to see the others.</strong>` : '';
  const from = locks.total === 0 ? 0 : (locks.page - 1) * locks.pageSize + 1;
  const summary = `<p class="summary" id="lock-count" data-total="${locks.total}">${locks.total} lock${locks.total === 1 ? '' : 's'} matching <code>${esc(snapshot.pattern ?? '')}</code>${locks.total > 0 ? `, ${from} to ${from + locks.rows.length - 1} shown` : ''}.${cut}</p>`;
  const table =
    locks.rows.length === 0
      ? '<p class="empty">No lock is held or waited for.</p>'
      : `<table class="locks">${LOCK_HEAD}${locks.rows.map((lock) => lockGroup(lock, base)).join('')}</table>`;
  return `<section id="locks"><h2>Locks in use</h2>${summary}${pager(snapshot, base)}${table}${pager(snapshot, base)}</section>`;
}

export function leadersSection(snapshot: BoardSnapshot): string {
  const rows = snapshot.leaders.map((lock) => {
    const leader = lock.holders[0];
    const candidates = lock.waiters.map((waiter) => esc(waiter.process)).join(', ') || '-';
    return `<tr data-leadership="${esc(lock.name)}"><th scope="row">${esc(lock.name.slice('leader:'.length))}</th><td>${leader ? who(leader.process, leader.self) : 'none (an election is under way)'}</td><td class="num">${leader?.token ?? '-'}</td><td class="num">${duration(leader?.heldForMs)}</td><td class="num">${duration(leader?.leaseLeftMs)}</td><td>${candidates}</td></tr>`;
  });
  const body =
    rows.length === 0
      ? '<p class="empty">No leadership is held.</p>'
      : `<table><thead><tr><th scope="col">Leadership</th><th scope="col">Leader</th><th scope="col">Term</th><th scope="col">Leading for</th><th scope="col">Lease left</th><th scope="col">Candidates waiting</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
  return `<section id="leaders"><h2>Leaders</h2>${body}</section>`;
}

export function instancesSection(instances: readonly LockInstanceInfo[]): string {
  const rows = instances.map(
    (instance) =>
      `<tr data-instance="${esc(instance.label)}"><th scope="row">${who(instance.label, instance.self)}</th><td>${esc(instance.instanceName ?? '-')}</td><td>${esc(instance.host)}</td><td class="num">${instance.pid ?? '-'}</td><td><code>${esc(instance.clientId)}</code></td></tr>`,
  );
  const body =
    rows.length === 0
      ? '<p class="empty">No process is registered (a process registers at its first lock call).</p>'
      : `<table><thead><tr><th scope="col">Process</th><th scope="col">Instance name</th><th scope="col">Host</th><th scope="col">PID</th><th scope="col">Client id</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
  return `<section id="instances"><h2>App instances registered</h2>${body}</section>`;
}

/** This process's circuit breaker per Redis node: whether its lock calls to that node are sent, or refused at once. */
export function circuitsSection(circuits: readonly LockCircuitStatus[]): string {
  if (circuits.length === 0) return '';
  const rows = circuits.map(
    (circuit) =>
      `<tr data-node="${esc(circuit.node)}"><th scope="row">${esc(circuit.node)}</th><td${circuit.state === 'closed' ? '' : ' class="warn"'}>${circuit.state}</td><td class="num">${circuit.failures}</td><td>${esc(new Date(circuit.since).toISOString())}</td></tr>`,
  );
  return `<section id="circuits"><h2>Redis nodes <small>this process's circuit breakers (open: lock calls refused at once until a probe gets a reply)</small></h2><table><thead><tr><th scope="col">Node</th><th scope="col">Circuit</th><th scope="col">Failures in a row</th><th scope="col">Since</th></tr></thead><tbody>${rows.join('')}</tbody></table></section>`;
}

function statsRow(row: LockStatsRow): string {
  const { wait, hold } = row;
  return `<tr data-label="${esc(row.label)}"><th scope="row">${esc(row.label)}</th><td class="num">${row.acquired}</td><td class="num">${row.timedOut}</td><td class="num">${row.failed}</td><td class="num">${duration(wait.p50Ms)}</td><td class="num">${duration(wait.p90Ms)}</td><td class="num">${duration(wait.p99Ms)}</td><td class="num">${duration(wait.maxMs)}</td><td class="num">${hold.count}</td><td class="num">${duration(hold.p50Ms)}</td><td class="num">${duration(hold.p99Ms)}</td><td class="num">${duration(hold.maxMs)}</td><td class="num${row.leasesLost > 0 ? ' warn' : ''}">${row.leasesLost}</td></tr>`;
}

export function statsSection(snapshot: BoardSnapshot): string {
  const body =
    snapshot.stats.length === 0
      ? '<p class="empty">No lock call in this process yet.</p>'
      : `<table class="stats"><thead><tr><th scope="col" rowspan="2">Lock (label)</th><th scope="colgroup" colspan="3">Calls</th><th scope="colgroup" colspan="4">Wait</th><th scope="colgroup" colspan="4">Hold</th><th scope="col" rowspan="2">Leases lost</th></tr><tr><th scope="col">acquired</th><th scope="col">timed out</th><th scope="col">failed</th><th scope="col">p50</th><th scope="col">p90</th><th scope="col">p99</th><th scope="col">max</th><th scope="col">holds</th><th scope="col">p50</th><th scope="col">p99</th><th scope="col">max</th></tr></thead><tbody>${snapshot.stats.map(statsRow).join('')}</tbody></table>`;
  return `<section id="stats"><h2>Waits and holds in this process <small>since it started, from the library's events (${esc(snapshot.self)})</small></h2>${body}</section>`;
}
