import type { LockHolderInfo, LockInspection, LockWaiterInfo } from '../core/index.js';

/** A duration for people: 850ms, 1.2s, 2m03s, 1h02m. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes}m${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

function renewal(holder: LockHolderInfo): string {
  if (holder.grant) return 'grant';
  return holder.watchdog === undefined ? '?' : holder.watchdog ? 'watchdog' : 'lease';
}

/** The holder column: who, with `(this process)` for the inspecting one. */
function who(holder: LockHolderInfo): string {
  return `${holder.instance.label}${holder.instance.self ? ' (this process)' : ''}${holder.grant ? ' [granted, not yet claimed]' : ''}`;
}

/** The kind, and for a semaphore its use: `semaphore 3/5` (permits used of its size). */
function kindOf(inspection: LockInspection): string {
  return inspection.semaphore ? `${inspection.kind} ${inspection.semaphore.used}/${inspection.semaphore.size}` : inspection.kind;
}

/** `1 permit`, `2 permits`. */
function permitCount(permits: number): string {
  return `${permits} permit${permits === 1 ? '' : 's'}`;
}

/** Holds of a lock; permits of a semaphore's acquisition. */
function holdsOf(holder: LockHolderInfo): string {
  return holder.permits === undefined ? String(holder.holds) : permitCount(holder.permits);
}

function waiters(waiting: readonly LockWaiterInfo[], here: number): string {
  const parts = waiting.map((waiter) => (waiter.permits === undefined ? waiter.instance.label : `${waiter.instance.label} (${waiter.permits})`));
  const shown = parts.length > 3 ? [...parts.slice(0, 3), `+${parts.length - 3}`] : parts;
  const local = here > 0 ? ` (${here} here)` : '';
  return parts.length === 0 ? (here > 0 ? `${here} here` : '-') : `${parts.length}: ${shown.join(', ')}${local}`;
}

const HEAD = ['LOCK', 'KIND', 'HOLDER', 'HOLDS', 'TOKEN', 'HELD', 'LEASE LEFT', 'RENEWAL', 'WAITING'];

/** Every holder: the exclusive holder or writer first, then each reader, or each of a semaphore's acquisitions. */
function holdersOf(inspection: LockInspection): LockHolderInfo[] {
  return [...(inspection.holder ? [inspection.holder] : []), ...inspection.readers, ...inspection.permitHolders];
}

/** One row per holder (see holdersOf). */
function rows(inspection: LockInspection): string[][] {
  const holders = holdersOf(inspection);
  const waiting = waiters(inspection.waiting, inspection.waitingHere);
  if (holders.length === 0) return [[inspection.name, kindOf(inspection), '-', '-', '-', '-', '-', '-', waiting]];
  return holders.map((holder, i) => {
    const role = inspection.kind === 'read-write' ? (holder === inspection.holder ? 'writer ' : 'reader ') : '';
    return [
      i === 0 ? inspection.name : '',
      i === 0 ? kindOf(inspection) : '',
      `${role}${who(holder)}`,
      holdsOf(holder),
      String(holder.token),
      formatDuration(holder.heldForMs),
      formatDuration(holder.remainingLeaseMs),
      renewal(holder),
      i === 0 ? waiting : '',
    ];
  });
}

/** A plain-text table of locks, as `list` and `watch` print it. */
export function lockTable(inspections: readonly LockInspection[]): string {
  const body = inspections.flatMap(rows);
  if (body.length === 0) return 'no lock held';
  const widths = HEAD.map((head, column) => Math.max(head.length, ...body.map((row) => row[column]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(HEAD), ...body.map(line)].join('\n');
}

/** The detailed view of one lock, as `inspect` prints it. */
export function lockDetails(inspection: LockInspection): string {
  const lines = [`lock        ${inspection.name} (${inspection.kind})`];
  if (inspection.semaphore) {
    const { size, used, available } = inspection.semaphore;
    lines.push(`permits     ${used} of ${size} used, ${available} available`);
  }
  const holderLine = (label: string, holder: LockHolderInfo): string =>
    `${label.padEnd(12)}${who(holder)}  owner ${holder.owner}  ${holder.permits === undefined ? `holds ${holder.holds}` : `permits ${holder.permits}`}  token ${holder.token}  held ${formatDuration(holder.heldForMs)}  lease left ${formatDuration(holder.remainingLeaseMs)}  ${renewal(holder)}`;
  if (!inspection.locked) lines.push('holder      nobody');
  if (inspection.holder) lines.push(holderLine(inspection.kind === 'read-write' ? 'writer' : 'holder', inspection.holder));
  inspection.readers.forEach((reader, i) => lines.push(holderLine(i === 0 ? 'readers' : '', reader)));
  inspection.permitHolders.forEach((acquisition, i) => lines.push(holderLine(i === 0 ? 'holders' : '', acquisition)));
  if (inspection.waiting.length === 0)
    lines.push(`waiting     ${inspection.waitingHere > 0 ? `${inspection.waitingHere} caller(s) of this process` : 'nobody'}`);
  inspection.waiting.forEach((waiter, i) => {
    const asks = waiter.permits === undefined ? '' : `  asks ${permitCount(waiter.permits)}`;
    const detail = waiter.owner === undefined ? '' : `  owner ${waiter.owner}${asks}  place expires in ${formatDuration(waiter.expiresInMs)}`;
    lines.push(`${(i === 0 ? 'waiting' : '').padEnd(12)}${waiter.position}. ${waiter.instance.label}${detail}`);
  });
  lines.push(`last token  ${inspection.lastToken ?? '-'}`);
  return lines.join('\n');
}
