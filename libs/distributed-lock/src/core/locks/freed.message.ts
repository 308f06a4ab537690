import type { ChannelMessages, LineEvent } from '../waiting/line-event.js';

/**
 * The message every lock kind's scripts publish on the lock's channel when they free the lock, or
 * change it so that a waiter may now get it (a fair lock's first waiter left): `released`, as a Lua
 * string literal. Decoded as `freed` (see FREED_MESSAGES and each kind's codec).
 */
export const FREED_LUA = `'released'`;

export const FREED: LineEvent = { type: 'freed' };

/**
 * The codec of kinds whose scripts publish nothing but FREED_LUA (the read-write lock): every message
 * on their channel wakes the first waiter, which looks for itself.
 */
export const FREED_MESSAGES: ChannelMessages = { decode: () => FREED };
