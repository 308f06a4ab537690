/**
 * Preloaded (`node --import`) to run an app as if the optional transport packages were not installed:
 * resolving them fails as a missing package does. Nest itself then runs without them, as it does in
 * an app that never installed them, and so must nestjs-distributed-lock.
 */
import { register } from 'node:module';

export const HIDDEN_PACKAGES = ['@nestjs/microservices', '@nestjs/websockets', '@nestjs/graphql', '@nestjs/apollo', 'graphql'];

const hooks = `
const hidden = ${JSON.stringify(HIDDEN_PACKAGES)};
export async function resolve(specifier, context, next) {
  if (hidden.some((name) => specifier === name || specifier.startsWith(name + '/'))) {
    throw Object.assign(new Error("Cannot find package '" + specifier + "' (hidden by the test)"), { code: 'ERR_MODULE_NOT_FOUND' });
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
