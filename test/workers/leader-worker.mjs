// A candidate in a leader election, for crash tests: stands for ELECTION and reports.
// env: DISTRIBUTED_LOCK_REDIS_* (any mode), ELECTION, WATCHDOG (ms: the leadership's lease).
// Prints {"type":"ready"}, {"type":"elected","term"}, {"type":"revoked","term","reason"}, {"type":"renewed"}.
// stdin: "resign" -> {"type":"resigned"}; "exit" closes the client.
import { createInterface } from 'node:readline';
import { LockClient } from './core.mjs';

const send = (message) => console.log(JSON.stringify(message));
const client = await LockClient.connect({ watchdogTimeout: Number(process.env.WATCHDOG) });
client.events.on('renewed', () => send({ type: 'renewed' }));
const election = client.elect(process.env.ELECTION, {
  onElected: (leadership) => send({ type: 'elected', term: leadership.term }),
  onRevoked: ({ term, reason }) => send({ type: 'revoked', term, reason }),
});
send({ type: 'ready' });

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line === 'resign') {
    await election.resign();
    send({ type: 'resigned' });
  } else if (line === 'exit') {
    break;
  }
}
lines.close();
await client.close();
