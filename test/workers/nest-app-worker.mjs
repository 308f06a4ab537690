// A Nest application context configured from the environment only. It takes a lock (watchdog
// renewed), starts a wait for a lock held elsewhere, reports, and on "close" (stdin) closes the app.
// It never calls process.exit: the test checks that nothing keeps the process alive after app.close().
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedLockModule, LockService } from 'nestjs-distributed-lock';

const send = (message) => console.log(JSON.stringify(message));

class AppModule {}
Module({ imports: [DistributedLockModule.forRoot()] })(AppModule);

const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
const locks = app.get(LockService);
const held = await locks.lock('close:held');
const waiting = locks.lock('close:busy').then(
  () => 'acquired',
  (error) => error.code,
);
await new Promise((resolve) => locks.events.once('subscription', resolve));
send({ type: 'ready', token: held.token, stats: locks.stats() });

const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => lines.on('line', (line) => line === 'close' && resolve()));
lines.close();
await app.close();
send({ type: 'closed', waiter: await waiting, heldSignalAborted: held.signal.aborted, stats: locks.stats() });
