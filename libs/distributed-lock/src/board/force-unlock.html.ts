import type { LockInspection } from '../core/index.js';
import { holdersOf, tokensOf, type ForceUnlockOutcome } from './board-force-unlock.js';
import { duration, esc, plainPage, queryString } from './board-html.js';

const back = (base: string): string => `<p><a href="${esc(base)}">Back to the locks</a></p>`;

/** The confirmation page: who holds the lock, the token(s) it will remove, and the button that does it. */
export function confirmPage(base: string, inspection: LockInspection, formKey: string): string {
  const title = `Force-unlock ${inspection.name}?`;
  if (!inspection.locked) return plainPage(base, title, `<h2>${esc(inspection.name)} is not held</h2><p>Nothing to unlock.</p>${back(base)}`);
  const holders = holdersOf(inspection);
  const tokens = tokensOf(inspection);
  const rows = holders
    .map(
      (holder) =>
        `<dt>${holder === inspection.holder ? (inspection.kind === 'read-write' ? 'Writer' : 'Holder') : 'Reader'}</dt><dd>${esc(holder.instance.label)}, owner <code>${esc(holder.owner)}</code>, token <strong data-token="${holder.token}">${holder.token}</strong>, held ${duration(holder.heldForMs)}, lease left ${duration(holder.remainingLeaseMs)}</dd>`,
    )
    .join('');
  const action = esc(`${base}/force-unlock${queryString({ name: inspection.name, kind: inspection.kind, tokens, key: formKey })}`);
  const plural = holders.length === 1 ? 'token' : 'tokens';
  const body = `<h2>Force-unlock <code>${esc(inspection.name)}</code> (${esc(inspection.kind)})?</h2>
<dl class="confirm">${rows}</dl>
<p class="warn">This removes ${plural} <strong id="tokens">${esc(tokens.replace(/,/g, ', '))}</strong> whoever holds ${holders.length === 1 ? 'it' : 'them'}: another caller can then take the lock while the holder may still be working. Writes fenced with the token are refused once a newer token has been used. A waiter, if any, is woken. The removal is logged.</p>
<form method="post" action="${action}" enctype="text/plain"><input type="hidden" name="confirm" value="yes"><button type="submit" class="danger" id="confirm">Remove ${plural} ${esc(tokens.replace(/,/g, ', '))}</button> <a href="${esc(base)}">Cancel</a></form>`;
  return plainPage(base, title, body);
}

/** What happened, after the button. */
export function resultPage(base: string, name: string, result: ForceUnlockOutcome): string {
  const text =
    result.outcome === 'removed'
      ? `<p id="result" data-outcome="removed"><code>${esc(name)}</code> was force-unlocked: token${result.tokens.length === 1 ? '' : 's'} ${result.tokens.join(', ')} of ${esc(result.holders.join(', '))} removed. A waiter, if any, has been woken.</p>`
      : result.outcome === 'changed'
        ? `<p id="result" data-outcome="changed" class="warn"><code>${esc(name)}</code> changed hands since the confirmation (now token ${esc(tokensOf(result.inspection).replace(/,/g, ', '))}): nothing was removed. Look again before removing it.</p>`
        : `<p id="result" data-outcome="${result.outcome}"><code>${esc(name)}</code> is not held any more: nothing was removed.</p>`;
  return plainPage(base, `Force-unlock ${name}`, `${text}${back(base)}`);
}

/** Refusals (force-unlock off, a bad request), as a page. */
export function messagePage(base: string, title: string, message: string): string {
  return plainPage(base, title, `<p class="error" role="alert">${esc(message)}</p>${back(base)}`);
}
