import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { until } from './wait.js';

/**
 * One command as Redis ran it (MONITOR's view): its name and arguments, and the client address that
 * sent it ('lua' for a command a script ran: it cannot be told whose script that was).
 */
export interface LoggedCommand {
  readonly args: string[];
  /** `host:port` of the sending connection. */
  readonly source: string;
}

/** What a command log gives back when stopped. */
export interface CommandLog {
  /** Stops logging; resolves with every command Redis ran from the start until now, in order. */
  stop(): Promise<LoggedCommand[]>;
}

/**
 * Logs every command the server of `admin` runs (MONITOR on a connection of its own), so that a test
 * can count what a component sent and how much each command asked of Redis (keys per SCAN, keys per
 * script): figures that depend on the code, not on how busy the machine is. `stop()` sends a marker
 * through `admin` and waits for the log to show it: Redis feeds MONITOR in the order it runs
 * commands, so everything run before the marker is in the log.
 */
export async function logCommands(admin: Redis): Promise<CommandLog> {
  const monitor = await admin.monitor();
  const commands: LoggedCommand[] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => commands.push({ args, source }));
  return {
    async stop() {
      const marker = `command-log-end:${randomUUID()}`;
      const isMarker = (command: LoggedCommand): boolean => command.args[0]?.toLowerCase() === 'echo' && command.args[1] === marker;
      await admin.echo(marker);
      await until(() => commands.some(isMarker), 'the command log to show its end marker', 20_000);
      monitor.disconnect();
      return commands.slice(0, commands.findIndex(isMarker));
    },
  };
}

/** The addresses (`host:port`) of the connections the server of `admin` has now (CLIENT LIST). */
export async function connectedAddresses(admin: Redis): Promise<Set<string>> {
  const list = (await admin.call('CLIENT', 'LIST')) as string;
  return new Set(list.split('\n').flatMap((line) => /(?:^| )addr=(\S+)/.exec(line)?.[1] ?? []));
}

/** The commands sent by connections other than `known` (and not from inside scripts). */
export function commandsOfOthers(commands: LoggedCommand[], known: Set<string>): LoggedCommand[] {
  return commands.filter((command) => command.source !== 'lua' && !known.has(command.source));
}
